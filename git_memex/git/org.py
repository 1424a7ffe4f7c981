"""Org memory subscriptions: `git memex org add|list|remove|pull` (docs/org.md).

An org memory repo is an ordinary git repository whose memory folder (`.ai/open-memex/`, flat or
in subfolders) holds v0.2 files with `scope: org`. Subscribing clones it into
`<data root>/org/<NAME>/` (a normal clone the user can inspect) and records
`memex.org.NAME.url` (and `.branch`) in git config, repo-local by default or global; its
memories are indexed in an index of their own inside the clone's git dir, which `Stores` reads
as a further source labelled `org:NAME`.

Invariants: a failed `add` leaves no clone, no config and no index behind (the clone is made in a
temporary folder and renamed into place only once it is checked); `pull` only fetches and
fast-forwards, never merges, and leaves a diverged clone as it was (exit 2). Git runs through
`gitcmd.run_git` with prompts off, so an unreachable URL fails instead of waiting for a password.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.data_root import prepare_data_root, private_mkdir
from git_memex.core.settings import DEFAULT_MEMORY_DIR
from git_memex.errors import FAILED, USAGE, MemexError, UsageError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
GIT_TIMEOUT_S = 300


def _git(args: list[str], cwd: Path | None = None, *, paths: bool = False) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `git ARGS` with terminal prompts off; (-1, "", why) when
    git could not be run. With `paths` stdout holds file names and is decoded as the OS decodes
    them (surrogate escapes), so that a name that is not UTF-8 stays what it is on disk."""
    from git_memex.core.gitcmd import run_git

    os.environ.setdefault("GIT_TERMINAL_PROMPT", "0")  # never wait for a password (run_git keeps it)
    r = run_git(args, cwd, timeout=GIT_TIMEOUT_S, umask=0o077)  # the data root is owner-only (docs/security.md)
    if r is None:
        return -1, "", "git could not be run or did not finish in time"
    out = r.stdout.decode("utf-8", "surrogateescape" if paths else "replace")
    return r.returncode, out, r.stderr.decode("utf-8", "replace")


def _first_line(err: str) -> str:
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    for ln in lines:
        if ln.lower().startswith("fatal:"):
            return ln[len("fatal:"):].strip()
    return lines[0] if lines else "no message from git"


def _check_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise UsageError(f"{name!r} is not a valid org name; use lowercase letters, digits and dashes "
                         "(at most 40, starting with a letter or digit)")


# One subscription is a `memex.<section>.NAME.*` block of git config, repo-local or global; org
# subscriptions (section "org") and remote ones (section "remote", remote/subscriptions.py) share
# these three helpers.
def config_args(ctx: Context, global_: bool, what: str = "org add") -> tuple[list[str], Path | None]:
    """The `git config` scope flag and the folder to run it in (`what` names the command that
    needs a repository without --global)."""
    if global_:
        return ["--global"], None
    repo = ctx.require_repo(f"{what} without --global")
    return ["--local"], repo.work_tree


def recorded_in(ctx: Context, name: str, section: str = "org") -> list[str]:
    """Where the subscription to `name` is recorded: "repo", "global", both or neither."""
    out = []
    if ctx.repo is not None:
        code, _, _ = _git(["config", "--local", "--get", f"memex.{section}.{name}.url"], ctx.repo.work_tree)
        if code == 0:
            out.append("repo")
    code, _, _ = _git(["config", "--global", "--get", f"memex.{section}.{name}.url"])
    if code == 0:
        out.append("global")
    return out


def unsubscribe(ctx: Context, name: str, scopes: list[str], section: str = "org") -> None:
    """Remove the `memex.<section>.NAME` block from each git config in `scopes` ("repo", "global")."""
    for scope in scopes:
        flag, cwd = (["--local"], ctx.repo.work_tree if ctx.repo else None) if scope == "repo" else (["--global"], None)
        code, _, err = _git(["config", *flag, "--remove-section", f"memex.{section}.{name}"], cwd)
        if code != 0:
            raise MemexError(f"cannot remove the subscription from git config ({_first_line(err)})", FAILED)


def _origin(clone: Path) -> str | None:
    code, out, _ = _git(["config", "--get", "remote.origin.url"], clone)
    return out.strip() if code == 0 else None


def _upstream_branch(clone: Path) -> str | None:
    """The branch of origin the clone's HEAD follows (`main` for `origin/main`), or None."""
    code, out, _ = _git(["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], clone)
    up = out.strip()
    return up[len("origin/"):] if code == 0 and up.startswith("origin/") else None


def default_branch(clone: Path) -> str | None:
    """origin's HEAD branch as the clone knows it (`refs/remotes/origin/HEAD`, set by `git clone`)."""
    code, out, _ = _git(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], clone)
    ref = out.strip()
    return ref[len("origin/"):] if code == 0 and ref.startswith("origin/") else None


def followed_branch(ctx: Context, name: str) -> str | None:
    """The branch of origin subscription `name` follows: `memex.org.NAME.branch`, else origin's
    default branch; None when neither can be told."""
    return ctx.config.get(f"memex.org.{name}.branch") or default_branch(ctx.org_clone(name))


def _index(ctx: Context, name: str, diff: tuple[str, str, list[str]] | None = None) -> dict[str, Any]:
    """Bring org `name`'s index in line with its clone: with `diff` (old commit, new commit, the
    paths that changed, from a pull), only those files are read; otherwise every file is checked."""
    from git_memex.index.database import Index, RefreshStats
    from git_memex.index.stores import apply_org_diff, refresh_org

    private_mkdir(ctx.org_index(name).parent)
    with Index(ctx.org_index(name), root=ctx.org_clone(name)) as idx:
        s = apply_org_diff(ctx, name, idx, *diff) if diff is not None else None
        if s is None:
            s = refresh_org(ctx, name, idx, force=True) or RefreshStats()
        return {"added": s.added, "changed": s.changed, "removed": s.removed, "quarantined": s.quarantined,
                "memories": idx.count(), **({"warnings": s.warnings} if s.warnings else {})}


# ------------------------------------------------------------------ add
def users_record(ctx: Context, name: str) -> Path:
    """The record of the configs whose subscription uses org `name`'s clone (`git.sharers`), in
    its git dir beside the index, so the work tree stays clean."""
    from git_memex.git.sharers import USERS

    return ctx.org_index(name).parent / USERS


def add(ctx: Context, name: str, url: str, *, branch: str | None = None, global_: bool = False) -> dict[str, Any]:
    from git_memex.git import sharers

    _check_name(name)
    if not url.strip():
        raise UsageError("org add needs the URL of the org memory repository")
    if branch is not None and (not branch.strip() or branch.startswith("-")):
        raise UsageError(f"{branch!r} is not a branch name")
    scope_flag, cwd = config_args(ctx, global_)
    if "://" not in url and (ctx.cwd / url).exists():
        url = str((ctx.cwd / url).resolve())  # a local path, recorded so that it works from anywhere
    if name in ctx.org_names():
        raise MemexError(f"org {name} is already subscribed (to {ctx.config.get(f'memex.org.{name}.url')}); "
                         f"`git memex org remove {name}` first, or pick another name", USAGE)
    prepare_data_root(ctx.data_root)
    clone = ctx.org_clone(name)
    reused = False
    if clone.exists():
        # another project on this machine may subscribe to the same org under the same name
        from git_memex.index.stores import org_folders

        if _origin(clone) != url or not org_folders(clone):
            raise MemexError(f"{clone} already holds another clone (of {_origin(clone) or 'something else'}); "
                             f"pick another name for {url}", USAGE)
        follows, wanted = _upstream_branch(clone), branch or default_branch(clone)
        if follows is not None and wanted is not None and follows != wanted:
            raise MemexError(f"the clone of org {name} another project uses ({clone}) follows branch {follows}, "
                             f"not {wanted}; subscribe with --branch {follows}, or pick another name for branch "
                             f"{wanted}; nothing was changed", USAGE)
        reused = True
    else:
        private_mkdir(clone.parent)
        tmp = clone.parent / f".{name}.adding-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        args = ["clone", "--quiet", "--no-tags", "--no-hardlinks", *(["--branch", branch] if branch else []), "--", url, str(tmp)]
        code, _, err = _git(args, clone.parent)
        try:
            if code != 0:
                raise MemexError(f"cannot clone {url} ({_first_line(err)}); nothing was changed", FAILED)
            from git_memex.index.stores import SEED_FOLDERS

            if not is_memory_repo(tmp):
                raise MemexError(f"{url} is not a memory repository (it has no {DEFAULT_MEMORY_DIR}/ folder, and no "
                                 f"{', '.join(d + '/' for d in SEED_FOLDERS)} folder at its root holds a memory "
                                 "file); nothing was changed", FAILED)
            tmp.rename(clone)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    try:
        sets = [[f"memex.org.{name}.url", url], *([[f"memex.org.{name}.branch", branch]] if branch else [])]
        for key, value in sets:
            code, _, err = _git(["config", *scope_flag, key, value], cwd)
            if code != 0:
                raise MemexError(f"cannot record the subscription in git config ({_first_line(err)}); "
                                 "nothing was changed", FAILED)
        ctx.config[f"memex.org.{name}.url"] = url
        stats = _index(ctx, name)
        from git_memex.agents.owners import remember_anchor

        remember_anchor(clone)  # the OWNERS history trusted from now on (docs/org.md, "Owners in force")
        sharers.note(ctx, users_record(ctx, name), recorded_in(ctx, name))  # the clone is shared (git/sharers.py)
    except BaseException:
        _git(["config", *scope_flag, "--remove-section", f"memex.org.{name}"], cwd)
        if not reused:
            shutil.rmtree(clone, ignore_errors=True)
        raise
    return {"name": name, "url": url, "branch": branch, "path": str(clone), "recorded": scope_flag[0][2:],
            "reused_clone": reused, "head": _head(clone), **stats}


def is_memory_repo(clone: Path) -> bool:
    """The rule `org add` applies (docs/org.md, "The org repository"): the clone has the memory
    folder `.ai/open-memex/` (flat or with subfolders, empty or not), or, in the seed's layout
    (a `company-memory` repository, docs/org.md, "The org repository"), no such folder but category folders at its root
    (engineering/, architecture/, decisions/, lessons/, policies/) of which at least one holds a
    memory file (frontmatter with `id` and `schema_version`)."""
    from git_memex.index.stores import holds_memory

    return (clone / DEFAULT_MEMORY_DIR).is_dir() or holds_memory(clone)


def undo_add(ctx: Context, res: dict[str, Any]) -> None:
    """Take back what `add` just did (its result `res`): the config it recorded and, unless it
    reused a clone another project shares, the clone."""
    scope_flag, cwd = config_args(ctx, res["recorded"] == "global")
    _git(["config", *scope_flag, "--remove-section", f"memex.org.{res['name']}"], cwd)
    ctx.config.pop(f"memex.org.{res['name']}.url", None)
    if not res["reused_clone"]:
        shutil.rmtree(ctx.org_clone(res["name"]), ignore_errors=True)


def _head(clone: Path) -> str | None:
    code, out, _ = _git(["rev-parse", "--verify", "--quiet", "HEAD"], clone)
    return out.strip() if code == 0 else None


# ------------------------------------------------------------------ list
def list_orgs(ctx: Context) -> list[dict[str, Any]]:
    from git_memex.index.database import Index
    from git_memex.index.stores import org_folders

    out = []
    for name in ctx.org_names():
        clone = ctx.org_clone(name)
        ok = bool(org_folders(clone))
        entry: dict[str, Any] = {"name": name, "url": ctx.config.get(f"memex.org.{name}.url"),
                                 "branch": ctx.config.get(f"memex.org.{name}.branch"), "path": str(clone),
                                 "state": "ok" if ok else "missing", "head": _head(clone) if ok else None,
                                 "memories": None}
        if ok and ctx.org_index(name).exists():
            with Index(ctx.org_index(name), root=ctx.org_clone(name)) as idx:
                entry["memories"] = idx.count()
        out.append(entry)
    return out


# ------------------------------------------------------------------ remove
def unpushed_branches(clone: Path) -> list[str]:
    """The clone's local branches holding a commit that no remote-tracking branch holds: work that
    exists nowhere else, such as a `propose --to org` branch not yet pushed (one `git log`)."""
    if not (clone / ".git").is_dir():
        return []
    code, out, err = _git(["log", "--branches", "--not", "--remotes", "--source", "--format=%S"], clone)
    if code != 0:
        raise MemexError(f"git cannot list the unpushed branches of {clone} ({_first_line(err)}); nothing was changed",
                         FAILED)
    return sorted({ln.strip().removeprefix("refs/heads/") for ln in out.split("\n") if ln.strip()})


def local_changes(clone: Path) -> list[str]:
    """What else in the clone exists nowhere else: uncommitted changes (`git status`) and stashes."""
    if not (clone / ".git").is_dir():
        return []
    out: list[str] = []
    code, status, err = _git(["status", "--porcelain", "-z", "--no-renames", "--untracked-files=normal"], clone)
    if code != 0:
        raise MemexError(f"git cannot read the status of {clone} ({_first_line(err)}); nothing was changed", FAILED)
    n = len([entry for entry in status.split("\0") if entry.strip()])
    if n:
        out.append(f"{n} uncommitted change{'s' if n != 1 else ''}")
    code, stashes, _ = _git(["stash", "list"], clone)
    k = len([ln for ln in stashes.split("\n") if ln.strip()]) if code == 0 else 0
    if k:
        out.append(f"{k} stash{'es' if k != 1 else ''}")
    return out


def remove(ctx: Context, name: str, *, force: bool = False) -> dict[str, Any]:
    """Unsubscribe and delete the clone, unless another project's recorded subscription still
    uses it (`kept_for`: the clone stays as it is). A clone that would be deleted holding
    unpushed branches (an org proposal not yet pushed) is refused (exit 1, nothing changed)
    naming them, unless `force`."""
    import shlex

    from git_memex.git import sharers

    _check_name(name)
    where = recorded_in(ctx, name)
    if not where:
        raise MemexError(f"org {name} is not subscribed here; `git memex org list` shows the subscriptions", USAGE)
    clone = ctx.org_clone(name)
    url = ctx.config.get(f"memex.org.{name}.url")
    others = [] if os.path.islink(clone) else sharers.others(ctx, users_record(ctx, name), "org", name, where, url)
    if others:  # another project's subscription still uses the clone: only this one goes
        unsubscribe(ctx, name, where)
        sharers.save(users_record(ctx, name), others)
        return {"name": name, "removed_from": where, "path": str(clone), "clone_removed": False,
                "kept_for": others, "deleted_unpushed": []}
    unpushed = unpushed_branches(ctx.org_clone(name))
    if unpushed and not force:
        q = shlex.quote
        n = len(unpushed)
        raise MemexError(f"the clone of org {name} holds {n} unpushed branch{'es' if n != 1 else ''} "
                         f"({', '.join(unpushed)}), which deleting it would lose; push "
                         f"{'them' if n != 1 else 'it'} first (`git -C {q(str(ctx.org_clone(name)))} push origin "
                         f"{' '.join(q(b) for b in unpushed)}`), or run `git memex org remove {name} --force` to delete "
                         f"{'them' if n != 1 else 'it'} with the clone; nothing was changed", USAGE)
    changes = local_changes(ctx.org_clone(name))
    if changes and not force:
        raise MemexError(f"the clone of org {name} holds {' and '.join(changes)} "
                         f"({ctx.org_clone(name)}), which deleting it would lose; commit and push them, or run "
                         f"`git memex org remove {name} --force` to delete them with the clone; nothing was changed",
                         USAGE)
    unsubscribe(ctx, name, where)
    existed = clone.exists()
    shutil.rmtree(clone, ignore_errors=True)
    return {"name": name, "removed_from": where, "path": str(clone), "clone_removed": existed, "kept_for": [],
            "deleted_unpushed": unpushed}


# ------------------------------------------------------------------ pull
def pull(ctx: Context, name: str | None = None) -> list[dict[str, Any]]:
    """Fetch and fast-forward each subscribed org clone (or only `name`), then reindex it. Every
    clone is checked before any is changed, so a missing one fails the whole call (exit 2)."""
    if name is not None:
        _check_name(name)
        if name not in ctx.org_names():
            raise MemexError(f"org {name} is not subscribed here; `git memex org list` shows the subscriptions", USAGE)
    names = [name] if name is not None else ctx.org_names()
    if not names:
        raise MemexError("no org memory repo is subscribed here; `git memex org add NAME URL` subscribes to one", USAGE)
    from git_memex.index.stores import org_folders

    for n in names:
        if not org_folders(ctx.org_clone(n)):
            raise MemexError(f"the clone of org {n} is missing ({ctx.org_clone(n)}, deleted by hand?); run "
                             f"`git memex org remove {n}` then `git memex org add {n} URL`; nothing was changed", FAILED)
    from git_memex.git import sharers

    for n in names:  # a subscription made before the record existed is recorded at its next pull
        sharers.note(ctx, users_record(ctx, n), recorded_in(ctx, n))
    return [_pull_one(ctx, n) for n in names]


def _pull_one(ctx: Context, name: str) -> dict[str, Any]:
    # Five git processes: fetch, one rev-parse for both commits and the upstream's name, the
    # ancestry check, the tree diff and the fast-forward; the index then reads only the files the
    # diff names (docs/org.md, "Freshness").
    clone = ctx.org_clone(name)
    # --no-recurse-submodules: git would otherwise read the clone's whole index to look for some
    code, _, err = _git(["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "origin"], clone)
    if code != 0:
        raise MemexError(f"cannot fetch org {name} ({_first_line(err)}); nothing was changed", FAILED)
    code, out, _ = _git(["rev-parse", "HEAD", "@{upstream}", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"],
                        clone)
    lines = out.split()
    if code != 0 or len(lines) != 3:
        raise MemexError(f"the clone of org {name} has no upstream branch; nothing was changed", FAILED)
    old, new, upstream = lines
    res: dict[str, Any] = {"name": name, "upstream": upstream, "old": old, "new": new, "changed": []}
    if old == new:
        res["state"] = "up-to-date"
        return res
    code, _, _ = _git(["merge-base", "--is-ancestor", old, new], clone)
    if code != 0:
        ahead, _, _ = _git(["merge-base", "--is-ancestor", new, old], clone)
        state = f"has local commits that {upstream} lacks" if ahead == 0 else f"has diverged from {upstream}"
        raise MemexError(f"the clone of org {name} {state}; it was left as it was (look in {clone})", FAILED)
    # plumbing, NUL-separated: no user diff setting and no path quoting changes what is read; the
    # folders of both layouts (docs/org.md), as the pull may be the one that changes the layout
    from git_memex.index.stores import SEED_FOLDERS, org_memory_path, org_tops

    before = org_tops(clone)
    code, out, _ = _git(["diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new, "--",
                         DEFAULT_MEMORY_DIR + "/", *(d + "/" for d in SEED_FOLDERS)], clone, paths=True)
    paths = [p for p in out.split("\0") if p] if code == 0 else None
    # a fast-forward that touches only what differs between the two commits (`merge --ff-only`
    # first re-stats every file of the work tree); it refuses to overwrite a local change
    code, _, err = _git(["reset", "--quiet", "--keep", new], clone)
    if code != 0:
        raise MemexError(f"cannot fast-forward org {name} ({_first_line(err)}); it was left as it was", FAILED)
    tops = org_tops(clone)
    changed = [p for p in paths or [] if org_memory_path(p, tops)]  # what the index reads: no hidden folder, text names
    exact = paths is not None and tops == before  # another set of top folders: every file is checked
    res.update(state="fast-forward", changed=changed,
               reindexed=_index(ctx, name, (old, new, paths) if exact and paths is not None else None))
    return res

"""Git-facing operations on the in-repo memory folder: pull, push, conflict listing and resolution."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import CONFLICT, FAILED, USAGE, MemexError, UsageError


def _repo(ctx: Context, what: str) -> Any:
    from git_memex.git import pygit

    info = ctx.require_repo(what)
    return pygit.open_repo(info.work_tree)


def reindex_paths(ctx: Context, rel_paths: list[str], trigger: str) -> Any:
    """Apply exactly these changed repo files to this work tree's index."""
    from git_memex.index.database import Index, Source

    assert ctx.repo is not None and ctx.repo_index is not None and ctx.memory_dir is not None
    with Index(ctx.repo_index, root=ctx.repo.work_tree) as idx:  # each file of the folder it lies in
        files = [ctx.repo.work_tree / p for p in rel_paths]
        return idx.apply_files([(Source("repo", f.parent, ctx.project_key), f) for f in files], trigger=trigger,
                               folders=[ctx.memory_dir])


def incoming_problems(ctx: Context, rel_paths: list[str]) -> list[Any]:
    """The secrets and conflict markers in memory files that just arrived in the work tree
    (a fast-forward, a merge, a checkout: no pre-commit or pre-merge-commit hook ran for them,
    and a teammate may have pushed with --no-verify). `secrets.scan.Finding`s: file, line
    and rule, never the secret itself."""
    from git_memex.core.files import UnreadableMemory, read_bytes
    from git_memex.secrets.scan import check_bytes

    assert ctx.repo is not None
    out: list[Any] = []
    for rel in rel_paths:
        try:  # the one safe reader: a file over the size limit is judged by its size, never read
            data = read_bytes(ctx.repo.work_tree / rel)
        except UnreadableMemory:
            continue  # deleted by the update, or one `left_out` names with the reader's reason
        out.extend(f for f in check_bytes(rel, data, patterns=ctx.redact_patterns)
                   if f.secret or f.rule.startswith("conflict-markers"))
    return out


def left_out(ctx: Context, rel_paths: list[str]) -> list[tuple[str, str]]:
    """(path relative to the work tree, reason) of each of these memory files that the index
    quarantines: read by the index's own reader (`database._load`), so the reason is the one
    `doctor` and `reindex` give. A deleted file is no problem."""
    from git_memex.index.database import _load

    assert ctx.repo is not None
    root = str(ctx.repo.work_tree)
    out: list[tuple[str, str]] = []
    for rel in rel_paths:
        path = ctx.repo.work_tree / rel
        if not rel.endswith(".md") or not os.path.lexists(path):
            continue
        _, m, why = _load(path, root)
        if m is None:
            out.append((rel, why or "unreadable"))
    return out


LEFT_OUT_SHOWN = 20
"""Files named one per line by `report_left_out`; past that, a count."""


def report_left_out(bad: list[tuple[str, str]], how: str) -> None:
    """Name each memory file an update brought that cannot be used, with its reason, and what to
    do: every other memory and command works (the file is quarantined, never an error)."""
    import sys

    if not bad:
        return
    n = len(bad)
    print(f"git-memex: {how} brought {n} memory file{'s' if n != 1 else ''} that cannot be read; "
          f"{'it is' if n == 1 else 'they are'} left out of search and context, everything else works:",
          file=sys.stderr)
    for rel, why in bad[:LEFT_OUT_SHOWN]:
        print(f"git-memex:   {rel}: {why}", file=sys.stderr)
    if n > LEFT_OUT_SHOWN:
        print(f"git-memex:   and {n - LEFT_OUT_SHOWN} more (`git memex doctor` lists them all)", file=sys.stderr)
    print("git-memex: fix or `git rm` each file and commit (`git log -1 -- FILE` shows who committed it); "
          "the next git-memex command reads it again, `git memex doctor` lists what is still left out",
          file=sys.stderr)


def report_incoming(problems: list[Any], how: str) -> None:
    """One stderr line per incoming problem, then what to do."""
    import sys

    for f in problems:
        print(f"git-memex: {how} brought {f}", file=sys.stderr)
    if problems:
        secret = any(f.secret for f in problems)
        print(f"git-memex: {len(problems)} problem(s) arrived in memory files"
              + (" (secrets are never shown, and every output of git-memex masks them, but the file in your "
                 "work tree and the commits hold them as they are: rotate the secret; `git memex doctor` names the "
                 "command that removes it from history)" if secret else "; run `git memex resolve`"), file=sys.stderr)


# ------------------------------------------------------------------ pull
def pull(ctx: Context) -> dict[str, Any]:
    from git_memex.git import pygit

    repo = _repo(ctx, "pull")
    branch, remote, upstream = pygit.upstream_of(repo)
    assert ctx.repo is not None
    pygit.fetch(remote, ctx.repo.work_tree)
    if upstream not in repo.references:
        import shlex

        theirs = upstream.removeprefix(f"refs/remotes/{remote}/")
        raise MemexError(f"the upstream of {branch} is {remote}/{theirs}, and {remote} has no such branch (deleted?); "
                         f"nothing was changed. Publish yours with `git push -u {shlex.quote(remote)} "
                         f"{shlex.quote(branch)}`, or pick another with `git branch --set-upstream-to`", FAILED)
    res = pygit.fast_forward(repo, upstream, ctx.memory_dir_rel)
    out: dict[str, Any] = {"state": res.state, "branch": branch, "upstream": upstream,
                           "old": res.old, "new": res.new, "changed": res.changed}
    if res.changed:
        out["problems"] = [{"path": f.path, "line": f.line, "rule": f.rule, "secret": f.secret}
                           for f in incoming_problems(ctx, res.changed)]
        out["unreadable"] = [{"path": rel, "reason": why} for rel, why in left_out(ctx, res.changed)]
    stats = reindex_paths(ctx, res.changed, "pull") if res.changed else None
    if stats is not None:
        out["reindexed"] = {"added": stats.added, "changed": stats.changed, "removed": stats.removed,
                            "quarantined": stats.quarantined}
    else:
        from git_memex.index.database import Index

        assert ctx.repo_index is not None
        with Index(ctx.repo_index, root=ctx.repo.work_tree) as idx:
            idx.mark_sync("pull")
    return out


# ------------------------------------------------------------------ push
def _git_text(work: Path, *args: str) -> str | None:
    """stdout of a read-only `git ARGS` in the work tree, or None when it failed."""
    from git_memex.core.gitcmd import run_git

    r = run_git(["-c", "core.quotePath=false", *args], work)
    if r is None or r.returncode != 0:
        return None
    return r.stdout.decode("utf-8", "surrogateescape")


def push(ctx: Context, *, run: bool = False, branch: str | None = None) -> dict[str, Any]:
    """The push for submitted work: the current branch's (or the local `branch`'s: `submit
    --branch` leaves the checkout where it was) commits that no remote-tracking ref of its remote
    holds yet (what `git push` would send), checked to change only memory files.

    Printed by default; with `run` it is run with the user's own git (their credentials).
    Refused (exit 2, nothing pushed) when HEAD is detached, there is no remote, or, with `run`,
    when those commits also change files outside the memory folder: that is not only submitted
    work, so the user pushes it themselves. See docs/git.md.
    """
    import shlex

    from git_memex.core.gitcmd import Fail, in_memory_dir, run_git

    work = ctx.require_repo("push").work_tree
    import shutil

    if shutil.which("git") is None:  # every answer below would read as "no branch" or "no remote"
        raise MemexError("push runs your own git, and there is none on PATH; install git or put it on PATH "
                         "(nothing was pushed)", FAILED)
    mem = ctx.memory_dir_rel
    if branch is not None:
        if (branch.startswith("-") or _git_text(work, "check-ref-format", "--branch", branch) is None
                or _git_text(work, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}") is None):
            raise MemexError(f"--branch {shlex.quote(branch)} is not a local branch; `git branch` lists them "
                             "(nothing was pushed)", USAGE)
    else:
        branch = (_git_text(work, "symbolic-ref", "--quiet", "--short", "HEAD") or "").strip()
    if not branch:
        raise MemexError("HEAD is detached; check out the branch `git memex submit` committed to (or name it with "
                         "--branch), then push; nothing was pushed", FAILED)
    if _git_text(work, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}") is None:
        raise MemexError(f"branch {branch} has no commits yet; submit something first (nothing was pushed)", FAILED)
    remotes = (_git_text(work, "remote") or "").split()
    remote = (_git_text(work, "config", "--get", f"branch.{branch}.remote") or "").strip()
    merge = (_git_text(work, "config", "--get", f"branch.{branch}.merge") or "").strip()
    upstream = merge.removeprefix("refs/heads/") if remote in remotes and merge.startswith("refs/heads/") else None
    if upstream is None:
        if not remotes:
            raise MemexError("this repository has no remote; add one with `git remote add origin URL` "
                             "(nothing was pushed)", FAILED)
        remote = "origin" if "origin" in remotes else remotes[0]
    q = shlex.quote
    args = push_args(remote, branch, upstream)
    command = "git " + " ".join(q(a) for a in args)
    log = _git_text(work, "log", "--format=format:%x01%H", "--name-only", "--no-renames", "-m",
                    f"refs/heads/{branch}", "--not", f"--remotes={remote}", "--")
    if log is None:
        raise MemexError(f"could not list the commits of {branch} that {remote} lacks; nothing was pushed", FAILED)
    commits: list[str] = []
    memory: set[str] = set()
    other: set[str] = set()
    for line in log.splitlines():
        if line.startswith("\x01"):
            commits.append(line[1:])
        elif in_memory_dir(line, mem):
            memory.add(line)
        elif line.strip() and not line.startswith(mem.rstrip("/") + "/"):  # e.g. its .gitkeep is not "other"
            other.add(line)
    base = (_git_text(work, "symbolic-ref", "--quiet", "--short", f"refs/remotes/{remote}/HEAD") or "").strip()
    base = base.split("/", 1)[1] if "/" in base else ""
    if not base:  # no refs/remotes/REMOTE/HEAD (a clone of an empty remote, `remote add` + `push -u`)
        base = ctx.setting("defaultBranch") or ctx.setting("initBranch") or ""
    target = upstream or branch
    out: dict[str, Any] = {"branch": branch, "remote": remote, "upstream": upstream, "command": command,
                           "commits": commits, "memory_files": sorted(memory), "other_files": sorted(other),
                           "pushed": False, "pr_command": None}
    if base and base != target:
        out["pr_command"] = f"gh pr create --base {q(base)} --head {q(target)}"
    if not commits:
        out["state"] = "up-to-date"
        return out
    if not memory:
        out["state"] = "nothing-submitted"
        return out
    out["state"] = "printed"
    if not run:
        return out
    if upstream is None and _git_text(work, "rev-parse", "--verify", "--quiet", f"refs/remotes/{remote}/{branch}"):
        raise MemexError(f"{remote} already has a branch {branch} (refs/remotes/{remote}/{branch}) that this push "
                         f"did not create, and {branch} here does not track it; push never adds to a branch someone "
                         "else made: push it yourself if it is yours, or submit to a new branch (nothing was pushed)",
                         FAILED)
    if other:
        n = len(other)
        raise MemexError(f"{branch} also carries commits that change {n} file{'s' if n != 1 else ''} outside {mem}/ "
                         f"(such as {sorted(other)[0]}), so this is not only submitted work; review them and push "
                         f"it yourself with `{command}` (nothing was pushed)", FAILED)
    run_git(list(args), work, timeout=600, literal=False,
            fail=Fail("git is not installed or not on PATH; nothing was pushed",
                      f"`{command}` took more than 10 minutes and was stopped",
                      f"`{command}` failed ({{}}); nothing was pushed"))
    out["pushed"] = True
    out["state"] = "pushed"
    return out


def push_args(remote: str, branch: str, upstream: str | None) -> list[str]:
    """The `git push` arguments that publish the local `branch`: full refspecs (a tag or another
    ref of the same short name cannot make it ambiguous, "src refspec v1 matches more than one"),
    and on the first push (no `upstream` yet) `-u` with `--force-with-lease=refs/heads/B:` (an empty
    expectation: the remote must not have B yet), so a push never lands on a branch someone else
    made on the remote in the meantime."""
    if upstream is None:
        ref = f"refs/heads/{branch}"
        return ["push", "-u", f"--force-with-lease={ref}:", remote, f"{ref}:{ref}"]
    return ["push", remote, f"refs/heads/{branch}:refs/heads/{upstream}"]


# ------------------------------------------------------------------ resolve
@record
class Conflict:
    path: str
    id: str


def list_conflicts(ctx: Context) -> list[Conflict]:
    from git_memex.git import pygit

    repo = _repo(ctx, "resolve")
    return [Conflict(p, Path(p).stem) for p in sorted(pygit.conflicts(repo, ctx.memory_dir_rel))]


@record
class ResolveOutcome:
    path: str
    clean: bool
    auto_merged: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


def _decode(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", errors="replace")


def resolve(ctx: Context, target: str) -> ResolveOutcome:
    """Merge one conflicted memory file from its index stages; write and stage it only when clean."""
    from git_memex.git import pygit
    from git_memex.git.merge import merge_texts

    repo = _repo(ctx, "resolve")
    stages = pygit.conflicts(repo, ctx.memory_dir_rel)
    if not stages:
        raise MemexError("there are no conflicted memory files", USAGE)
    assert ctx.repo is not None
    wanted = None
    t = target.strip()
    for p in stages:
        if t in (p, Path(p).name, Path(p).stem) or (
            Path(t).is_absolute() and Path(t) == ctx.repo.work_tree / p
        ) or (len(t) >= 6 and Path(p).stem.startswith(t.upper())):
            wanted = p
            break
    if wanted is None:
        try:
            rel = str((Path.cwd() / t).resolve().relative_to(ctx.repo.work_tree.resolve()))
            if rel in stages:
                wanted = rel
        except ValueError:
            pass
    if wanted is None:
        raise UsageError(f"{target} is not a conflicted memory file; `git memex resolve` lists them")
    base, ours, theirs = stages[wanted]
    if ours is None or theirs is None:
        side = "ours" if ours is None else "theirs"
        raise MemexError(f"{wanted} was deleted on {side} and changed on the other side; keep or delete it with git, then `git add` it", CONFLICT)
    result = merge_texts(_decode(base), _decode(ours) or "", _decode(theirs) or "")
    if not result.clean:
        from git_memex.secrets.admission import mask_value

        # the other side's secret must not reach the terminal or the agent: every value is masked
        conflicts, _masked = mask_value(
            [{"field": c.field, "kind": c.kind, "base": c.base, "ours": c.ours, "theirs": c.theirs} for c in result.conflicts],
            ctx.redact_patterns,
        )
        return ResolveOutcome(wanted, False, list(result.auto_merged), conflicts,
                              mask_value(getattr(result, "note", ""), ctx.redact_patterns)[0])
    from git_memex.secrets.scan import check_text

    findings = check_text(wanted, result.text, fmt=False, patterns=ctx.redact_patterns)
    if findings:
        raise MemexError(f"the merged {wanted} would contain a secret ({findings[0].rule}); edit it by hand", CONFLICT)
    pygit.stage_resolved(repo, wanted, result.text.encode("utf-8"))
    from git_memex.core.gitcmd import in_memory_dir

    if in_memory_dir(wanted, ctx.memory_dir_rel):  # a file the project index reads
        reindex_paths(ctx, [wanted], "resolve")
    return ResolveOutcome(wanted, True, list(result.auto_merged))

"""Git-facing operations on the in-repo memory folder: pull, push, conflict listing and resolution."""

from __future__ import annotations

import os
from pathlib import Path

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import CONFLICT, FAILED, USAGE, MemexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported at run time: the post-merge hook imports this module
    from typing import Any

    from git_memex.index.database import Loaded


def _repo(ctx: Context, what: str) -> Any:
    from git_memex.git import pygit

    info = ctx.require_repo(what)
    return pygit.open_repo(info.work_tree)


def read_incoming(ctx: Context, rel_paths: list[str]) -> list[Loaded]:
    """These work-tree memory files, each read once through the index's reader
    (`database.load_files`: the one safe reader, then the parser), for `incoming_problems`,
    `left_out` and `reindex_paths` to share: an update of N files reads and parses N files."""
    from git_memex.index.database import Source, load_files

    assert ctx.repo is not None
    files = [ctx.repo.work_tree / p for p in rel_paths]
    return load_files([(Source("repo", f.parent, ctx.project_key), f) for f in files], os.path.realpath(ctx.repo.work_tree))


def reindex_paths(ctx: Context, rel_paths: list[str], trigger: str, loaded: list[Loaded] | None = None) -> Any:
    """Apply exactly these changed repo files to this work tree's index (`loaded`: as
    `read_incoming` read them)."""
    from git_memex.index.database import Index, Source

    assert ctx.repo is not None and ctx.repo_index is not None and ctx.memory_dir is not None
    with Index(ctx.repo_index, root=ctx.repo.work_tree) as idx:  # each file of the folder it lies in
        files = [ctx.repo.work_tree / p for p in rel_paths]
        return idx.apply_files([(Source("repo", f.parent, ctx.project_key), f) for f in files], trigger=trigger,
                               folders=[ctx.memory_dir], loaded=loaded)


class Staged(list[str]):
    """What `stage` staged (paths relative to the work tree), and in `forced` those of them a
    `.gitignore` rule ignores, staged with `git add -f` (the caller says so)."""

    def __init__(self, rels: list[str], forced: list[str]) -> None:
        super().__init__(rels)
        self.forced = forced


def staged_fields(staged: list[str]) -> dict[str, Any]:
    """A result's `staged` (and `forced`, when a `.gitignore` rule ignored any of them)."""
    forced = list(getattr(staged, "forced", []) or [])
    return {"staged": list(staged), **({"forced": forced} if forced else {})}


def stage(ctx: Context, paths: list[Path], what: str = "the change") -> Staged:
    """Stage exactly these files of the work tree as they are now, so that a plain `git commit`
    records everything a review command wrote (docs/git.md, "What a command stages"): `git add`
    for a file that exists, `git rm --cached` for one that is gone (a deleted record or a
    forgotten memory; nothing when git never tracked it). These are git-memex's own files (a
    memory, its approval and revocation records): one that a `.gitignore` rule ignores (a broad
    `*.json`, say) is staged all the same, with `git add -f`, and named in `forced`, since a rule
    whose record is left out is not served. Returns their paths relative to the work tree. A git
    that fails is one sentence naming the paths and the `git add` to run (the files themselves
    are written)."""
    from git_memex.core.gitcmd import error_line, run_git

    assert ctx.repo is not None
    root = ctx.repo.work_tree
    rels = list(dict.fromkeys(p.relative_to(root).as_posix() for p in paths))
    present = [r for r in rels if (root / r).exists()]
    gone = [r for r in rels if r not in present]
    forced: list[str] = []
    if present:  # ignored (tracked or not, `--no-index`): a plain `git add` refuses an untracked one;
        # literal=False: check-ignore refuses `--literal-pathspecs` (the names come on stdin)
        proc = run_git(["check-ignore", "--no-index", "-z", "--stdin"], root, timeout=60, literal=False,
                       input=b"".join(r.encode("utf-8", "surrogateescape") + b"\0" for r in present))
        if proc is not None and proc.returncode == 0:
            hit = set(proc.stdout.decode("utf-8", "surrogateescape").split("\0"))
            forced = [r for r in present if r in hit]
    plain = [r for r in present if r not in forced]
    for args, group in ((["add", "--"], plain), (["add", "-f", "--"], forced),
                        (["rm", "-q", "--cached", "--ignore-unmatch", "--"], gone)):
        if not group:
            continue
        proc = run_git([*args, *group], root, timeout=60)
        if proc is None or proc.returncode != 0:
            detail = error_line(proc.stderr.decode("utf-8", "replace")) if proc is not None else "git did not run"
            raise MemexError(f"{what} was written but git could not stage {', '.join(group)} ({detail}); run "
                             f"`git add -f -A -- {' '.join(group)}`", FAILED)
    return Staged(rels, forced)


def incoming_problems(ctx: Context, rel_paths: list[str], loaded: list[Loaded] | None = None) -> list[Any]:
    """The secrets and conflict markers in memory files that just arrived in the work tree
    (a fast-forward, a merge, a checkout: no pre-commit or pre-merge-commit hook ran for them,
    and a teammate may have pushed with --no-verify). `secrets.scan.Finding`s: file, line
    and rule, never the secret itself. `loaded`: the files as `read_incoming` read them."""
    from git_memex.core.files import conflict_marker_line
    from git_memex.core.frontmatter import MAX_FILE_BYTES
    from git_memex.secrets.scan import check_bytes

    assert ctx.repo is not None
    out: list[Any] = []
    for rel, (_src, _path, st, data, _m, why) in zip(rel_paths, loaded or read_incoming(ctx, rel_paths), strict=True):
        if st is None or (not data and why is not None):
            continue  # deleted by the update, or one `left_out` names with the reader's reason (never read)
        if len(data) > MAX_FILE_BYTES:
            continue  # `left_out` names it (too large); its bytes are never scanned
        # The format checks only for conflict markers (the reader's verdict is `left_out`'s, from
        # the parse `read_incoming` made): with markers, `check_format` reports them alone, unparsed;
        # without, the file is not parsed a second time.
        markers = b"<<<<<<<" in data and conflict_marker_line(data.decode("utf-8", "replace")) is not None
        out.extend(f for f in check_bytes(rel, data, fmt=markers, patterns=ctx.redact_patterns)
                   if f.secret or f.rule.startswith("conflict-markers"))
    return out


def left_out(ctx: Context, rel_paths: list[str], loaded: list[Loaded] | None = None) -> list[tuple[str, str]]:
    """(path relative to the work tree, reason) of each of these memory files that the index
    quarantines: read by the index's own reader (`database._load`), so the reason is the one
    `doctor` and `reindex` give. A deleted file is no problem. `loaded`: as `read_incoming`
    read them."""
    assert ctx.repo is not None
    out: list[tuple[str, str]] = []
    for rel, (_src, _path, st, _raw, m, why) in zip(rel_paths, loaded or read_incoming(ctx, rel_paths), strict=True):
        if not rel.endswith(".md") or st is None:
            continue
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
    from git_memex.core.gitcmd import log_changes

    log = log_changes(["-m", f"refs/heads/{branch}", "--not", f"--remotes={remote}", "--"], work)
    if log is None:
        raise MemexError(f"could not list the commits of {branch} that {remote} lacks; nothing was pushed", FAILED)
    commits: list[str] = list(dict.fromkeys(commit for commit, _parents, _fields, _changes in log))
    memory: set[str] = set()
    other: set[str] = set()
    for _commit, _parents, _fields, changes in log:
        for _status, _blob, path in changes:
            if in_memory_dir(path, mem):
                memory.add(path)
            elif path and not path.startswith(mem.rstrip("/") + "/"):  # e.g. its .gitkeep is not "other"
                other.add(path)
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
    return [Conflict(p, Path(p).stem) for p in sorted(pygit.conflicts(repo, ctx.memory_dir_rel, records=True))]


@record
class ResolveOutcome:
    path: str
    clean: bool
    auto_merged: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    side: str | None = None  # `--ours`/`--theirs`: the side that settled the conflicts
    taken: list[str] = field(default_factory=list)  # the fields (and "body") that side decided
    deleted: bool = False  # the side taken had deleted the file: it was removed (`git rm`)


def _decode(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", errors="replace")


SIDES = ("ours", "theirs")


def _locate(ctx: Context, target: str) -> tuple[Any, str, tuple[bytes | None, bytes | None, bytes | None]]:
    """(pygit2 repository, path relative to the work tree, its index stages 1/2/3) of the one
    conflicted memory file `target` names (id, id prefix of 6+, file name or path)."""
    from git_memex.core.gitcmd import is_record_path
    from git_memex.git import pygit

    repo = _repo(ctx, "resolve")
    stages = pygit.conflicts(repo, ctx.memory_dir_rel, records=True)
    if not stages:
        raise MemexError("there are no conflicted memory files", USAGE)
    assert ctx.repo is not None
    wanted = None
    t = target.strip()
    for p in stages:  # a memory file by id or prefix too; a record by its path or file name only
        record = is_record_path(p, ctx.memory_dir_rel)
        if t in (p, Path(p).name) or (not record and t == Path(p).stem) or (
            Path(t).is_absolute() and Path(t) == ctx.repo.work_tree / p
        ) or (not record and len(t) >= 6 and Path(p).stem.startswith(t.upper())):
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
    odd = pygit.odd_conflict(repo, wanted)
    if odd is not None:
        raise MemexError(f"{wanted} is not one file in three versions ({odd}): resolve takes no side there, and "
                         f"nothing was changed; keep the memory file you want at {wanted} with git (`git checkout "
                         f"--ours` or `--theirs`, or move the other file back), then `git add` it and `git rm` the "
                         "other", CONFLICT)
    return repo, wanted, stages[wanted]


def stages_digest(stages: tuple[bytes | None, bytes | None, bytes | None]) -> str:
    """What names one conflict's three versions: a caller that showed them to a person passes it
    back as `expect`, and a conflict that changed meanwhile is refused."""
    import hashlib

    h = hashlib.sha256()
    for blob in stages:
        h.update(b"-" if blob is None else b"+%d:" % len(blob) + blob)
    return h.hexdigest()


def conflict_view(ctx: Context, target: str, side: str) -> dict[str, Any]:
    """What `resolve(target, side=side)` would do, for a person to see before deciding: the path,
    whether any of the three versions is a rule (`role: instruction`, or a version the reader
    cannot read, which might be one), the fields the side would decide, and `expect`. Nothing is
    written."""
    from git_memex.core.frontmatter import FrontmatterError, parse
    from git_memex.core.gitcmd import is_record_path
    from git_memex.git.merge import merge_texts
    from git_memex.secrets.admission import mask_value

    _repo_, wanted, stages = _locate(ctx, target)
    if is_record_path(wanted, ctx.memory_dir_rel):  # a rule's approval: always the person's call
        kept = stages[1 if side == "ours" else 2]
        return {"path": wanted, "side": side, "rule": True, "taken": ["record"], "after": {},
                "body": mask_value(_decode(kept) or "", ctx.redact_patterns)[0], "deleted": kept is None,
                "expect": stages_digest(stages)}
    rule = False
    bodies: dict[str, str] = {}
    for name, blob in zip(("base", *SIDES), stages, strict=True):
        if blob is None:
            continue
        try:
            meta, body = parse(blob.decode("utf-8"))
        except (UnicodeDecodeError, FrontmatterError, ValueError):
            rule = True
            continue
        bodies[name] = body
        rule = rule or str(meta.get("role") or "") == "instruction"
    base, ours, theirs = stages
    after: dict[str, Any] = {}
    if ours is None or theirs is None:
        kept = ours if side == "ours" else theirs
        taken = ["deleted"] if kept is None else ["file"]
        text = None if kept is None else _decode(kept)
    else:
        result = merge_texts(_decode(base), _decode(ours) or "", _decode(theirs) or "", prefer=side)
        taken, text = list(result.taken), result.text
    try:
        meta = parse(text)[0] if text is not None else {}
        after = {k: meta.get(k) for k in ("status", "instruction_state", "review_state") if k in meta}
    except (FrontmatterError, ValueError):
        after = {}
    shown = mask_value(bodies.get(side) or "", ctx.redact_patterns)[0]
    return {"path": wanted, "side": side, "rule": rule, "taken": taken, "body": shown, "after": after,
            "deleted": text is None, "expect": stages_digest(stages)}


def resolve(ctx: Context, target: str, side: str | None = None, expect: str | None = None) -> ResolveOutcome:
    """Merge one conflicted memory file from its index stages; write and stage it only when clean.

    With `side` ("ours"/"theirs", as `git checkout --ours/--theirs` names them) every conflict is
    settled by that side and the rest stays merged (`merge.merge_texts(prefer=...)`); a file that
    side deleted is removed. The result must pass the pre-commit check (`commit_problems`), or
    nothing is written (exit 3). `expect` (`stages_digest`): refuse, writing nothing, when the
    conflict is no longer the one a person was shown."""
    from git_memex.git import pygit
    from git_memex.git.merge import merge_texts

    if side is not None and side not in SIDES:
        raise UsageError(f"a side is ours or theirs, not {side!r}")
    repo, wanted, stages = _locate(ctx, target)
    if expect is not None and expect != stages_digest(stages):
        raise MemexError(f"the conflict in {wanted} changed since the person was shown it; nothing was written, "
                         "ask again", FAILED)
    assert ctx.repo is not None
    from git_memex.core.gitcmd import is_record_path

    if is_record_path(wanted, ctx.memory_dir_rel):
        return _resolve_record(ctx, repo, wanted, stages, side)
    base, ours, theirs = stages
    if ours is None or theirs is None:
        gone = "ours" if ours is None else "theirs"
        if side is None:
            raise MemexError(f"{wanted} was deleted on {gone} and changed on the other side; keep one with "
                             f"`git memex resolve {Path(wanted).stem} --ours` or `--theirs`, or with git, then "
                             "`git add` it", CONFLICT)
        kept = ours if side == "ours" else theirs
        if kept is None:
            from git_memex.core.gitcmd import Fail, run_git

            run_git(["rm", "-q", "--", wanted], ctx.repo.work_tree, timeout=60,
                    fail=Fail("git is not installed or not on PATH; nothing was written",
                              "git rm took too long; check `git status`", f"git rm {wanted} failed ({{}})"))
            _reindex_resolved(ctx, wanted)
            return ResolveOutcome(wanted, True, side=side, taken=["deleted"], deleted=True)
        _check_side(ctx, wanted, kept, side)
        pygit.stage_resolved(repo, wanted, kept)
        _reindex_resolved(ctx, wanted)
        return ResolveOutcome(wanted, True, side=side, taken=["file"])
    result = merge_texts(_decode(base), _decode(ours) or "", _decode(theirs) or "", prefer=side)
    if not result.clean:
        from git_memex.secrets.admission import mask_value

        # the other side's secret must not reach the terminal or the agent: every value is masked
        conflicts, _masked = mask_value(
            [{"field": c.field, "kind": c.kind, "base": c.base, "ours": c.ours, "theirs": c.theirs} for c in result.conflicts],
            ctx.redact_patterns,
        )
        return ResolveOutcome(wanted, False, list(result.auto_merged), conflicts,
                              mask_value(getattr(result, "note", ""), ctx.redact_patterns)[0])
    data = result.text.encode("utf-8")
    if side is not None:
        _check_side(ctx, wanted, data, side)
    else:
        from git_memex.secrets.scan import check_text

        findings = check_text(wanted, result.text, fmt=False, patterns=ctx.redact_patterns)
        if findings:
            raise MemexError(f"the merged {wanted} would contain a secret ({findings[0].rule}); edit it by hand",
                             CONFLICT)
    pygit.stage_resolved(repo, wanted, data)
    _reindex_resolved(ctx, wanted)
    return ResolveOutcome(wanted, True, list(result.auto_merged), side=side, taken=list(result.taken))


def _resolve_record(ctx: Context, repo: Any, wanted: str, stages: tuple[bytes | None, bytes | None, bytes | None],
                    side: str | None) -> ResolveOutcome:
    """A rule's conflicted record (two people approved, or revoked, on parallel branches).

    A revocation record (`<id>.revoked.json`) is merged: every approval either side revoked stays
    revoked (revocations only grow), whatever `side` says. An approval record is one person's act
    on one content: it is never merged, one side is taken whole (`side`; a side that deleted it
    removes it), so the record stays the one its approver committed, and without a side nothing
    is written (exit 3, one sentence naming both ways out)."""
    from git_memex.agents import approval_record as ar
    from git_memex.git import pygit

    name = Path(wanted).name
    mid = name[:-len(".revoked.json")] if name.endswith(".revoked.json") else name[:-len(".json")]
    if name.endswith(".revoked.json"):
        merged: dict[str, dict[str, Any]] = {}
        for blob in stages:
            if blob is None:
                continue
            entries = ar.parse_revocation(blob, mid)
            if entries is None:
                raise MemexError(f"a side of {wanted} is not a revocation record git-memex wrote; nothing was written; "
                                 "settle it by hand (keep every entry of both sides), then `git add` it", CONFLICT)
            for key, entry in entries.items():
                merged.setdefault(key, entry)
        pygit.stage_resolved(repo, wanted, ar.build_revocation(mid, merged.values()))
        return ResolveOutcome(wanted, True, ["revoked"], taken=[])
    if side is None:
        raise MemexError(f"the approval record of {mid} ({wanted}) conflicts: two approvals of the rule met in this "
                         f"merge; take one whole with `git memex resolve {wanted} --ours` (or `--theirs`), or `git rm` "
                         f"it and approve the rule again after the merge (`git memex instruction approve {mid}`); "
                         "nothing was written", CONFLICT)
    kept = stages[1] if side == "ours" else stages[2]
    if kept is None:
        from git_memex.core.gitcmd import Fail, run_git

        run_git(["rm", "-q", "--", wanted], ctx.repo.work_tree if ctx.repo else None, timeout=60,
                fail=Fail("git is not installed or not on PATH; nothing was written",
                          "git rm took too long; check `git status`", f"git rm {wanted} failed ({{}})"))
        return ResolveOutcome(wanted, True, side=side, taken=["deleted"], deleted=True)
    if isinstance(ar.parse(kept, mid), str):
        raise MemexError(f"{side}'s side of {wanted} is not an approval record git-memex wrote; nothing was written; "
                         f"take the other side, or approve the rule again", CONFLICT)
    pygit.stage_resolved(repo, wanted, kept)
    return ResolveOutcome(wanted, True, side=side, taken=["record"])


def _check_side(ctx: Context, wanted: str, data: bytes, side: str) -> None:
    """The file a side gives must pass the pre-commit check, or nothing is written (exit 3)."""
    from git_memex.secrets.scan import commit_problems

    problems = commit_problems(wanted, data, ctx.redact_patterns)
    if problems:
        f = problems[0]
        raise MemexError(f"taking {side} would leave {wanted} with what the pre-commit check refuses ({f.rule}, line "
                         f"{f.line}); nothing was written, edit the file by hand, then `git add` it", CONFLICT)


def _reindex_resolved(ctx: Context, wanted: str) -> None:
    from git_memex.core.gitcmd import in_memory_dir

    if in_memory_dir(wanted, ctx.memory_dir_rel):  # a file the project index reads
        reindex_paths(ctx, [wanted], "resolve")

"""Git-facing operations on the in-repo memory folder: pull, conflict listing and resolution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_memex.core.paths import Context
from git_memex.core.record import field, record
from git_memex.errors import MemexError, UsageError


def _repo(ctx: Context, what: str) -> Any:
    from git_memex.git import pygit

    info = ctx.require_repo(what)
    return pygit.open_repo(info.work_tree)


def reindex_paths(ctx: Context, rel_paths: list[str], trigger: str) -> Any:
    """Apply exactly these changed repo files to this work tree's index."""
    from git_memex.index.refresh import Index, Source

    assert ctx.repo is not None and ctx.repo_index is not None and ctx.memory_dir is not None
    with Index(ctx.repo_index) as idx:
        return idx.apply_paths(Source("repo", ctx.memory_dir, ctx.project_key),
                               [ctx.repo.work_tree / p for p in rel_paths], trigger=trigger)  # fmt: skip


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
                         f"{shlex.quote(branch)}`, or pick another with `git branch --set-upstream-to`", 2)  # fmt: skip
    res = pygit.fast_forward(repo, upstream, ctx.memory_dir_rel)
    out: dict[str, Any] = {"state": res.state, "branch": branch, "upstream": upstream,
                           "old": res.old, "new": res.new, "changed": res.changed}  # fmt: skip
    stats = reindex_paths(ctx, res.changed, "pull") if res.changed else None
    if stats is not None:
        out["reindexed"] = {"added": stats.added, "changed": stats.changed, "removed": stats.removed,
                            "quarantined": stats.quarantined}  # fmt: skip
    else:
        from git_memex.index.refresh import Index

        assert ctx.repo_index is not None
        with Index(ctx.repo_index) as idx:
            idx.mark_sync("pull")
    return out


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
        raise MemexError("there are no conflicted memory files", 1)
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
        raise MemexError(f"{wanted} was deleted on {side} and changed on the other side; keep or delete it with git, then `git add` it", 3)
    result = merge_texts(_decode(base), _decode(ours) or "", _decode(theirs) or "")
    if not result.clean:
        return ResolveOutcome(
            wanted, False, list(result.auto_merged),
            [{"field": c.field, "kind": c.kind, "base": c.base, "ours": c.ours, "theirs": c.theirs} for c in result.conflicts],
            getattr(result, "note", ""),
        )  # fmt: skip
    from git_memex.secrets.checks import check_text

    findings = check_text(wanted, result.text, fmt=False, patterns=ctx.redact_patterns)
    if findings:
        raise MemexError(f"the merged {wanted} would contain a secret ({findings[0].rule}); edit it by hand", 3)
    pygit.stage_resolved(repo, wanted, result.text.encode("utf-8"))
    reindex_paths(ctx, [wanted], "resolve")
    return ResolveOutcome(wanted, True, list(result.auto_merged))

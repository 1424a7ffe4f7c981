"""One submit at a time per project, and whether an interrupted submit's plan can still be replayed
exactly as it was written.

Invariants (docs/git.md, "Crash safety"):
- Every submit holds the lock `<data root>/locks/submit-<project key>.lock` (`core.locks`) from
  before it reads the journal until it has deleted it. The journal lives beside it under the same
  key, so a journal found while holding the lock was left by a process that died (the kernel
  drops a dead process's lock): a live submit's journal is never resumed by another process, in
  this clone, another worktree, or another clone of the same project.
- A journaled plan is replayed only onto what it was planned on: the same repository, its branch
  at the commit it was planned from (`start_commit`), and for a plan without `--branch`, that
  branch checked out here. When the killed run already made the commit, the replay only tidies up
  (removes the outbox drafts and the journal) and names that commit. Anything else (the branch
  moved, it is checked out in another worktree, this checkout is on another branch, the plan was
  made in another clone) is a refusal, never a commit somewhere else.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.review.branch_names import new_branch_problem, ref_clash

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pygit2

LOCK_WAIT_S = 120.0
"""How long a submit waits for another submit of the same project to finish before giving up
(exit 2, nothing changed). Four agents submitting at once wait for each other's commits."""


@contextlib.contextmanager
def submit_lock(ctx: Context) -> Iterator[None]:
    """Hold this project's submit lock for the body of the block (see the module docstring)."""
    from git_memex.core.locks import held

    busy = ("another git memex submit of this project is still running (it holds {path}); nothing was "
            "changed: submit again once it has finished")
    with held(ctx.data_root, f"submit-{ctx.project_key}", wait_s=LOCK_WAIT_S, busy=busy):
        yield


def journal_path(ctx: Context) -> Path:
    """The journal of this project's submit (one at a time: `submit_lock`)."""
    return ctx.data_root / "journal" / f"submit-{ctx.project_key}.json"


def set_aside(journal: Path) -> Path:
    """Move a journal that cannot be completed out of the way, keeping it for a human to read."""
    dest = journal.with_name(journal.name + ".failed")
    n = 2
    while dest.exists():
        dest = journal.with_name(f"{journal.name}.{n}.failed")
        n += 1
    os.replace(journal, dest)
    return dest


def plan_problem(ctx: Context, repo: pygit2.Repository, plan: Any) -> str | None:
    """Why a journaled submit plan cannot be completed as written, or None when it can.

    A plan is replayed only when every part of it is still possible: its shape, its branch name,
    its files (memory files of this repository, no secret in them) and its origins (outbox files
    on this machine, the only files a replay deletes).
    """
    from git_memex.core import frontmatter
    from git_memex.secrets.scan import commit_problems, companion_problem

    assert ctx.repo is not None
    if not isinstance(plan, dict):
        return "the journal is not a submit plan"
    files, origins, branch = plan.get("files"), plan.get("origins"), plan.get("branch")
    companions = plan.get("companions", {})
    if not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            and isinstance(companions, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in companions.items())
            and isinstance(origins, list) and all(isinstance(o, str) for o in origins)
            and isinstance(branch, str) and isinstance(plan.get("start"), str)
            and isinstance(plan.get("new_branch"), bool) and isinstance(plan.get("ids"), list)
            and all(isinstance(i, str) for i in plan["ids"])
            and (plan.get("base") is None or isinstance(plan.get("base"), str))):
        return "the journal is missing parts of a submit plan"
    prefix = ctx.memory_dir_rel.rstrip("/") + "/"
    for rel, text in {**files, **companions}.items():
        stem = rel[len(prefix):-3] if rel.startswith(prefix) and rel.endswith(".md") else ""
        if not model.is_valid_id(stem) or "/" in stem:
            return f"{rel} is not a memory file of this repository"
        try:
            frontmatter.parse(text)
        except frontmatter.FrontmatterError:
            return f"the planned text of {rel} is not a readable memory file"
        findings = commit_problems(rel, text.encode("utf-8"), ctx.redact_patterns)
        if findings:
            return f"the planned text of {rel} would commit a problem ({findings[0].rule})"
    head = head_blobs(repo, list(companions))
    successors = {Path(r).stem for r in files}
    for rel, text in companions.items():
        if rel in files:
            return f"{rel} is planned both as a draft and beside the drafts"
        data = text.encode("utf-8")
        why = None if head.get(rel) == data else companion_problem(
            rel, head.get(rel), data, successors, patterns=ctx.redact_patterns, reference_keys=ctx.reference_keys)
        if why:
            return f"{rel}, planned beside the drafts, {why}"
    outbox = (ctx.data_root / "memories" / "outbox").resolve()
    for origin in origins:
        o = Path(origin).resolve()
        if o.suffix != ".md" or outbox not in o.parents:
            return f"{origin} is not an outbox draft"
    if plan.get("start_commit") is not None and not isinstance(plan["start_commit"], str):
        return "the journal is missing parts of a submit plan"
    if plan["new_branch"]:
        why = new_branch_problem(ctx, repo, branch)
        if why:
            return f"its branch {shlex.quote(branch)} {why}"
        clash = ref_clash(repo, branch)
        if clash:
            return f"its branch {shlex.quote(branch)} clashes with the existing branch {shlex.quote(clash)}"
        if branch not in repo.branches.local and repo.head_is_unborn:
            return f"its branch {shlex.quote(branch)} would start from a repository without commits"
    return None


def head_files(repo: pygit2.Repository, rels: list[str], ref: str = "HEAD") -> dict[str, str]:
    """`head_blobs` as text (a blob that is not UTF-8 is left out)."""
    out: dict[str, str] = {}
    for rel, data in head_blobs(repo, rels, ref).items():
        try:
            out[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


def head_blobs(repo: pygit2.Repository, rels: list[str], ref: str = "HEAD") -> dict[str, bytes]:
    """What HEAD (or the branch `ref`) holds at each of `rels` (a path it lacks, or an unborn
    HEAD: left out)."""
    out: dict[str, bytes] = {}
    try:
        tree = (repo.head if ref == "HEAD" else repo.references[ref]).peel().tree
    except Exception:  # noqa: BLE001 - unborn HEAD
        return out
    for rel in rels:
        try:
            obj = repo[tree[rel].id]
        except KeyError:
            continue
        data = getattr(obj, "data", None)
        if isinstance(data, bytes):
            out[rel] = data
    return out


def git_dir_of(ctx: Context) -> str:
    """The repository a plan belongs to: its common git dir (shared by its worktrees)."""
    assert ctx.repo is not None
    return os.path.realpath(ctx.repo.common_dir)


def worktree_of(work_tree: Path, branch: str) -> Path | None:
    """The work tree (of this repository's worktrees, `git worktree list --porcelain`) that has
    `branch` checked out, or None."""
    from git_memex.core.gitcmd import git_text

    r = git_text(["worktree", "list", "--porcelain"], work_tree, timeout=30)
    if r is None or r.returncode != 0:
        return None
    here: str | None = None
    for line in r.stdout.splitlines():
        if line.startswith("worktree "):
            here = line[len("worktree "):]
        elif line == f"branch refs/heads/{branch}" and here is not None:
            return Path(here)
    return None


def _same_path(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _tip(repo: pygit2.Repository, ref: str) -> str | None:
    import pygit2

    try:
        return str((repo.head if ref == "HEAD" else repo.references[ref]).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _is_plan_commit(repo: pygit2.Repository, tip: str | None, plan: dict[str, Any]) -> bool:
    """Whether `tip` is the commit the plan makes: its one parent is the plan's start commit (none
    on an unborn branch) and its tree holds every planned file with exactly the planned text."""
    import pygit2

    if tip is None:
        return False
    commit = repo[tip]
    if not isinstance(commit, pygit2.Commit):
        return False
    start = plan.get("start_commit")
    if [str(p) for p in commit.parent_ids] != ([start] if start else []):
        return False
    for rel, text in {**plan["files"], **plan.get("companions", {})}.items():
        try:
            blob = repo[commit.tree[rel].id]
        except KeyError:
            return False
        if getattr(blob, "data", None) != text.encode("utf-8"):
            return False
    return True


def replay_state(ctx: Context, repo: pygit2.Repository, plan: dict[str, Any]) -> tuple[str, str | None]:
    """Where a journaled plan stands: ("todo", None) its commit is still to be made exactly where
    it says; ("done", commit) the killed run made it; ("refused", why) it cannot be replayed
    exactly (why ends a sentence that starts with "it was planned as …")."""
    import pygit2

    assert ctx.repo is not None
    planned_in = plan.get("git_dir")
    if isinstance(planned_in, str) and planned_in != git_dir_of(ctx):
        return "refused", f"in another clone of this project ({planned_in})"
    target, start = plan["branch"], plan.get("start_commit")
    ref = "HEAD" if target == "HEAD" else f"refs/heads/{target}"
    tip = _tip(repo, ref)
    if _is_plan_commit(repo, tip, plan):
        return "done", tip
    q = shlex.quote(target)
    short = (start or "")[:10]
    if plan["new_branch"]:
        if tip is None:
            if start is None or not isinstance(repo.get(start), pygit2.Commit):
                return "refused", f"but its starting commit {short} is no longer in this repository"
            return "todo", None
        if tip != start:
            return "refused", f"but {q} has moved since (it was at {short}, it is at {tip[:10]} now)"
        where = worktree_of(ctx.repo.work_tree, target)
        if where is not None and not _same_path(where, ctx.repo.work_tree):
            return "refused", f"but {q} is checked out in the worktree {where} now, whose files a commit would change"
        return "todo", None
    from git_memex.git import pygit

    here = pygit.current_branch(repo) or "HEAD"
    if here != target:
        return "refused", f"but this checkout is on {shlex.quote(here)} now"
    if tip != start:
        was = f"at {short}" if start else "without commits"
        now = f"at {tip[:10]}" if tip else "without commits"
        return "refused", f"but {q} has moved since (it was {was}, it is {now} now)"
    return "todo", None


def refusal(plan: dict[str, Any], why: str, aside: Path) -> str:
    """The one sentence for a plan `replay_state` refused; its journal is set aside as `aside`."""
    ids = ", ".join(Path(r).stem for r in plan["files"]) or "nothing"
    target = shlex.quote(plan["branch"])
    start = (plan.get("start_commit") or "")[:10]
    what = f"a commit on {target}" + (f" from {start}" if start else "")
    again = "submit again" if plan["new_branch"] else f"switch to {target} and submit again, or submit again here"
    return (f"an interrupted submit of {ids} was planned as {what}, {why}, so it was not replayed (nothing was "
            f"changed); its plan was set aside as {aside} and the drafts are still in the outbox: {again}")

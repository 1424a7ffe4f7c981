"""The branch names `submit` takes: `--branch` (a plain new branch name), `--base`, and git's own
rules for a branch name, shared with `propose --to org --branch`."""

from __future__ import annotations

import shlex
from pathlib import Path

from git_memex.core.context import Context
from git_memex.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pygit2


def branch_name_problem(name: str, cwd: Path) -> str | None:
    """Why git would refuse `name` as a branch name, or None when it is a valid one."""
    if not name or name.startswith("-") or name == "@":
        return "is not a valid git branch name"
    from git_memex.core.gitcmd import git_text

    r = git_text(["check-ref-format", "--branch", name], cwd, timeout=30)
    # --branch also expands @{-1} and friends: only a name that is itself valid is accepted
    if r is None or r.returncode != 0 or r.stdout.strip() != name:
        return "is not a valid git branch name (see `git check-ref-format --help`)"
    return None


def default_branch_problem(ctx: Context, name: str) -> str | None:
    """Why `name` is refused as the review branch: it is the project's default branch in some
    spelling (`Main` too: a case-insensitive file system keeps it in the same file), so submit
    would only make a `main-2` beside it. None otherwise."""
    from git_memex.agents.gate import default_branch

    ref = default_branch(ctx)
    names = {ref.branch} if ref is not None else set()
    names |= {n for n in (ctx.setting("defaultBranch"), ctx.setting("initBranch")) if n}
    if name.casefold() not in {n.casefold() for n in names}:
        return None
    return ("is the project's default branch, and submit commits on a new branch for review: name another "
            "branch, or leave --branch out to commit on the current one")


_NAMESPACES = ("refs", "heads", "tags", "remotes")
"""First components that spell a ref rather than name a branch: `refs/heads/main`, `heads/main`
(git resolves `heads/main` to refs/heads/main), `tags/v1`, `remotes/origin/main`."""


def new_branch_problem(ctx: Context, repo: pygit2.Repository, name: str) -> str | None:
    """Why `name` cannot be the new branch `submit --branch` (and `memory_submit`'s `branch`)
    makes, or None: it must be a plain new branch name. That is: valid for `git check-ref-format
    --branch`; no ref namespace (`refs/`, `heads/`, `tags/`, `remotes/`) and no remote's name
    as its first component (`origin/main` as a branch would make `origin/main` resolve to it, and
    the printed `git push -u origin origin/main` push it); no pseudo-ref (`FETCH_HEAD`); never the
    default branch in any spelling; no existing tag or remote-tracking ref git would also take
    the name for (an ambiguous name); no secret in it (a branch name is pushed and shown in the
    pull request: refused, never masked, so the branch made is the one asked for). Each reason
    is the end of one sentence that starts with the name."""
    import re

    assert ctx.repo is not None
    why = branch_name_problem(name, ctx.repo.work_tree)
    if why:
        return why
    from git_memex.secrets.redact import redact

    found = redact(name, ctx.redact_patterns).masked
    if found:
        return (f"holds what looks like a secret ({', '.join(sorted(set(found)))}); a branch name is pushed and "
                "shown in the pull request, so name the branch without it")
    first = name.split("/", 1)[0]
    if first in _NAMESPACES:
        return (f"spells a ref ({first}/…), not a branch name; give a plain new branch name such as memex/review "
                "(submit makes refs/heads/<name> itself)")
    remotes = set(repo.remotes.names())
    if first in remotes:
        return (f"starts with {first}/, the name of a remote, so {name} would also name that remote's branch; "
                "give a plain new branch name such as memex/review")
    if "/" not in name and re.fullmatch(r"[A-Z_]*HEAD", name):
        return "is a name git keeps for its own refs (like HEAD and FETCH_HEAD); give a plain new branch name"
    why = default_branch_problem(ctx, name)
    if why:
        return why
    for ref in (f"refs/tags/{name}", f"refs/remotes/{name}", f"refs/remotes/{name}/HEAD", f"refs/{name}"):
        if ref in repo.references:
            return (f"is already the name of {ref}, so git would take {name} for either; give a branch name no "
                    "other ref has")
    return None


def ref_clash(repo: pygit2.Repository, name: str) -> str | None:
    """An existing branch that `name` cannot live beside (git keeps refs as files: a/b needs a to be a folder)."""
    for other in repo.branches.local:
        if other != name and (other.startswith(name + "/") or name.startswith(other + "/")):
            return other
    return None


def check_base(repo: pygit2.Repository, base: str, cwd: Path) -> None:
    why = branch_name_problem(base, cwd)
    if why:
        raise UsageError(f"--base {shlex.quote(base)} {why}; nothing was changed")
    if base in repo.branches.local:
        return
    if any(r.split("/", 1)[-1] == base for r in repo.branches.remote if "/" in r):
        return
    raise UsageError(f"--base {shlex.quote(base)} is neither a local branch nor a branch of a remote this clone "
                     "knows (`git fetch` first?); nothing was changed")

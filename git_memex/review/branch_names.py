"""The branch names `submit` takes: `--branch` (a plain new branch name), `--base`, and git's own
rules for a branch name, shared with `propose --to org --branch`."""

from __future__ import annotations

import re
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


MAX_NAME_BYTES = 200
"""The longest submit branch name: git keeps a branch as a file, and a file name longer than the file
system allows (255 bytes on most) failed only after the journal was written."""

COMMON_DEFAULTS = ("main", "master", "trunk", "develop")
"""Names a project's default or integration branch usually has: never a review branch, in any case,
even when this clone cannot tell its default branch (a clone of an empty origin)."""

PSEUDO_REFS = frozenset({"HEAD", "AUTO_MERGE", "MERGE_AUTOSTASH", "BISECT_EXPECTED_REV", "NOTES_MERGE_PARTIAL",
                         "NOTES_MERGE_REF", "MERGE_MSG", "MERGE_MODE", "SQUASH_MSG", "BISECT_LOG"})
"""Files git keeps beside HEAD in the git folder and resolves as refs (with every `*_HEAD`)."""

SUGGESTIONS = ("memex/review", "memex-review", "review/memex", "memex-submit")


def name_shape_problem(name: str) -> str | None:
    """Why `name` is refused before git is asked anything: it holds a character that is not plain
    printable ASCII (a fullwidth `ｍａｉｎ`, `main` with a zero-width space, a Cyrillic `а`, `İ`,
    `ſ` would pass for another name: submit takes only ASCII branch names), or it is longer than
    MAX_NAME_BYTES. None otherwise."""
    bad = next((c for c in name if not ("!" <= c <= "~")), None)
    if bad is not None and bad.isascii():  # a space or a control character: git refuses it too
        return f"is not a valid git branch name (it holds {'a space' if bad == ' ' else repr(bad)})"
    if bad is not None:
        return (f"holds {bad!r}, which is not a plain ASCII character; submit takes only ASCII branch names, so "
                "that a look-alike (a fullwidth or Cyrillic letter, an invisible character) cannot pass for "
                "another branch")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is {len(name)} characters long; a branch name for submit has at most {MAX_NAME_BYTES}"
    return None


def default_branch_problem(ctx: Context, name: str) -> str | None:
    """Why `name` is refused as the review branch: it is the project's default branch in some
    spelling (`Main` too: a case-insensitive file system keeps it in the same file), or a name a
    default or integration branch usually has (COMMON_DEFAULTS), so submit would only make a
    `main-2` beside it. None otherwise."""
    from git_memex.agents.gate import default_branch

    ref = default_branch(ctx)
    names = {ref.branch} if ref is not None else set()
    names |= {n for n in (ctx.setting("defaultBranch"), ctx.setting("initBranch")) if n}
    if name.casefold() in {n.casefold() for n in names}:
        return ("is the project's default branch, and submit commits on a new branch for review: name another "
                "branch, or leave --branch out to commit on the current one")
    if name.casefold() in COMMON_DEFAULTS:
        return ("is the name a project's default or integration branch has, and submit commits on a new branch "
                "for review: name another branch, or leave --branch out to commit on the current one")
    return None


def _pseudo_ref(name: str) -> bool:
    """A name git takes for one of its own refs in the git folder, in any case (a case-insensitive
    file system finds `.git/HEAD` for `head`): HEAD, `*_HEAD`, PSEUDO_REFS, or any all-caps name
    with an underscore (git's syntax for such refs)."""
    if "/" in name:
        return False
    up = name.upper()
    return (up in PSEUDO_REFS or up.endswith("_HEAD")
            or (name == up and "_" in name and re.fullmatch(r"[A-Z][A-Z0-9_-]*", name) is not None))


_NAMESPACES = ("refs", "heads", "tags", "remotes")
"""First components that spell a ref rather than name a branch: `refs/heads/main`, `heads/main`
(git resolves `heads/main` to refs/heads/main), `tags/v1`, `remotes/origin/main`."""


def suggestion(ctx: Context, repo: pygit2.Repository) -> str:
    """A plain new branch name submit would take here (never one it would refuse)."""
    for name in SUGGESTIONS:
        if name not in repo.branches.local and _problem(ctx, repo, name, suggest=False) is None:
            return name
    return "a name of your own"


def new_branch_problem(ctx: Context, repo: pygit2.Repository, name: str) -> str | None:
    """Why `name` cannot be the new branch `submit --branch` (and `memory_submit`'s `branch`)
    makes, or None: it must be a plain new branch name. That is: plain printable ASCII of at most
    MAX_NAME_BYTES (`name_shape_problem`); valid for `git check-ref-format --branch`; no ref
    namespace (`refs/`, `heads/`, `tags/`, `remotes/`) and no remote's name (one with a slash too)
    as its first components (`origin/main` as a branch would make `origin/main` resolve to it, and
    the printed `git push -u origin origin/main` push it); no pseudo-ref in any case (`FETCH_HEAD`,
    `AUTO_MERGE`, `head`); never the default branch in any spelling, nor main, master, trunk or
    develop; no existing tag or remote-tracking ref of any remote git would also take the name for
    (`origin/feature` exists: `feature` would be pushed onto a teammate's branch); no secret in it
    (a branch name is pushed and shown in the pull request: refused, never masked, so the branch
    made is the one asked for). Each reason is the end of one sentence that starts with the name;
    a name it suggests is one it takes (`suggestion`)."""
    return _problem(ctx, repo, name, suggest=True)


def _problem(ctx: Context, repo: pygit2.Repository, name: str, *, suggest: bool) -> str | None:
    assert ctx.repo is not None
    why = name_shape_problem(name) or branch_name_problem(name, ctx.repo.work_tree)
    if why:
        return why
    from git_memex.secrets.redact import redact

    found = redact(name, ctx.redact_patterns).masked
    if found:
        return (f"holds what looks like a secret ({', '.join(sorted(set(found)))}); a branch name is pushed and "
                "shown in the pull request, so name the branch without it")

    def such_as() -> str:
        return f" such as {suggestion(ctx, repo)}" if suggest else ""

    first = name.split("/", 1)[0]
    if first in _NAMESPACES:
        return (f"spells a ref ({first}/…), not a branch name; give a plain new branch name{such_as()} "
                "(submit makes refs/heads/<name> itself)")
    remotes = [r for r in repo.remotes.names() if r]
    remote = next((r for r in sorted(remotes, key=len, reverse=True) if name == r or name.startswith(r + "/")), None)
    if remote is not None:
        return (f"starts with {remote}/, the name of a remote, so {name} would also name that remote's branch; "
                f"give a plain new branch name{such_as()}")
    if _pseudo_ref(name):
        return f"is a name git keeps for its own refs (like HEAD and FETCH_HEAD, in any case); give a plain new branch name{such_as()}"
    why = default_branch_problem(ctx, name)
    if why:
        return why
    for ref in (f"refs/tags/{name}", f"refs/remotes/{name}", f"refs/remotes/{name}/HEAD", f"refs/{name}"):
        if ref in repo.references:
            return (f"is already the name of {ref}, so git would take {name} for either; give a branch name no "
                    "other ref has")
    tracking = _remote_branch(repo, name)
    if tracking is not None:
        return (f"is already a branch of a remote ({tracking}), someone else's; submit makes a new branch of its "
                f"own, so give a name no remote has{such_as()}")
    return None


def _remote_branch(repo: pygit2.Repository, name: str) -> str | None:
    """The remote-tracking ref `refs/remotes/<remote>/<name>` of any remote (configured or not, a
    remote name with a slash too), or None."""
    tail = "/" + name
    for ref in repo.references:
        if ref.startswith("refs/remotes/") and ref.endswith(tail) and len(ref) > len("refs/remotes/") + len(tail):
            remote = ref[len("refs/remotes/"):-len(tail)]
            if "/" not in remote or remote in list(repo.remotes.names()):
                return ref
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

"""Local git work through pygit2 (the one module that imports it, but for core's no-git fallbacks).

Network transport (fetch) goes through the user's own `git` so that their
credentials, proxies and SSH set-up apply; everything local goes through libgit2, except
what hooks read (gitcmd.py: libgit2 ignores GIT_INDEX_FILE, and its import alone costs a hook
~0.1 s of CPU: the post-* hooks find what changed with `git diff-tree`, core/gitcmd.py).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, MergeAnalysis

from git_memex.core.record import record
from git_memex.errors import FAILED, MemexError

ZERO = "0" * 40


def open_repo(path: Path) -> pygit2.Repository:
    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError as exc:
        raise MemexError(f"cannot open the git repository at {path} ({exc})", FAILED) from None


def resolve_commit(repo: pygit2.Repository, rev: str | None) -> pygit2.Commit | None:
    if not rev or rev == ZERO:
        return None
    try:
        obj = repo.revparse_single(rev)
        return obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _in_dir(path: str, memory_dir: str) -> bool:
    from git_memex.core.gitcmd import in_memory_dir

    return in_memory_dir(path, memory_dir)


def _memory_path(path: str, memory_dir: str) -> bool:
    from git_memex.core.gitcmd import is_memory_path

    return is_memory_path(path, memory_dir)


def changed_memory_files(repo: pygit2.Repository, old: str | None, new: str | None, memory_dir: str) -> list[str]:
    """Repo-relative paths of memory files that differ between two commits (either may be None)."""
    a = resolve_commit(repo, old)
    b = resolve_commit(repo, new)
    if a is None and b is None:
        return []
    if a is not None and b is not None and a.id == b.id:
        return []
    if a is None:
        assert b is not None
        diff = b.tree.diff_to_tree(swap=True)
    elif b is None:
        diff = a.tree.diff_to_tree()
    else:
        diff = a.tree.diff_to_tree(b.tree)  # what repo.diff does for two trees
    out: list[str] = []
    for delta in diff.deltas:
        for p in {delta.old_file.path, delta.new_file.path}:
            if p and _in_dir(p, memory_dir) and p not in out:
                out.append(p)
    return out


def conflicts(repo: pygit2.Repository, memory_dir: str | None = None,
              records: bool = False) -> dict[str, tuple[bytes | None, bytes | None, bytes | None]]:
    """Conflicted paths with their (base, ours, theirs) blobs from index stages 1/2/3; with
    `memory_dir`, only memory files (in the folder or a subfolder of it, `gitcmd.is_memory_path`),
    and with `records` the rules' approval and revocation records too (`gitcmd.is_record_path`)."""
    from git_memex.core.gitcmd import is_record_path

    out: dict[str, tuple[bytes | None, bytes | None, bytes | None]] = {}
    c = repo.index.conflicts
    if c is None:
        return out
    for base, ours, theirs in c:
        path = next(e.path for e in (ours, theirs, base) if e is not None)
        if memory_dir is not None and not _memory_path(path, memory_dir) and not (
                records and is_record_path(path, memory_dir)):
            continue
        out[path] = tuple(repo[e.id].data if e is not None else None for e in (base, ours, theirs))  # type: ignore[assignment, attr-defined]
    return out


def odd_conflict(repo: pygit2.Repository, path: str) -> str | None:
    """Why the conflict of `path` is not three versions of one file (one phrase), or None: a side
    that is not a regular file (a symbolic link, a submodule), or a side git recorded under
    another name (``PATH~HEAD``, ``PATH~BRANCH``: the two sides had different types, so git kept
    each somewhere). Taking a side there would delete or replace a file nobody looked at."""
    c = repo.index.conflicts
    if c is None:
        return None
    kinds = {0o120000: "a symbolic link", 0o160000: "a submodule"}
    odd: list[str] = []
    moved: list[str] = []
    for stages in c:
        entries = [(side, e) for side, e in zip(("base", "ours", "theirs"), stages, strict=True) if e is not None]
        if not entries:
            continue
        p = entries[0][1].path
        if p == path:
            odd += [f"{side} is {kinds.get(e.mode, 'not a regular file')}" for side, e in entries
                    if e.mode not in (0o100644, 0o100755)]
        elif p.startswith(path + "~"):
            moved.append(p)
    if not odd and not moved:
        return None
    said = "; ".join(odd) if odd else "the sides had different types"
    where = f", and git recorded the other side as {', '.join(sorted(moved))}" if moved else ""
    return said + where


def stage_resolved(repo: pygit2.Repository, path: str, data: bytes) -> None:
    """Record a resolution: write the file and replace its conflict stages with one entry."""
    idx = repo.index
    idx.read()
    workdir = Path(repo.workdir)
    from git_memex.core.files import atomic_write_text

    atomic_write_text(workdir / path, data.decode("utf-8"))
    if idx.conflicts is not None:
        with contextlib.suppress(KeyError):
            del idx.conflicts[path]
    idx.add(path)
    idx.write()


def commit_files(
    repo: pygit2.Repository,
    files: dict[str, bytes],
    message: str,
    *,
    branch: str | None = None,
    author: tuple[str, str, int, int] | None = None,
    committer: tuple[str, str, int, int] | None = None,
) -> str:
    """Commit exactly these files on top of HEAD, or on top of the existing local `branch`,
    leaving the user's staged work alone.

    `author` and `committer` are (name, email, time, offset) as `person.commit_ident` gives
    them (the person git itself names); libgit2's default signature only when they are not given.

    On HEAD: the new tree is HEAD's tree plus these blobs, and afterwards the index entries of
    these paths are set to the committed blobs (so they don't show as staged changes); every
    other index entry — the user's staged work — is untouched. On an unborn HEAD the commit is
    the branch's first (no parent), holding only these files. On `branch` (not the checked-out
    one): the new tree is the branch tip's plus these blobs, and only that branch moves: HEAD,
    the index and the work tree are not touched at all.
    """
    who = pygit2.Signature(*author) if author is not None else repo.default_signature
    by = pygit2.Signature(*committer) if committer is not None else repo.default_signature
    try:  # an unborn HEAD (a repository without commits, an orphan branch): this is its first commit
        tip = repo.head if branch is None else repo.references[f"refs/heads/{branch}"]
        parent = tip.peel(pygit2.Commit)
        base_tree = parent.tree
        parents = [parent.id]
    except (pygit2.GitError, KeyError):
        base_tree = None
        parents = []
    blobs = {p: repo.create_blob(d) for p, d in files.items()}
    tree_id = _tree_with(repo, base_tree, blobs)
    ref = "HEAD" if branch is None else f"refs/heads/{branch}"
    commit_id = repo.create_commit(ref, who, by, message, tree_id, parents)
    if branch is not None:
        return str(commit_id)
    import time

    why = ""
    for _ in range(30):  # another git holding .git/index.lock for a moment (a `git status`, an editor)
        try:
            idx = repo.index
            idx.read()
            for p, oid in blobs.items():
                idx.add(pygit2.IndexEntry(p, oid, FileMode.BLOB))
            idx.write()
            return str(commit_id)
        except pygit2.GitError as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            time.sleep(0.1)
    raise IndexNotUpdated(str(commit_id), list(blobs), why)


class IndexNotUpdated(Exception):
    """`commit_files` made the commit on HEAD, but could not set the index entries of its files
    (the index stayed locked): the commit stands; `git reset -q -- PATHS` brings the index in line."""

    def __init__(self, commit: str, paths: list[str], why: str) -> None:
        super().__init__(why)
        self.commit, self.paths, self.why = commit, paths, why


def _tree_with(repo: pygit2.Repository, tree: pygit2.Tree | None, blobs: dict[str, pygit2.Oid]) -> pygit2.Oid:
    here: dict[str, pygit2.Oid] = {}
    deeper: dict[str, dict[str, pygit2.Oid]] = {}
    for path, oid in blobs.items():
        head, sep, rest = path.partition("/")
        if sep:
            deeper.setdefault(head, {})[rest] = oid
        else:
            here[head] = oid
    tb = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    for name, oid in here.items():
        tb.insert(name, oid, FileMode.BLOB)
    for name, sub in deeper.items():
        sub_tree = None
        if tree is not None and name in tree:
            obj = repo[tree[name].id]
            if isinstance(obj, pygit2.Tree):
                sub_tree = obj
        tb.insert(name, _tree_with(repo, sub_tree, sub), FileMode.TREE)
    return tb.write()


def current_branch(repo: pygit2.Repository) -> str | None:
    try:
        if repo.head_is_detached:
            return None
        return repo.head.shorthand
    except (pygit2.GitError, KeyError):
        try:
            return repo.references["HEAD"].target.removeprefix("refs/heads/")  # type: ignore[union-attr]
        except (KeyError, AttributeError):
            return None


def path_history(repo: pygit2.Repository, path: str, limit: int = 200) -> list[pygit2.Commit]:
    """Commits that changed one file, oldest first."""
    out: list[pygit2.Commit] = []
    try:
        walker = repo.walk(repo.head.target, pygit2.enums.SortMode.TIME)
    except (pygit2.GitError, KeyError):
        return out
    for commit in walker:
        try:
            now = commit.tree[path].id
        except KeyError:
            now = None
        before = None
        if commit.parents:
            try:
                before = commit.parents[0].tree[path].id
            except KeyError:
                before = None
        if now != before:
            out.append(commit)
            if len(out) >= limit:
                break
    out.reverse()
    return out


# ------------------------------------------------------------------ pull
@record(frozen=True)
class PullResult:
    state: str  # "up-to-date" | "fast-forward"
    old: str
    new: str
    changed: list[str]


def _config_str(repo: pygit2.Repository, key: str) -> str | None:
    try:
        value = repo.config[key]
    except (KeyError, pygit2.GitError):
        return None
    return value if isinstance(value, str) and value else None


def upstream_of(repo: pygit2.Repository) -> tuple[str, str, str]:
    """(branch, remote name, remote-tracking ref) of the current branch's upstream, or a clear error.

    An upstream that is configured but whose remote-tracking ref is missing (never fetched, or
    pruned after the remote deleted it) is still returned: the fetch that follows decides.
    """
    import shlex

    branch = current_branch(repo)
    if branch is None:
        raise MemexError("HEAD is detached; check out a branch before `git memex pull`", FAILED)
    try:
        local = repo.branches.local[branch]
    except KeyError:
        raise MemexError(f"branch {branch} has no commits yet; nothing to pull", FAILED) from None
    up = local.upstream
    if up is not None:
        return branch, up.remote_name, up.name
    remote = _config_str(repo, f"branch.{branch}.remote")
    merge = _config_str(repo, f"branch.{branch}.merge")
    if remote and remote != "." and merge and merge.startswith("refs/heads/"):
        return branch, remote, f"refs/remotes/{remote}/{merge.removeprefix('refs/heads/')}"
    names = [r.name for r in repo.remotes]
    if not names:
        raise MemexError("this repository has no remote; add one with `git remote add origin URL`", FAILED)
    remote = "origin" if "origin" in names else names[0]
    q = shlex.quote
    if f"{remote}/{branch}" in repo.branches.remote:
        raise MemexError(f"branch {branch} has no upstream; set one with "
                         f"`git branch --set-upstream-to={q(remote + '/' + branch)}`", FAILED)
    raise MemexError(f"branch {branch} has no upstream, and {remote} has no branch {branch} that this clone "
                     f"knows of; publish yours with `git push -u {q(remote)} {q(branch)}`", FAILED)


def fetch(remote: str, cwd: Path) -> None:
    from git_memex.core.gitcmd import Fail, run_git

    run_git(["fetch", "--quiet", remote], cwd, timeout=600, literal=False,
            fail=Fail("git is not installed or not on PATH; local memories still work",
                      f"fetching from {remote} took more than 10 minutes; nothing was changed",
                      f"could not fetch from {remote} ({{}}); nothing was changed"))


def fast_forward(repo: pygit2.Repository, upstream_ref: str, memory_dir: str) -> PullResult:
    head = repo.head.peel(pygit2.Commit)
    try:
        target = repo.references[upstream_ref].peel(pygit2.Commit)
    except KeyError:
        raise MemexError(f"the upstream {upstream_ref} does not exist after fetching; check the branch's upstream", FAILED) from None
    if head.id == target.id:
        return PullResult("up-to-date", str(head.id), str(head.id), [])
    analysis, _pref = repo.merge_analysis(target.id)
    if analysis & MergeAnalysis.UP_TO_DATE:
        return PullResult("up-to-date", str(head.id), str(head.id), [])
    if not analysis & MergeAnalysis.FASTFORWARD:
        raise MemexError(
            "your branch and its upstream have diverged; nothing was changed. Run `git pull --rebase` "
            "(or merge) yourself, then `git memex reindex`",
            FAILED,
        )
    changed = changed_memory_files(repo, str(head.id), str(target.id), memory_dir)
    try:
        repo.checkout_tree(target.tree)  # SAFE: refuses to overwrite local changes
    except pygit2.GitError as exc:
        raise MemexError(f"local changes would be overwritten by the fast-forward ({exc}); commit or stash them first", FAILED) from None
    ref = repo.head
    ref.set_target(target.id, f"git-memex pull: fast-forward to {upstream_ref}")
    return PullResult("fast-forward", str(head.id), str(target.id), changed)

"""The data root: the folder of this user's memories and indexes, and keeping it private.

Everything in it is the user's alone (folders 0700, files 0600), and it is refused where git
would commit it (`prepare_data_root`, `enclosing_work_tree`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

from git_memex.errors import FAILED, MemexError

try:
    _START_CWD: str | None = os.getcwd()  # a relative GIT_MEMEX_HOME means relative to this
except OSError:  # the cwd was removed before we started
    _START_CWD = None


def data_root() -> Path:
    """The folder of this user's memories and indexes; always absolute (a relative
    GIT_MEMEX_HOME or XDG_DATA_HOME is taken from the cwd the process started in, so that it
    does not move when the process changes folder)."""
    env = os.environ.get("GIT_MEMEX_HOME")
    if env:
        return _absolute(Path(env).expanduser())
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return _absolute(Path(os.environ["APPDATA"]) / "git-memex")
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return _absolute(Path(xdg) / "git-memex")
    return Path.home() / ".local" / "share" / "git-memex"


def _absolute(p: Path) -> Path:
    if p.is_absolute():
        return p
    return Path(_START_CWD or os.getcwd()) / p


# ----------------------------------------------------------------- private files
# Everything in the data root is the user's alone: folders 0700, files 0600 (personal and
# private bodies are in the memory files and in index.db). The umask may be 022, so modes are
# given explicitly on every create rather than left to it.
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_READY_ROOTS: set[str] = set()


def _root_name(root: Path) -> str:
    return f"GIT_MEMEX_HOME {root}" if os.environ.get("GIT_MEMEX_HOME") else f"the data root {root}"


def _under_a_file(root: Path) -> MemexError:
    return MemexError(f"{_root_name(root)} is not a folder (a part of its path is a file); "
                      "point GIT_MEMEX_HOME at a folder", FAILED)


def prepare_data_root(root: Path) -> None:
    """Make sure the data root is a private folder, once per process: created 0700 when missing;
    an existing one with any group or other permission bit is repaired (the root chmod 0700 and
    one walk taking those bits off everything in it). The common path is a single stat.

    Raises a one-sentence MemexError (exit 2) when the root is not a folder or cannot be created,
    and, before creating anything, when it lies inside a git work tree that does not ignore it
    (`enclosing_work_tree`, which fails closed): `git add -A` would commit personal memories."""
    key = str(root)
    if key in _READY_ROOTS:
        return
    # before anything is created: a data root git would commit is refused (one that git ignores is not)
    tree = enclosing_work_tree(root)
    if tree is not None and not _inside_git_dir(tree, root) and not _ignored_by(tree, root):
        raise MemexError(f"{_root_name(root)} is inside the git work tree {tree}, where `git add` would commit "
                         "your personal memories and index; point GIT_MEMEX_HOME at a folder outside every "
                         "repository, or make the repository ignore that folder", FAILED)
    try:
        st = os.stat(root)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise _under_a_file(root) from None
    except OSError as exc:
        raise MemexError(f"cannot use {_root_name(root)} ({exc.strerror}); "
                         "point GIT_MEMEX_HOME at a writable folder", FAILED) from None
    if st is None:
        try:
            root.parent.mkdir(parents=True, exist_ok=True)  # the user's folders: their own modes
            os.mkdir(root, PRIVATE_DIR)
        except FileExistsError:
            pass  # created meanwhile by another process
        except NotADirectoryError:
            raise _under_a_file(root) from None
        except OSError as exc:
            raise MemexError(f"cannot create {_root_name(root)} ({exc.strerror}); "
                             "point GIT_MEMEX_HOME at a writable folder", FAILED) from None
        st = os.stat(root)
    if not stat.S_ISDIR(st.st_mode):
        raise MemexError(f"{_root_name(root)} is not a folder; point GIT_MEMEX_HOME at a folder", FAILED)
    # Not on Windows (no such bits: every folder reads 0777), nor on someone else's folder (the
    # chmod would fail, and every process would walk it again).
    if os.name == "posix" and st.st_mode & 0o077 and st.st_uid == os.geteuid():
        repair_modes(root)
    _READY_ROOTS.add(key)


def enclosing_work_tree(folder: Path) -> Path | None:
    """The git work tree `folder` lies in, or None only when it surely lies in none: fails closed.

    Asks no `git` (which answers nothing for a repository of another owner, "dubious ownership",
    and answers about another repository when ``GIT_DIR`` is set): the nearest ancestor (itself
    included, symbolic links resolved) holding a ``.git`` file or folder, or the folder
    ``GIT_WORK_TREE`` names when `folder` is in it. A folder that cannot be looked at counts as
    inside a work tree (itself)."""
    try:
        here = Path(os.path.realpath(folder))
    except OSError:
        return Path(folder)
    env_tree = os.environ.get("GIT_WORK_TREE")
    if env_tree:
        with contextlib.suppress(OSError, ValueError):
            t = Path(os.path.realpath(env_tree))
            if here.is_relative_to(t):
                return t
    for p in (here, *here.parents):
        try:
            os.lstat(p / ".git")
            return p
        except (FileNotFoundError, NotADirectoryError):  # nothing there, or a file: no .git in it
            continue
        except OSError:
            return p  # cannot tell: closed
    return None


def _inside_git_dir(tree: Path, path: Path) -> bool:
    """Whether `path` is in the tree's own ``.git`` folder, which git never adds to a commit."""
    git_dir = tree / ".git"
    return git_dir.is_dir() and Path(os.path.realpath(path)).is_relative_to(git_dir)


def _ignored_by(tree: Path, path: Path) -> bool:
    """Whether git (asked with every ownership accepted, outside any ``GIT_DIR``) says `path` is
    ignored in `tree`, so that `git add -A` leaves it out; False when git cannot say."""
    from git_memex.core.gitcmd import run_git

    r = run_git(["-c", "safe.directory=*", "check-ignore", "-q", "--no-index", str(path) + "/x"], tree,
                timeout=60, env={"GIT_DIR": None, "GIT_WORK_TREE": None, "GIT_INDEX_FILE": None}, literal=False)
    return r is not None and r.returncode == 0


def repair_modes(root: Path) -> int:
    """Take the group and other bits off `root` and every folder and file in it (symbolic links
    are left alone, never followed); returns how many were changed. Best effort: what cannot be
    changed (another owner, a read-only file system) stays as it is."""
    changed = 0

    def fix(path: str) -> None:
        nonlocal changed
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                return
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
            changed += 1
        except OSError:
            pass

    fix(str(root))
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            fix(os.path.join(folder, name))
    return changed


def private_mkdir(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700 folders (existing ones are not changed);
    costs one mkdir call when it exists. A folder of the data root reached through a symbolic
    link leading out of it is refused (`refuse_link_out`)."""
    if in_data_root(folder):
        refuse_link_out(data_root(), folder)
    try:
        os.mkdir(folder, PRIVATE_DIR)
    except FileExistsError:
        if not folder.is_dir():
            raise
    except FileNotFoundError:
        if folder.parent == folder:
            raise
        private_mkdir(folder.parent)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, PRIVATE_DIR)


def in_data_root(path: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(data_root())


def private_db_file(path: Path) -> None:
    """Create an SQLite database file 0600 before SQLite does (it would use 0644 less the umask,
    and gives its -wal and -shm files the database's mode); an existing one with group or other
    bits is repaired, with its -wal, -shm and -journal. Best effort: SQLite reports what fails.

    An existing database is never opened here, only stat'ed and chmod'ed: closing any
    descriptor of a file drops every POSIX lock this process holds on it, so opening and closing
    the file beside a live connection of this process (a long-lived MCP server opens one index
    per call) would drop that connection's locks. Another process would then take itself for the
    last connection, checkpoint and delete the WAL under us, and the index reads back malformed
    (docs/decisions.md, "One index file, many processes")."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:  # O_EXCL: if anyone (even a thread of ours) created it meanwhile, nothing is closed
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
        except OSError:
            return
        os.close(fd)  # a file that did not exist: no connection of this process holds a lock on it
        return
    except OSError:
        return
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISREG(st.st_mode) and mode & 0o077 and os.name == "posix":
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.chmod(f"{path}{suffix}", mode & 0o600 if not suffix else PRIVATE_FILE)




# ----------------------------------------------------------------- no link out of the data root
def link_out(root: Path, path: Path) -> Path | None:
    """The first part of `path` below `root` (the data root itself may be a link: the user's
    choice) that is a symbolic link leading out of `root`, or None. A few lstat calls."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        return None
    top = os.path.realpath(root)  # files.inside's test, spelled here: core.files imports this module
    cur = Path(os.path.abspath(root))
    for part in rel.parts:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except OSError:  # missing (created as a real folder) or unreadable (the write says so)
            return None
        if stat.S_ISLNK(st.st_mode) and not _within(os.path.realpath(cur), top):
            return cur
    return None


def refuse_link_out(root: Path, folder: Path) -> None:
    """Raise a one-sentence MemexError (exit 2) when writing in `folder` would follow a symbolic
    link out of the data root `root` (docs/security.md, "Links in the data root")."""
    link = link_out(root, folder)
    if link is not None:
        raise MemexError(f"{link} is a symbolic link leading out of the data root, and git-memex never writes "
                         "through one; replace it with a real folder; nothing was written", FAILED)


def _within(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)

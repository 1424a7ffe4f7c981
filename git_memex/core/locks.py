"""A short cross-process critical section: an advisory lock on a file in the data root.

`add` holds one from its duplicate check through the file write and the index update, so two
agents (MCP servers, a capture hook, the CLI) saving the same fact at the same moment keep one
file: the second one in sees the first one's index row and answers `duplicate_of`.

Lock files live in `<data root>/locks/` (0700), created 0600 with O_NOFOLLOW; they hold nothing
and are never deleted (deleting a lock file another process waits on would split the lock).
Where `fcntl` does not exist (Windows) the section runs unlocked, as before.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from git_memex.errors import FAILED, MemexError

WAIT_S = 15.0
"""How long a writer waits for another one's lock before giving up (exit 2, nothing written)."""


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:120] or "lock"


@contextlib.contextmanager
def held(data_root: Path, name: str, wait_s: float = WAIT_S, busy: str | None = None) -> Iterator[None]:
    """Hold the exclusive lock `<data root>/locks/<name>.lock` for the body of the block.

    `busy`: the sentence (exit 2) when another process holds it for longer than `wait_s`, with
    `{path}` standing for the lock file. A test can stop the process at the moment it first finds
    the lock held (GIT_MEMEX_PAUSE_AT=lock.busy, `files.pause_point`)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    from git_memex.core.data_root import prepare_data_root, refuse_link_out

    prepare_data_root(data_root)  # a root that is not a folder gets its own sentence
    folder = data_root / "locks"
    refuse_link_out(data_root, folder)
    try:
        folder.mkdir(exist_ok=True, mode=0o700)
        path = folder / f"{_safe_name(name)}.lock"
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise MemexError(f"cannot create a lock file in {folder} ({exc.strerror}); check that the data root is writable", FAILED) from None
    try:
        deadline = time.monotonic() + wait_s
        pause = 0.002
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited:
                    waited = True
                    from git_memex.core.files import pause_point

                    pause_point("lock.busy")
                if time.monotonic() >= deadline:
                    raise MemexError(busy.format(path=path) if busy else
                                     f"another git-memex process has held {path} for {wait_s:.0f} s; "
                                     "nothing was written, try again", FAILED) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)

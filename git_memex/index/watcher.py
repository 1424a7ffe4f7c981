"""Folder watches (Linux inotify): a long-lived process learns that a folder did not change.

A long-lived process (the MCP server) searches again and again; stat-ing every memory file
each time costs ~2 ms per 1,000 files. From the second refresh of a folder on, such a process
asks the kernel (inotify) to report any change in the folder, and skips the stat scan while
nothing was reported and the index still holds the listing it verified (`changes.scan`).
Only on local file systems (inotify does not see changes made through NFS, SMB, 9p or FUSE
mounts), never across fork, and GIT_MEMEX_WATCH=0 turns it off. Every other platform keeps the
stat scan.

Invariant: a watch is trusted only while it is clean (no event since the last complete scan)
and its digest is the one the index stores for the folder; any event, an overflow, a read error
or the folder going away makes it dirty, and the next refresh scans the folder again. The files
the kernel named are re-checked by content even when their stat is unchanged.
"""

from __future__ import annotations

import os
import sys

_IN_MASK = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)  # modify attrib close_write moved create delete self
_IN_GONE = 0x400 | 0x800 | 0x8000  # delete_self, move_self, ignored
_IN_OVERFLOW = 0x4000
_LOCAL_FS = frozenset((0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0x2FC12FC1, 0xF2F52010,
                       0xCA451A4E, 0x3153464A, 0x52654973))  # ext2-4 xfs btrfs tmpfs overlay zfs f2fs bcachefs jfs reiser


class Watch:
    """One watched folder: whether an event came since its last complete scan, and which files."""

    __slots__ = ("wd", "dirty", "digest", "count", "names")

    def __init__(self, wd: int) -> None:
        self.wd = wd
        self.dirty = True
        self.digest: str | None = None
        self.count = 0
        self.names: set[str] = set()  # files the kernel reported since the last scan


class Watcher:
    """One inotify descriptor for the process, one watch per folder."""

    def __init__(self) -> None:
        import ctypes
        import threading

        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.by_folder: dict[str, Watch] = {}
        self.by_wd: dict[int, str] = {}

    def _local(self, folder: str) -> bool:
        import ctypes

        buf = ctypes.create_string_buffer(256)
        if self.libc.statfs(folder.encode(), buf) != 0:
            return False
        return int.from_bytes(buf.raw[: ctypes.sizeof(ctypes.c_long)], sys.byteorder, signed=True) in _LOCAL_FS

    def get(self, folder: str, create: bool) -> Watch | None:
        w = self.by_folder.get(folder)
        if w is not None or not create:
            return w
        if not os.path.isdir(folder) or not self._local(folder):
            return None
        wd = self.libc.inotify_add_watch(self.fd, folder.encode(), _IN_MASK)
        if wd < 0:
            return None
        w = self.by_folder[folder] = Watch(wd)
        self.by_wd[wd] = folder
        return w

    def poll(self) -> None:
        """Read every pending event; mark the folders they concern as dirty."""
        import struct

        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self.reset_all()
                return
            pos = 0
            while pos + 16 <= len(data):
                wd, mask, _cookie, length = struct.unpack_from("iIII", data, pos)
                name = data[pos + 16 : pos + 16 + length].split(b"\0", 1)[0]
                pos += 16 + length
                if mask & _IN_OVERFLOW:
                    self.reset_all()
                    continue
                folder = self.by_wd.get(wd)
                if folder is None:
                    continue
                w = self.by_folder.get(folder)
                if w is not None:
                    w.dirty = True
                    w.digest = None
                    if name:
                        w.names.add(os.fsdecode(name))
                if mask & _IN_GONE:  # the folder itself went away: watch it again when it is back
                    self.by_wd.pop(wd, None)
                    self.by_folder.pop(folder, None)
                    if not mask & 0x8000:
                        self.libc.inotify_rm_watch(self.fd, wd)

    def reset_all(self) -> None:
        for w in self.by_folder.values():
            w.dirty = True
            w.digest = None


WATCHER: list[Watcher | None] = []


def watcher() -> Watcher | None:
    """The process's watcher; None where watching is off (GIT_MEMEX_WATCH=0) or impossible."""
    if not sys.platform.startswith("linux") or os.environ.get("GIT_MEMEX_WATCH", "1") == "0":
        return None
    if WATCHER and (WATCHER[0] is None or WATCHER[0].pid == os.getpid()):
        return WATCHER[0]
    WATCHER.clear()
    try:
        WATCHER.append(Watcher())
    except (OSError, AttributeError):
        WATCHER.append(None)
    return WATCHER[0]


def note_digests(digests: dict[str, str]) -> None:
    """After a complete refresh: the watched folders are known to match these digests."""
    w_all = WATCHER[0] if WATCHER else None
    if w_all is None:
        return
    with w_all.lock:
        for folder, digest in digests.items():
            w = w_all.by_folder.get(folder)
            if w is not None and not w.dirty:
                w.digest = digest
                w.count = int(digest.split(":", 1)[0])

"""Which memory files changed since the index last saw their folder: the change detectors.

`scan` asks, cheapest first:

1. the folder watch (`watcher`, long-lived processes on Linux): nothing reported since the last
   complete scan and the stored digest is the one verified then → no work, not even a listing;
2. the folder's stamp (a command's refresh that is not a named sync, `quick`): the folder's own
   mtime, ctime, inode and device, equal to those recorded at its last complete scan, say that no
   entry was added, removed or renamed since → no listing; the racy files are re-checked and a
   slice of SLICE_FILES rows (the next ones after the last slice, in path order, round the folder;
   the rows of every file under it, subfolders' included, of which only its own are stat-checked)
   is taken, so an edit written in place (which leaves the folder's stamp alone) is seen within
   ⌈files under the folder / SLICE_FILES⌉ commands (docs/index.md, "What a command notices");
3. the listing digest (count, names, sizes, inodes, times): equal to the stored one → only the
   files that were racy at the last scan are re-checked;
4. the listing snapshot of the last complete scan (`scans` + `scan_patches`): compared in memory,
   rows are read only for the files whose stat differs;
5. without a snapshot, every `files` row of the folder.

Invariants: a file is read only when its stat signature differs from its row's, when it was
racy (modified within RACY_NS of the scan that read it: an edit that keeps the size and lands in
the same timestamp granule is still seen, by content hash), or when the kernel named it; a row is
only ever written for the signature it was read with; a file missing from the listing is dropped
only if it is really absent when the batch is written (`database.Index._apply_batch`). A stamp
is recorded only at a complete scan, taken before the listing, and only once the folder's last
change is RACY_NS old (an entry added in the same timestamp granule as the recorded stamp would
not move it); any write of the index outside a refresh forgets it with the folder's digest.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from pathlib import Path

from git_memex.core.files import inside
from git_memex.index import watcher as watch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from git_memex.index.database import Index, RefreshStats, Source

Plan = list[tuple["Source", str, str, "str | None", bool]]
"""Files to read: (source, path, stat signature, known content SHA-1, known to the index)."""
Listing = tuple[list[str], list[tuple[int, int, int, int]]]
"""A folder's memory files and their (mtime_ns, size, inode, ctime_ns), in directory order."""

_SCANS: dict[tuple[str, str], int] = {}  # (index, folder) -> refreshes in this process
SLICE_FILES = 500
"""Files of a folder whose stat a quick refresh checks, in turn (~2.5 ms for 500 on a loaded 2-core VM)."""


def digest_key(folder: Path | str) -> str:
    """The `meta` key of a folder's listing digest."""
    return f"scan:{folder}"


def stamp_key(folder: Path | str) -> str:
    """The `meta` key of a folder's stamp at its last complete scan."""
    return f"stamp:{folder}"


def slice_key(folder: Path | str) -> str:
    """The key, in a refresh's marks, of the last file a quick refresh stat-checked in a folder
    (kept in the index's slice file, `database.Index.slices`, not in the database: a search
    writes nothing to it)."""
    return f"slice:{folder}"


def folder_stamp(folder: str, now_ns: int) -> str | None:
    """The folder's `mtime_ns:ctime_ns:inode:device` (`absent` when there is no folder: a data
    root's outbox before the first draft), or None when it cannot be used as a stamp: changed
    within RACY_NS of `now_ns` (a change in the same timestamp granule would leave it as it is),
    or not to be looked at. A folder that is a symbolic link (a memory folder linked to one
    elsewhere in the work tree, a personal folder linked inside the data root) is stamped by
    what it leads to, the folder whose entries change: `stat`, never `lstat`, whose answer is
    the link's own and never moves when a file is added behind it."""
    from git_memex.index.database import RACY_NS

    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return "absent"
    except OSError:
        return None
    if now_ns - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return None
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}"


def scan(index: Index, src: Source, stats: RefreshStats, plan: Plan, gone: list[str],
         digests: dict[str, str], changed_digest: set[str], listings: dict[str, Listing],
         marks: dict[str, str] | None = None, quick: bool = False) -> None:
    """Compare one folder with what the index last saw; add the work to plan/gone. `quick` (a
    command's refresh, not a named sync) lets the folder's stamp stand for its listing; what is
    to be recorded with the digests (the stamps of complete scans, slice positions) goes into
    `marks` (`meta` key -> value)."""
    folder = str(src.folder)
    key = (str(index.path), folder)
    _SCANS[key] = seen_before = _SCANS.get(key, 0) + 1
    forced: set[str] = set()  # files the kernel saw written: re-checked by content even if their stat is unchanged
    outside = index.root is not None and not inside(folder, index.root)
    if outside:  # a linked folder leading into another root (or another project's): never read
        stats.warnings.append(f"{folder} is left out: it is a symbolic link (or lies in one) leading out of "
                              f"{index.root}; memory folders are never followed through links")
    watcher = watch.watcher() if seen_before >= 2 and not outside else None
    if watcher is not None:
        with watcher.lock:
            watcher.poll()
            w = watcher.get(folder, create=True)
            if w is not None and not w.dirty and w.digest is not None \
                    and index.get_meta(digest_key(folder)) == w.digest:
                stats.unchanged += w.count  # nothing reported since the last complete scan
                digests[folder] = w.digest
                return
            if w is not None:  # a full scan follows; events from now on count again
                w.dirty = False
                w.digest = None
                forced, w.names = w.names, set()
    import time

    stamp = None if outside else folder_stamp(folder, time.time_ns())  # before the listing it stands for
    if quick and marks is not None and watcher is None and stamp is not None and not outside:
        stored_digest = index.get_meta(digest_key(folder))
        if stored_digest is not None and index.get_meta(stamp_key(folder)) == stamp:
            _quick(index, src, int(stored_digest.split(":", 1)[0]), stats, plan, gone, marks)
            return
    names, sigs = ([], []) if outside else listing(folder)
    if not all(map(valid_name, names)):  # the index keys files by path: one it cannot store is left out
        keep = [i for i, name in enumerate(names) if valid_name(name)]
        stats.warnings.extend(unreadable_name(os.path.join(folder, name)) for name in names if not valid_name(name))
        names, sigs = [names[i] for i in keep], [sigs[i] for i in keep]
    blob = "\0".join(names).encode("utf-8", "surrogateescape")
    digest = f"{len(names)}:{hash(tuple(sigs))}:{zlib.crc32(blob)}:{zlib.adler32(blob)}"
    stored = index.get_meta(digest_key(folder))
    digests[folder] = digest
    if stored == digest:
        planned = _racy_only(index, src, len(names), stats, plan)
    else:
        changed_digest.add(folder)
        listings[folder] = (names, sigs)
        snap = snapshot(index, folder)
        if snap is not None:
            _against_snapshot(index, src, names, sigs, snap, stats, plan, gone)
        else:
            _against_rows(index, src, names, sigs, stats, plan, gone)
        planned = {entry[1] for entry in plan}
    if forced:
        _force(index, src, forced & set(names), planned, plan, stats)
    if marks is not None and stamp is not None and index.get_meta(stamp_key(folder)) != stamp:
        marks[stamp_key(folder)] = stamp


def _quick(index: Index, src: Source, count: int, stats: RefreshStats, plan: Plan, gone: list[str],
           marks: dict[str, str]) -> None:
    """The folder's stamp is the one of its last complete scan: no entry came, went or was renamed.
    Re-check the racy files, and the stat of the folder's own files among the next SLICE_FILES
    rows under it after the last slice (in path order, from the start again at the end; a
    subfolder's rows count towards the SLICE_FILES but are its own source's), for an edit written
    in place."""
    folder = str(src.folder)
    planned = _racy_only(index, src, count, stats, plan)
    lo, hi = _under(folder)
    stored = index.slices().get(folder)
    after = stored if stored is not None and lo <= stored < hi else lo
    rows = index.conn.execute("SELECT path, sig FROM files WHERE path > ? AND path < ? ORDER BY path LIMIT ?",
                              (after, hi, SLICE_FILES)).fetchall()
    if len(rows) < SLICE_FILES and after != lo:  # round the folder: on from its first file
        rows += index.conn.execute("SELECT path, sig FROM files WHERE path > ? AND path <= ? ORDER BY path LIMIT ?",
                                   (lo, after, SLICE_FILES - len(rows))).fetchall()
    if not rows:
        return
    if rows[-1][0] != stored:  # SLICE_FILES files or fewer under the folder: all of them, every time
        marks[slice_key(folder)] = rows[-1][0]
    start = len(folder) + 1
    changed: list[tuple[str, str]] = []
    with _opened(folder) as fd:
        for p, sig in rows:
            name = p[start:]
            if os.sep in name or p in planned:
                continue  # a subfolder's file (its own source), or a racy one already planned
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False) if fd is not None else os.lstat(p)
            except FileNotFoundError:
                gone.append(p)
                continue
            except OSError:
                continue
            now = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}:{st.st_ctime_ns}"
            if now != sig:
                changed.append((p, now))
    for p, now in changed:
        row = index.conn.execute("SELECT sha FROM files WHERE path=?", (p,)).fetchone()
        plan.append((src, p, now, row[0] if row is not None else None, True))
        stats.unchanged -= 1


@contextlib.contextmanager
def _opened(folder: str) -> Iterator[int | None]:
    """A descriptor of `folder` for stats relative to it (no path walk per file), or None where
    the platform has none or the folder cannot be opened."""
    fd = None
    if _DIR_FD:
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _racy_only(index: Index, src: Source, count: int, stats: RefreshStats, plan: Plan) -> set[str]:
    """Same names, sizes, inodes and times as at the last complete scan: only the files that were
    racy then need a look (by content hash). Returns their paths."""
    racy = [r for r in index.conn.execute("SELECT path, sig, sha FROM files WHERE path >= ? AND path < ? AND racy = 1",
                                          _under(str(src.folder))) if _direct(str(src.folder), r[0])]
    for p, sig, sha in racy:
        plan.append((src, p, sig, sha, True))
    stats.unchanged += count - len(racy)
    return {r[0] for r in racy}


def _against_snapshot(index: Index, src: Source, names: list[str], sigs: list[tuple[int, int, int, int]],
                      snap: dict[str, tuple[int, ...]], stats: RefreshStats, plan: Plan, gone: list[str]) -> None:
    """The listing of the last complete scan (+ what was written since): compare in memory and read
    rows only for the files that differ, instead of every row of the folder."""
    folder = str(src.folder)
    prefix = folder + os.sep
    racy = {r[0][len(prefix):] for r in index.conn.execute(
        "SELECT path FROM files WHERE path >= ? AND path < ? AND racy = 1", _under(folder)) if _direct(folder, r[0])}
    get = snap.get
    suspects = [i for i, name in enumerate(names) if get(name) != sigs[i]]  # new or changed
    if racy:
        flagged = set(suspects)
        suspects += [i for i, name in enumerate(names) if name in racy and i not in flagged]
    stats.unchanged += len(names) - len(suspects)
    lookup = index.conn.execute
    for i in suspects:
        name, (mtime_ns, size, ino, ctime_ns) = names[i], sigs[i]
        p = prefix + name
        sig = f"{mtime_ns}:{size}:{ino}:{ctime_ns}"
        row = lookup("SELECT sig, racy, sha FROM files WHERE path=?", (p,)).fetchone()
        if row is not None and row[0] == sig and not row[1]:
            stats.unchanged += 1
            continue
        plan.append((src, p, sig, row[2] if row is not None else None, row is not None))
    for name in names:
        snap.pop(name, None)
    gone.extend(prefix + name for name in snap)  # listed last time, not now


def _against_rows(index: Index, src: Source, names: list[str], sigs: list[tuple[int, int, int, int]],
                  stats: RefreshStats, plan: Plan, gone: list[str]) -> None:
    """No snapshot (first scan, or one written by an older version): every row of the folder."""
    folder = str(src.folder)
    prefix = folder + os.sep
    known = {r[0]: (r[1], r[2], r[3]) for r in index.conn.execute(
        "SELECT path, sig, racy, sha FROM files WHERE path >= ? AND path < ?", _under(folder)) if _direct(folder, r[0])}
    seen: set[str] = set()
    for name, (mtime_ns, size, ino, ctime_ns) in zip(names, sigs, strict=True):
        p = prefix + name
        seen.add(p)
        sig = f"{mtime_ns}:{size}:{ino}:{ctime_ns}"
        old = known.get(p)
        if old is not None and old[0] == sig and not old[1]:
            stats.unchanged += 1
            continue
        plan.append((src, p, sig, old[2] if old is not None else None, old is not None))
    gone.extend(p for p in known if p not in seen)


def _force(index: Index, src: Source, names: set[str], planned: set[str], plan: Plan, stats: RefreshStats) -> None:
    """Re-check by content the files a watch reported, unless already planned: an edit that
    kept size and timestamp is invisible to stat but not to the kernel."""
    prefix = str(src.folder) + os.sep
    for name in sorted(names):
        p = prefix + name
        if not name.endswith(".md") or p in planned:
            continue
        row = index.conn.execute("SELECT sig, sha FROM files WHERE path=?", (p,)).fetchone()
        if row is not None and row[1] is not None:
            plan.append((src, p, row[0], row[1], True))
            stats.unchanged -= 1


def snapshot(index: Index, folder: str) -> dict[str, tuple[int, ...]] | None:
    """name -> (mtime_ns, size, inode, ctime_ns) as of the last complete scan of folder, later writes applied."""
    from array import array

    row = index.conn.execute("SELECT names, sigs FROM scans WHERE folder=?", (folder,)).fetchone()
    if row is None:
        return None
    names = bytes(row[0]).decode("utf-8", "surrogateescape").split("\0") if row[0] else []
    nums = array("q")
    nums.frombytes(bytes(row[1]))
    if len(nums) != 4 * len(names):
        return None
    it = iter(nums)
    snap: dict[str, tuple[int, ...]] = dict(zip(names, zip(it, it, it, it, strict=True), strict=True))
    for name, sig in index.conn.execute("SELECT name, sig FROM scan_patches WHERE folder=?", (folder,)):
        if sig is None:
            snap.pop(name, None)
        else:
            snap[name] = tuple(int(x) for x in sig.split(":"))
    return snap


_DIR_FD = os.stat in os.supports_dir_fd and os.listdir in os.supports_fd


def listing(folder: str) -> Listing:
    """The memory files of a folder (`*.md`, not hidden) and their (mtime_ns, size, inode, ctime_ns), in
    directory order. One lstat per file, relative to an open folder descriptor where the platform
    allows (no path walk per file: ~15% faster than DirEntry.stat)."""
    names: list[str] = []
    sigs: list[tuple[int, int, int, int]] = []
    if _DIR_FD:
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except (FileNotFoundError, NotADirectoryError):
            return names, sigs  # no folder: no memories (any other error is reported, not taken as "empty")
        try:
            stat = os.stat
            for name in os.listdir(fd):
                if not name.endswith(".md") or name.startswith("."):
                    continue
                try:
                    st = stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                names.append(name)
                sigs.append((st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns))
        finally:
            os.close(fd)
        return names, sigs
    try:
        with os.scandir(folder) as it:
            for e in it:
                name = e.name
                if not name.endswith(".md") or name.startswith("."):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                names.append(name)
                sigs.append((st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns))
    except (FileNotFoundError, NotADirectoryError):
        pass
    return names, sigs


def listing_blob(names: list[str], sigs: list[tuple[int, int, int, int]]) -> tuple[bytes, bytes]:
    """(names joined by NUL, the (mtime_ns, size, inode, ctime_ns) of each as 64-bit integers): a folder's listing."""
    from array import array
    from itertools import chain

    return ("\0".join(names).encode("utf-8", "surrogateescape"),
            array("q", chain.from_iterable(sigs)).tobytes())


def valid_name(name: str) -> bool:
    """A file or folder name (as the OS decodes it, with surrogate escapes) the index can hold as
    text: valid UTF-8. One that is not is skipped with a warning by every scan and by `org pull`
    alike (docs/org.md)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unreadable_name(path: str) -> str:
    """The warning for a file or folder skipped because its name is not valid UTF-8."""
    shown = os.fsencode(path).decode("utf-8", "backslashreplace")
    return f"{shown} is left out: its name is not valid UTF-8 (rename it)"


def _direct(folder: str, path: str) -> bool:
    """`path` is directly in `folder`, not in a subfolder (an org memory folder is read as nested
    sources, one a folder: each answers only for its own files, docs/org.md)."""
    return os.sep not in path[len(folder) + 1:]


def _under(folder: str) -> tuple[str, str]:
    """Bounds of the paths directly or indirectly inside folder, for a range query on the key."""
    return folder + os.sep, folder + chr(ord(os.sep) + 1)

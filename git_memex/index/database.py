"""One index database (SQLite, FTS5) and bringing it in line with the memory folders.

An index is a cache of the markdown files, rebuildable from them at any time (`Stores` uses two
together, see `stores`). Each keeps a table of the files it has read with their stat signature,
so a refresh re-reads only what was added, changed or deleted (`changes` decides which).

Speed (see bench/README.md for the figures): changed files are read once (the bytes feed both
the hash and the parser), parsed with a fast reader for the plain frontmatter every writer
produces (`core.plainyaml`; anything else goes through the full YAML reader), and written in batches:
one transaction and a few `executemany` calls per batch, so memory stays flat at any corpus size.
Reading and parsing happen outside the write transaction: other writers wait only for the writes.

Invariants: every write is one short `BEGIN IMMEDIATE` transaction (`Index.write`); a memory row
and its FTS row are written and deleted together; a write made outside a refresh (`upsert`,
`remove`, `apply_paths`) forgets the folder's listing digest and patches its snapshot, so the next
refresh cannot take the folder for unchanged. The tables are in `schema`.

Damage (docs/index.md): an index that is corrupt at open, or lacks a table of its layout (one
`sqlite_master` read per open), is discarded and rebuilt from the files, with one warning line.
A damaged page found later, by any statement, raises `IndexDamaged` and records the index in
`DAMAGED`; the CLI then discards that file (and runs the command again when nothing was written).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from git_memex.core.files import UnreadableMemory, read_bytes
from git_memex.core.model import Memory
from git_memex.core.record import field, record
from git_memex.index import changes
from git_memex.index import watcher as watch
from git_memex.index.changes import Listing, Plan, digest_key
from git_memex.index.schema import (
    COLUMNS,
    DELETE_FTS,
    DELETE_MEMORY,
    FTS_COLUMNS,
    INSERT_FTS,
    INSERT_MEMORY,
    RECORD_FILE,
    SCHEMA_VERSION,
    fts_fields,
    intact,
    memory_row,
)
from git_memex.index.schema import create as create_tables

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _busy_timeout_ms() -> int:
    """5 s, or GIT_MEMEX_BUSY_TIMEOUT_MS (a slow network disk wants more, a test less)."""
    try:
        value = int(os.environ.get("GIT_MEMEX_BUSY_TIMEOUT_MS", "5000"))
    except ValueError:
        return 5000
    return value if 0 < value <= 600_000 else 5000


BUSY_TIMEOUT_MS = _busy_timeout_ms()
# A file modified this close to the scan may change again within the same timestamp
# granule; such entries are re-checked (by content hash) on the next refresh.
RACY_NS = 2_000_000_000
# Files read, parsed and written per write transaction.
BATCH = 5000


@record(frozen=True)
class Source:
    """One folder of memory files and what its memories are."""

    location: str  # personal | outbox | private | repo
    folder: Path
    project_key: str | None = None


@record
class RefreshStats:
    added: int = 0
    changed: int = 0
    removed: int = 0
    quarantined: int = 0
    unchanged: int = 0
    skipped_locked: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed

    def add(self, other: RefreshStats) -> None:
        """Count `other`'s files into these (its warnings are the caller's to merge)."""
        self.added += other.added
        self.changed += other.changed
        self.removed += other.removed
        self.quarantined += other.quarantined
        self.unchanged += other.unchanged


def _sig(st: os.stat_result) -> str:
    """A file's stat signature, `mtime_ns:size:inode:ctime_ns` (`changes.listing` lists the same
    four). The ctime is git's answer to an edit written in place that keeps the size with its
    mtime put back (`touch -r`, `os.utime`): userspace cannot set a ctime, so such an edit still
    changes the signature. Whether a file is racy is told by its mtime alone, as git tells it
    (`RACY_NS`)."""
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}:{st.st_ctime_ns}"


def _read_bytes(path: str) -> bytes | None:
    """The bytes of a regular file (`core.files.read_bytes`); None when that is not possible."""
    try:
        return read_bytes(path)
    except UnreadableMemory:
        return None


SHARED_PERSONAL = ("scope: personal in a shared memory folder: a file in a work tree or an org clone is never "
                   "anyone's personal memory (those live only in the data root); set scope: project to share it")
"""Why a `scope: personal` file read from a repository or org memory folder is quarantined: someone
committed it there (past the pre-commit hook's `personal-memory-in-repo`), and served as personal
it would pass for the reader's own memory or rule."""


def _holds(c: sqlite3.Connection, path: str, sha: str) -> bool:
    """Whether the index already holds `path` read with content `sha` (its files row, and a row)."""
    got = c.execute("SELECT sha, error FROM files WHERE path=?", (path,)).fetchone()
    return (got is not None and got[0] == sha and got[1] is None
            and c.execute("SELECT 1 FROM memories WHERE path=?", (path,)).fetchone() is not None)


def _load(path: Path, root: str | None = None, location: str | None = None,
          resolved: dict[str, bool] | None = None) -> tuple[bytes, Memory | None, str | None]:
    """(raw bytes, memory, None) or (raw bytes, None, quarantine reason). `resolved`: the pass's
    record of which folders lie inside `root` (`core.files.read_bytes`)."""
    # imported here, not at the top: compiling its patterns is most of its import time, and a
    # refresh that finds nothing changed never reads a file
    from git_memex.core.files import parse_for_index

    try:
        raw = read_bytes(str(path), root=root, resolved=resolved)  # a str: no Path work per syscall
    except UnreadableMemory as exc:
        return b"", None, str(exc)
    try:
        m = parse_for_index(path, raw)
    except UnreadableMemory as exc:
        return raw, None, str(exc)
    if location is not None and (location == "repo" or location.startswith(("org:", "remote:"))) \
            and str(m.fm.get("scope") or "").strip().lower() == "personal":
        return raw, None, SHARED_PERSONAL
    return raw, m, None


Loaded = tuple[Source, Path, "os.stat_result | None", bytes, "Memory | None", "str | None"]
"""A file as `load_files` read it: (source, path, its lstat or None when gone, bytes, memory or
None, quarantine reason or None)."""


def load_files(files: Iterable[tuple[Source, Path]], root: str | None) -> list[Loaded]:
    """Each file lstat'ed, then read and parsed once (`_load`), in order; a file that is gone has
    no stat. What `Index.apply_files` indexes, and what a hook checks before it does."""
    out: list[Loaded] = []
    resolved: dict[str, bool] = {}
    for source, path in files:
        try:
            st: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            out.append((source, path, None, b"", None, None))  # gone: only `st is None` is read
            continue
        raw, m, error = _load(path, root, source.location, resolved)
        out.append((source, path, st, raw, m, error))
    return out


class IndexDamaged(sqlite3.DatabaseError):
    """A statement found the index file corrupt (SQLITE_CORRUPT, SQLITE_NOTADB)."""

    def __init__(self, path: Path, exc: sqlite3.Error) -> None:
        super().__init__(f"the index {path} is damaged ({exc})")
        self.path = path


DAMAGED: dict[str, Index] = {}
"""Indexes of this process that a statement found damaged, by path (see `discard_damaged`)."""


def warn_rebuilt(path: Path | str, why: str) -> None:
    import sys

    print(f"git-memex: warning: the index {path} was {why}; rebuilt it from the memory files", file=sys.stderr)


def discard_damaged() -> list[str]:
    """Close and delete every index found damaged in this process: the next open rebuilds it from
    the files. The paths discarded."""
    import sys

    done = []
    for path, index in list(DAMAGED.items()):
        with contextlib.suppress(sqlite3.Error):
            index.conn.close()
        index._discard_files()
        done.append(path)
        print(f"git-memex: warning: the index {path} was damaged; discarded it, it is rebuilt from "
              "the memory files", file=sys.stderr)
    DAMAGED.clear()
    return done


class _Guarded(sqlite3.Connection):
    """A connection whose statements turn "malformed" into `IndexDamaged` (and record the index)."""

    index: Index | None = None

    def _damaged(self, exc: sqlite3.Error) -> IndexDamaged:
        index = self.index
        assert index is not None
        DAMAGED[str(index.path)] = index
        return IndexDamaged(index.path, exc)

    def _guarded(self, run: Callable[..., sqlite3.Cursor], *args: Any) -> sqlite3.Cursor:
        try:
            return run(*args)
        except sqlite3.DatabaseError as exc:
            if self.index is None or not _is_damaged(exc):
                raise
            raise self._damaged(exc) from None

    def execute(self, *args: Any) -> sqlite3.Cursor:
        return self._guarded(super().execute, *args)

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        return self._guarded(super().executemany, *args)


MEMORY = ":memory:"
"""The path of an index kept in memory only (when the data root cannot be used)."""


READ_ONLY = "the index file is read-only"
"""What `IndexReadOnly` says (its strerror): the warning names the way out by it."""


class IndexReadOnly(OSError):
    """The index file exists and this process may not write it (a `chmod a-w`, another owner):
    the caller reads from the memory files instead (`stores.Stores`, like a full disk)."""


class Index:
    """One index database. Use as a context manager; every write is a short transaction."""

    def __init__(self, path: Path, *, root: Path | None = None) -> None:
        self.path = path
        self.rebuilt = False
        self.root = None if root is None else os.path.realpath(root)
        """The folder (resolved) every file of this index lies in: a source reached through a link
        that leads out of it is left out (`changes.scan`), and no file outside it is read."""
        self.relocated: str | None = None
        """The folder this index was built for, when that is not `root`: it was thrown away."""
        self.behind = False  # an update after a file write failed (`after_write`)
        self.conn = self._open()
        if root is not None and str(path) != MEMORY:
            try:
                self._bind(root)
            except BaseException:
                self.conn.close()
                raise

    def _bind(self, root: Path) -> None:
        """An index answers only for the folder it was built for (`meta.built_for`, resolved).

        A clone copied with `cp -a`, moved with `mv` or `git worktree move`, or a data root copied
        whole, brings an index whose rows name the files of another folder: acting on them would
        read, change or delete the original's files. Such an index is emptied (the next refresh
        reads this folder again) with one line on stderr. An index that records no folder and
        holds files predates the check and is emptied the same way, silently."""
        here = os.path.realpath(root)
        built_for = self.get_meta("built_for")
        if built_for == here:
            return
        if built_for is not None or self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:
            create_tables(self.conn, replace=True)
            self.rebuilt = True
            if built_for is not None:
                self.relocated = built_for
                import sys

                print(f"git-memex: the index {self.path} was built for {built_for}, not {here} (a copied or "
                      "moved folder); it is rebuilt from the files here", file=sys.stderr)
        with self.write() as c:
            self.set_meta(c, "built_for", here)

    # ------------------------------------------------------------ opening
    def _connect(self) -> sqlite3.Connection:
        if str(self.path) != MEMORY:
            from git_memex.core.data_root import private_db_file, private_mkdir

            private_mkdir(self.path.parent)
            private_db_file(self.path)  # before SQLite creates it (and its -wal, -shm) 0644
            if not os.access(self.path, os.W_OK) and os.path.isfile(self.path):
                # SQLite would open it read-only and fail at the first write ("attempt to write a
                # readonly database"), after a command had begun
                import errno

                raise IndexReadOnly(errno.EACCES, READ_ONLY, str(self.path))
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               cached_statements=256, factory=_Guarded)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            conn = self._connect()
            self._prepare(conn)
        except sqlite3.DatabaseError as exc:
            if not _is_damaged(exc):
                raise  # locked, or out of disk: another process may be using this file
            # Corrupt or foreign file: the markdown is the truth, start the cache again.
            with contextlib.suppress(NameError, sqlite3.Error):
                conn.close()
            self._discard_files()
            self.rebuilt = True
            warn_rebuilt(self.path, "damaged")
            conn = self._connect()
            self._prepare(conn)
        assert isinstance(conn, _Guarded)
        conn.index = self  # from here on, a damaged page is reported as IndexDamaged
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode != "wal":
            with contextlib.suppress(sqlite3.OperationalError):
                conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        version = None
        with contextlib.suppress(sqlite3.OperationalError):
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = row[0] if row else None
        if version != SCHEMA_VERSION:
            self._create(conn)
        elif not intact(conn):  # a table dropped by hand: search would silently find nothing
            create_tables(conn, replace=True)
            self.rebuilt = True
            warn_rebuilt(self.path, "missing a table")

    def _create(self, conn: sqlite3.Connection) -> None:
        if create_tables(conn):
            self.rebuilt = True

    def _discard_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.path) + suffix)

    def check(self) -> str | None:
        """A full look at the file (doctor only, it reads every page): SQLite's quick_check and
        FTS5's integrity check. On a problem the file is discarded and started again (the next
        refresh fills it from the files) and the problem returned; None when sound."""
        if str(self.path) == MEMORY:
            return None
        problem = None
        try:
            got = [r[0] for r in self.conn.execute("PRAGMA quick_check").fetchall()]
            if got != ["ok"]:
                problem = "; ".join(got[:3])
            else:
                self.conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            if is_locked(exc):
                return None
            problem = str(exc)
        if problem is None:
            return None
        DAMAGED.pop(str(self.path), None)
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        self._discard_files()
        self.conn = self._open()
        self.rebuilt = True
        return problem

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def write(self, patience_ms: int | None = None) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE with retries inside the busy timeout; commit or roll back.

        `patience_ms` is for a writer that would rather give up than queue behind others (a
        cache): it waits that long once, then raises the "locked" error."""
        wait_s = BUSY_TIMEOUT_MS / 1000 * 2 if patience_ms is None else patience_ms / 1000
        deadline = time.monotonic() + wait_s
        delay = 0.01
        if patience_ms is not None:
            self.conn.execute(f"PRAGMA busy_timeout={patience_ms}")
        try:
            while True:
                try:
                    self.conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:
                    if not is_locked(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
        finally:
            if patience_ms is not None:
                self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ secret checks (guard.py)
    def secret_checks(self, keys: set[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk, marks in in_chunks(list(keys)):
            out.update(self.conn.execute(f"SELECT body_sha, found FROM secret_checks WHERE body_sha IN ({marks})", chunk))
        return out

    def remember_secret_checks(self, found: dict[str, int]) -> None:
        """Best effort, waiting at most 0.1 s: a busy index only means the bodies are scanned
        again next time, and a reader must not queue behind writers for a cache."""
        try:
            with self.write(patience_ms=100) as c:
                c.executemany("INSERT OR REPLACE INTO secret_checks(body_sha, found) VALUES(?, ?)", found.items())
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise

    # ------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, value))

    def mark_sync(self, trigger: str) -> None:
        with self.write() as c:
            self.set_meta(c, "last_sync", str(time.time()))
            self.set_meta(c, "last_sync_trigger", trigger)

    # ------------------------------------------------------------ rows
    def _delete_path(self, c: sqlite3.Connection, path: str) -> bool:
        row = c.execute("SELECT rid FROM memories WHERE path=?", (path,)).fetchone()
        if row is None:
            return False
        c.execute("DELETE FROM memories_fts WHERE rowid=?", (row[0],))
        c.execute("DELETE FROM memories WHERE rid=?", (row[0],))
        return True

    def _insert(self, c: sqlite3.Connection, row: dict[str, Any]) -> None:
        self._delete_path(c, row["path"])
        cur = c.execute(
            f"INSERT INTO memories({', '.join(COLUMNS)}) VALUES({', '.join('?' * len(COLUMNS))})",
            [row[k] for k in COLUMNS],
        )
        c.execute(
            f"INSERT INTO memories_fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES(?, ?, ?, ?, ?, ?)",
            (cur.lastrowid, *fts_fields(row)),
        )

    def _record_file(self, c: sqlite3.Connection, path: Path, folder: Path, sig: str, racy: bool,
                     sha: str | None, error: str | None) -> None:
        c.execute(RECORD_FILE, (str(path), sig, int(racy), sha, error))

    def upsert(self, m: Memory, source: Source) -> None:
        """Index a memory just written by us (its file is on disk at m.path). The file is the
        truth: an index that cannot take the row now (locked, damaged, disk full) is `behind`,
        one warning line, and the next refresh reads the file; never a failure after the write."""
        assert m.path is not None
        st = os.stat(m.path)
        raw = read_bytes(m.path)
        racy = time.time_ns() - st.st_mtime_ns < RACY_NS
        with self.after_write(), self.write() as c:
            self._insert(c, memory_row(m, source.location, source.project_key))
            self._record_file(c, m.path, source.folder, _sig(st), racy, _sha(raw), None)
            self._forget_digest(c, source.folder)
            self._patch(c, m.path, _sig(st))

    def upsert_many(self, written: Iterable[tuple[Memory, Source]]) -> None:
        """`upsert` of many memories just written by us (a batch writer: `import`), in one
        transaction per BATCH rows instead of one each; the same rows, the same rule when the
        index cannot take them (one warning, the next refresh reads the files)."""
        items = list(written)
        for start in range(0, len(items), BATCH):
            loaded = []
            for m, source in items[start : start + BATCH]:
                assert m.path is not None
                st = os.stat(m.path)
                loaded.append((m, source, st, read_bytes(m.path)))
            now_ns = time.time_ns()
            with self.after_write(), self.write() as c:
                for folder in {str(source.folder) for _m, source, _st, _raw in loaded}:
                    self._forget_digest(c, folder)
                for m, source, st, raw in loaded:
                    assert m.path is not None
                    self._insert(c, memory_row(m, source.location, source.project_key))
                    self._record_file(c, m.path, source.folder, _sig(st), now_ns - st.st_mtime_ns < RACY_NS,
                                      _sha(raw), None)
                    self._patch(c, m.path, _sig(st))
            if self.behind:
                return

    def remove(self, path: Path) -> None:
        """Drop the rows of a file just deleted by us (`upsert`'s rule if the index cannot)."""
        with self.after_write(), self.write() as c:
            self._delete_path(c, str(path))
            c.execute("DELETE FROM files WHERE path=?", (str(path),))
            self._forget_digest(c, path.parent)
            self._patch(c, path, None)

    @contextlib.contextmanager
    def after_write(self) -> Iterator[None]:
        """An index update that follows a file write: its failure is a warning (once per index),
        never an error. The folder's listing changed with the file, so the next refresh finds it."""
        try:
            yield
        except sqlite3.Error as exc:
            if isinstance(exc, IndexDamaged) or self.behind:
                self.behind = True
                return  # a damaged index is discarded with its own warning line
            self.behind = True
            import sys

            why = "busy" if is_locked(exc) else f"unusable ({exc})"
            print(f"git-memex: warning: the index {self.path} is {why}; the memory file is saved "
                  "and the next command indexes it", file=sys.stderr)

    # ------------------------------------------------------------ refresh
    def _forget_digest(self, c: sqlite3.Connection, folder: Path | str) -> None:
        c.execute("DELETE FROM meta WHERE key IN (?, ?)", (digest_key(folder), changes.stamp_key(folder)))

    def _record_marks(self, marks: dict[str, str]) -> None:
        """A refresh that changed nothing records its folders' new stamps (best effort, waiting at
        most 0.1 s: a busy index only means the next command lists the folder again)."""
        if not marks:
            return
        try:
            with self.write(patience_ms=100) as c:
                for key, value in marks.items():
                    self.set_meta(c, key, value)
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise

    # ------------------------------------------------------------ slice positions
    def _slice_file(self) -> Path | None:
        return None if str(self.path) == MEMORY else self.path.with_name(self.path.name + ".slices")

    def slices(self) -> dict[str, str]:
        """Folder -> the last file a quick refresh stat-checked there (`changes._quick`), from the
        slice file beside the index: a hint, kept out of the database so that a search writes
        nothing to it (a write would make each search create and checkpoint the WAL). A missing
        or damaged file starts each folder's slices again from its first file."""
        got = self.__dict__.get("_slices")
        if got is not None:
            return got
        got = {}
        path = self._slice_file()
        if path is not None:
            from git_memex.core.files import read_bytes

            try:
                fields = read_bytes(path, limit=1 << 20).decode("utf-8", "surrogateescape").split("\0")
                got = dict(zip(fields[0::2], fields[1::2], strict=False))
            except (UnreadableMemory, ValueError):
                pass
        self._slices: dict[str, str] = got
        return got

    def _record_slices(self, moved: dict[str, str]) -> None:
        """Keep the slice positions a refresh moved (best effort, no fsync: a lost update only
        means a slice is checked twice)."""
        path = self._slice_file()
        if not moved or path is None:
            return
        held = {**self.slices(), **moved}
        text = "\0".join(f"{k}\0{v}" for k, v in held.items())
        from git_memex.core.files import create_temp_beside

        try:
            fd, tmp = create_temp_beside(path)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
                    fh.write(text)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            return
        self._slices = held

    def _patch(self, c: sqlite3.Connection, path: Path | str, sig: str | None) -> None:
        """Keep the folder's listing snapshot in step with a file row written outside a refresh."""
        p = Path(path)
        if c.execute("SELECT 1 FROM scans WHERE folder=?", (str(p.parent),)).fetchone() is not None:
            c.execute("INSERT OR REPLACE INTO scan_patches(folder, name, sig) VALUES(?, ?, ?)", (str(p.parent), p.name, sig))

    def refresh(self, sources: Iterable[Source], *, trigger: str | None = None,
                caller: str | None = None, quick: bool = False) -> RefreshStats:
        """Bring the index in line with the folders, reading only what changed.

        The last sync (`sync-status`) is recorded as `trigger` always, or as `caller` only when
        something changed: looking is not syncing. `quick` (a command's own refresh, not a named
        sync) takes a folder whose stamp is unchanged for unchanged but for the racy files and a
        slice (`changes.scan`)."""
        stats = RefreshStats()
        plan: Plan = []
        gone: list[str] = []
        digests: dict[str, str] = {}
        changed_digest: set[str] = set()
        listings: dict[str, Listing] = {}
        marks: dict[str, str] = {}
        now_ns = time.time_ns()
        version = self.conn.execute("PRAGMA data_version").fetchall()[0][0]  # others' commits move it
        for src in sources:
            changes.scan(self, src, stats, plan, gone, digests, changed_digest, listings, marks, quick)
        prefix = changes.slice_key("")
        self._record_slices({k[len(prefix):]: marks.pop(k) for k in [k for k in marks if k.startswith(prefix)]})
        if not plan and not gone and not changed_digest:
            if trigger:
                self.mark_sync(trigger)
            self._record_marks(marks)
            watch.note_digests(digests)
            return stats
        if len(plan) > BATCH:
            self.conn.execute("PRAGMA cache_size=-32768")  # 32 MiB while loading: fewer page reloads
        from git_memex.index.progress import Progress

        progress = Progress(len(plan))
        try:
            progress.update(0)
            for start in range(0, max(len(plan), 1), BATCH):
                batch = plan[start : start + BATCH]
                last = start + BATCH >= len(plan)
                self._apply_batch(batch, gone if last else [], now_ns, stats,
                                  digests if last else None, trigger if last else None,
                                  lambda i, s=start: progress.update(s + i),
                                  listings if last else None, marks if last else None, version)
                progress.update(min(start + BATCH, len(plan)))
        finally:
            progress.done()
        if caller and not trigger and (stats.added or stats.changed or stats.removed or stats.quarantined):
            self.mark_sync(caller)  # a re-read of a racy file that found the same content is no sync
        watch.note_digests(digests)
        return stats

    def _apply_batch(self, batch: Plan, gone: list[str], now_ns: int,
                     stats: RefreshStats, digests: dict[str, str] | None, trigger: str | None,
                     tick: Any = None,
                     listings: dict[str, Listing] | None = None,
                     marks: dict[str, str] | None = None,
                     version: int | None = None,
                     ) -> None:
        # Read and parse outside the write transaction: other writers wait only for the writes.
        same: list[tuple[str, int, str]] = []  # (sig, racy, path): content unchanged, new stat
        rows: list[tuple[dict[str, Any], tuple[str, str, int, str, None]]] = []
        bad: list[tuple[str, str, int, str, str]] = []
        known_of: dict[str, bool] = {}  # a row's path: whether it replaces a row (changed) or not (added)
        resolved: dict[str, bool] = {}  # each folder's real path is looked up once per batch
        for n, (src, p, sig, old_sha, known) in enumerate(batch):
            if tick is not None and n % 250 == 0:
                tick(n)
            racy = int(now_ns - int(sig.split(":", 1)[0]) < RACY_NS)
            path = Path(p)
            raw, m, error = _load(path, self.root, src.location, resolved)
            sha = _sha(raw)
            if old_sha is not None and sha == old_sha:
                same.append((sig, racy, p))
                continue
            if m is not None:
                rows.append((memory_row(m, src.location, src.project_key), (p, sig, racy, sha, None)))
                known_of[p] = bool(known)
            else:
                bad.append((p, sig, racy, sha, error or "unreadable"))
        snapshots = [(f, *changes.listing_blob(*listings[f])) for f in listings] if listings else []
        # The listing snapshot is written with the last batch. Until then an older snapshot may
        # still stand; that is safe: a file whose signature differs from it is checked against its
        # row, and a row is only ever written for the signature it was read with.
        with self.write() as c:
            if rows and c.execute("PRAGMA data_version").fetchall()[0][0] != version:
                # Another process (a pull, a hook) committed since this refresh began to read, and
                # may have indexed a file it read: a row whose content the index already holds is
                # no change of this refresh, so it neither counts nor records this command as the
                # last sync (`version`: SQLite's data_version when the refresh began).
                rows = [(r, f) for r, f in rows if not _holds(c, f[0], f[3])]
            added = sum(not known_of[f[0]] for _, f in rows)
            changed = len(rows) - added
            if same:
                c.executemany("UPDATE files SET sig=?, racy=? WHERE path=?", same)
            removed = 0
            if rows and c.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is not None:
                keep = [(r["path"],) for r, _ in rows]  # rows about to be replaced by their new version
                c.executemany(DELETE_FTS, keep)  # (none in an empty index: a full rebuild skips the lookups)
                c.executemany(DELETE_MEMORY, keep)
            # A file written by another process after our listing may have been indexed by it
            # already: only what is really absent now is dropped (the next refresh sees the rest).
            gone = [p for p in gone if not os.path.lexists(p)]
            dropped = [(b[0],) for b in bad] + [(p,) for p in gone]
            if dropped:  # quarantined or deleted files: their rows go
                c.executemany(DELETE_FTS, dropped)
                before = c.total_changes
                c.executemany(DELETE_MEMORY, dropped)
                removed = c.total_changes - before
                if gone:
                    c.executemany("DELETE FROM files WHERE path=?", [(p,) for p in gone])
            if rows:
                base = c.execute("SELECT coalesce(max(rid), 0) FROM memories").fetchone()[0]
                values = _COLUMN_VALUES
                c.executemany(INSERT_MEMORY, ((base + i, *values(r)) for i, (r, _) in enumerate(rows, 1)))
                c.executemany(INSERT_FTS, ((base + i, *fts_fields(r)) for i, (r, _) in enumerate(rows, 1)))
                c.executemany(RECORD_FILE, (f for _, f in rows))
            if bad:
                c.executemany(RECORD_FILE, bad)
            if digests is not None:
                for folder, digest in digests.items():
                    self.set_meta(c, digest_key(folder), digest)
            for key, value in (marks or {}).items():
                self.set_meta(c, key, value)
            if snapshots:
                c.executemany("INSERT OR REPLACE INTO scans(folder, names, sigs) VALUES(?, ?, ?)", snapshots)
                c.executemany("DELETE FROM scan_patches WHERE folder=?", [(f[0],) for f in snapshots])
            if trigger:
                self.set_meta(c, "last_sync", str(time.time()))
                self.set_meta(c, "last_sync_trigger", trigger)
        stats.added += added
        stats.changed += changed
        stats.removed += removed
        stats.quarantined += len(bad)
        stats.unchanged += len(same)

    def apply_paths(self, source: Source, paths: Iterable[Path], *, trigger: str | None = None) -> RefreshStats:
        """Re-read exactly these files of one source (e.g. from a git tree diff)."""
        return self.apply_files([(source, p) for p in paths], trigger=trigger, folders=[source.folder])

    def apply_files(self, files: Iterable[tuple[Source, Path]], *, trigger: str | None = None,
                    folders: Iterable[Path] = (), loaded: list[Loaded] | None = None) -> RefreshStats:
        """Re-read exactly these files, each of its source's folder, in one write transaction; the
        listing digest of each such folder (and of `folders`) is forgotten. `loaded`: the same
        files as `load_files` read them already (a hook that also checked them)."""
        stats = RefreshStats()
        now_ns = time.time_ns()
        if loaded is None:
            loaded = load_files(files, self.root)
        with self.write() as c:
            for source, path, st, raw, m, error in loaded:
                p = str(path)
                if st is None:
                    if self._delete_path(c, p):
                        stats.removed += 1
                    c.execute("DELETE FROM files WHERE path=?", (p,))
                    self._patch(c, p, None)
                    continue
                self._patch(c, p, _sig(st))
                existed = c.execute("SELECT 1 FROM memories WHERE path=?", (p,)).fetchone() is not None
                if m is not None:
                    self._insert(c, memory_row(m, source.location, source.project_key))
                    racy = now_ns - st.st_mtime_ns < RACY_NS
                    self._record_file(c, path, source.folder, _sig(st), racy, _sha(raw), None)
                    if existed:
                        stats.changed += 1
                    else:
                        stats.added += 1
                else:
                    self._delete_path(c, p)
                    racy = now_ns - st.st_mtime_ns < RACY_NS  # recorded as a full scan records it
                    self._record_file(c, path, source.folder, _sig(st), racy, _sha(raw), error or "unreadable")
                    stats.quarantined += 1
            for folder in dict.fromkeys([*folders, *(source.folder for source, *_ in loaded)]):
                self._forget_digest(c, folder)
            if trigger:
                self.set_meta(c, "last_sync", str(time.time()))
                self.set_meta(c, "last_sync_trigger", trigger)
        return stats

    def clear(self) -> None:
        """Throw every row away (a full rebuild follows): drop and recreate the tables, which is
        much faster than deleting row by row from the FTS index. The folder it is built for stays."""
        built_for = self.get_meta("built_for")
        create_tables(self.conn, replace=True)
        if built_for is not None:
            with self.write() as c:
                self.set_meta(c, "built_for", built_for)
        self.rebuilt = True

    # ------------------------------------------------------------ reads
    def quarantined(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path")]

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]


IN_CHUNK = 500
"""Values per `IN (...)`: well under SQLite's bound-variable limit (999 before 3.32)."""


def in_chunks(values: list[str]) -> Iterator[tuple[list[str], str]]:
    """`values` in pieces small enough for one `IN (...)`, each with its placeholders."""
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


def _column_values() -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    from operator import itemgetter

    return itemgetter(*COLUMNS)


_COLUMN_VALUES = _column_values()
"""A row's values in COLUMNS order (one C call a row, not a generator over 33 keys)."""


def _sha(raw: bytes) -> str:
    from git_memex.core.digest import sha1_hex

    return sha1_hex(raw)


def _is_damaged(exc: sqlite3.Error) -> bool:
    """SQLITE_CORRUPT or SQLITE_NOTADB: the only errors at open that justify deleting the file."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (11, 26)


def is_locked(exc: sqlite3.Error) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg

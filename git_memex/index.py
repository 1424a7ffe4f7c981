"""The SQLite FTS5 index: a cache of the markdown files, rebuildable from them at any time.

Two databases are used together: one in the data root (personal memories, project
outboxes, private memories) and one per work tree inside its git dir (the memories
that work tree has checked out). Each keeps a table of the files it has read with
their stat signature, so a refresh re-reads only what was added, changed or deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_memex.model import Memory, parse_time
from git_memex.store import UnreadableMemory, list_md, read_memory

SCHEMA_VERSION = "3"
BUSY_TIMEOUT_MS = 5000
# A file modified this close to the scan may change again within the same timestamp
# granule; such entries are re-checked (by content hash) on the next refresh.
RACY_NS = 2_000_000_000

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(
    path TEXT PRIMARY KEY,
    dir TEXT NOT NULL,
    sig TEXT NOT NULL,
    racy INTEGER NOT NULL DEFAULT 0,
    sha TEXT,
    error TEXT
);
CREATE INDEX files_dir ON files(dir);
CREATE TABLE memories(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    location TEXT NOT NULL,
    project_key TEXT,
    scope TEXT, type TEXT, status TEXT, review_state TEXT, role TEXT, importance TEXT,
    visibility TEXT, source TEXT, trust_level TEXT, instruction_state TEXT, confidence TEXT,
    created_by TEXT, created_at TEXT, updated_at TEXT, updated_ts REAL,
    supersedes TEXT, superseded_by TEXT, derived_from TEXT,
    tags TEXT, paths TEXT, content_hash TEXT, body TEXT, warnings TEXT
);
CREATE INDEX memories_id ON memories(id);
CREATE INDEX memories_supersedes ON memories(supersedes);
CREATE INDEX memories_hash ON memories(content_hash);
CREATE INDEX memories_updated ON memories(updated_ts);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    body, tags, type, cjk, tokenize='porter unicode61 remove_diacritics 2'
);
"""

COLUMNS = (
    "id", "path", "location", "project_key", "scope", "type", "status", "review_state", "role",
    "importance", "visibility", "source", "trust_level", "instruction_state", "confidence",
    "created_by", "created_at", "updated_at", "updated_ts", "supersedes", "superseded_by",
    "derived_from", "tags", "paths", "content_hash", "body", "warnings",
)  # fmt: skip


@dataclass(frozen=True)
class Source:
    """One folder of memory files and what its memories are."""

    location: str  # personal | outbox | private | repo
    folder: Path
    project_key: str | None = None


@dataclass
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


def _sig(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


def _str(v: Any) -> str | None:
    if v is None:
        return None
    return str(v)


def memory_row(m: Memory, location: str, project_key: str | None) -> dict[str, Any]:
    from git_memex.textproc import content_hash

    fm = m.fm
    upd = fm.get("updated_at") or fm.get("created_at")
    return {
        "id": m.id,
        "path": str(m.path),
        "location": location,
        "project_key": project_key,
        "scope": _str(fm.get("scope")) or "project",
        "type": _str(fm.get("type")) or "fact",
        "status": _str(fm.get("status")) or "active",
        "review_state": _str(fm.get("review_state")),
        "role": _str(fm.get("role")) or "knowledge",
        "importance": _str(fm.get("importance")) or "normal",
        "visibility": _str(fm.get("visibility")),
        "source": _str(fm.get("source")),
        "trust_level": _str(fm.get("trust_level")),
        "instruction_state": _str(fm.get("instruction_state")),
        "confidence": _str(fm.get("confidence")),
        "created_by": _str(fm.get("created_by")),
        "created_at": _str(fm.get("created_at")),
        "updated_at": _str(upd),
        "updated_ts": parse_time(upd) or 0.0,
        "supersedes": _str(fm.get("supersedes")),
        "superseded_by": _str(fm.get("superseded_by")),
        "derived_from": _str(fm.get("derived_from")),
        "tags": json.dumps(m.tags, ensure_ascii=False),
        "paths": json.dumps(m.paths, ensure_ascii=False),
        "content_hash": content_hash(m.body),
        "body": m.body,
        "warnings": json.dumps(m.warnings, ensure_ascii=False) if m.warnings else None,
    }


def fts_fields(row: dict[str, Any]) -> tuple[str, str, str, str]:
    from git_memex.textproc import cjk_index_text, latin_text

    tags = " ".join(json.loads(row["tags"] or "[]"))
    return (
        latin_text(row["body"]),
        latin_text(tags),
        row["type"] or "",
        cjk_index_text(row["body"] + " " + tags),
    )


class IndexCorrupt(Exception):
    pass


class Index:
    """One index database. Use as a context manager; every write is a short transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rebuilt = False
        self.conn = self._open()

    # ------------------------------------------------------------ opening
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            conn = self._connect()
            self._prepare(conn)
            return conn
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                raise
            # Corrupt or foreign file: the markdown is the truth, start the cache again.
            self._discard_files()
            self.rebuilt = True
            conn = self._connect()
            self._prepare(conn)
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

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
                " AND name NOT LIKE 'memories_fts_%'"
            ).fetchall():
                conn.execute(f'DROP TABLE IF EXISTS "{name}"')
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute("INSERT INTO meta(key, value) VALUES('schema_version', ?)", (SCHEMA_VERSION,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.rebuilt = True

    def _discard_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.path) + suffix)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE with retries inside the busy timeout; commit or roll back."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000 * 2
        delay = 0.01
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
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
            "INSERT INTO memories_fts(rowid, body, tags, type, cjk) VALUES(?, ?, ?, ?, ?)",
            (cur.lastrowid, *fts_fields(row)),
        )

    def _record_file(self, c: sqlite3.Connection, path: Path, folder: Path, sig: str, racy: bool,
                     sha: str | None, error: str | None) -> None:  # fmt: skip
        c.execute(
            "INSERT OR REPLACE INTO files(path, dir, sig, racy, sha, error) VALUES(?, ?, ?, ?, ?, ?)",
            (str(path), str(folder), sig, int(racy), sha, error),
        )

    def upsert(self, m: Memory, source: Source) -> None:
        """Index a memory just written by us (its file is on disk at m.path)."""
        assert m.path is not None
        st = os.stat(m.path)
        raw = Path(m.path).read_bytes()
        racy = time.time_ns() - st.st_mtime_ns < RACY_NS
        with self.write() as c:
            self._insert(c, memory_row(m, source.location, source.project_key))
            self._record_file(c, m.path, source.folder, _sig(st), racy, _sha(raw), None)

    def remove(self, path: Path) -> None:
        with self.write() as c:
            self._delete_path(c, str(path))
            c.execute("DELETE FROM files WHERE path=?", (str(path),))

    # ------------------------------------------------------------ refresh
    def refresh(self, sources: Iterable[Source], *, trigger: str | None = None) -> RefreshStats:
        """Bring the index in line with the folders, reading only what changed."""
        stats = RefreshStats()
        plan: list[tuple[Source, Path, str, str | None]] = []  # (source, path, sig, known sha)
        gone: list[str] = []
        now_ns = time.time_ns()
        for src in sources:
            known = {
                r[0]: (r[1], r[2], r[3])
                for r in self.conn.execute("SELECT path, sig, racy, sha FROM files WHERE dir=?", (str(src.folder),))
            }
            seen: set[str] = set()
            for entry in list_md(src.folder):
                p = entry.path
                seen.add(p)
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                sig = _sig(st)
                old = known.get(p)
                if old is not None and old[0] == sig and not old[1]:
                    stats.unchanged += 1
                    continue
                plan.append((src, Path(p), sig, old[2] if old is not None else None))
            gone.extend(p for p in known if p not in seen)
        if not plan and not gone:
            if trigger:
                self.mark_sync(trigger)
            return stats
        prepared: list[tuple[Source, Path, str, bool, str | None, dict[str, Any] | None, str | None]] = []
        for src, path, sig, old_sha in plan:
            racy = now_ns - int(sig.split(":", 1)[0]) < RACY_NS
            try:
                raw = path.read_bytes() if not path.is_symlink() else b""
            except OSError:
                raw = b""
            sha = _sha(raw)
            if old_sha is not None and sha == old_sha:
                prepared.append((src, path, sig, racy, sha, None, "same"))
                continue
            try:
                m = read_memory(path)
                row = memory_row(m, src.location, src.project_key)
                prepared.append((src, path, sig, racy, sha, row, None))
            except UnreadableMemory as exc:
                prepared.append((src, path, sig, racy, sha, None, str(exc)))
        with self.write() as c:
            for src, path, sig, racy, sha, row, error in prepared:
                if error == "same":
                    c.execute("UPDATE files SET sig=?, racy=? WHERE path=?", (sig, int(racy), str(path)))
                    stats.unchanged += 1
                    continue
                existed = c.execute("SELECT 1 FROM files WHERE path=?", (str(path),)).fetchone() is not None
                if row is not None:
                    self._insert(c, row)
                    if existed:
                        stats.changed += 1
                    else:
                        stats.added += 1
                else:
                    if self._delete_path(c, str(path)):
                        stats.removed += 1
                    stats.quarantined += 1
                self._record_file(c, path, src.folder, sig, racy, sha, error)
            for p in gone:
                if self._delete_path(c, p):
                    stats.removed += 1
                c.execute("DELETE FROM files WHERE path=?", (p,))
            if trigger:
                self.set_meta(c, "last_sync", str(time.time()))
                self.set_meta(c, "last_sync_trigger", trigger)
        return stats

    def apply_paths(self, source: Source, paths: Iterable[Path], *, trigger: str | None = None) -> RefreshStats:
        """Re-read exactly these files of one source (e.g. from a git tree diff)."""
        stats = RefreshStats()
        with self.write() as c:
            for path in paths:
                p = str(path)
                try:
                    st = os.lstat(path)
                except FileNotFoundError:
                    if self._delete_path(c, p):
                        stats.removed += 1
                    c.execute("DELETE FROM files WHERE path=?", (p,))
                    continue
                existed = c.execute("SELECT 1 FROM memories WHERE path=?", (p,)).fetchone() is not None
                try:
                    raw = path.read_bytes()
                    m = read_memory(path)
                    self._insert(c, memory_row(m, source.location, source.project_key))
                    racy = time.time_ns() - st.st_mtime_ns < RACY_NS
                    self._record_file(c, path, source.folder, _sig(st), racy, _sha(raw), None)
                    if existed:
                        stats.changed += 1
                    else:
                        stats.added += 1
                except (UnreadableMemory, OSError) as exc:
                    self._delete_path(c, p)
                    self._record_file(c, path, source.folder, _sig(st), False, None, str(exc))
                    stats.quarantined += 1
            if trigger:
                self.set_meta(c, "last_sync", str(time.time()))
                self.set_meta(c, "last_sync_trigger", trigger)
        return stats

    def clear(self) -> None:
        with self.write() as c:
            c.execute("DELETE FROM memories")
            c.execute("DELETE FROM memories_fts")
            c.execute("DELETE FROM files")

    # ------------------------------------------------------------ reads
    def quarantined(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path")]  # fmt: skip

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]


def _sha(raw: bytes) -> str:
    return hashlib.sha1(raw).hexdigest()


def _is_locked(exc: sqlite3.Error) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg

"""The memory folders of one context and the two indexes that cache them, used together."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from git_memex.core.model import SAFE_ID_RE
from git_memex.core.paths import Context, prepare_data_root
from git_memex.core.record import record
from git_memex.errors import FAILED, USAGE, MemexError, NotFound
from git_memex.index.refresh import MEMORY, Index, RefreshStats, Source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOCATIONS = ("repo", "outbox", "private", "personal")
_WARNED: set[str] = set()


@record
class Found:
    """A memory located through an index: its row, and the index and source that hold it."""

    row: sqlite3.Row
    index: Index
    source: Source

    @property
    def path(self) -> Path:
        return Path(self.row["path"])


class Stores:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        in_repo = ctx.repo_index is not None and ctx.memory_dir is not None
        # Set when the data root cannot be used: the repository's own memories (indexed in the
        # git dir) are still searched, with a one-line warning; writes there fail (exit 2).
        self.degraded: str | None = None
        try:
            prepare_data_root(ctx.data_root)
            self.home = Index(ctx.home_index)
        except (MemexError, sqlite3.Error, OSError) as exc:
            if isinstance(exc, MemexError):
                err = MemexError(exc.message, FAILED)
            elif isinstance(exc, sqlite3.Error):
                err = MemexError(f"cannot open the index in {ctx.data_root} ({exc}); check that the folder is writable", FAILED)
            else:
                err = MemexError(f"cannot use the data root {ctx.data_root} ({exc.strerror}); set GIT_MEMEX_HOME to a writable folder", FAILED)
            if not in_repo:
                raise err from None
            self.degraded = err.message
            self.home = Index(Path(MEMORY))
        self.repo: Index | None = None
        if in_repo:
            assert ctx.repo_index is not None
            try:
                self.repo = Index(ctx.repo_index)
            except (sqlite3.Error, OSError) as exc:
                self.home.close()
                raise MemexError(f"cannot open the index in {ctx.repo_index.parent} ({exc})", FAILED) from None
        self.warnings: list[str] = []
        self._failed = False
        if ctx.repo is not None and not self.degraded:
            from git_memex.core.scopekeys import settle

            settle(ctx)  # a clone whose origin changed keeps its drafts (docs/identity.md)

    def close(self) -> None:
        self.home.close()
        if self.repo is not None:
            self.repo.close()
        if self.degraded and not self._failed and self.degraded not in _WARNED:
            _WARNED.add(self.degraded)  # once per process (the MCP server opens many)
            print(f"git-memex: warning: {self.degraded}; showing the repository's memories only",
                  file=sys.stderr)

    def __enter__(self) -> Stores:
        return self

    def __exit__(self, *exc: object) -> None:
        self._failed = exc[0] is not None
        self.close()

    # ------------------------------------------------------------ sources
    def source(self, location: str) -> Source:
        ctx = self.ctx
        if location == "personal":
            return Source("personal", ctx.personal_dir, None)
        if location == "outbox":
            return Source("outbox", ctx.outbox_dir, ctx.project_key)
        if location == "private":
            return Source("private", ctx.private_dir, ctx.project_key)
        if location == "repo":
            if ctx.memory_dir is None:
                raise MemexError("there is no repository memory folder here; run inside a git repository", USAGE)
            return Source("repo", ctx.memory_dir, ctx.project_key)
        raise ValueError(location)

    def index_for(self, location: str) -> Index:
        if location == "repo":
            if self.repo is None:
                raise MemexError("there is no repository memory folder here; run inside a git repository", USAGE)
            return self.repo
        return self.home

    def home_sources(self) -> list[Source]:
        if self.degraded:
            return []
        return [self.source("personal"), self.source("outbox"), self.source("private")]

    def dbs(self) -> list[tuple[Index, str, tuple[Any, ...]]]:
        """(index, SQL filter on memories, params) for every index this context searches."""
        out: list[tuple[Index, str, tuple[Any, ...]]] = []
        if self.repo is not None:
            out.append((self.repo, "1", ()))
        out.append((self.home, "(m.project_key IS NULL OR m.project_key = ?)", (self.ctx.project_key,)))
        return out

    # ------------------------------------------------------------ refresh
    def refresh(self, trigger: str | None = None) -> RefreshStats:
        total = RefreshStats()
        pairs: list[tuple[Index, list[Source]]] = [(self.home, self.home_sources())]
        if self.repo is not None:
            pairs.insert(0, (self.repo, [self.source("repo")]))
        for index, sources in pairs:
            try:
                s = index.refresh(sources, trigger=trigger)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() and "busy" not in str(exc).lower():
                    raise
                msg = "the index is busy; results may be slightly out of date"
                self.warnings.append(msg)
                total.skipped_locked = True
                continue
            total.added += s.added
            total.changed += s.changed
            total.removed += s.removed
            total.quarantined += s.quarantined
            total.unchanged += s.unchanged
        return total

    def rebuild(self) -> RefreshStats:
        self.home.clear()
        if self.repo is not None:
            self.repo.clear()
        return self.refresh(trigger="reindex --full")

    # ------------------------------------------------------------ lookups
    def find(self, memory_id: str) -> Found:
        """Locate a memory by id or unique id prefix (at least 6 characters), newest location first."""
        mid = memory_id.strip()
        if not SAFE_ID_RE.match(mid):
            raise NotFound(f"{memory_id!r} is not a memory id")
        matches: list[Found] = []
        for index, where, params in self.dbs():
            if len(mid) >= 26:
                sql = f"SELECT m.* FROM memories m WHERE m.id = ? AND {where}"
                args: tuple[Any, ...] = (mid, *params)
            elif len(mid) >= 6:
                sql = f"SELECT m.* FROM memories m WHERE m.id >= ? AND m.id < ? AND {where}"
                args = (mid.upper(), mid.upper() + "\uffff", *params)
            else:
                sql = f"SELECT m.* FROM memories m WHERE m.id = ? AND {where}"
                args = (mid, *params)
            for row in index.conn.execute(sql, args):
                matches.append(Found(row, index, self._source_of(row)))
        ids = {f.row["id"] for f in matches}
        if not matches:
            self._refuse_unreadable(mid)
            raise NotFound(f"no memory with id {mid}; `git memex list` shows the ids")
        if len(ids) > 1:
            raise MemexError(f"id prefix {mid} is ambiguous ({len(ids)} memories); give more characters", USAGE)
        matches.sort(key=lambda f: LOCATIONS.index(f.row["location"]))
        return matches[0]

    def _refuse_unreadable(self, mid: str) -> None:
        """A quarantined file named for `mid` (or an id prefix of 6+): say why it cannot be used."""
        folders = [str(src.folder) for src in self.home_sources()]
        if self.repo is not None and self.ctx.memory_dir is not None:
            folders.append(str(self.ctx.memory_dir))
        exact = len(mid) >= 26 or len(mid) < 6
        for index in (self.repo, self.home):
            if index is None:
                continue
            for path, error in index.quarantined():
                p = Path(path)
                stem = p.name[:-3] if p.name.endswith(".md") else p.name
                hit = stem == mid if exact else stem.upper().startswith(mid.upper())
                if hit and str(p.parent) in folders:
                    raise MemexError(f"memory {stem} is unreadable ({path}: {error}); fix or remove "
                                     "the file, `git memex doctor` lists such files", FAILED)

    def find_all(self, memory_id: str) -> list[Found]:
        out = []
        for index, where, params in self.dbs():
            for row in index.conn.execute(f"SELECT m.* FROM memories m WHERE m.id = ? AND {where}", (memory_id, *params)):
                out.append(Found(row, index, self._source_of(row)))
        return out

    def _source_of(self, row: sqlite3.Row) -> Source:
        loc = row["location"]
        if loc in ("outbox", "private") and row["project_key"] != self.ctx.project_key:
            return Source(loc, Path(row["path"]).parent, row["project_key"])
        return self.source(loc)

    def warn(self, stream: Any = None) -> None:
        for w in self.warnings:
            print(f"warning: {w}", file=stream or sys.stderr)


@contextlib.contextmanager
def opened(ctx: Context, stores: Stores | None = None) -> Iterator[Stores]:
    """The caller's open Stores when given (one process, several operations), else our own."""
    if stores is not None:
        yield stores
        return
    with Stores(ctx) as st:
        yield st

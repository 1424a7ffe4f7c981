"""The memory folders of one context and the two indexes that cache them, used together.

Two databases are used together: one in the data root (personal memories, project outboxes,
private memories) and one per work tree inside its git dir (the memories that work tree has
checked out). Invariants: the repository's index holds only `location = 'repo'` rows and the
home index only the others; the home index is shared by every project on the machine, so each
query on it is scoped to this project (and personal memories) unless asked not to be. When the
data root cannot be used, the home index is an empty one in memory (`degraded`).

Outside the index, memories are read through one small query API (`Stores.rows`, `by_id`,
`first`, `one`, `count`; `select_sql` is the statement they run on each index): a caller gives
an SQL condition on `memories m` and its parameters, never a loop over the databases.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from git_memex.core.model import SAFE_ID_RE
from git_memex.core.paths import DEFAULT_MEMORY_DIR, Context, prepare_data_root, private_mkdir
from git_memex.core.record import record
from git_memex.errors import FAILED, USAGE, MemexError, NotFound
from git_memex.index.changes import _under, unreadable_name, valid_name
from git_memex.index.refresh import (
    DAMAGED,
    MEMORY,
    Index,
    RefreshStats,
    Source,
    discard_damaged,
    is_locked,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOCATIONS = ("repo", "outbox", "private", "personal")
ORG_PREFIX = "org:"  # an org memory's location is `org:NAME` (docs/org.md)
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


def _inside(index: Index, row: sqlite3.Row) -> bool:
    """Whether the row's file, every link resolved, lies in the folder its index is for: a row
    whose path now leads elsewhere (a memory folder replaced by a link into another clone after it
    was indexed) is never read, changed or deleted through a lookup."""
    from git_memex.core.files import inside

    return index.root is None or inside(row["path"], index.root)


class Stores:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        in_repo = ctx.repo_index is not None and ctx.memory_dir is not None
        # Set when the data root cannot be used: the repository's own memories (indexed in the
        # git dir) are still searched, with a one-line warning; writes there fail (exit 2).
        self.degraded: str | None = None
        if DAMAGED:  # found damaged earlier in this process (the MCP server): start them again
            discard_damaged()
        try:
            prepare_data_root(ctx.data_root)
            self.home = Index(ctx.home_index, root=ctx.data_root)
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
            assert ctx.repo_index is not None and ctx.repo is not None
            try:
                self.repo = Index(ctx.repo_index, root=ctx.repo.work_tree)
            except (sqlite3.Error, OSError) as exc:
                self.home.close()
                raise MemexError(f"cannot open the index in {ctx.repo_index.parent} ({exc})", FAILED) from None
        self.warnings: list[str] = []
        self._failed = False
        # one index per subscribed org memory repo, after the project's and the home index
        self.orgs: list[tuple[str, Index]] = []
        for name in ctx.org_names():
            if not (ctx.org_clone(name) / DEFAULT_MEMORY_DIR).is_dir():
                self.warnings.append(f"the clone of org {name} is missing ({ctx.org_clone(name)}); "
                                     f"`git memex org remove {name}` then `org add` it again")
                continue
            try:
                private_mkdir(ctx.org_index(name).parent)
                self.orgs.append((name, Index(ctx.org_index(name), root=ctx.org_clone(name))))
            except (sqlite3.Error, OSError) as exc:
                self.warnings.append(f"cannot open the index of org {name} ({exc}); its memories are left out")
        if ctx.repo is not None and not self.degraded:
            from git_memex.core.scopekeys import settle

            settle(ctx)  # a clone whose origin changed keeps its drafts (docs/identity.md)

    def close(self) -> None:
        self.home.close()
        if self.repo is not None:
            self.repo.close()
        for _, org_index in self.orgs:
            org_index.close()
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
        if location.startswith(ORG_PREFIX):
            return org_sources(ctx, location[len(ORG_PREFIX):])[0]
        raise ValueError(location)

    def index_for(self, location: str) -> Index:
        if location == "repo":
            if self.repo is None:
                raise MemexError("there is no repository memory folder here; run inside a git repository", USAGE)
            return self.repo
        for name, org_index in self.orgs:
            if location == ORG_PREFIX + name:
                return org_index
        return self.home

    def home_sources(self) -> list[Source]:
        if self.degraded:
            return []
        return [self.source("personal"), self.source("outbox"), self.source("private")]

    def dbs(self) -> list[tuple[Index, str, tuple[Any, ...]]]:
        """(index, SQL filter on `memories m`, params) for every index this context searches, the
        repository's first. For what the queries below cannot say (the search engine's ranking)."""
        out: list[tuple[Index, str, tuple[Any, ...]]] = []
        if self.repo is not None:
            out.append((self.repo, "1", ()))
        out.append((self.home, "(m.project_key IS NULL OR m.project_key = ?)", (self.ctx.project_key,)))
        out.extend((org_index, "1", ()) for _, org_index in self.orgs)
        return out

    # ------------------------------------------------------------ queries
    # One small query API over every index of the context, in the spirit of sqlite-utils'
    # `rows_where`: `where` is an SQL condition on `memories m` with `?` placeholders for
    # `params`. Each index is asked on its own, the repository's first, with the context's scope
    # ANDed in front (`scoped=False` drops it: the home index then also answers for other
    # projects' outboxes and private memories); `order_by` and `limit` apply per index.
    def _statements(self, where: str, params: Sequence[Any], *, columns: str = "m.*", order_by: str | None = None,
                    limit: int | None = None, match: str | None = None,
                    scoped: bool = True) -> Iterator[tuple[Index, str, tuple[Any, ...]]]:
        """(index, SQL, arguments) of the query on each index, the repository's first."""
        for index, scope, scope_params in self.dbs():
            sql = select_sql(columns, where, scope=scope if scoped else None, order_by=order_by,
                             limit=limit is not None, match=match is not None)
            args = (*(() if match is None else (match,)), *(scope_params if scoped else ()), *params,
                    *(() if limit is None else (limit,)))
            yield index, sql, args

    def rows(self, where: str = "1", params: Sequence[Any] = (), *, columns: str = "m.*",
             order_by: str | None = None, limit: int | None = None, match: str | None = None,
             scoped: bool = True, skip_errors: bool = False) -> list[sqlite3.Row]:
        """The rows matching `where` in every index, the repository's first (a memory held by two
        indexes comes twice; `by_id` keeps one). `match` is an FTS5 expression the row must match
        (`memories_fts` is joined in, so `columns` and `order_by` may use `bm25(memories_fts, …)`);
        `skip_errors` leaves out an index whose query fails (an expression FTS5 refuses)."""
        out: list[sqlite3.Row] = []
        for index, sql, args in self._statements(where, params, columns=columns, order_by=order_by, limit=limit,
                                                 match=match, scoped=scoped):
            try:
                out.extend(index.conn.execute(sql, args).fetchall())
            except sqlite3.OperationalError:
                if not skip_errors:
                    raise
        return out

    def by_id(self, where: str = "1", params: Sequence[Any] = (), **kw: Any) -> dict[str, sqlite3.Row]:
        """`rows` (same arguments) one per id, in order: the first index's row wins (the repository's
        copy over a stale outbox copy, as in search). `columns` must include `m.id`."""
        out: dict[str, sqlite3.Row] = {}
        for r in self.rows(where, params, **kw):
            out.setdefault(r["id"], r)
        return out

    def first(self, where: str, params: Sequence[Any] = (), *, columns: str = "m.*",
              order_by: str | None = None, limit: int | None = None, scoped: bool = True) -> sqlite3.Row | None:
        """The first row matching `where` in the first index that has one (the later ones are not
        asked); None when no index has one."""
        for index, sql, args in self._statements(where, params, columns=columns, order_by=order_by, limit=limit,
                                                 scoped=scoped):
            row = index.conn.execute(sql, args).fetchone()
            if row is not None:
                return row
        return None

    def one(self, memory_id: str, columns: str = "m.*", *, scoped: bool = True) -> sqlite3.Row | None:
        """The row of the memory with exactly this id (the repository's copy first), or None."""
        return self.first("m.id = ?", (memory_id,), columns=columns, scoped=scoped)

    def count(self, where: str = "1", params: Sequence[Any] = (), *, distinct: str | None = None,
              scoped: bool = True) -> int:
        """The rows matching `where`, summed over the indexes; with `distinct`, the distinct values of
        that column in each index, summed."""
        what = f"count(DISTINCT {distinct})" if distinct else "count(*)"
        return sum(int(r[0]) for r in self.rows(where, params, columns=what, scoped=scoped))

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
                if not is_locked(exc):
                    raise
                msg = "the index is busy; results may be slightly out of date"
                self.warnings.append(msg)
                total.skipped_locked = True
                continue
            total.add(s)
            self._note(total, s.warnings)
        for name, org_index in self.orgs:
            try:
                got = refresh_org(self.ctx, name, org_index, force=trigger is not None and trigger.startswith("reindex"))
            except sqlite3.OperationalError as exc:
                if not is_locked(exc):
                    raise
                self.warnings.append(f"the index of org {name} is busy; its results may be slightly out of date")
                continue
            if got is not None:
                total.add(got)
                self._note(total, got.warnings)
        return total

    def _note(self, total: RefreshStats, warnings: list[str]) -> None:
        """A refresh's warnings (a file or folder it left out), each once, for the caller to show."""
        for w in warnings:
            if w not in self.warnings:
                self.warnings.append(w)
                total.warnings.append(w)

    def rebuild(self) -> RefreshStats:
        self.home.clear()
        if self.repo is not None:
            self.repo.clear()
        for _, org_index in self.orgs:
            org_index.clear()
        return self.refresh(trigger="reindex --full")

    # ------------------------------------------------------------ lookups
    def find(self, memory_id: str) -> Found:
        """Locate a memory by id or unique id prefix (at least 6 characters), newest location first."""
        mid = memory_id.strip()
        if not SAFE_ID_RE.match(mid):
            raise NotFound(f"{memory_id!r} is not a memory id")
        matches: list[Found] = []
        args: tuple[str, ...]
        if 6 <= len(mid) < 26:
            where, args = "m.id >= ? AND m.id < ?", (mid.upper(), mid.upper() + "\uffff")
        else:  # ids are upper-case ULIDs: one typed in lower case names the same memory
            where, args = "m.id IN (?, ?)", (mid, mid.upper())
        for index, sql, sql_args in self._statements(where, args):
            for row in index.conn.execute(sql, sql_args):
                if _inside(index, row):
                    matches.append(Found(row, index, self._source_of(row)))
        ids = {f.row["id"] for f in matches}
        if not matches:
            self._refuse_unreadable(mid)
            raise NotFound(f"no memory with id {mid}; `git memex list` shows the ids")
        if len(ids) > 1:
            raise MemexError(f"id prefix {mid} is ambiguous ({len(ids)} memories); give more characters", USAGE)
        matches.sort(key=lambda f: LOCATIONS.index(f.row["location"]) if f.row["location"] in LOCATIONS
                     else len(LOCATIONS))
        return matches[0]

    def find_changeable(self, memory_id: str) -> Found:
        """`find`, refusing an org memory (exit 1): an org clone changes only through `org pull`,
        so an org memory is changed in the org repository itself (docs/org.md)."""
        found = self.find(memory_id)
        loc = found.row["location"]
        if loc.startswith(ORG_PREFIX):
            raise MemexError(f"{found.row['id']} is an org memory (org {loc[len(ORG_PREFIX):]}); change it in the "
                             f"org repository, the clone in {self.ctx.org_clone(loc[len(ORG_PREFIX):])} changes "
                             "only through `git memex org pull`", USAGE)
        return found

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
        """Every copy of the memory with exactly this id, one per index that holds it."""
        return [Found(row, index, self._source_of(row))
                for index, sql, args in self._statements("m.id = ?", (memory_id,))
                for row in index.conn.execute(sql, args) if _inside(index, row)]

    def _source_of(self, row: sqlite3.Row) -> Source:
        loc = row["location"]
        if loc.startswith(ORG_PREFIX):
            return Source(loc, Path(row["path"]).parent, None)
        if loc in ("outbox", "private") and row["project_key"] != self.ctx.project_key:
            return Source(loc, Path(row["path"]).parent, row["project_key"])
        return self.source(loc)

    def warn(self, stream: Any = None) -> None:
        for w in self.warnings:
            print(f"warning: {w}", file=stream or sys.stderr)


def org_sources(ctx: Context, name: str) -> list[Source]:
    """The folders of org `name`'s memory folder, itself first: org memories may sit flat or in
    subfolders such as engineering/ or decisions/ (docs/org.md). Hidden folders are skipped, and so
    are links to folders: git stores a link, not what it points at, so a pull's diff could never
    name the files behind one (and it may point out of the clone)."""
    return _org_sources(ctx, name, [])


def _org_sources(ctx: Context, name: str, warnings: list[str]) -> list[Source]:
    """`org_sources`, with a warning in `warnings` per folder left out because its name is not
    valid UTF-8 (the index could not hold its paths; `org pull` leaves it out too)."""
    root = ctx.org_clone(name) / DEFAULT_MEMORY_DIR
    out = [Source(ORG_PREFIX + name, root, None)]
    for here, dirs, _files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(here, d)))
        if not all(map(valid_name, dirs)):
            warnings.extend(unreadable_name(os.path.join(here, d)) for d in dirs if not valid_name(d))
            dirs[:] = [d for d in dirs if valid_name(d)]
        out.extend(Source(ORG_PREFIX + name, Path(here) / d, None) for d in dirs)
    return out


ORG_COMMIT = "org_commit"  # meta key: the commit of the org clone the index was last brought in line with


def org_head(clone: Path) -> str | None:
    """The commit HEAD of a clone points at, read from its files (no git process): HEAD, then the
    loose ref, then packed-refs; None when it cannot be told."""
    git_dir = clone / ".git"
    try:
        head = (git_dir / "HEAD").read_text("utf-8").strip()
    except OSError:
        return None
    if not head.startswith("ref: "):
        return head or None
    ref = head[len("ref: "):]
    try:
        return (git_dir / ref).read_text("utf-8").strip() or None
    except OSError:
        pass
    try:
        for line in (git_dir / "packed-refs").read_text("utf-8").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    except OSError:
        pass
    return None


def refresh_org(ctx: Context, name: str, index: Index, *, force: bool = False) -> RefreshStats | None:
    """Bring org `name`'s index in line with its clone. An org clone changes only through `org
    pull`, so the index is fresh while the clone's HEAD is the commit it was built from: no stat of
    every file (docs/org.md). `force` (`reindex`) checks every file anyway. None when skipped."""
    head = org_head(ctx.org_clone(name))
    if not force and head is not None and index.get_meta(ORG_COMMIT) == head:
        return None
    skipped: list[str] = []
    sources = _org_sources(ctx, name, skipped)
    s = index.refresh(sources, trigger="org")
    s.warnings[:0] = skipped
    # a subfolder deleted since the last scan is no source any more: its rows go too (counted in
    # SQL first, ~3x cheaper than looking at every path in Python, which only happens when some are)
    folders = {str(src.folder) for src in sources}
    direct = sum(index.conn.execute("SELECT count(*) FROM files WHERE path >= ? AND path < ? AND "
                                    "instr(substr(path, ?), ?) = 0", (*_under(f), len(f) + 2, os.sep)).fetchone()[0]
                 for f in folders)
    if direct != index.conn.execute("SELECT count(*) FROM files").fetchone()[0]:
        stale = [Path(r[0]) for r in index.conn.execute("SELECT path FROM files")
                 if os.path.dirname(r[0]) not in folders]
        if stale:
            s.removed += index.apply_paths(Source(ORG_PREFIX + name, stale[0].parent, None),
                                           stale).removed
    if head is not None:
        with index.write() as c:
            index.set_meta(c, ORG_COMMIT, head)
    return s


def org_memory_path(rel: str) -> bool:
    """Is `rel` (a path in an org clone, '/'-separated, as git prints it) a file the index reads:
    a `*.md` under the memory folder, in no hidden folder and not hidden itself (`org_sources`,
    `changes.listing`)?"""
    prefix = DEFAULT_MEMORY_DIR + "/"
    if not rel.startswith(prefix) or not rel.endswith(".md"):
        return False
    return not any(part.startswith(".") or not part or not valid_name(part) for part in rel[len(prefix):].split("/"))


def apply_org_diff(ctx: Context, name: str, index: Index, old: str, new: str, changed: list[str]) -> RefreshStats | None:
    """After a fast-forward of org `name`'s clone from `old` to `new`: re-read exactly the files
    `changed` (paths in the clone, from `git diff-tree old new`), not every folder. Only when the
    index was in line with `old` and the clone's HEAD is now `new`; None otherwise (the caller then
    checks every file with `refresh_org`). Leaves the index as a full refresh would (docs/org.md)."""
    clone = ctx.org_clone(name)
    if index.get_meta(ORG_COMMIT) != old or org_head(clone) != new:
        return None
    files = [(Source(ORG_PREFIX + name, (clone / rel).parent, None), clone / rel) for rel in changed
             if org_memory_path(rel)]
    total = index.apply_files(files, trigger="org")
    total.warnings.extend(dict.fromkeys(unreadable_name(str(clone / rel)) for rel in changed
                                        if not valid_name(rel) and org_memory_path(rel.encode("utf-8", "surrogateescape")
                                                                                   .decode("utf-8", "replace"))))
    with index.write() as c:  # after the files: a pull stopped in between leaves a mismatch, a full check next
        index.set_meta(c, ORG_COMMIT, new)
    return total


@contextlib.contextmanager
def opened(ctx: Context, stores: Stores | None = None) -> Iterator[Stores]:
    """The caller's open Stores when given (one process, several operations), else our own."""
    if stores is not None:
        yield stores
        return
    with Stores(ctx) as st:
        yield st


def select_sql(columns: str = "m.*", where: str = "1", *, scope: str | None = None, order_by: str | None = None,
               limit: bool = False, match: bool = False) -> str:
    """The statement `Stores.rows` runs on one index: `SELECT columns FROM memories m WHERE …`.

    `scope` (an index's filter from `dbs`) goes first and the caller's `where` in parentheses, so
    an OR in it cannot widen the scope. Placeholders, in order: the FTS5 expression when `match`,
    the scope's, the caller's, the limit when `limit`."""
    frm = "memories_fts JOIN memories m ON m.rid = memories_fts.rowid" if match else "memories m"
    conds = [*(["memories_fts MATCH ?"] if match else []), *([scope] if scope is not None else []), f"({where})"]
    sql = f"SELECT {columns} FROM {frm} WHERE {' AND '.join(conds)}"
    if order_by:
        sql += f" ORDER BY {order_by}"
    if limit:
        sql += " LIMIT ?"
    return sql

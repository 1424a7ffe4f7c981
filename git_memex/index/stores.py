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

from git_memex.core import caller
from git_memex.core.context import Context
from git_memex.core.data_root import prepare_data_root, private_mkdir
from git_memex.core.model import SAFE_ID_RE
from git_memex.core.record import record
from git_memex.core.settings import DEFAULT_MEMORY_DIR
from git_memex.errors import FAILED, USAGE, MemexError, NotFound
from git_memex.index.changes import _under, unreadable_name, valid_name
from git_memex.index.database import (
    DAMAGED,
    MEMORY,
    READ_ONLY,
    Index,
    IndexReadOnly,
    RefreshStats,
    Source,
    discard_damaged,
    is_locked,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MIN_PREFIX = 6
"""The fewest characters of an id that `find` takes as a prefix (docs/format.md)."""
LOCATIONS = ("repo", "outbox", "private", "personal")
ORG_PREFIX = "org:"  # an org memory's location is `org:NAME` (docs/org.md)
REMOTE_PREFIX = "remote:"  # a remote memory's location is `remote:NAME` (docs/remote.md)
REMOTE_PREFIX = "remote:"  # a remote server's memory's location is `remote:NAME` (docs/remote.md)
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


def no_space(exc: BaseException) -> bool:
    """The disk (or quota) is full, or SQLite could not write its files for an I/O reason: the
    files can still be read, so a read goes on from them (SQLITE_FULL, SQLITE_IOERR, ENOSPC, EDQUOT)."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (10, 13) or "disk is full" in str(exc)
    if isinstance(exc, OSError):
        import errno

        return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    return False


def unwritable(exc: BaseException) -> bool:
    """`no_space`, or an index file this process may not write (`database.IndexReadOnly`): either
    way the files can still be read, so the index is kept in memory this time, with one warning."""
    return no_space(exc) or isinstance(exc, IndexReadOnly)


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _starting_with(mid: str) -> tuple[str, tuple[str, ...]]:
    """The condition for ids that start with `mid`: as typed, or upper-cased (ULIDs are upper case;
    an id written by another tool, `kestrel-note-one`, may be lower case)."""
    spellings = dict.fromkeys((mid, mid.upper()))
    where = " OR ".join(["(m.id >= ? AND m.id < ?)"] * len(spellings))
    return f"({where})", tuple(arg for typed in spellings for arg in (typed, typed + "\uffff"))


class Stores:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        in_repo = ctx.repo_index is not None and ctx.memory_dir is not None
        # Set when the data root cannot be used: the repository's own memories (indexed in the
        # git dir) are still searched, with a one-line warning; writes there fail (exit 2).
        self.degraded: str | None = None
        # Indexes that could not be opened for writing (a full disk): kept in memory this time, read
        # from the files, with one warning line; the file is used again once there is space.
        self.unwritable: list[str] = []
        if DAMAGED:  # found damaged earlier in this process (the MCP server): start them again
            discard_damaged()
        try:
            prepare_data_root(ctx.data_root)
            self.home = Index(ctx.home_index, root=ctx.data_root)
        except (MemexError, sqlite3.Error, OSError) as exc:
            if unwritable(exc):
                self.unwritable.append(f"cannot write the index in {ctx.data_root} ({_why(exc)})")
                self.home = Index(Path(MEMORY), root=ctx.data_root)
            elif isinstance(exc, MemexError):
                err = MemexError(exc.message, FAILED)
            elif isinstance(exc, sqlite3.Error):
                err = MemexError(f"cannot open the index in {ctx.data_root} ({exc}); check that the folder is writable", FAILED)
            else:
                err = MemexError(f"cannot use the data root {ctx.data_root} ({exc.strerror}); set GIT_MEMEX_HOME to a writable folder", FAILED)
            if not unwritable(exc):
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
                if not unwritable(exc):
                    self.home.close()
                    raise MemexError(f"cannot open the index in {ctx.repo_index.parent} ({exc})", FAILED) from None
                self.unwritable.append(f"cannot write the index in {ctx.repo_index.parent} ({_why(exc)})")
                self.repo = Index(Path(MEMORY), root=ctx.repo.work_tree)
        self.warnings: list[str] = []
        self._failed = False
        # one index per subscribed org memory repo, after the project's and the home index
        self.orgs: list[tuple[str, Index]] = []
        for name in ctx.org_names():
            if not org_folders(ctx.org_clone(name)):
                self.warnings.append(f"the clone of org {name} is missing ({ctx.org_clone(name)}); "
                                     f"`git memex org remove {name}` then `org add` it again")
                continue
            try:
                private_mkdir(ctx.org_index(name).parent)
                self.orgs.append((name, Index(ctx.org_index(name), root=ctx.org_clone(name))))
            except (sqlite3.Error, OSError) as exc:
                self.warnings.append(f"cannot open the index of org {name} ({exc}); its memories are left out")
        # one index per subscribed remote server's cache (docs/remote.md), after the orgs'
        self.remotes: list[tuple[str, Index]] = []
        for name in ctx.remote_names():
            cache = ctx.remote_cache(name)
            if not cache.is_dir() or os.path.islink(cache):
                continue  # never pulled: nothing to read yet (`remote list` says so)
            try:
                private_mkdir(ctx.remote_index(name).parent)
                self.remotes.append((name, Index(ctx.remote_index(name), root=cache)))
            except (sqlite3.Error, OSError) as exc:
                self.warnings.append(f"cannot open the index of remote {name} ({exc}); its memories are left out")
        if ctx.repo is not None and not self.degraded and not self.unwritable:
            from git_memex.core.scopekeys import settle

            settle(ctx)  # a clone whose origin changed keeps its drafts (docs/project-keys.md)

    def close(self) -> None:
        self.home.close()
        if self.repo is not None:
            self.repo.close()
        for _, org_index in self.orgs:
            org_index.close()
        for _, remote_index in self.remotes:
            remote_index.close()
        for msg in self.unwritable:
            if msg not in _WARNED:
                _WARNED.add(msg)
                fix = ("make the file writable (`chmod u+w`) or delete it: it is rebuilt from the files"
                       if msg.endswith(f"({READ_ONLY})") else "free some space: the index is used again by itself")
                print(f"git-memex: warning: {msg}; read from the memory files this time, nothing kept ({fix})",
                      file=sys.stderr)
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
            name = location[len(ORG_PREFIX):]
            tops = org_folders(ctx.org_clone(name))
            return Source(location, tops[0] if tops else ctx.org_clone(name) / DEFAULT_MEMORY_DIR, None)
        if location.startswith(REMOTE_PREFIX):
            return Source(location, ctx.remote_cache(location[len(REMOTE_PREFIX):]), None)
        raise ValueError(location)

    def index_for(self, location: str) -> Index:
        if location == "repo":
            if self.repo is None:
                raise MemexError("there is no repository memory folder here; run inside a git repository", USAGE)
            return self.repo
        for name, org_index in self.orgs:
            if location == ORG_PREFIX + name:
                return org_index
        for name, remote_index in self.remotes:
            if location == REMOTE_PREFIX + name:
                return remote_index
        return self.home

    def repo_sources(self, warnings: list[str] | None = None) -> list[Source]:
        """The folders of the repository's memory folder, itself first, subfolders to any depth
        (`tree_sources`: an org memory repo's engineering/, decisions/… are the project's own
        memories when a curator works in its checkout, docs/curating.md)."""
        top = self.source("repo")
        if self.repo is None:
            return tree_sources("repo", top.folder, top.project_key, [] if warnings is None else warnings)
        return known_tree(self.repo, top, [] if warnings is None else warnings)

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
        for _, remote_index in self.remotes:
            held = self._held_locally(remote_index)
            if held:
                out.append((remote_index, f"m.id NOT IN ({','.join('?' * len(held))})", held))
            else:
                out.append((remote_index, "1", ()))
        return out

    def _held_locally(self, remote_index: Index) -> tuple[str, ...]:
        """The ids of `remote_index` that this project also holds locally (the repository, its
        outbox or private memories, personal): the local copy wins and the remote copy is left out
        of every read, rules included, and never changed or deleted (docs/remote.md, "The same id
        here and on the server"). Asked again only after an index changed."""
        locals_ = [i for i in (self.repo, self.home) if i is not None]
        key = (id(remote_index), remote_index.conn.total_changes, *(i.conn.total_changes for i in locals_))
        cache: dict[int, tuple[tuple[int, ...], tuple[str, ...]]] = self.__dict__.setdefault("_held", {})
        got = cache.get(id(remote_index))
        if got is not None and got[0] == key:
            return got[1]
        ids = [str(r[0]) for r in remote_index.conn.execute("SELECT DISTINCT id FROM memories")]
        held: set[str] = set()
        from git_memex.index.database import in_chunks

        for chunk, marks in in_chunks(ids):
            if self.repo is not None:
                held.update(str(r[0]) for r in self.repo.conn.execute(
                    f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
            held.update(str(r[0]) for r in self.home.conn.execute(
                f"SELECT id FROM memories m WHERE (m.project_key IS NULL OR m.project_key = ?) AND m.id IN ({marks})",
                (self.ctx.project_key, *chunk)))
        out = tuple(sorted(held))
        cache[id(remote_index)] = (key, out)
        return out

    # ------------------------------------------------------------ queries
    # One small query API over every index of the context, in the spirit of sqlite-utils'
    # `rows_where`: `where` is an SQL condition on `memories m` with `?` placeholders for
    # `params`. Each index is asked on its own, the repository's first, with the context's scope
    # ANDed in front (`scoped=False` drops it: the home index then also answers for other
    # projects' outboxes and private memories); `order_by` and `limit` apply per index.
    def _statements(self, where: str, params: Sequence[Any], *, columns: str = "m.*", order_by: str | None = None,
                    limit: int | None = None, match: str | None = None, scoped: bool = True,
                    index: Index | None = None) -> Iterator[tuple[Index, str, tuple[Any, ...]]]:
        """(index, SQL, arguments) of the query on each index (or on `index` only), the repository's first."""
        for db, scope, scope_params in self.dbs():
            if index is not None and db is not index:
                continue
            sql = select_sql(columns, where, scope=scope if scoped else None, order_by=order_by,
                             limit=limit is not None, match=match is not None)
            args = (*(() if match is None else (match,)), *(scope_params if scoped else ()), *params,
                    *(() if limit is None else (limit,)))
            yield db, sql, args

    def rows(self, where: str = "1", params: Sequence[Any] = (), *, columns: str = "m.*",
             order_by: str | None = None, limit: int | None = None, match: str | None = None,
             scoped: bool = True, skip_errors: bool = False, index: Index | None = None) -> list[sqlite3.Row]:
        """The rows matching `where` in every index, the repository's first (a memory held by two
        indexes comes twice; `by_id` keeps one). `match` is an FTS5 expression the row must match
        (`memories_fts` is joined in, so `columns` and `order_by` may use `bm25(memories_fts, …)`);
        `skip_errors` leaves out an index whose query fails (an expression FTS5 refuses); `index`
        asks that one index of the context only (what is kept per index: the semantic lane's codes)."""
        out: list[sqlite3.Row] = []
        for db, sql, args in self._statements(where, params, columns=columns, order_by=order_by, limit=limit,
                                              match=match, scoped=scoped, index=index):
            try:
                out.extend(db.conn.execute(sql, args).fetchall())
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
        skipped: list[str] = []
        if self.repo is not None:
            pairs.insert(0, (self.repo, self.repo_sources(skipped)))
        for index, sources in pairs:
            try:
                s = index.refresh(sources, trigger=trigger, caller=None if trigger else caller.NAME,
                                  quick=trigger is None)
                if index is self.repo:
                    s.removed += drop_gone_folders(index, sources, always=trigger is not None
                                                   and trigger.startswith("reindex"))
                    s.warnings[:0] = skipped
            except sqlite3.OperationalError as exc:
                if no_space(exc):  # the rows already there are served; the next command tries again
                    msg = f"cannot update the index {index.path} ({exc}); results may be out of date until there is space"
                    if msg not in self.warnings:
                        self.warnings.append(msg)
                        print(f"git-memex: warning: {msg}", file=sys.stderr)
                    continue
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
        if self.remotes:
            for name, remote_index in self.remotes:
                try:
                    got = refresh_remote(self.ctx, name, remote_index)
                except sqlite3.OperationalError as exc:
                    if not is_locked(exc):
                        raise
                    self.warnings.append(f"the index of remote {name} is busy; its results may be slightly out of date")
                    continue
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
        from git_memex.core.files import pause_point

        self.home.clear()
        if self.repo is not None:
            self.repo.clear()
        for _, org_index in self.orgs:
            org_index.clear()
        for _, remote_index in self.remotes:
            remote_index.clear()
        pause_point("reindex.after_clear")
        return self.refresh(trigger="reindex --full")

    def generation(self) -> tuple[int, ...]:
        """The schema cookie of the home and repository indexes: it changes when one's tables are
        dropped and made again (`reindex --full` in another process, a rebuild after damage or a
        move), never with row writes. A check that trusts "no row means no memory" (`add`'s
        duplicate check) compares it with the value before its refresh: when it moved, the rows it
        looked at may not yet be back, and it refreshes again first."""
        return tuple(int(ix.conn.execute("PRAGMA schema_version").fetchone()[0])
                     for ix in (self.home, self.repo) if ix is not None)

    # ------------------------------------------------------------ lookups
    def find(self, memory_id: str) -> Found:
        """Locate a memory by id or unique id prefix (at least MIN_PREFIX characters), newest location
        first. A shorter string is only an exact id; one that starts ids is "too short", not "no memory"."""
        mid = memory_id.strip()
        if not SAFE_ID_RE.match(mid):
            raise NotFound(f"{memory_id!r} is not a memory id")
        matches: list[Found] = []
        args: tuple[str, ...]
        if MIN_PREFIX <= len(mid) < 26:
            where, args = _starting_with(mid)
        else:  # ids are upper-case ULIDs: one typed in lower case names the same memory
            where, args = "m.id IN (?, ?)", (mid, mid.upper())
        for index, sql, sql_args in self._statements(where, args):
            for row in index.conn.execute(sql, sql_args):
                if _inside(index, row):
                    matches.append(Found(row, index, self._source_of(row)))
        ids = {f.row["id"] for f in matches}
        if not matches and len(mid) < MIN_PREFIX:
            self._refuse_short_prefix(mid)
        if not matches:
            self._refuse_unreadable(mid)
            raise NotFound(f"no memory with id {mid}; `git memex list` shows the ids")
        if len(ids) > 1:
            raise MemexError(f"id prefix {mid} is ambiguous ({len(ids)} memories); give more characters", USAGE)
        matches.sort(key=lambda f: LOCATIONS.index(f.row["location"]) if f.row["location"] in LOCATIONS
                     else len(LOCATIONS))
        return matches[0]

    def _refuse_short_prefix(self, mid: str) -> None:
        """`mid` is no id and shorter than MIN_PREFIX: when ids start with it, say it is too short
        (and whether it is also ambiguous) rather than that no memory has it (exit 1)."""
        ids: set[str] = set()
        for index, sql, sql_args in self._statements(*_starting_with(mid)):
            for row in index.conn.execute(sql, sql_args):
                if _inside(index, row):
                    ids.add(str(row["id"]))
                    if len(ids) > 1:
                        break
        if ids:
            many = "more than one memory starts with it" if len(ids) > 1 else "one memory starts with it"
            raise MemexError(f"id prefix {mid} is too short ({many}); give at least {MIN_PREFIX} characters of the id, "
                             "`git memex list` shows the ids", USAGE)

    def find_changeable(self, memory_id: str) -> Found:
        """`find`, refusing an org memory (exit 1): an org clone changes only through `org pull`,
        so an org memory is changed in the org repository itself (docs/org.md)."""
        found = self.find(memory_id)
        loc = found.row["location"]
        if loc.startswith(ORG_PREFIX):
            raise MemexError(f"{found.row['id']} is an org memory (org {loc[len(ORG_PREFIX):]}); change it in the "
                             f"org repository, the clone in {self.ctx.org_clone(loc[len(ORG_PREFIX):])} changes "
                             "only through `git memex org pull`", USAGE)
        if loc.startswith(REMOTE_PREFIX):
            name = loc[len(REMOTE_PREFIX):]
            raise MemexError(f"{found.row['id']} is a memory of remote {name}, read-only here; change it on the server "
                             f"(`git memex propose ID --to remote {name}` sends a project memory for review), the cache "
                             f"changes only through `git memex remote pull {name}`", USAGE)
        return found

    def _refuse_unreadable(self, mid: str) -> None:
        """A quarantined file named for `mid` (or an id prefix of 6+): say why it cannot be used."""
        folders = [str(src.folder) for src in self.home_sources()]
        mem = str(self.ctx.memory_dir) if self.repo is not None and self.ctx.memory_dir is not None else None
        exact = len(mid) >= 26 or len(mid) < 6
        for index in (self.repo, self.home):
            if index is None:
                continue
            for path, error in index.quarantined():
                p = Path(path)
                stem = p.name[:-3] if p.name.endswith(".md") else p.name
                hit = stem == mid if exact else stem.upper().startswith(mid.upper())
                if hit and (str(p.parent) in folders or (mem is not None and path.startswith(mem + os.sep))):
                    raise MemexError(f"memory {stem} is unreadable ({path}: {error}); fix or remove "
                                     "the file, `git memex doctor` lists such files", FAILED)

    def find_all(self, memory_id: str) -> list[Found]:
        """Every copy of the memory with exactly this id, one per index that holds it."""
        return [Found(row, index, self._source_of(row))
                for index, sql, args in self._statements("m.id = ?", (memory_id,))
                for row in index.conn.execute(sql, args) if _inside(index, row)]

    def _source_of(self, row: sqlite3.Row) -> Source:
        loc = row["location"]
        if loc.startswith((ORG_PREFIX, REMOTE_PREFIX)):
            return Source(loc, Path(row["path"]).parent, None)
        if loc == "repo":  # the folder it lies in: the memory folder or one of its subfolders
            return Source("repo", Path(row["path"]).parent, self.ctx.project_key)
        if loc in ("outbox", "private") and row["project_key"] != self.ctx.project_key:
            return Source(loc, Path(row["path"]).parent, row["project_key"])
        return self.source(loc)

    def warn(self, stream: Any = None) -> None:
        for w in self.warnings:
            print(f"warning: {w}", file=stream or sys.stderr)


SEED_FOLDERS = ("engineering", "architecture", "decisions", "lessons", "policies")
"""The category folders of the seed's org layout (docs/org.md, "The org repository"): `company-memory/{engineering,…}/`."""


def org_folders(clone: Path) -> list[Path]:
    """The top memory folders of an org clone (docs/org.md, "The org repository"): its memory
    folder `.ai/open-memex/` when it has one; otherwise, in the seed's layout, each of the category
    folders `SEED_FOLDERS` at its root that is a folder (not a link). Empty: not a memory repository.
    Stats only; whether such a folder holds a memory file is `org add`'s check (`holds_memory`)."""
    mem = clone / DEFAULT_MEMORY_DIR
    if mem.is_dir():
        return [mem]
    return [clone / d for d in SEED_FOLDERS if not os.path.islink(clone / d) and (clone / d).is_dir()]


def org_sources(ctx: Context, name: str) -> list[Source]:
    """The folders org `name`'s memories are read from, each top folder (`org_folders`) first."""
    return _org_sources(ctx, name, [])


def _org_sources(ctx: Context, name: str, warnings: list[str]) -> list[Source]:
    return [src for top in org_folders(ctx.org_clone(name)) for src in tree_sources(ORG_PREFIX + name, top, None, warnings)]


def tree_sources(location: str, top: Path, project_key: str | None, warnings: list[str]) -> list[Source]:
    """The folders of the memory folder `top`, itself first, as sources of `location`: memories
    may sit flat or in subfolders such as engineering/ or decisions/, to any depth, in an org clone
    and in the project's own memory folder alike (docs/org.md). Hidden folders (`.approvals`) are
    skipped, and so are links to folders: git stores a link, not what it points at, so a pull's
    diff could never name the files behind one, and it may point out of the clone (a link that
    `top` itself is, or lies in, is refused by the scan, `changes.scan`). A folder whose name is
    not valid UTF-8 is left out with a warning in `warnings` (the index could not hold its paths;
    `org pull` leaves it out too). The files are read by the scan, through `core.files.read_bytes`."""
    out = [Source(location, top, project_key)]
    for here, dirs, _files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(here, d)))
        if not all(map(valid_name, dirs)):
            warnings.extend(unreadable_name(os.path.join(here, d)) for d in dirs if not valid_name(d))
            dirs[:] = [d for d in dirs if valid_name(d)]
        out.extend(Source(location, Path(here) / d, project_key) for d in dirs)
    return out


def known_tree(index: Index, top: Source, warnings: list[str]) -> list[Source]:
    """`tree_sources` of `top.folder`, without walking it again while no folder of the last walk
    changed: creating, deleting or renaming an entry changes its folder's mtime and ctime, so one
    `stat` per folder (one for a flat memory folder) tells that the set of subfolders is the one
    recorded in the index (`meta`, `tree:<folder>`: each folder's mtime, ctime and inode, as
    `changes.folder_stamp` stamps the top folder; an mtime put back with `touch -r` leaves the
    ctime moved, which userspace cannot set). `stat`, not `lstat`: a top folder that is a link is
    stamped by the folder it leads to. A walk that saw a folder changed within RACY_NS of it, or
    left a folder out with a warning, is not recorded: the next refresh walks again. A walk of a
    flat folder of 10,000 files costs ~4-16 ms (os.walk lists every name); the check, ~0.02 ms."""
    import json
    import time

    from git_memex.index.database import RACY_NS

    def mark(folder: str) -> list[int]:
        st = os.stat(folder)
        return [st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    key = f"tree:{top.folder}"
    raw = index.get_meta(key)
    if raw is not None:
        try:
            folders = json.loads(raw)
            if all(len(f) == 4 and mark(f[0]) == f[1:] for f in folders):
                return [Source(top.location, Path(f[0]), top.project_key) for f in folders]
        except (OSError, ValueError, TypeError):
            pass
    now = time.time_ns()
    seen: list[str] = []
    sources = tree_sources(top.location, top.folder, top.project_key, seen)
    warnings.extend(seen)
    try:
        marks: list[list[Any]] = [[str(src.folder), *mark(str(src.folder))] for src in sources]
    except OSError:
        marks = []
    settled = bool(marks) and not seen and all(now - m[1] >= RACY_NS for m in marks)  # by the mtime, as git tells racy
    with contextlib.suppress(sqlite3.Error):
        if settled or raw is not None:
            with index.write() as c:
                if settled:
                    index.set_meta(c, key, json.dumps(marks))
                else:
                    c.execute("DELETE FROM meta WHERE key=?", (key,))
    return sources


def holds_memory(clone: Path) -> bool:
    """Whether an org clone's top folders (`org_folders`) hold at least one memory file: a `*.md`
    whose frontmatter has an `id` and a `schema_version`, read through the one safe reader. What
    `org add` asks of a repository in the seed's layout, so that a code repository that merely has
    an `engineering/` folder is not taken for an org memory repository."""
    from git_memex.core import frontmatter
    from git_memex.core.files import UnreadableMemory, read_bytes
    from git_memex.index.changes import listing

    for top in org_folders(clone):
        for src in tree_sources("org:", top, None, []):
            for name in sorted(listing(str(src.folder))[0]):
                try:
                    fm, _ = frontmatter.parse_bytes(read_bytes(src.folder / name, root=clone))
                except (UnreadableMemory, frontmatter.FrontmatterError):
                    continue
                if fm.get("id") and fm.get("schema_version") is not None:
                    return True
    return False


def drop_gone_folders(index: Index, sources: list[Source], *, always: bool = False) -> int:
    """Drop the rows of files in no folder of `sources` any more (a subfolder deleted or replaced
    by a link since the last scan; a scan only answers for the files directly in its folder,
    `changes._direct`). Returns how many memories went. Checked when the set of folders differs
    from the one recorded at the last check, or `always` (counted in SQL first, ~3x cheaper than
    looking at every path in Python, which only happens when some are)."""
    import zlib

    folders = {str(src.folder) for src in sources}
    blob = "\0".join(sorted(folders)).encode("utf-8", "surrogateescape")
    key, mark = f"folders:{sources[0].location}", f"{len(folders)}:{zlib.crc32(blob)}"
    if not always and index.get_meta(key) == mark:
        return 0
    removed = 0
    direct = sum(index.conn.execute("SELECT count(*) FROM files WHERE path >= ? AND path < ? AND "
                                    "instr(substr(path, ?), ?) = 0", (*_under(f), len(f) + 2, os.sep)).fetchone()[0]
                 for f in folders)
    if direct != index.conn.execute("SELECT count(*) FROM files").fetchone()[0]:
        stale = [Path(r[0]) for r in index.conn.execute("SELECT path FROM files")
                 if os.path.dirname(r[0]) not in folders]
        if stale:
            removed = index.apply_paths(Source(sources[0].location, stale[0].parent, sources[0].project_key),
                                        stale).removed
    with index.write() as c:
        index.set_meta(c, key, mark)
    return removed


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


def refresh_remote(ctx: Context, name: str, index: Index, *, force: bool = False) -> RefreshStats:
    """Bring remote `name`'s index in line with its cache folder (docs/remote.md): a stat per file,
    so a cache file edited by hand is re-read and the row served is the file's."""
    if force:
        index.clear()
    return index.refresh([Source(REMOTE_PREFIX + name, ctx.remote_cache(name), None)], trigger="remote")


def refresh_org(ctx: Context, name: str, index: Index, *, force: bool = False) -> RefreshStats | None:
    """Bring org `name`'s index in line with its clone. An org clone changes only through `org
    pull`, so the index is fresh while the clone's HEAD is the commit it was built from: no stat of
    every file (docs/org.md). `force` (`reindex`) checks every file anyway. None when skipped."""
    head = org_head(ctx.org_clone(name))
    if not force and head is not None and index.get_meta(ORG_COMMIT) == head:
        return None
    skipped: list[str] = []
    sources = _org_sources(ctx, name, skipped)
    if not sources:  # no memory folder any more: every row goes
        sources = [Source(ORG_PREFIX + name, ctx.org_clone(name) / DEFAULT_MEMORY_DIR, None)]
    s = index.refresh(sources, trigger="org")
    s.warnings[:0] = skipped
    s.removed += drop_gone_folders(index, sources, always=True)
    if head is not None:
        with index.write() as c:
            index.set_meta(c, ORG_COMMIT, head)
    return s


def org_memory_path(rel: str, tops: Sequence[str] = (DEFAULT_MEMORY_DIR,)) -> bool:
    """Is `rel` (a path in an org clone or a work tree, '/'-separated, as git prints it) a file the
    index reads: a `*.md` under one of the top memory folders `tops` (repo-relative), in no hidden
    folder and not hidden itself (`tree_sources`, `changes.listing`)?"""
    from git_memex.core.gitcmd import in_memory_dir

    return valid_name(rel) and any(in_memory_dir(rel, top) for top in tops)


def org_tops(clone: Path) -> list[str]:
    """`org_folders` as paths relative to the clone, '/'-separated (for git pathspecs)."""
    return [top.relative_to(clone).as_posix() for top in org_folders(clone)]


def apply_org_diff(ctx: Context, name: str, index: Index, old: str, new: str, changed: list[str]) -> RefreshStats | None:
    """After a fast-forward of org `name`'s clone from `old` to `new`: re-read exactly the files
    `changed` (paths in the clone, from `git diff-tree old new`), not every folder. Only when the
    index was in line with `old` and the clone's HEAD is now `new`; None otherwise (the caller then
    checks every file with `refresh_org`). Leaves the index as a full refresh would (docs/org.md)."""
    clone = ctx.org_clone(name)
    if index.get_meta(ORG_COMMIT) != old or org_head(clone) != new:
        return None
    tops = org_tops(clone)
    files = [(Source(ORG_PREFIX + name, (clone / rel).parent, None), clone / rel) for rel in changed
             if org_memory_path(rel, tops)]
    total = index.apply_files(files, trigger="org")
    total.warnings.extend(dict.fromkeys(unreadable_name(str(clone / rel)) for rel in changed
                                        if not valid_name(rel) and org_memory_path(rel.encode("utf-8", "surrogateescape")
                                                                                   .decode("utf-8", "replace"), tops)))
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


HIDDEN_STATUSES = ("retracted", "archived", "superseded")
"""Statuses a search, the listing and the semantic lane never return."""
READ_SCOPES = ("all", "both", "project", "personal", "org")  # both: project + personal (docs/org.md)


def scope_filter(scope: str) -> str:
    """The SQL condition on `memories m` of a read scope; org memories are `org:NAME` rows, a
    remote's are `remote:NAME` rows (only `all` reads them, docs/remote.md)."""
    if scope == "personal":
        return "m.location = 'personal'"
    if scope == "project":
        return "m.location NOT IN ('personal') AND m.location NOT LIKE 'org:%' AND m.location NOT LIKE 'remote:%'"
    if scope == "both":
        return "m.location NOT LIKE 'org:%' AND m.location NOT LIKE 'remote:%'"
    if scope == "org":
        return "m.location LIKE 'org:%'"
    return "1"


def visible(scope: str = "all", type: str | None = None) -> tuple[str, list[Any]]:
    """(condition on `memories m`, its parameters) of the rows a search may return: in the read
    `scope`, not hidden (HIDDEN_STATUSES), not expired, of the asked `type`. Both search lanes
    (search/engine.py, search/semantic.py) use it."""
    from git_memex.index.schema import NOT_EXPIRED

    sql = (f"{scope_filter(scope)} AND m.status NOT IN ({','.join('?' * len(HIDDEN_STATUSES))})"
           f" AND {NOT_EXPIRED}" + (" AND m.type = ?" if type else ""))
    return sql, [*HIDDEN_STATUSES, *([type] if type else [])]


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

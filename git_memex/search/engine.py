"""Query building, ranking and chain resolution over the indexes of one context.

Ranking, per index:

1. Candidates: FTS5 BM25 (column weights BM25_WEIGHTS) over the query's terms, their synonyms,
   the user's alias vocabulary and exact-phrase terms (textproc.parse_query), best first.
   On a large index, when the query's words are common (the sum of their document counts is
   above PRUNE_POSTINGS), only the rarest words, their synonyms and the phrases holding them
   select the candidates (common words still count in step 2) - the idea of Lucene's
   CommonTermsQuery - so a query costs about the same at 100,000 memories as at 10,000.
2. Coverage: each candidate is checked for every query word (or one of its synonyms) on a
   scratch in-memory FTS5 table holding just the candidates, with the same tokenizer, so
   stemming and CJK bigrams behave exactly as in the index. The share of the query's words
   it holds, each weighted by its IDF, multiplies the score by up to 1 + COVERAGE_WEIGHT:
   a memory that has all the words ranks above one that repeats a few of them.
3. Boosts: reviewed project knowledge above drafts, importance and recency lightly,
   deprecated last; only the newest of a supersede chain.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from typing import Any

from git_memex.core.record import field, record
from git_memex.index.stores import Stores

# BM25 column weights: body, tags, type, cjk, aliases.
BM25_WEIGHTS = (1.0, 2.0, 0.5, 1.0, 1.5)
HIDDEN_STATUSES = ("retracted", "archived", "superseded")
REVIEW_BOOST = {"published": 1.2, "approved": 1.2, "proposed": 1.05, "draft": 1.0, "rejected": 0.8}
IMPORTANCE_BOOST = {"high": 1.1, "normal": 1.0, "low": 0.92}
RECENCY_WEIGHT = 0.1
RECENCY_DAYS = 30.0
SNIPPET_CHARS = 240
# Coverage: score x (1 + COVERAGE_WEIGHT x IDF-weighted share of the query words a memory holds).
COVERAGE_WEIGHT = 1.5
# Phrases: score x (1 + PHRASE_WEIGHT x share of the query's exact phrases a memory holds).
PHRASE_WEIGHT = 1.0
# Candidate pool per index (before coverage and boosts reorder it).
MIN_FETCH = 40
# Pruning of common words (see the module docstring).
PRUNE_MIN_ROWS = 20_000
PRUNE_POSTINGS = 25_000
SELECTIVE_POSTINGS = 16_000


@record
class Hit:
    id: str
    scope: str
    type: str
    status: str
    review_state: str | None
    snippet: str
    score: float
    lanes: list[str]
    location: str
    path: str
    tags: list[str]
    importance: str
    updated_at: str | None
    role: str = "knowledge"  # "instruction": a rule (served as one only through the gate)
    source: str | None = None  # "inference": an agent's own conclusion
    explain: dict[str, Any] = field(default_factory=dict)
    body: str = ""  # as stored; not in to_json: what leaves is the snippet, masked by ops.search (guard.py)

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "scope": self.scope,
            "type": self.type,
            "status": self.status,
            "review_state": self.review_state,
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "lanes": self.lanes,
            "location": self.location,
            "tags": self.tags,
            "importance": self.importance,
            "updated_at": self.updated_at,
            "role": self.role,
            "source": self.source,
        }
        if explain:
            d["explain"] = self.explain
        return d


@record
class SearchResult:
    query: str
    fts: str | None
    hits: list[Hit]
    elapsed_ms: float = 0.0
    terms: list[str] = field(default_factory=list)  # the words snippets are centred on
    semantic: dict[str, Any] | None = None  # the semantic lane's status (None: off)


def scope_filter(scope: str) -> str:
    if scope == "personal":
        return "m.location = 'personal'"
    if scope == "project":
        return "m.location != 'personal'"
    return "1"


def _snippet(body: str, terms: list[str]) -> str:
    text = re.sub(r"\s+", " ", body).strip()
    if len(text) <= SNIPPET_CHARS:
        return text
    low = text.lower()
    pos = -1
    for t in terms:
        i = low.find(t.lower())
        if i >= 0 and (pos < 0 or i < pos):
            pos = i
    start = 0 if pos < 60 else pos - 60
    piece = text[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(text) else "")


def boosts(row: sqlite3.Row, now: float) -> dict[str, float]:
    out: dict[str, float] = {}
    if row["location"] != "personal":
        out["review"] = REVIEW_BOOST.get(row["review_state"] or "draft", 1.0)
    out["importance"] = IMPORTANCE_BOOST.get(row["importance"] or "normal", 1.0)
    age_days = max(0.0, (now - (row["updated_ts"] or 0.0)) / 86400)
    out["recency"] = 1.0 + RECENCY_WEIGHT * math.exp(-age_days / RECENCY_DAYS)
    return out


class _Term:
    """One original query word (Latin term or CJK bigram) and the synonyms that stand for it."""

    __slots__ = ("word", "expr", "kind", "syn_exprs", "df", "idf")

    def __init__(self, word: str, expr: str, kind: str) -> None:
        self.word = word
        self.expr = expr
        self.kind = kind  # latin | cjk
        self.syn_exprs: list[str] = []
        self.df = 0
        self.idf = 0.0


def _terms(q: Any, extra: dict[str, list[int]]) -> list[_Term]:
    """The query's original words with their FTS5 expressions and the expansions that cover them.

    `extra` maps alias-vocabulary expansions to the indexes (into latin + cjk) of the words
    they stand for.
    """
    from git_memex.core.textproc import Query, _quote, _raw_latin_tokens
    from git_memex.search import synonyms

    terms = [_Term(t, _quote(t) + "*", "latin") for t in q.latin]
    terms += [_Term(g, "{cjk}:" + _quote(g), "cjk") for g in q.cjk]
    if not q.expanded:
        return terms
    expanded = set(q.expanded)
    index_of = {t.word: i for i, t in enumerate(terms)}

    def credit(word: str, idxs: list[int]) -> None:
        e = Query((), (), (word,)).fts()
        if e:
            for i in idxs:
                if e not in terms[i].syn_exprs:
                    terms[i].syn_exprs.append(e)

    for i, t in enumerate(terms):
        if t.kind == "latin":
            for syn in synonyms.expand(t.word):  # (identifier words got no expansions: not in `expanded`)
                if syn in expanded:
                    credit(syn, [i])
    tokens = _raw_latin_tokens(" ".join(q.latin))
    longest = synonyms.max_phrase_words()
    for n in range(2, longest + 1):
        for k in range(len(tokens) - n + 1):
            gram = tokens[k : k + n]
            idxs = [index_of[w] for w in gram if w in index_of]
            for syn in synonyms.expand(" ".join(gram)):
                if syn in expanded and idxs:
                    credit(syn, idxs)
    for entry in _cjk_entries(q):
        grams = [entry[k : k + 2] for k in range(max(len(entry) - 1, 1))]
        idxs = [index_of[g] for g in grams if g in index_of]
        for syn in synonyms.expand(entry):
            if syn in expanded and idxs:
                credit(syn, idxs)
    for word, idxs in extra.items():
        credit(word, idxs)
    return terms


def _cjk_entries(q: Any) -> list[str]:
    """Synonym-table entries inside the query's CJK text (rebuilt from its bigrams)."""
    from git_memex.search import synonyms

    if not q.cjk:
        return []
    runs: list[str] = []
    run = ""
    for g in q.cjk:  # consecutive overlapping bigrams chain into runs
        if run and run[-1] == g[0] and len(g) == 2:
            run += g[1]
        else:
            if run:
                runs.append(run)
            run = g
    runs.append(run)
    out: list[str] = []
    for r in runs:
        out.extend(synonyms.cjk_entries_in(r))
    return out


def _alias_expansions(stores: Stores, query: str, q: Any) -> tuple[list[str], dict[str, list[int]]]:
    """The user's alias vocabulary (memories with `alias` and `target`): a query naming one
    side also searches for the other. Returns (words, word -> indexes of the query words it covers)."""
    from git_memex.core.textproc import _cjk_split, _latin_split

    pairs: list[tuple[str, str]] = []
    for index, where, params in stores.dbs():
        try:
            pairs += index.conn.execute(
                f"SELECT m.alias, m.target FROM memories m WHERE m.alias IS NOT NULL AND m.target IS NOT NULL"
                f" AND m.status NOT IN ('retracted', 'archived') AND {where}", params).fetchall()  # fmt: skip
        except sqlite3.OperationalError:
            continue
    if not pairs:
        return [], {}
    low = query.lower()
    words: list[str] = []
    covers: dict[str, list[int]] = {}
    originals = list(q.latin) + list(q.cjk)
    for alias, target in pairs:
        for said, other in ((alias, target), (target, alias)):
            if said and other and said.lower() in low and other.lower() not in low:
                parts = _latin_split(said)[0] + _cjk_split(said)[0]
                idxs = [i for i, w in enumerate(originals) if w in parts]
                if other not in words:
                    words.append(other)
                covers.setdefault(other, []).extend(idxs)
    return words, covers


# ------------------------------------------------------------------ per-index work
def _fts_rows(conn: sqlite3.Connection) -> int:
    """Rows in the FTS index, read from FTS5's own statistics record (no table scan)."""
    try:
        row = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
        if row is not None and row[0]:
            return _varint(bytes(row[0]))
    except sqlite3.Error:
        pass
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def _varint(b: bytes) -> int:
    """SQLite's big-endian varint (as FTS5 writes it) at the start of b."""
    v = 0
    for i, byte in enumerate(b[:9]):
        if i == 8:
            return (v << 8) | byte
        v = (v << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return v
    return v


def _count(conn: sqlite3.Connection, expr: str) -> int:
    try:
        return int(conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (expr,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _query_plan(conn: sqlite3.Connection, q: Any, terms: list[_Term], full: str) -> tuple[str, bool]:
    """(the MATCH expression that selects candidates, pruned?) after counting each word's documents."""
    n = _fts_rows(conn)
    for t in terms:
        t.df = _count(conn, t.expr)
        t.idf = math.log(1.0 + (n - t.df + 0.5) / (t.df + 0.5))
    total = sum(t.df for t in terms)
    if n < PRUNE_MIN_ROWS or total <= PRUNE_POSTINGS or len(terms) < 2:
        return full, False
    chosen: list[_Term] = []
    budget = 0
    for t in sorted(terms, key=lambda t: t.df):
        if chosen and budget + t.df > SELECTIVE_POSTINGS:
            break
        chosen.append(t)
        budget += t.df
    if len(chosen) == len(terms):
        return full, False
    from git_memex.core.textproc import _raw_latin_tokens

    keep = {t.word for t in chosen}
    parts = [t.expr for t in chosen]
    for t in chosen:
        parts.extend(t.syn_exprs)
    from git_memex.core.textproc import CJK_RE, _quote

    for phrase in q.phrases:
        if CJK_RE.search(phrase):
            if any(g in keep for g in phrase.split()):
                parts.append("{cjk}:" + _quote(phrase))
        elif any(w in keep for w in _raw_latin_tokens(phrase)):
            parts.append(_quote(phrase))
    return " OR ".join(dict.fromkeys(parts)), True


def _candidates(index: Any, expr: str, where: str, params: tuple[Any, ...], scope: str, type: str | None,
                fetch: int) -> list[sqlite3.Row]:  # fmt: skip
    """The best `fetch` rows by BM25 that pass the filters.

    FTS5 ranks in an inner query (no join per matching row), the filters apply to its
    result; when they remove too many rows the inner limit grows until enough pass or the
    matches run out.
    """
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    filters = (f"{where} AND {scope_filter(scope)} AND m.status NOT IN ({','.join('?' * len(HIDDEN_STATUSES))})"
               + (" AND m.type = ?" if type else ""))  # fmt: skip
    fargs: list[Any] = [*params, *HIDDEN_STATUSES, *([type] if type else [])]
    inner = fetch + fetch // 2
    while True:
        sql = (
            "SELECT m.*, f.rank AS rank, f.rowid AS frid FROM"
            f" (SELECT rowid, bm25(memories_fts, {w}) AS rank FROM memories_fts"
            "   WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?) AS f"
            f" JOIN memories m ON m.rid = f.rowid WHERE {filters} ORDER BY f.rank, m.rid"
        )
        rows = index.conn.execute(sql, (expr, inner, *fargs)).fetchall()
        if len(rows) >= fetch:
            return rows[:fetch]
        got = index.conn.execute(
            "SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)", (expr, inner)
        ).fetchone()[0]
        if got < inner:  # every match was seen
            return rows
        inner *= 8


_SCRATCH: list[sqlite3.Connection] = []


def _scratch() -> sqlite3.Connection:
    """An in-memory FTS5 table with the index's tokenizer, reused for every search of the process."""
    if not _SCRATCH:
        from git_memex.index.refresh import FTS_COLUMNS

        c = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        c.execute(f"CREATE VIRTUAL TABLE s USING fts5({', '.join(FTS_COLUMNS)},"
                  " tokenize='porter unicode61 remove_diacritics 2')")  # fmt: skip
        _SCRATCH.append(c)
    return _SCRATCH[0]


def _match_sets(index: Any, rows: list[sqlite3.Row], terms: list[_Term], phrase_exprs: list[str],
                ) -> tuple[dict[int, float], dict[int, float], dict[int, set[str]]]:  # fmt: skip
    """Per candidate (by FTS rowid): IDF-weighted share of the query words it holds, share of the
    query's phrases it holds, and the lanes that match it."""
    from git_memex.index.refresh import FTS_COLUMNS

    rids = [r["frid"] for r in rows]
    cols = ", ".join(f"c{i}" for i in range(len(FTS_COLUMNS)))
    marks = ",".join("?" * len(rids))
    texts = index.conn.execute(f"SELECT id, {cols} FROM memories_fts_content WHERE id IN ({marks})", rids).fetchall()
    sc = _scratch()
    sc.execute("BEGIN")  # rolled back at the end: the rows never need deleting
    try:
        sc.executemany(f"INSERT INTO s(rowid, {', '.join(FTS_COLUMNS)}) VALUES(?{', ?' * len(FTS_COLUMNS)})",
                       [tuple(t) for t in texts])  # fmt: skip
        return _score_scratch(sc, terms, phrase_exprs)
    finally:
        sc.execute("ROLLBACK")


def _score_scratch(sc: sqlite3.Connection, terms: list[_Term], phrase_exprs: list[str],
                   ) -> tuple[dict[int, float], dict[int, float], dict[int, set[str]]]:  # fmt: skip
    total = sum(t.idf for t in terms) or 1.0
    cov: dict[int, float] = {}
    lanes: dict[int, set[str]] = {}

    def hits(expr: str) -> list[int]:
        try:
            return [r[0] for r in sc.execute("SELECT rowid FROM s WHERE s MATCH ?", (expr,))]
        except sqlite3.OperationalError:
            return []

    for t in terms:
        direct = hits(t.expr)
        lane = "bm25" if t.kind == "latin" else "cjk"
        held = set(direct)
        for rid in direct:
            lanes.setdefault(rid, set()).add(lane)
        if t.syn_exprs:
            for rid in hits(" OR ".join(t.syn_exprs)):
                lanes.setdefault(rid, set()).add("synonym")
                held.add(rid)
        for rid in held:
            cov[rid] = cov.get(rid, 0.0) + t.idf / total
    phrases: dict[int, float] = {}
    for e in phrase_exprs:  # exact word sequences held (also words that are otherwise stopwords: "us-east")
        for rid in hits(e):
            lanes.setdefault(rid, set()).add("bm25")
            phrases[rid] = phrases.get(rid, 0.0) + 1.0 / len(phrase_exprs)
    return cov, phrases, lanes


def search(
    stores: Stores,
    query: str,
    *,
    scope: str = "both",
    type: str | None = None,
    limit: int = 8,
    explain: bool = False,
    refresh: bool = True,
) -> SearchResult:
    t0 = time.perf_counter()
    if refresh:
        stores.refresh()
    result = _search(stores, query, scope=scope, type=type, limit=limit, explain=explain)
    result.elapsed_ms = (time.perf_counter() - t0) * 1000
    return result


def _search(stores: Stores, query: str, *, scope: str, type: str | None, limit: int, explain: bool) -> SearchResult:
    from git_memex.core.textproc import CJK_RE, Query, _quote, parse_query

    t0 = time.perf_counter()
    q = parse_query(query)
    alias_words, alias_covers = _alias_expansions(stores, query, q) if q.fts() else ([], {})
    if alias_words:
        q = Query(q.latin, q.cjk, tuple(dict.fromkeys((*q.expanded, *alias_words))), q.phrases)
    expr = q.fts()  # candidates: words, synonyms, aliases; phrases only rerank them (step 2)
    result = SearchResult(query=query, fts=expr, hits=[])
    if expr is None or limit <= 0:
        result.elapsed_ms = (time.perf_counter() - t0) * 1000
        return result
    terms = _terms(q, alias_covers)
    phrase_exprs = [("{cjk}:" + _quote(p)) if CJK_RE.search(p) else _quote(p) for p in q.phrases]
    now = time.time()
    fetch = max(limit * 4, MIN_FETCH)
    scored: dict[str, tuple[float, sqlite3.Row, dict[str, Any]]] = {}
    for index, where, params in stores.dbs():
        sel, pruned = _query_plan(index.conn, q, terms, expr)
        rows = _candidates(index, sel, where, params, scope, type, fetch * (2 if pruned else 1))
        if not rows:
            continue
        cov, phr, lanes = _match_sets(index, rows, terms, phrase_exprs)
        for r in rows:
            if r["id"] in scored:
                continue  # the repo copy wins over a stale outbox copy
            b = boosts(r, now)
            base = -float(r["rank"])
            c = cov.get(r["frid"], 0.0)
            ph = phr.get(r["frid"], 0.0)
            score = base * (1.0 + COVERAGE_WEIGHT * c) * (1.0 + PHRASE_WEIGHT * ph)
            for v in b.values():
                score *= v
            info: dict[str, Any] = {"lanes": lanes.get(r["frid"], set()), "all_words": c >= 0.999}
            if explain:
                info["explain"] = {"bm25": round(base, 6), "coverage": round(c, 4), "phrases": round(ph, 4),
                                   "boosts": {k: round(v, 4) for k, v in b.items()}}  # fmt: skip
                if pruned:
                    info["explain"]["candidates"] = sel
            scored[r["id"]] = (score, r, info)
    # The semantic lane (optional extra, search/semantic.py) joins where vectors were built:
    # without a vectors file beside an index nothing of it is imported.
    lane = None
    if explain or any(i.path.with_name("vectors.db").exists() for i, _w, _p in stores.dbs()):
        from git_memex.search import semantic

        lane = semantic.join(stores, query, scored, scope=scope, type=type, explain=explain, now=now)
    result.semantic = lane
    from git_memex.search.chains import superseded_ids

    gone = superseded_ids(stores, list(scored))
    order = sorted((k for k in scored if k not in gone),
                   key=lambda k: (scored[k][1]["status"] == "deprecated", -scored[k][0], k))  # fmt: skip
    snippet_terms = list(q.latin) + list(q.cjk)
    result.terms = snippet_terms
    for mid in order[:limit]:
        score, r, info = scored[mid]
        h = Hit(
            id=r["id"],
            scope=r["scope"],
            type=r["type"],
            status=r["status"],
            review_state=r["review_state"],
            snippet=_snippet(r["body"], snippet_terms),
            score=score,
            lanes=[lane for lane in ("bm25", "cjk", "synonym", "semantic") if lane in info["lanes"]] or ["bm25"],
            location=r["location"],
            path=r["path"],
            tags=json.loads(r["tags"] or "[]"),
            importance=r["importance"],
            updated_at=r["updated_at"],
            role=r["role"] or "knowledge",
            source=r["source"],
            body=r["body"] or "",
        )
        if explain:
            h.explain = info["explain"]
        result.hits.append(h)
    if explain:
        for rank, h in enumerate(result.hits, 1):
            h.explain["rank"] = rank
            if h.status == "deprecated":
                h.explain["note"] = "deprecated memories rank after all others"
    result.elapsed_ms = (time.perf_counter() - t0) * 1000
    return result

"""Search over the indexes of one context: query building, the candidate pool, one ranking.

1. The query: its words (Latin terms, CJK bigrams), their synonyms, the user's alias vocabulary
   and exact-phrase terms (search/query.parse_query).
2. The candidate pool, per index: the best rows by FTS5 bm25 over any word (on a large index
   whose words are common, over the rarest words only: scoring.PRUNE_*) and every row holding
   every word (up to scoring.ALL_WORDS_POOL), so a memory with all the words is never missed.
3. One ranking for the whole pool, whichever index holds a memory: the pool's rows go into a
   scratch in-memory FTS5 table (same tokenizer), whose fts5vocab 'instance' table gives each
   word's frequency per column and its positions; document counts, lengths and the corpus size
   come from every index searched, summed (scoring.Corpus). scoring.py computes the factors
   (coordination, BM25 with a low b, proximity, phrases, boosts); the optional semantic lane
   gives its verdict (`semantic.join`, imported only where vectors exist), and `fusion.fuse`
   orders the hits, whichever lanes found them (`scoring.Ranked`, `scoring.in_order`).
4. Only the newest of a supersede chain; deprecated memories last.

docs/search.md explains the ranking for users.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time

from git_memex.core.record import field, record
from git_memex.index.stores import HIDDEN_STATUSES, READ_SCOPES, Stores, scope_filter, visible  # noqa: F401  (re-exported)
from git_memex.search import scoring
from git_memex.search.scoring import BM25_WEIGHTS, IMPORTANCE_BOOST, REVIEW_ORDER, boosts  # noqa: F401  (re-exported)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from git_memex.index.database import Index
    from git_memex.search.query import Query
SNIPPET_CHARS = 240

@record
class Hit:
    id: str
    scope: str
    type: str
    status: str
    review_state: str | None  # its review standing (core.model.standing), what ranking and labels use
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
    confidence: str | None = None  # none written: medium
    canonical_ref: str | None = None  # the document the memory cites (explainability, docs/format.md)
    explain: dict[str, Any] = field(default_factory=dict)
    body: str = ""  # as stored; not in to_json: what leaves is the snippet, masked by ops.search (guard.py)
    # the lexical verdict, for callers that need a relevance floor (the prompt hook): how many of
    # the query's `words` it holds (directly, by stem or prefix, or through a synonym or alias),
    # and the IDF-weighted share of them (scoring.py, coverage); 0 when only the dense lane found it
    held: int = 0
    words: int = 0
    coverage: float = 0.0
    held_words: list[str] = field(default_factory=list)  # which of the query's words it holds (as `SearchResult.words`)
    dense: float | None = None  # the semantic lane's raw score (None: the lane is off or did not score it)
    # the other memories of identical text this hit stands for (`_one_fact_once`), each as `place` gives it
    also_in: list[dict[str, Any]] = field(default_factory=list)
    review_claim: str | None = None  # the file's own review_state, when it says more than its standing

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
            "confidence": self.confidence or "medium",
            "canonical_ref": self.canonical_ref,
        }
        if self.location.startswith("org:"):
            d["org"] = self.location[len("org:"):]  # the label of an org memory (docs/org.md)
        elif self.location.startswith("remote:"):
            d["remote"] = self.location[len("remote:"):]  # a remote server's memory (docs/remote.md)
        if self.also_in:
            d["also_in"] = self.also_in
        if self.review_claim:
            d["review_claim"] = self.review_claim
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
    ranking: dict[str, Any] = field(default_factory=dict)  # with explain: the corpus statistics used
    semantic: dict[str, Any] | None = None  # the semantic lane's status (None: off)
    more: bool = False  # the limit cut the ranked hits: more memories matched
    # the query's words as scored, each with the number of memories holding it, and how many
    # memories the indexes searched hold (for a relevance floor with its own word weights: the prompt hook)
    words: list[tuple[str, int]] = field(default_factory=list)
    memories: int = 0


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


class _Term:
    """One original query word (Latin term or CJK bigram) and the synonyms that stand for it."""

    __slots__ = ("word", "expr", "kind", "syn_exprs")

    def __init__(self, word: str, expr: str, kind: str) -> None:
        self.word = word
        self.expr = expr
        self.kind = kind  # latin | cjk
        self.syn_exprs: list[str] = []


def _terms(q: Query, extra: dict[str, list[int]]) -> list[_Term]:
    """The query's original words with their FTS5 expressions and the expansions that cover them.

    `extra` maps alias-vocabulary expansions to the indexes (into latin + cjk) of the words
    they stand for.
    """
    from git_memex.core.textproc import raw_latin_tokens
    from git_memex.search import synonyms
    from git_memex.search.query import Query, quote

    terms = [_Term(t, quote(t) + "*", "latin") for t in q.latin]
    terms += [_Term(g, "{cjk}:" + quote(g), "cjk") for g in q.cjk]
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
    tokens = raw_latin_tokens(" ".join(q.latin))
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


def _cjk_entries(q: Query) -> list[str]:
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


def _alias_expansions(dbs: list[tuple[Any, str, tuple[Any, ...]]], query: str, q: Query,
                      ) -> tuple[list[str], dict[str, list[int]]]:
    """The user's alias vocabulary (memories with `alias` and `target`): a query naming one
    side also searches for the other. Returns (words, word -> indexes of the query words it covers)."""
    from git_memex.core.textproc import cjk_split, latin_split

    pairs: list[tuple[str, str]] = []
    for index, where, params in dbs:
        try:
            pairs += index.conn.execute(
                f"SELECT m.alias, m.target FROM memories m WHERE m.alias IS NOT NULL AND m.target IS NOT NULL"
                f" AND m.status NOT IN ('retracted', 'archived') AND {where}", params).fetchall()
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
                parts = latin_split(said)[0] + cjk_split(said)[0]
                idxs = [i for i, w in enumerate(originals) if w in parts]
                if other not in words:
                    words.append(other)
                covers.setdefault(other, []).extend(idxs)
    return words, covers



# ------------------------------------------------------------------ per-index work
def _count(conn: sqlite3.Connection, expr: str) -> int:
    try:
        return int(conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (expr,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _visible(conn: sqlite3.Connection, where: str, params: tuple[Any, ...], rows: int, tokens: list[int],
             dfs: list[int], terms: list[_Term]) -> tuple[int, list[int], list[int]]:
    """An index's (rows, tokens per column, each word's document count) over the rows `where`
    admits: the whole index's figures less those of the rows it does not (the data root's index
    holds every project's outbox and private memories; a remote's holds copies this project has
    locally). So neither the ranking nor `--explain` counts a memory the search cannot return,
    and another project's private words never show in a document count."""
    hidden = f"NOT coalesce(({where}), 0)"
    sizes = [bytes(r[0]) for r in conn.execute(
        f"SELECT d.sz FROM memories m JOIN memories_fts_docsize d ON d.id = m.rid WHERE {hidden}", params)]
    if not sizes:
        return rows, tokens, dfs
    less = [0] * scoring.NCOL
    for sz in sizes:
        for k, v in enumerate(scoring.varints(sz)[: scoring.NCOL]):
            less[k] += v
    out = []
    for t, d in zip(terms, dfs, strict=True):
        try:
            gone = int(conn.execute(
                f"SELECT count(*) FROM memories_fts f JOIN memories m ON m.rid = f.rowid"
                f" WHERE memories_fts MATCH ? AND {hidden}", (t.expr, *params)).fetchone()[0]) if d else 0
        except sqlite3.OperationalError:
            gone = 0
        out.append(max(d - gone, 0))
    return max(rows - len(sizes), 0), [max(a - b, 0) for a, b in zip(tokens, less, strict=True)], out


def _prune(q: Query, terms: list[_Term], dfs: list[int], rows: int, full: str) -> tuple[str, bool]:
    """(the MATCH expression that selects this index's bm25 candidates, pruned?) from its own counts."""
    total = sum(dfs)
    if rows < scoring.PRUNE_MIN_ROWS or total <= scoring.PRUNE_POSTINGS or len(terms) < 2:
        return full, False
    chosen: list[int] = []
    budget = 0
    for i in sorted(range(len(terms)), key=lambda i: dfs[i]):
        if chosen and budget + dfs[i] > scoring.SELECTIVE_POSTINGS:
            break
        chosen.append(i)
        budget += dfs[i]
    if len(chosen) == len(terms):
        return full, False
    from git_memex.core.textproc import CJK_RE, raw_latin_tokens
    from git_memex.search.query import quote

    keep = {terms[i].word for i in chosen}
    parts = [terms[i].expr for i in chosen]
    for i in chosen:
        parts.extend(terms[i].syn_exprs)
    for phrase in q.phrases:
        if CJK_RE.search(phrase):
            if any(g in keep for g in phrase.split()):
                parts.append("{cjk}:" + quote(phrase))
        elif any(w in keep for w in raw_latin_tokens(phrase)):
            parts.append(quote(phrase))
    return " OR ".join(dict.fromkeys(parts)), True


def _filters(where: str, params: tuple[Any, ...], scope: str, type: str | None) -> tuple[str, list[Any]]:
    """The rows a search may return on one index (its filter from `Stores.dbs`, `where`): those
    `stores.visible` lets through, the condition both lanes use."""
    cond, args = visible(scope, type)
    return f"{where} AND {cond}", [*params, *args]


def _candidates(index: Index, expr: str, where: str, params: tuple[Any, ...], scope: str, type: str | None,
                fetch: int) -> list[sqlite3.Row]:
    """The best `fetch` rows by FTS5 bm25 that pass the filters.

    FTS5 ranks in an inner query (no join per matching row), the filters apply to its
    result; when they remove too many rows the inner limit grows until enough pass or the
    matches run out.
    """
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    filters, fargs = _filters(where, params, scope, type)
    inner = fetch + fetch // 2
    while True:
        sql = (
            "SELECT m.*, f.rowid AS frid FROM"
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


def _all_words(index: Index, expr: str, where: str, params: tuple[Any, ...], scope: str, type: str | None,
               seen: set[int]) -> list[sqlite3.Row]:
    """Rows holding every word (expr is their AND), up to ALL_WORDS_POOL (then the best by bm25)."""
    cap = scoring.ALL_WORDS_POOL
    try:
        rids = [r[0] for r in index.conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?", (expr, cap + 1))]
    except sqlite3.OperationalError:
        return []
    if len(rids) > cap:
        return _candidates(index, expr, where, params, scope, type, cap)
    rids = [r for r in rids if r not in seen]
    if not rids:
        return []
    filters, fargs = _filters(where, params, scope, type)
    marks = ",".join("?" * len(rids))
    return index.conn.execute(f"SELECT m.*, m.rid AS frid FROM memories m WHERE m.rid IN ({marks}) AND {filters}",
                              (*rids, *fargs)).fetchall()


REVIEWED = "m.standing IN ('approved', 'published')"
"""The rows `_reviewed` adds to the pool: reviewed knowledge as it stands (core.model.standing)."""


def _reviewed(index: Index, expr: str, where: str, params: tuple[Any, ...], scope: str, type: str | None,
              fetch: int, seen: set[int]) -> list[sqlite3.Row]:
    """The best `fetch` reviewed rows (`REVIEWED`) by FTS5 bm25 among those matching `expr`, beyond
    `seen` (docs/search.md, "Which memories are considered").

    The review order (`scoring.in_order`) only moves hits among those in the pool, and the pool is
    the best rows by bm25: a published memory said in a long text, beside many short drafts holding
    the same words, was never pooled, so whether it led depended on --limit, and at a small limit it
    was absent. With its reviewed rows pooled too, each group of hits holding the same words has its
    reviewed members at hand, bounded by the same `fetch`. Costs nothing where the index holds no
    reviewed row (one indexed lookup); else one ranking of the matches, as `_candidates` does."""
    try:
        if index.conn.execute(f"SELECT 1 FROM memories m WHERE {REVIEWED} LIMIT 1").fetchone() is None:
            return []
    except sqlite3.OperationalError:
        return []
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    filters, fargs = _filters(where, params, scope, type)
    rows = index.conn.execute(
        "SELECT m.*, f.rowid AS frid FROM"
        f" (SELECT rowid, bm25(memories_fts, {w}) AS rank FROM memories_fts WHERE memories_fts MATCH ?) AS f"
        f" JOIN memories m ON m.rid = f.rowid WHERE {REVIEWED} AND {filters} ORDER BY f.rank, m.rid LIMIT ?",
        (expr, *fargs, fetch + len(seen))).fetchall()
    return [r for r in rows if r["frid"] not in seen][:fetch]


# ------------------------------------------------------------------ the scratch table
_SCRATCH: list[sqlite3.Connection] = []
_STEMS: dict[str, str] = {}


def _scratch() -> sqlite3.Connection:
    """In-memory FTS5 tables with the index's tokenizer, reused by every search of the process:
    `s` holds a search's pool (rolled back after it), `si` its instances (term, row, column,
    offset), `q`/`qi` tokenise query words (porter stems) the same way."""
    if not _SCRATCH:
        from git_memex.index.schema import FTS_COLUMNS, FTS_TOKENIZE

        c = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        tok = f"tokenize='{FTS_TOKENIZE}'"
        c.execute(f"CREATE VIRTUAL TABLE s USING fts5({', '.join(FTS_COLUMNS)}, {tok})")
        c.execute("CREATE VIRTUAL TABLE si USING fts5vocab(s, 'instance')")
        c.execute(f"CREATE VIRTUAL TABLE q USING fts5(w, {tok})")
        c.execute("CREATE VIRTUAL TABLE qi USING fts5vocab(q, 'instance')")
        _SCRATCH.append(c)
    return _SCRATCH[0]


def _stems(sc: sqlite3.Connection, words: list[str]) -> dict[str, str]:
    """Each Latin query word as the index stores it (a prefix term matches tokens starting so)."""
    todo = [w for w in dict.fromkeys(words) if w not in _STEMS]
    if todo:
        sc.execute("SAVEPOINT tok")
        try:
            sc.executemany("INSERT INTO q(rowid, w) VALUES(?, ?)", list(enumerate(todo, 1)))
            got = {doc: term for term, doc in sc.execute("SELECT term, doc FROM qi")}
        finally:
            sc.execute("ROLLBACK TO tok")
            sc.execute("RELEASE tok")
        if len(_STEMS) > 4096:
            _STEMS.clear()
        for i, w in enumerate(todo, 1):
            _STEMS[w] = got.get(i, w)
    return {w: _STEMS[w] for w in words}


def stems(words: list[str]) -> dict[str, str]:
    """Each Latin word as the index's tokenizer stores it (porter: `migrations` → `migrat`), the
    form search matches on; for callers that must agree with search about "the same word"."""
    return _stems(_scratch(), [w.lower() for w in words])


class _Cand:
    """One pooled memory and what the scratch table found in it."""

    __slots__ = ("row", "index", "sizes", "tf", "pos", "syn", "phrases", "lanes")

    def __init__(self, row: sqlite3.Row, index: int) -> None:
        self.row = row
        self.index = index
        self.sizes: list[int] = [0] * scoring.NCOL
        self.tf: dict[int, list[int]] = {}  # word number -> occurrences per column
        self.pos: dict[int, list[tuple[int, int]]] = {}  # column -> (offset, word number)
        self.syn: dict[int, int] = {}  # word number -> how many of its synonym or alias forms it holds
        self.phrases = 0.0
        self.lanes: set[str] = set()


def _measure(pool: list[_Cand], dbs: list[Any], terms: list[_Term], phrase_exprs: list[str]) -> None:
    """Fill in each candidate's lengths, word frequencies, positions, synonyms and phrases."""
    from git_memex.index.database import FTS_COLUMNS

    need_cjk = (any(t.kind == "cjk" for t in terms) or any("{cjk}" in e for t in terms for e in t.syn_exprs)
                or any(e.startswith("{cjk}") for e in phrase_exprs))
    cols = ", ".join(f"c.c{i}" if (i != scoring.CJK or need_cjk) else "''" for i in range(scoring.NCOL))
    by_index: dict[int, dict[int, int]] = {}
    for sid, c in enumerate(pool):
        by_index.setdefault(c.index, {})[c.row["frid"]] = sid
    texts: list[tuple[Any, ...]] = []
    for k, m in by_index.items():
        marks = ",".join("?" * len(m))
        for row in dbs[k][0].conn.execute(
            f"SELECT c.id, d.sz, {cols} FROM memories_fts_content c JOIN memories_fts_docsize d ON d.id = c.id"
            f" WHERE c.id IN ({marks})", list(m)):
            sid = m[row[0]]
            pool[sid].sizes = (scoring.varints(bytes(row[1])) + [0] * scoring.NCOL)[: scoring.NCOL]
            texts.append((sid, *row[2:]))
    sc = _scratch()
    stems = _stems(sc, [t.word for t in terms if t.kind == "latin"])
    colno = {c: i for i, c in enumerate(FTS_COLUMNS)}
    sc.execute("BEGIN")  # rolled back at the end: the rows never need deleting
    try:
        sc.executemany(f"INSERT INTO s(rowid, {', '.join(FTS_COLUMNS)}) VALUES(?{', ?' * scoring.NCOL})", texts)
        for i, t in enumerate(terms):
            if t.kind == "latin":
                s0 = stems[t.word]
                rows = sc.execute("SELECT doc, col, offset FROM si WHERE term >= ? AND term < ?", (s0, s0 + "\U0010ffff"))
                lane = "bm25"
            else:
                rows = sc.execute("SELECT doc, col, offset FROM si WHERE term = ? AND col = 'cjk'", (t.word,))
                lane = "cjk"
            for sid, col, off in rows:
                c = pool[sid]
                n = colno[col]
                v = c.tf.get(i)
                if v is None:
                    v = c.tf[i] = [0] * scoring.NCOL
                v[n] += 1
                c.lanes.add(lane)
                if n == scoring.BODY or n == scoring.CJK:
                    c.pos.setdefault(n, []).append((off, i))

        def hits(expr: str) -> list[int]:
            try:
                return [r[0] for r in sc.execute("SELECT rowid FROM s WHERE s MATCH ?", (expr,))]
            except sqlite3.OperationalError:
                return []

        for i, t in enumerate(terms):
            for e in t.syn_exprs:  # each form on its own: a memory holding several forms holds the word more
                for sid in hits(e):
                    c = pool[sid]
                    c.syn[i] = c.syn.get(i, 0) + 1
                    c.lanes.add("synonym")
        for e in phrase_exprs:  # exact word sequences held (also words that are otherwise stopwords: "us-east")
            for sid in hits(e):
                pool[sid].phrases += 1.0 / len(phrase_exprs)
                pool[sid].lanes.add("bm25")
    finally:
        sc.execute("ROLLBACK")


# ------------------------------------------------------------------ ranking
@record
class Scored:
    """A pooled memory with its lexical factors (the lexical lane's verdict on it)."""

    cand: _Cand
    held: int
    bm25: float
    coverage: float
    proximity: float
    lexical: float
    boosts: dict[str, float]
    score: float
    held_words: tuple[int, ...] = ()  # the numbers of the query words it holds (scoring.in_order groups by them)


def _score(pool: list[_Cand], terms: list[_Term], idfs: list[float], corpus: scoring.Corpus, now: float) -> list[Scored]:
    n = len(terms)
    avgs = corpus.avgs
    total_idf = sum(idfs) or 1.0
    out: list[Scored] = []
    for c in pool:
        bm, tfs = scoring.bm25f([c.tf.get(i) for i in range(n)],
                                [scoring.SYNONYM_TF * c.syn.get(i, 0) for i in range(n)], idfs, c.sizes, avgs)
        which = tuple(k for k, t in enumerate(tfs) if t > 0)
        held = len(which)
        held_idf = sum(idfs[k] for k in which)
        prox = max((scoring.tightness(p, n) for p in c.pos.values()), default=0.0)
        b = boosts(c.row, now)
        cov = held_idf / total_idf
        lex = scoring.lexical(bm, cov, prox, c.phrases, b)
        out.append(Scored(c, held, bm, cov, prox, lex, b, scoring.final(held, lex), which))
    return out


def _dense_lane(stores: Stores, query: str, lexical: list[Scored], *, scope: str, type: str | None,
                explain: bool, early: Any = None) -> Any:
    """The dense lane's verdict (`semantic.join`): its scores combine with the lexical lane's by
    weight in `fusion.fuse` (docs/semantic.md, a weighted sum measured to beat reciprocal rank
    fusion), and it may add memories found by meaning alone."""
    from git_memex.search import semantic

    return semantic.join(stores, query, {s.cand.row["id"]: s.cand.row["content_hash"] for s in lexical},
                         scope=scope, type=type, explain=explain, early=early)


def claimed(row: Any) -> str | None:
    """A row's own ``review_state`` where it claims more than its standing (`core.model.claim_beyond`)."""
    from git_memex.core.model import claim_beyond

    return claim_beyond(row["location"], row["review_state"], row["standing"])


def place(row: Any) -> dict[str, Any]:
    """Where a memory lives, as a hit's `also_in` names it: its id, scope and location, and the
    org's or remote's name (the labels of `Hit.to_json`)."""
    loc = str(row["location"] or "")
    out: dict[str, Any] = {"id": row["id"], "scope": row["scope"], "location": loc}
    if loc.startswith("org:"):
        out["org"] = loc[len("org:"):]
    elif loc.startswith("remote:"):
        out["remote"] = loc[len("remote:"):]
    return out


def _one_fact_once(ranked: list[scoring.Ranked]) -> tuple[list[scoring.Ranked], dict[str, list[Any]]]:
    """Hits of the same text become one (`core.precedence.one_fact_once`, imported only when two
    hits share a `content_hash`): the copy that is never less reviewed and otherwise the one
    precedence prefers, at the best copy's place (it takes the group's best score, then the order
    is made again, so the review order sees the level the shown copy has), naming the others.
    A rule is never merged with anything here: whether it is served is the gate's verdict, which
    `ops.search` asks after the engine, and an unserved copy must never stand in for a served one."""
    hashes = [x.row["content_hash"] for x in ranked if x.row["content_hash"] and x.row["role"] != "instruction"]
    if len(hashes) == len(set(hashes)):
        return ranked, {}
    from git_memex.core.precedence import one_fact_once

    kept, copies = one_fact_once(ranked, key=lambda x: x.row, keep_apart=lambda row: row["role"] == "instruction")
    if not copies:
        return ranked, {}
    score = {x.row["id"]: x.score for x in ranked}
    out: list[scoring.Ranked] = []
    for x in kept:
        group = copies.get(x.row["id"])
        if group:
            best = max([x.score, *(score.get(c["id"], x.score) for c in group)])
            x = scoring.Ranked(best, x.row, x.lanes, x.scored, x.extra, x.dense)
        out.append(x)
    return scoring.in_order(out), copies


def _index_names(stores: Stores, dbs: list[Any]) -> list[str]:
    """Each searched index as `--explain` names it: `repo`, `home` (the data root's), `org NAME`,
    `remote NAME`."""
    named = {id(i): f"org {n}" for n, i in stores.orgs} | {id(i): f"remote {n}" for n, i in stores.remotes}
    return ["repo" if stores.repo is not None and index is stores.repo else named.get(id(index), "home")
            for index, _w, _p in dbs]


def _explain_review(ranked: list[scoring.Ranked], hits: list[Hit]) -> None:
    """--explain's `review` per hit: its review level, and the hits of higher score holding the
    same words it was put above (scoring.in_order, item 4)."""
    for i, (x, h) in enumerate(zip(ranked, hits, strict=True)):
        level = scoring.review_level(x.row)
        words = scoring.same_words(x)
        above = [y.row["id"] for y in ranked[i + 1:] if words and scoring.same_words(y) == words and y.score > x.score
                 and (y.row["status"] == "deprecated") == (x.row["status"] == "deprecated")]
        state = None if x.row["location"] == "personal" else (x.row["standing"] or "draft")
        h.explain["review"] = {"state": state, "level": scoring.REVIEW_LEVELS[level], "above": above}


def search(
    stores: Stores,
    query: str,
    *,
    scope: str = "both",
    type: str | None = None,
    limit: int = 8,
    explain: bool = False,
    refresh: bool = True,
    semantic: bool = True,
) -> SearchResult:
    """`semantic=False`: the lexical lane only, even where vectors exist (the session block's
    relevance signals: a hook must not load a model)."""
    t0 = time.perf_counter()
    if refresh:
        stores.refresh()
    result = _search(stores, query, scope=scope, type=type, limit=limit, explain=explain, semantic=semantic)
    result.elapsed_ms = (time.perf_counter() - t0) * 1000
    return result


def _holds_vectors(path: Path) -> bool:
    """Whether the vectors file `path` exists and holds at least one code: an empty one (what
    `reindex --embeddings` over no memory, or an MCP server's start, leaves) loads no model. One
    read-only SQLite look (SQLite keeps the locks of this process's other connections to the
    file, the MCP server's builder's, when this one closes); a file it cannot read counts as
    holding codes, so the lane says what is wrong as before."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1.0)
        try:
            return conn.execute("SELECT 1 FROM codes LIMIT 1").fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return True


def _search(stores: Stores, query: str, *, scope: str, type: str | None, limit: int, explain: bool,
            semantic: bool = True) -> SearchResult:
    from git_memex.core.textproc import CJK_RE
    from git_memex.search.query import Query, parse_query, quote

    t0 = time.perf_counter()
    q = parse_query(query)
    dbs = stores.dbs()
    # The semantic lane (optional extra, search/semantic.py) joins where vectors were built:
    # without a vectors file beside an index nothing of it is imported. The query is embedded
    # in a thread while the lexical lane works (the engine releases the GIL).
    # (the file's name is search/vectors.VECTORS_NAME, spelt here so that a search without
    # vectors imports nothing of the lane: neither its store nor its provider)
    vectors = semantic and any(_holds_vectors(i.path.with_name("vectors.db")) for i, _w, _p in dbs)
    lane = (explain and semantic) or vectors
    early = None
    if vectors:
        from git_memex.search.embedder import embed_early

        early = embed_early(stores, query)
    alias_words, alias_covers = _alias_expansions(dbs, query, q) if q.fts() else ([], {})
    if alias_words:
        q = Query(q.latin, q.cjk, tuple(dict.fromkeys((*q.expanded, *alias_words))), q.phrases)
    expr = q.fts()  # candidates: words, synonyms, aliases; phrases only rerank them
    result = SearchResult(query=query, fts=expr, hits=[])
    if expr is None or limit <= 0:
        result.elapsed_ms = (time.perf_counter() - t0) * 1000
        return result
    terms = _terms(q, alias_covers)
    phrase_exprs = [("{cjk}:" + quote(p)) if CJK_RE.search(p) else quote(p) for p in q.phrases]
    # 1. corpus statistics, summed over every index searched
    corpus = scoring.Corpus()
    per_index: list[tuple[int, list[int]]] = []
    dfs = [0] * len(terms)
    for index, where, params in dbs:
        rows, tokens = scoring.fts_totals(index.conn)
        local = [_count(index.conn, t.expr) for t in terms] if rows else [0] * len(terms)
        if rows and where != "1":  # only the rows this search may read (not another project's outbox)
            rows, tokens, local = _visible(index.conn, where, params, rows, tokens, local, terms)
        corpus.add(rows, tokens)
        dfs = [a + b for a, b in zip(dfs, local, strict=True)]
        per_index.append((rows, local))
    idfs = [corpus.idf(d) for d in dfs]
    result.words = [(t.word, d) for t, d in zip(terms, dfs, strict=True)]
    result.memories = corpus.rows
    # 2. the pool
    fetch = max(limit * scoring.POOL_PER_LIMIT, scoring.POOL_MIN)
    all_words = (" AND ".join("(" + " OR ".join([t.expr, *t.syn_exprs]) + ")" for t in terms)
                 if len(terms) > 1 else None)
    pool: dict[str, _Cand] = {}
    plans: list[str] = []
    for k, (index, where, params) in enumerate(dbs):
        rows, local = per_index[k]
        if not rows:
            plans.append("")
            continue
        sel, pruned = _prune(q, terms, local, rows, expr)
        plans.append(sel if pruned else "")
        got = _candidates(index, sel, where, params, scope, type, fetch * (2 if pruned else 1))
        if all_words:
            got += _all_words(index, all_words, where, params, scope, type, {r["frid"] for r in got})
        got += _reviewed(index, sel, where, params, scope, type, fetch, {r["frid"] for r in got})
        for r in got:
            if r["id"] not in pool:  # the repo copy (first index) wins over a stale outbox copy
                pool[r["id"]] = _Cand(r, k)
    if pool:
        cands = list(pool.values())
        _measure(cands, dbs, terms, phrase_exprs)
        from git_memex.search.chains import superseded_ids

        gone = superseded_ids(stores, list(pool))
        lexical = [s for s in _score(cands, terms, idfs, corpus, time.time()) if s.cand.row["id"] not in gone]
    else:
        lexical = []
    dense = _dense_lane(stores, query, lexical, scope=scope, type=type, explain=explain, early=early) if lane else None
    if dense is not None:
        from git_memex.search import fusion

        result.semantic = dense.status
        if dense.scores:
            dense.status["alpha"] = fusion.alpha_for(lexical, len(terms))
        ranked = fusion.fuse(lexical, dense, words=len(terms), now=time.time(), explain=explain)
    else:  # the lexical order, the same as `fusion.fuse` without a dense lane (the lane stays unimported)
        ranked = scoring.in_order(scoring.Ranked(s.score, s.cand.row, set(s.cand.lanes), s) for s in lexical)
    if dense is not None and dense.found:
        from git_memex.search.chains import superseded_ids

        gone = superseded_ids(stores, [mid for mid in dense.found if mid not in {s.cand.row["id"] for s in lexical}])
        ranked = [x for x in ranked if x.row["id"] not in gone]
    ranked, copies = _one_fact_once(ranked)
    snippet_terms = list(q.latin) + list(q.cjk)
    result.terms = snippet_terms
    names = _index_names(stores, dbs)
    if explain:
        from git_memex.index.database import FTS_COLUMNS

        result.ranking = {
            "memories": corpus.rows,
            "indexes": len([1 for rows, _ in per_index if rows]),
            # each index's share of those figures, as the ranking counted it (only rows it may return)
            "per_index": [{"index": names[k], "memories": rows, "documents": dict(zip([t.word for t in terms], local,
                                                                                      strict=True))}
                          for k, (rows, local) in enumerate(per_index) if rows],
            "avg_length": round(corpus.avg_len, 2),
            "avg_lengths": dict(zip(FTS_COLUMNS, (round(a, 2) for a in corpus.avgs), strict=True)),
            "words": [{"word": t.word, "documents": d, "idf": round(i, 4), "synonyms": len(t.syn_exprs)}
                      for t, d, i in zip(terms, dfs, idfs, strict=True)],
            "k1": scoring.K1,
            "b": scoring.B,
        }
    result.more = len(ranked) > limit
    for x in ranked[:limit]:
        r, s = x.row, x.scored
        h = Hit(
            id=r["id"],
            scope=r["scope"],
            type=r["type"],
            status=r["status"],
            review_state=r["standing"],
            review_claim=claimed(r),
            snippet=_snippet(r["body"], snippet_terms),
            score=x.score,
            lanes=[lane for lane in ("bm25", "cjk", "synonym", "semantic") if lane in x.lanes] or ["bm25"],
            location=r["location"],
            path=r["path"],
            tags=json.loads(r["tags"] or "[]"),
            importance=r["importance"],
            updated_at=r["updated_at"],
            role=r["role"] or "knowledge",
            source=r["source"],
            confidence=r["confidence"],
            canonical_ref=r["canonical_ref"],
            body=r["body"] or "",
            held=s.held if s is not None else 0,
            words=len(terms),
            coverage=s.coverage if s is not None else 0.0,
            held_words=[terms[k].word for k in s.held_words] if s is not None else [],
            dense=x.dense,
            also_in=[place(c) for c in copies.get(r["id"], [])],
        )
        if explain and s is None:  # found by the semantic lane alone: no lexical factor
            h.explain = {"words": f"0/{len(terms)}", "bm25": 0.0, "coverage": 0.0, "proximity": 0.0, "phrases": 0.0,
                         "boosts": (x.extra or {}).get("boosts", {}), "lexical": 0.0, "length": 0, "index": "semantic"}
        elif explain and s is not None:
            h.explain = {
                "words": f"{s.held}/{len(terms)}",
                "bm25": round(s.bm25, 6),
                "coverage": round(s.coverage, 4),
                "proximity": round(s.proximity, 4),
                "phrases": round(s.cand.phrases, 4),
                "boosts": {k: round(v, 4) for k, v in s.boosts.items()},
                "lexical": round(s.lexical, 6),
                "length": sum(s.cand.sizes),
                "index": names[s.cand.index],
            }
            if plans[s.cand.index]:
                h.explain["candidates"] = plans[s.cand.index]
        if explain and x.extra and "semantic" in x.extra:
            h.explain["semantic"] = x.extra["semantic"]
        result.hits.append(h)
    if explain:
        for rank, h in enumerate(result.hits, 1):
            h.explain["rank"] = rank
            if h.status == "deprecated":
                h.explain["note"] = "deprecated memories rank after all others"
        _explain_review(ranked[:limit], result.hits)
    result.elapsed_ms = (time.perf_counter() - t0) * 1000
    return result

"""Every ranking weight in one place, and the pure functions that turn FTS5 statistics into scores.

docs/search.md explains the ranking for users; `git memex search --explain` prints each factor.
A hit's place is decided, in this order, by:

1. deprecated memories after all others;
2. coordination: how many of the query's words (Latin words, CJK bigrams) it holds, directly or
   through a synonym or the alias vocabulary;
3. its lexical score: BM25F computed here (FTS5's bm25() has b fixed at 0.75 on a row's whole
   length) with per-column lengths and corpus statistics summed over every index searched, times a coverage bonus (the IDF-weighted
   share of the words held), a proximity bonus (the query's words close together), a phrase bonus (exact word sequences of the query) and the boosts
   (importance, recency);
4. review, among hits of comparable relevance (`in_order`): hits holding the same query words
   (the same set, however well) are comparable, and among them reviewed knowledge (published,
   approved) comes before memories in review (proposed), before unreviewed ones (drafts, personal
   memories), before rejected ones, in the places the group held: no other hit moves.

The score a hit carries is `words held + lexical / (lexical + 1)`: it orders exactly as 1-3 and
reads as "holds 3 of the words, and how well"; step 4 may put a reviewed hit above a draft of
higher score that holds the same words (`--explain` says so).

Tuned on half A of each bench set (bench/retrieval.py, hash split of the query ids), reported on
both halves; see bench/README.md.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Sequence

from git_memex.core.model import REVIEW_ORDER  # noqa: F401  (the one table of review levels, re-exported)
from git_memex.core.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# ------------------------------------------------------------------ weights
# FTS5 column weights: body, tags, type, cjk, aliases (also the candidate pool's FTS5 bm25()).
BM25_WEIGHTS = (1.0, 2.0, 0.5, 1.0, 1.5)
# BM25F saturation and length normalisation. Each column is normalised by its own length against
# its own average, so the CJK column (characters plus bigrams, ~2.3x the length of an English
# row) no longer makes a Latin word count less in a Chinese memory; and memories are short, so b
# is low (FTS5's bm25() has b = 0.75 fixed, on the row's total length). k1 and b chosen on half A
# of the bench sets, reported on both (bench/README.md, "BM25F").
K1 = 0.8
B = 0.3
# A query word held only through synonyms counts this weighted term frequency per synonym form held.
SYNONYM_TF = 0.7
# lexical x (1 + COVERAGE_WEIGHT x IDF-weighted share of the query's words held): among memories
# holding as many words, the one holding the rarer ones.
COVERAGE_WEIGHT = 0.5
# lexical x (1 + PHRASE_WEIGHT x share of the query's exact phrases the memory holds).
PHRASE_WEIGHT = 1.0
# lexical x (1 + PROXIMITY_WEIGHT x tightness): see `tightness`.
PROXIMITY_WEIGHT = 1.0
# Review is an order, not a boost (docs/search.md, "Reviewed knowledge first"): among hits holding
# the same query words, the higher level first. Personal memories, which no one reviews, and an
# unknown state count as drafts. (Before issue 33 a x1.2 boost, which a draft holding the words
# more often, or in a shorter text, outweighed.)
REVIEW_LEVELS = {3: "reviewed", 2: "in review", 1: "unreviewed", 0: "rejected"}

# ------------------------------------------------------------------ importance and recency
# The one set of importance and recency weights. Search's boosts (`boosts`) and the session
# block's prior (`prior`, agents/relevance.py and agents/session.py) both read them here, and
# both decay with age the same way (`freshness`). Two strengths, because two jobs
# (docs/search.md, "Importance and recency in search and in the session block"): in search the
# words held decide and these only break near-ties (high x 1.1, low x 0.92, recency up to x 1.1),
# so a worse match never overtakes a better one; the prior is often the session block's whole
# order (no query, branch or file matched), so high must clearly lead and an old memory sink
# (high x 1.5, low x 0.6, recency x 0.4 to x 1.0). Unifying them would change either search's
# --explain factors or the block's order; tests/search/test_scoring.py keeps both orders agreeing.
IMPORTANCE_BOOST = {"high": 1.1, "normal": 1.0, "low": 0.92}
RECENCY_WEIGHT = 0.1
RECENCY_DAYS = 30.0
# prior = PRIOR_IMPORTANCE x (PRIOR_RECENCY_FLOOR + (1 - floor) x freshness) (x DEPRECATED_PRIOR)
PRIOR_IMPORTANCE = {"high": 1.5, "normal": 1.0, "low": 0.6}
PRIOR_RECENCY_FLOOR = 0.4
DEPRECATED_PRIOR = 0.5

# ------------------------------------------------------------------ candidate pool
# Per index: the best max(POOL_MIN, POOL_PER_LIMIT x limit) rows by FTS5 bm25 over any word...
POOL_MIN = 30
POOL_PER_LIMIT = 3
# ...plus up to ALL_WORDS_POOL rows holding every word (or a synonym of it), whatever their bm25.
ALL_WORDS_POOL = 200
# Pruning of common words on a large index (Lucene's CommonTermsQuery idea): when the query's
# words are common (their document counts sum above PRUNE_POSTINGS), only the rarest words select
# the bm25 part of the pool; every word still counts in the score, and the all-words part is kept.
# The all-words part of the pool makes this safe on smaller indexes than before issue 14 (20k rows,
# 25k/16k postings): same R@5 and MRR on both halves of every bench set, and at 100k p95 21 ms
# pruned against 79 ms unpruned (bench/README.md, session 4).
PRUNE_MIN_ROWS = 5_000
PRUNE_POSTINGS = 3_000
SELECTIVE_POSTINGS = 1_500

NCOL = len(BM25_WEIGHTS)
BODY, CJK = 0, 3


# ------------------------------------------------------------------ FTS5 statistics
def varints(b: bytes) -> list[int]:
    """Every SQLite varint (big-endian, 7 bits a byte, as FTS5 writes them) in b."""
    out: list[int] = []
    v = 0
    for byte in b:
        v = (v << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(v)
            v = 0
    return out


def fts_totals(conn: sqlite3.Connection) -> tuple[int, list[int]]:
    """(rows, tokens per column) of `memories_fts`, from FTS5's own averages record (id 1 of its
    data table, kept up to date on every write): no table scan."""
    try:
        row = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
    except sqlite3.Error:
        row = None
    if row is None or not row[0]:
        return 0, [0] * NCOL
    v = varints(bytes(row[0]))
    return v[0], (v[1:] + [0] * NCOL)[:NCOL]


class Corpus:
    """Statistics summed over every index a search reads: one ranking whichever index holds a
    memory (moving a memory between them leaves every sum unchanged)."""

    __slots__ = ("rows", "tokens")

    def __init__(self) -> None:
        self.rows = 0
        self.tokens = [0] * NCOL

    def add(self, rows: int, tokens: Sequence[int]) -> None:
        self.rows += rows
        self.tokens = [a + b for a, b in zip(self.tokens, tokens, strict=True)]

    @property
    def avgs(self) -> list[float]:
        return [t / self.rows if self.rows else 0.0 for t in self.tokens]

    @property
    def avg_len(self) -> float:
        return sum(self.tokens) / self.rows if self.rows else 1.0

    def idf(self, df: int) -> float:
        """BM25 IDF in Lucene's form (never negative)."""
        n = max(self.rows, 1)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


# ------------------------------------------------------------------ per-memory factors
def bm25f(tfs: Sequence[Sequence[int] | None], syn_tfs: Sequence[float], idfs: Sequence[float],
          sizes: Sequence[int], avgs: Sequence[float]) -> tuple[float, list[float]]:
    """(score, each word's weighted frequency): BM25F over the columns.

    A word's frequency in each column (`tfs[i][k]`, None for a word the memory lacks) is
    divided by (1 - b + b x column length / the column's average length), weighted by
    BM25_WEIGHTS and summed; a word held only through synonyms counts `syn_tfs[i]`. Each word
    then adds idf x tf(k1 + 1) / (tf + k1)."""
    norms = [1.0 - B + B * (sizes[k] / avgs[k] if avgs[k] else 0.0) for k in range(NCOL)]
    total = 0.0
    out: list[float] = []
    for v, syn, idf in zip(tfs, syn_tfs, idfs, strict=True):
        t = sum(BM25_WEIGHTS[k] * v[k] / norms[k] for k in range(NCOL) if v[k]) if v else 0.0
        if t == 0:
            t = syn
        out.append(t)
        if t > 0:
            total += idf * t * (K1 + 1.0) / (t + K1)
    return total, out


def tightness(positions: list[tuple[int, int]], nwords: int) -> float:
    """0..1: how close together the query's words stand in one column.

    `positions` are (token offset, word number). With m distinct words present (m >= 2) and the
    smallest window holding all of them spanning s tokens: (m - 1)/s x (m - 1)/(nwords - 1). All
    the words side by side gives 1.0; half of them, adjacent, about a quarter.
    """
    if nwords < 2:
        return 0.0
    positions.sort()
    m = len({w for _, w in positions})
    if m < 2:
        return 0.0
    best = -1
    count: dict[int, int] = {}
    have = lo = 0
    for off, w in positions:
        count[w] = count.get(w, 0) + 1
        if count[w] == 1:
            have += 1
        while have == m:
            span = off - positions[lo][0]
            if best < 0 or span < best:
                best = span
            w0 = positions[lo][1]
            count[w0] -= 1
            if not count[w0]:
                have -= 1
            lo += 1
    span = max(best, m - 1)
    return (m - 1) / span * (m - 1) / (nwords - 1)


def freshness(row: Any, now: float) -> float:
    """exp(-age / RECENCY_DAYS): 1 for a memory updated now, falling with its age in days."""
    age_days = max(0.0, (now - (row["updated_ts"] or 0.0)) / 86400)
    return math.exp(-age_days / RECENCY_DAYS)


def review_level(row: Any) -> int:
    """REVIEW_ORDER of a memory's review standing (`core.model.standing`: where it is and what its
    history proves, never the file's claim alone; the index's `standing` column): a personal
    memory, an outbox or private draft whatever it claims, and a repository claim of approved or
    published that no review step records rank as what they are (unreviewed, in review)."""
    if row["location"] == "personal":
        return REVIEW_ORDER["draft"]
    return REVIEW_ORDER.get(row["standing"] or "draft", REVIEW_ORDER["draft"])


def boosts(row: Any, now: float) -> dict[str, float]:
    """Multipliers from the memory's own fields (not from where it is indexed). Review is not one
    of them: it orders hits holding the same words (`in_order`)."""
    out: dict[str, float] = {}
    out["importance"] = IMPORTANCE_BOOST.get(row["importance"] or "normal", 1.0)
    out["recency"] = 1.0 + RECENCY_WEIGHT * freshness(row, now)
    return out


def prior(row: Any, now: float) -> float:
    """The session block's prior: importance x recency (x DEPRECATED_PRIOR when deprecated), the
    order of its memories when nothing else is known."""
    imp = PRIOR_IMPORTANCE.get(row["importance"] or "normal", 1.0)
    rec = PRIOR_RECENCY_FLOOR + (1.0 - PRIOR_RECENCY_FLOOR) * freshness(row, now)
    dep = DEPRECATED_PRIOR if row["status"] == "deprecated" else 1.0
    return imp * rec * dep


def lexical(bm: float, coverage: float, proximity: float, phrases: float, boost: dict[str, float]) -> float:
    s = bm * (1.0 + COVERAGE_WEIGHT * coverage) * (1.0 + PROXIMITY_WEIGHT * proximity) * (1.0 + PHRASE_WEIGHT * phrases)
    for v in boost.values():
        s *= v
    return s


def final(held: int, lex: float) -> float:
    """The score a hit carries: words held, plus the lexical score squashed into [0, 1)."""
    return held + lex / (lex + 1.0)


# ------------------------------------------------------------------ the final order
@record
class Ranked:
    """One hit in its final order, from whichever lanes found it (the lexical lane alone, or
    `fusion.fuse` with the dense lane)."""

    score: float
    row: Any  # the memory's index row (sqlite3.Row)
    lanes: set[str]  # bm25, cjk, synonym, semantic
    scored: Any = None  # the lexical lane's verdict (engine.Scored); None: only the dense lane found it
    extra: dict[str, Any] | None = None  # what the dense lane reports for --explain
    dense: float | None = None  # the dense lane's raw score, when it scored this memory


def same_words(x: Ranked) -> tuple[int, ...]:
    """The query words (their numbers) a hit holds by the lexical lane; () when only the dense lane found it."""
    return tuple(x.scored.held_words) if x.scored is not None else ()


def in_order(hits: Iterable[Ranked]) -> list[Ranked]:
    """Deprecated memories after all others, then by score, then by id (items 1-3 above); then
    item 4: hits holding the same query words (`same_words`; none: never grouped) are comparable,
    and inside each such group the higher review level (`review_level`) takes the group's first
    places, the order by score kept within a level. A hit moves only among the places of its own
    group: every other hit keeps its place, and where all levels are equal nothing moves."""
    base = sorted(hits, key=lambda x: (x.row["status"] == "deprecated", -x.score, x.row["id"]))
    groups: dict[Any, list[int]] = {}
    for pos, x in enumerate(base):
        words = same_words(x)
        if words:
            groups.setdefault((x.row["status"] == "deprecated", words), []).append(pos)
    out = list(base)
    for places in groups.values():
        if len(places) < 2:
            continue
        members = sorted(places, key=lambda pos: (-review_level(base[pos].row), pos))
        for place, pos in zip(places, members, strict=True):
            out[place] = base[pos]
    return out

"""Which memories a session block considers, and how each is scored (weights in one place).

Candidate pools are SQL conditions over the indexes; relevance is the weighted sum of the query,
branch and changed-file search signals (each ranked by the search engine, so one ranking whichever
index holds a memory), ``paths`` globs and tags; the prior is importance ×
recency, from the one set of importance and recency weights (search/scoring.py, `prior`). See
`session.build_context` for the formula.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable

from git_memex.agents.globs import glob_matches
from git_memex.agents.workspace import GENERIC_WORDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from git_memex.index.stores import Stores

MAX_WARNINGS = 3
"""A nudge is a signal only while it is rare: at most this many warnings per block."""
SEARCH_LIMIT = 20
"""Hits taken per relevance signal from the search engine (its lexical lane). At 10k, in process:
~9 ms a signal at 20, ~21 ms at 60 (the pool grows with the limit); the whole `context --hook
claude` process ~103 ms (docs/agents.md, "Session context", with the spread and the command)."""
# Candidate pool sizes: the newest memories, high-importance ones, ones with paths globs.
POOL_RECENT = 300
POOL_HIGH = 200
POOL_PATHS = 500

# Relevance weights of the signals (a memory's relevance is their sum).
W_QUERY = 1.0
W_BRANCH = 0.6
W_FILES = 0.4
W_GLOB = 1.0
W_TAG = 0.3
RELEVANCE_GAIN = 4.0
"""score = prior × (1 + RELEVANCE_GAIN × relevance): a real match outweighs age and importance."""

# Warning trigger (b): a tag hit plus content similarity.
WARNING_JACCARD = 0.2
"""textproc.jaccard(topic, body) at or above this counts as similar."""
WARNING_TOP_HITS = 5
"""...or the memory is among the topic search's top WARNING_TOP_HITS hits."""
WARNING_MIN_TERMS = 2
"""Distinct topic terms that must occur in the body itself, whichever test passes (a topic of two
or more distinct terms)."""
WARNING_ONE_TERM_RANK = 0
"""A one-term topic (`--query migrations`, branch `feat/migrations`) has no two terms to share:
it counts as similar when the warning is the topic search's top hit (rank 0) and the term occurs
in the body itself, as search matches words (`migrations` finds `migration`)."""


# The candidate pools, newest first. Each rare kind has a partial index on updated_ts in
# index/schema.py (instruction, warning, high importance, with paths) whose WHERE term appears here
# verbatim: SQLite then reads only the rows of that kind, not every row of a 10k-memory index.
from git_memex.index.schema import NOT_EXPIRED  # noqa: E402

INSTRUCTION_POOL = ("m.role = 'instruction' AND m.instruction_state = 'approved' AND m.status = 'active'"
                    " AND " + NOT_EXPIRED)
# A memory a reviewer rejected is left out: shown unlabelled it would look more trustworthy than
# a proposed one.
NOT_REJECTED = "m.review_state IS NOT 'rejected'"
WARNING_POOL = "m.type = 'warning' AND m.status = 'active' AND " + NOT_REJECTED + " AND " + NOT_EXPIRED
KNOWLEDGE_POOL = ("m.status IN ('active', 'deprecated') AND m.type != 'warning' AND m.role != 'instruction'"
                  " AND " + NOT_REJECTED + " AND " + NOT_EXPIRED)
HIGH_POOL = KNOWLEDGE_POOL + " AND m.importance = 'high'"
PATHS_POOL = KNOWLEDGE_POOL + " AND m.paths != '[]'"


POOL_ORDER = "m.updated_ts DESC, m.id DESC"


def pool_rows(stores: Stores, cond: str, params: tuple[Any, ...] = (), *, limit: int) -> dict[str, sqlite3.Row]:
    """The newest `limit` rows matching `cond` in each index, one per id (the repo copy wins, as in search)."""
    return stores.by_id(cond, params, order_by=POOL_ORDER, limit=limit)


def drop_superseded(stores: Stores, rows: dict[str, sqlite3.Row]) -> None:
    from git_memex.search.chains import superseded_ids

    for gone in superseded_ids(stores, list(rows)):
        rows.pop(gone, None)


def normalised_hits(stores: Stores, text: str) -> tuple[dict[str, float], list[str]]:
    """The search engine's one ranking (search/engine.py, docs/search.md) for `text`, lexical
    lane only: each memory's score relative to the best one (0..1], and the ids best first.
    The same ranking as `git memex search`, whichever index holds a memory: corpus statistics
    are shared, so moving a memory between indexes does not change its relevance."""
    from git_memex.search.engine import search

    if not text.strip():
        return {}, []
    res = search(stores, text, scope="all", limit=SEARCH_LIMIT, refresh=False, semantic=False)
    ranked = [h.id for h in res.hits]
    top = res.hits[0].score if res.hits else 0.0
    if top <= 0:
        return {}, ranked
    return {h.id: h.score / top for h in res.hits if h.score > 0}, ranked


def row_tags(row: sqlite3.Row) -> list[str]:
    try:
        v = json.loads(row["tags"] or "[]")
    except ValueError:
        return []
    return [str(t).lower() for t in v if isinstance(t, (str, int, float))]


def row_paths(row: sqlite3.Row) -> list[str]:
    try:
        v = json.loads(row["paths"] or "[]")
    except ValueError:
        return []
    return [str(p) for p in v if isinstance(p, str)]


def tag_hits(tags: Iterable[str], words: set[str], text: str = "") -> list[str]:
    """Tags that name the current topic: equal to a topic word, every part of a hyphenated tag
    among the words (``auth-token``), or a CJK tag found in `text`."""
    from git_memex.core.textproc import has_cjk

    low = text.lower()
    out = []
    for t in tags:
        parts = [p for p in re.split(r"[-_/\s]+", t) if p]
        if t in words or (parts and all(p in words for p in parts)) or (has_cjk(t) and t in low):
            out.append(t)
    return out


def _topic_terms(text: str) -> set[str]:
    from git_memex.core.textproc import cjk_terms, latin_terms

    return {t for t in latin_terms(text) + cjk_terms(text) if t not in GENERIC_WORDS}


def warning_trigger(row: sqlite3.Row, *, paths: list[str], cwd_paths: list[str], words: set[str],
                    topic: str, topic_rank: dict[str, int]) -> list[str]:
    """Why a warning memory fires, or [] when it must not (docs/agents.md, warnings).

    (a) ``paths``: one of its globs matches a changed/open file, or the cwd is under a matched
        path.
    (b) ``tag+similar``: a tag names the topic (query, branch or changed-file words) AND the
        body is similar to the topic (the query, else the branch words). With two or more
        distinct topic terms: at least 2 of them occur in the body itself, and either
        textproc.jaccard(topic, body) ≥ 0.2 or the memory is among the topic search's top 5
        hits. With one term: the memory is the topic search's top hit and the term occurs in
        the body (as search matches words). A bare tag match never fires: the tag is not the
        body.
    """
    from git_memex.core.textproc import jaccard, similarity_tokens

    globs = row_paths(row)
    if globs and (glob_matches(globs, paths) or glob_matches(globs, cwd_paths)):
        return ["paths"]
    if not topic.strip() or not tag_hits(row_tags(row), words, topic):
        return []
    body = row["body"] or ""
    terms = _topic_terms(topic)
    rank = topic_rank.get(row["id"])
    if len(terms) == 1:
        return ["tag+similar"] if rank == WARNING_ONE_TERM_RANK and _in_body(next(iter(terms)), body) else []
    if len(terms & similarity_tokens(body)) < WARNING_MIN_TERMS:
        return []
    if jaccard(topic, body) >= WARNING_JACCARD or (rank is not None and rank < WARNING_TOP_HITS):
        return ["tag+similar"]
    return []


def _in_body(term: str, body: str) -> bool:
    """Whether `term` occurs in `body`: literally (a CJK term as its characters), or a Latin word
    with the same stem as search's tokenizer gives it (`migrations` in "an applied migration")."""
    from git_memex.core.textproc import has_cjk, similarity_tokens

    tokens = similarity_tokens(body)
    if term in tokens or (has_cjk(term) and term in body):
        return True
    if has_cjk(term):
        return False
    from git_memex.search.engine import stems

    latin = [t for t in tokens if t.isascii()][:2000]
    got = stems([term, *latin])
    return got[term] in {got[t] for t in latin}




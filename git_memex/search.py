"""Query building, ranking and chain resolution over the indexes of one context."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from git_memex.stores import Stores

# BM25 column weights: body, tags, type, cjk.
BM25_WEIGHTS = (1.0, 2.0, 0.5, 1.0)
HIDDEN_STATUSES = ("retracted", "archived", "superseded")
REVIEW_BOOST = {"published": 1.2, "approved": 1.2, "proposed": 1.05, "draft": 1.0, "rejected": 0.8}
IMPORTANCE_BOOST = {"high": 1.1, "normal": 1.0, "low": 0.92}
RECENCY_WEIGHT = 0.1
RECENCY_DAYS = 30.0
SNIPPET_CHARS = 240


@dataclass
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
    explain: dict[str, Any] = field(default_factory=dict)

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
        }
        if explain:
            d["explain"] = self.explain
        return d


@dataclass
class SearchResult:
    query: str
    fts: str | None
    hits: list[Hit]
    elapsed_ms: float = 0.0


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


def superseded_ids(stores: Stores, ids: list[str]) -> set[str]:
    """Ids among `ids` that a newer memory replaces, in either index (hand-broken chains too)."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    out: set[str] = set()
    for index, where, params in stores.dbs():
        for (sid,) in index.conn.execute(
            f"SELECT m.supersedes FROM memories m WHERE m.supersedes IN ({marks})"
            f" AND m.status NOT IN ('retracted', 'archived') AND {where}",
            (*ids, *params),
        ):
            out.add(sid)
    return out


def _lane_hits(conn: sqlite3.Connection, expr: str | None, rowids: list[int]) -> set[int]:
    if not expr or not rowids:
        return set()
    marks = ",".join("?" * len(rowids))
    try:
        return {r[0] for r in conn.execute(
            f"SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN ({marks})",
            (expr, *rowids),
        )}  # fmt: skip
    except sqlite3.OperationalError:
        return set()


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
    from git_memex.textproc import Query, parse_query

    t0 = time.perf_counter()
    if refresh:
        stores.refresh()
    q = parse_query(query)
    expr = q.fts()
    result = SearchResult(query=query, fts=expr, hits=[])
    if expr is None or limit <= 0:
        result.elapsed_ms = (time.perf_counter() - t0) * 1000
        return result
    lane_exprs = {
        "bm25": Query(latin=q.latin, cjk=(), expanded=()).fts(with_expansion=False) if q.latin else None,
        "cjk": Query(latin=(), cjk=q.cjk, expanded=()).fts(with_expansion=False) if q.cjk else None,
        "synonym": Query(latin=(), cjk=(), expanded=q.expanded).fts() if q.expanded else None,
    }
    now = time.time()
    fetch = max(limit * 4, 40)
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    candidates: dict[str, Hit] = {}
    terms = list(q.latin) + list(q.cjk)
    for index, where, params in stores.dbs():
        sql = (
            f"SELECT m.*, bm25(memories_fts, {w}) AS rank, memories_fts.rowid AS frid"
            " FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid"
            f" WHERE memories_fts MATCH ? AND {where} AND {scope_filter(scope)}"
            f" AND m.status NOT IN ({','.join('?' * len(HIDDEN_STATUSES))})"
        )
        args: list[Any] = [expr, *params, *HIDDEN_STATUSES]
        if type:
            sql += " AND m.type = ?"
            args.append(type)
        sql += " ORDER BY rank LIMIT ?"
        args.append(fetch)
        rows = index.conn.execute(sql, args).fetchall()
        rowids = [r["frid"] for r in rows]
        lanes = {name: _lane_hits(index.conn, e, rowids) for name, e in lane_exprs.items()}
        for r in rows:
            if r["id"] in candidates:
                continue  # the repo copy wins over a stale outbox copy
            b = boosts(r, now)
            base = -float(r["rank"])
            score = base
            for v in b.values():
                score *= v
            hit_lanes = [name for name in ("bm25", "cjk", "synonym") if r["frid"] in lanes[name]] or ["bm25"]
            h = Hit(
                id=r["id"],
                scope=r["scope"],
                type=r["type"],
                status=r["status"],
                review_state=r["review_state"],
                snippet=_snippet(r["body"], terms),
                score=score,
                lanes=hit_lanes,
                location=r["location"],
                path=r["path"],
                tags=json.loads(r["tags"] or "[]"),
                importance=r["importance"],
                updated_at=r["updated_at"],
            )
            if explain:
                h.explain = {"bm25": round(base, 6), "boosts": {k: round(v, 4) for k, v in b.items()}}
            candidates[r["id"]] = h
    gone = superseded_ids(stores, list(candidates))
    hits = [h for h in candidates.values() if h.id not in gone]
    hits.sort(key=lambda h: (h.status == "deprecated", -h.score, h.id))
    result.hits = hits[:limit]
    if explain:
        for rank, h in enumerate(result.hits, 1):
            h.explain["rank"] = rank
            if h.status == "deprecated":
                h.explain["note"] = "deprecated memories rank after all others"
    result.elapsed_ms = (time.perf_counter() - t0) * 1000
    return result

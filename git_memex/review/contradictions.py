"""Possible contradictions: memories on the same subject that state different values.
"""

from __future__ import annotations

from typing import Any

from git_memex.core.context import Context
from git_memex.index.stores import Stores, opened

_VALUE_RE = None


def _values(text: str) -> tuple[frozenset[str], bool]:
    """Numbers/versions in a text, and whether it negates: what two takes on one subject differ in."""
    import re

    global _VALUE_RE
    if _VALUE_RE is None:
        _VALUE_RE = (re.compile(r"\d+(?:[.,:]\d+)*"),
                     re.compile(r"(?i)\b(?:not|never|no longer|don't|doesn't|isn't|avoid|instead of)\b|不|没|别|禁止|避免"))
    nums, neg = _VALUE_RE
    return frozenset(nums.findall(text)), bool(neg.search(text))


def contradictions(ctx: Context, *, stores: Stores | None = None, recent: int = 50) -> list[dict[str, Any]]:
    """Pairs of active memories in one scope that look like one subject with different content.

    Surfaced, never resolved (docs/decisions.md, contradictions): both stay active until a human decides. A pair is
    reported when the two are of one type, share most of their words (Jaccard 0.5–0.8; closer
    is a duplicate) and differ in a value (a number or version) or in negation. Only the most
    recently changed memories are checked against the rest, which keeps this cheap after a pull.
    """
    from git_memex.core.textproc import jaccard
    from git_memex.search.engine import search

    with opened(ctx, stores) as st:
        rows = st.rows("m.status = 'active'", columns="m.id, m.body, m.type, m.location, m.supersedes, m.superseded_by,"
                       " m.updated_ts", order_by="m.updated_ts DESC", limit=recent)
        rows.sort(key=lambda r: -(r["updated_ts"] or 0))
        seen: set[tuple[str, str]] = set()
        out = []
        for r in rows[:recent]:
            scope = "personal" if r["location"] == "personal" else "project"
            res = search(st, r["body"], scope=scope, type=r["type"], limit=3, refresh=False)
            for h in res.hits:
                if h.id == r["id"] or h.status != "active":
                    continue
                key = (min(h.id, r["id"]), max(h.id, r["id"]))
                if key in seen or r["supersedes"] == h.id or r["superseded_by"] == h.id:
                    continue
                seen.add(key)
                row = st.one(h.id, "m.body", scoped=False)
                if row is None:
                    continue
                other = row[0]
                sim = jaccard(r["body"], other)
                if not 0.5 <= sim < 0.8:
                    continue
                (va, na), (vb, nb) = _values(r["body"]), _values(other)
                if va != vb or na != nb:
                    out.append({"a": key[0], "b": key[1], "similarity": round(sim, 3)})
        return out



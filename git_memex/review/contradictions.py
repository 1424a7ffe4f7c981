"""Contradictions: two active memories about one subject that disagree (docs/curating.md).

The protocol's fifth principle: core never silently resolves a semantic conflict. Both memories
stay active; what disagrees is surfaced (`audit`, `sync-status`, `doctor`, and each search, list,
MCP hit and session block that shows both) with the one precedence prefers named and shown first
(`core.precedence.prefer`), and a person decides: supersede one, or mark the pair as not
contradictory (`review.compatible`). Whether two texts disagree is `review.disagreement.compare`.

Cost: the finder over a store (`find`) compares only pairs that share their rarest subject words
(a prefix filter, as `upkeep.audit.near_duplicate_pairs`), at most `MAX_CANDIDATES` for each
memory: linear in the store's size. Among the memories one answer shows (`among`: search hits, a
list page, the session block) every pair is checked, no index read; the person's marks are read
only when a pair is found.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.index.stores import Stores, opened
from git_memex.review.disagreement import (
    MAX_TOKENS,
    Difference,
    Tok,
    Verdict,
    compare,
    compare_tokens,
    subject,
    tokens,
)

JOIN_THRESHOLD = 0.3
"""The finder's prefix filter: pairs whose subject words have a Jaccard similarity below this
are never compared (what `compare` accepts is well above it)."""
MAX_CANDIDATES = 32
"""At most this many candidates are compared with each memory (those sharing the most words)."""


# ------------------------------------------------------------------ a store's pairs
@record
class Contradiction:
    a: str  # the id the precedence prefers, else the smaller id
    b: str
    differences: list[Difference]
    preferred: str | None
    why: str
    tiers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.differences[0].kind

    def to_json(self) -> dict[str, Any]:
        first = self.differences[0]
        return {
            "a": self.a, "b": self.b, "kind": first.kind, "values": [first.a, first.b],
            "differences": [{"kind": d.kind, "values": [d.a, d.b]} for d in self.differences],
            "preferred": self.preferred, "why": self.why, "tiers": self.tiers,
        }


def pair(ra: Mapping[str, Any], rb: Mapping[str, Any], verdict: Verdict) -> Contradiction:
    """The contradiction between two memories (rows or hit dicts with id, location, type, source,
    review_state), the one precedence prefers first."""
    from git_memex.core.precedence import prefer, tier

    first, why = prefer(ra, rb)
    if first is rb or (first is None and str(ra["id"]) > str(rb["id"])):
        ra, rb = rb, ra
        verdict = Verdict([Difference(d.kind, d.b, d.a) for d in verdict.differences], verdict.shared)
    return Contradiction(str(ra["id"]), str(rb["id"]), verdict.differences,
                         str(ra["id"]) if first is not None else None, why,
                         {str(ra["id"]): tier(ra), str(rb["id"]): tier(rb)})


def find(rows: Iterable[Any]) -> list[Contradiction]:
    """Every pair of the rows (active memories: id, body, location, type, source, review_state,
    supersedes, superseded_by) that `compare` says disagree. An id seen twice counts once (the
    first row wins). Candidates share their rarest subject words (a prefix filter at
    JOIN_THRESHOLD), at most MAX_CANDIDATES for each memory: linear in the number of rows."""
    import math

    items: list[tuple[Mapping[str, Any], list[Tok], frozenset[str]]] = []
    seen: set[str] = set()
    for r in rows:
        if r["id"] in seen:
            continue
        seen.add(r["id"])
        toks = tokens(r["body"] or "")
        if not toks or len(toks) > MAX_TOKENS:
            continue
        subj = subject(toks)
        if subj:
            items.append((r, toks, subj))
    df: dict[str, int] = {}
    for _r, _t, subj in items:
        for w in subj:
            df[w] = df.get(w, 0) + 1
    postings: dict[str, list[int]] = {}
    out: list[Contradiction] = []
    order = sorted(range(len(items)), key=lambda i: (len(items[i][2]), str(items[i][0]["id"])))
    for i in order:
        r, toks, subj = items[i]
        ranked = sorted(subj, key=lambda w: (df[w], w))
        prefix = ranked[: len(ranked) - math.ceil(JOIN_THRESHOLD * len(ranked) - 1e-9) + 1]
        counts: dict[int, int] = {}
        for w in prefix:
            for j in postings.get(w, ()):
                counts[j] = counts.get(j, 0) + 1
        best = sorted(counts, key=lambda j: (-counts[j], j))[:MAX_CANDIDATES]
        for j in best:
            rj, tj, sj = items[j]
            inter = len(subj & sj)
            if inter / (len(subj) + len(sj) - inter) < JOIN_THRESHOLD - 1e-12 or _linked(r, rj):
                continue
            v = compare_tokens(tj, toks)
            if v is not None:
                out.append(pair(rj, r, v))
        for w in prefix:
            postings.setdefault(w, []).append(i)
    out.sort(key=lambda c: (c.a, c.b))
    return out


def _linked(ra: Mapping[str, Any], rb: Mapping[str, Any]) -> bool:
    """One supersedes the other (the chain is the record of the change, not a disagreement)."""
    def get(r: Mapping[str, Any], k: str) -> Any:
        try:
            return r[k]
        except (KeyError, IndexError):
            return None

    return ra["id"] == rb["id"] or get(ra, "supersedes") == rb["id"] or get(rb, "supersedes") == ra["id"] \
        or get(ra, "superseded_by") == rb["id"] or get(rb, "superseded_by") == ra["id"]


ROW_COLUMNS = ("m.id, m.body, m.location, m.type, m.source, m.review_state, m.supersedes, m.superseded_by, "
               "m.content_hash, m.updated_ts")


def unresolved(ctx: Context, rows: Iterable[Any]) -> list[Contradiction]:
    """`find` over `rows`, less the pairs a person marked as not contradictory (`review.compatible`)."""
    rows = list(rows)
    found = find(rows)
    if not found:
        return []
    from git_memex.review import compatible

    by_id: dict[str, Any] = {}
    for r in rows:
        by_id.setdefault(str(r["id"]), r)
    marks = compatible.marks(ctx)
    return [_masked(ctx, c, by_id) for c in found if not compatible.covers(marks, by_id[c.a], by_id[c.b])]


def _masked(ctx: Context, c: Contradiction, by_id: Mapping[str, Mapping[str, Any]]) -> Contradiction:
    """`c` with its differing values taken from the bodies as they may be shown: secrets masked
    (a file that came in by another road may hold one; only found pairs pay for the check)."""
    from git_memex.secrets.redact import redact

    ra, rb = by_id[c.a], by_id[c.b]
    sa, sb = redact(ra["body"] or "", ctx.redact_patterns).text, redact(rb["body"] or "", ctx.redact_patterns).text
    if sa == (ra["body"] or "") and sb == (rb["body"] or ""):
        return c
    v = compare(sa, sb)
    diffs = v.differences if v is not None else [Difference(c.differences[0].kind, "(masked)", "(masked)")]
    return Contradiction(c.a, c.b, diffs, c.preferred, c.why, c.tiers)


def contradictions(ctx: Context, *, stores: Stores | None = None) -> list[dict[str, Any]]:
    """Every pair of active memories this context reads (personal, the project's, subscribed org
    and remote memories; from the index) that disagree, less the pairs a person marked as not
    contradictory: {"a", "b", "kind", "values", "differences", "preferred", "why", "tiers"}, `a`
    the one precedence prefers (docs/curating.md). Surfaced, never resolved."""
    from git_memex.index.schema import NOT_EXPIRED

    with opened(ctx, stores) as st:
        rows = st.rows("m.status = 'active' AND " + NOT_EXPIRED, columns=ROW_COLUMNS, order_by="m.id")
        return [c.to_json() for c in unresolved(ctx, rows)]


def among(ctx: Context, items: Sequence[Mapping[str, Any]]) -> list[Contradiction]:
    """The contradictions among memories shown together (search hits, a list page, the session
    block's items: mappings with id, body, location, type, source, review_state, content_hash):
    no index read, the person's marks read only when a pair is found."""
    found: list[Contradiction] = []
    prepared = []
    for it in items:
        toks = tokens(it["body"] or "")
        if toks and len(toks) <= MAX_TOKENS:
            prepared.append((it, toks, subject(toks)))
    for x in range(len(prepared)):
        ra, ta, sa = prepared[x]
        for y in range(x + 1, len(prepared)):
            rb, tb, sb = prepared[y]
            inter = len(sa & sb)
            if not inter or inter / (len(sa) + len(sb) - inter) < JOIN_THRESHOLD - 1e-12 or _linked(ra, rb):
                continue
            v = compare_tokens(ta, tb)
            if v is not None:
                found.append(pair(ra, rb, v))
    if not found:
        return []
    from git_memex.review import compatible

    marks = compatible.marks(ctx)
    by_id = {str(it["id"]): it for it in items}
    return [_masked(ctx, c, by_id) for c in found if not compatible.covers(marks, by_id[c.a], by_id[c.b])]


def sentence(c: Mapping[str, Any], *, commands: bool = True) -> str:
    """One contradiction (`Contradiction.to_json`) in one sentence: who disagrees about what,
    which one precedence prefers and why, and (with `commands`) the person's two ways out."""
    va, vb = c["values"]
    head = f'{c["a"]} and {c["b"]} disagree ({c["kind"]}: "{va}" vs "{vb}")'
    if c.get("preferred"):
        head += f"; precedence prefers {c['preferred']}: {c['why']}"
    else:
        head += f"; {c['why']}"
    if commands:
        head += (f"; a person decides: supersede one (`git memex supersede ID \"TEXT\"`), or mark them not "
                 f"contradictory (`git memex compatible {c['a']} {c['b']}`)")
    return head


def summary(pairs: Sequence[Mapping[str, Any]]) -> str:
    """`sync-status`'s and `doctor`'s one line about the contradictions found (pairs non-empty)."""
    n = len(pairs)
    first = sentence(pairs[0], commands=False)
    more = f" (and {n - 1} more pair{'s' if n > 2 else ''})" if n > 1 else ""
    return (f"{n} pair{'s' if n > 1 else ''} of memories disagree, a person decides: {first}{more}; "
            "`git memex audit` lists them with the ways out")


# ------------------------------------------------------------------ memories shown together
def shown_item(mid: str, body: str, location: str, type_: str | None, source: str | None,
               review_state: str | None, content_hash: str | None = None) -> dict[str, Any]:
    """The fields `among` and `core.precedence` read, from a search hit or an index row."""
    return {"id": mid, "body": body, "location": location, "type": type_, "source": source,
            "review_state": review_state, "content_hash": content_hash}


def annotate(ctx: Context, entries: list[dict[str, Any]], items: Sequence[Mapping[str, Any]], *,
             reorder: bool = True) -> list[Contradiction]:
    """Mark the JSON `entries` of one answer (search hits, a list page, in the order shown; each
    with its `id`) from `items` (`shown_item` of each): every entry gets `tier` (its precedence
    tier) and `contradicts` (the ids shown with it that disagree with it, [] when none); with
    `reorder`, where a pair disagrees and the one precedence prefers comes later, it is moved up to
    just before the other. Nothing is removed. Returns the pairs found."""
    from git_memex.core.precedence import tier

    by_id = {str(it["id"]): it for it in items}
    for e in entries:
        it = by_id.get(str(e["id"]))
        e["tier"] = tier(it if it is not None else e)
        e["contradicts"] = []
    found = among(ctx, items)
    if not found:
        return []
    for c in found:
        for e in entries:
            if e["id"] == c.a:
                e["contradicts"].append(c.b)
            elif e["id"] == c.b:
                e["contradicts"].append(c.a)
    if reorder:
        preferred_first(entries, found)
    return found


def preferred_first(entries: list[Any], pairs: Sequence[Contradiction], key: Any = None) -> None:
    """Reorder `entries` in place so that of each pair the one precedence prefers comes before
    the other (moved up to just before it); the rest keep their order. `key` gives an entry's id
    (default: `entry["id"]`). The preference is a strict order (tier, then review state), so this
    settles in at most one pass per pair."""
    get = key or (lambda e: e["id"])
    for _ in range(len(pairs) + 1):
        moved = False
        for c in pairs:
            if c.preferred is None:
                continue
            other = c.b if c.preferred == c.a else c.a
            pos = {get(e): i for i, e in enumerate(entries)}
            if c.preferred in pos and other in pos and pos[c.preferred] > pos[other]:
                entries.insert(pos[other], entries.pop(pos[c.preferred]))
                moved = True
        if not moved:
            return


def disagreement_json(c: Contradiction) -> dict[str, Any]:
    """One pair as an answer lists it: the ids, the one precedence prefers first."""
    d = c.to_json()
    return {"ids": [c.a, c.b], "kind": d["kind"], "values": d["values"], "preferred": c.preferred, "why": c.why}

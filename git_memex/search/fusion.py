"""How the lexical and the dense lane meet: a weighted sum of normalised scores.

fused = ALPHA x lexical / best lexical + (1 - ALPHA) x dense', where dense' is the dense score
min-max normalised over the dense lane's own top candidates (0 below them). Measured on the
bench sets (bench/README.md, "Semantic lane"): a weighted sum beat reciprocal rank fusion,
which lowered openmemex-eval's MRR (0.924 -> 0.913) because the dense lane is weak on
identifier-heavy queries. With the lexical ranking of docs/search.md (whose score is words held
plus a bounded lexical part), ALPHA was chosen again on LoCoMo's half A: MRR 0.522 at 0.6,
0.528 at 0.7, 0.536 at 0.8 (R@5 0.668 / 0.679 / 0.670); openmemex-eval was the same at 0.7 and
0.8 (1.000 / 0.924). When the lexical top hit holds every query word, `tiered` keeps the
lexical order (words held, then the lexical score) and the dense lane only breaks exact ties.
Figures and commands: bench/README.md, "Semantic lane" and "Session 5".

`fuse` is where the lanes meet: the lexical lane's scored memories (search/engine.py) and, when
it ran, the dense lane's verdict (`DenseLane`, search/semantic.py) become one list of `Ranked`
hits in their final order. Without the dense lane the lexical order stands.
"""

from __future__ import annotations

from git_memex.core.record import field, record
from git_memex.search.scoring import Ranked, in_order  # noqa: F401  (Ranked: the record fuse returns)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

ALPHA = 0.8
# ... and when the lexical lane's top hit holds every query word, `tiered` with this weight: the
# lexical order stands and the dense score only breaks exact ties. The dense lane is weak on
# identifier-heavy queries, which the lexical lane then answers: on the synthetic 10k set every
# weight that let it reorder memories holding every word lowered MRR (bench.semantic, repository
# harness: 0.999 -> 0.819, exact ties only -> 0.831 = lexical alone; bench/README.md, session 5).
ALPHA_ALL_WORDS = 1 - 1e-6
# A memory only the dense lane found is shown when its fused score is at least this share of
# the best hit's: otherwise every query would list the whole (small) store.
DENSE_ONLY_FLOOR = 0.25


def _scaled(d: float | None, lo: float, hi: float) -> float:
    """A dense score scaled between the dense lane's last kept candidate (`lo`, 0) and its best
    (`hi`, 1); 0 below and for a memory it did not score."""
    if d is None:
        return 0.0
    if hi > lo:
        return max(0.0, (d - lo) / (hi - lo))
    return 1.0 if d >= hi else 0.0


def combine(lexical: dict[str, float], dense: dict[str, float], lo: float, hi: float, *,
            alpha: float = ALPHA, dense_weight: dict[str, float] | None = None) -> dict[str, float]:
    """Fused score per memory id found by either lane.

    `lexical`: positive lexical scores; `dense`: dense scores, normalised between `lo` (the
    dense lane's last kept candidate) and `hi` (its best); `dense_weight`: a factor on the dense
    part of memories without a lexical score (their boosts, which the lexical score already holds).
    """
    top = max(lexical.values(), default=0.0)
    out: dict[str, float] = {}
    for mid in set(lexical) | set(dense):
        lx = lexical.get(mid, 0.0) / top if top > 0 else 0.0
        dn = _scaled(dense.get(mid), lo, hi)
        w = (dense_weight or {}).get(mid, 1.0)
        out[mid] = alpha * lx + (1.0 - alpha) * dn * w
    return out


def tiered(lexical: dict[str, float], dense: dict[str, float], lo: float, hi: float, *,
           alpha: float, dense_weight: dict[str, float] | None = None) -> dict[str, float]:
    """Fused score that keeps the lexical lane's first key, words held: a lexical score is
    `held + part` (part in [0, 1), search/scoring.py `final`); the dense lane only mixes into
    `part`, so it reorders memories holding as many words and never lifts one above a memory
    holding more. A memory only the dense lane found holds none."""
    out: dict[str, float] = {}
    for mid in set(lexical) | set(dense):
        s = lexical.get(mid, 0.0)
        held = float(int(s))
        part = s - held
        dn = _scaled(dense.get(mid), lo, hi)
        if mid not in lexical:
            dn *= (dense_weight or {}).get(mid, 1.0)
        out[mid] = held + 0.999 * (alpha * part + (1.0 - alpha) * min(dn, 1.0))
    return out


@record
class DenseLane:
    """What the dense lane hands to `fuse` for one query (search/semantic.py, `join`)."""

    status: dict[str, Any]  # what --explain (and the JSON's `semantic`) says about the lane
    scores: dict[str, float] = field(default_factory=dict)  # memory id -> raw dense score
    top: list[str] = field(default_factory=list)  # the dense lane's own best, best first
    found: dict[str, Any] = field(default_factory=dict)  # id -> row of its top memories the lexical lane missed


def alpha_for(lexical: Sequence[Any], words: int) -> float:
    """The lexical weight: ALPHA_ALL_WORDS (`tiered`) when the lexical lane's best hit holds every
    one of the query's `words`, else ALPHA (`combine`)."""
    top = max((s for s in lexical if s.score > 0), key=lambda s: s.score, default=None)
    return ALPHA_ALL_WORDS if top is not None and top.held == words else ALPHA


def fuse(lexical: Sequence[Any], lane: DenseLane | None = None, *, words: int = 0, now: float = 0.0,
         explain: bool = False) -> list[Ranked]:
    """The hits in their final order: deprecated last, then by score, then by id.

    `lexical`: the lexical lane's scored memories (engine.Scored: `score`, `held`, `cand.row`,
    `cand.lanes`), one per id; `lane`: the dense lane's verdict, or None when it did not run.
    With it, each score is the two lanes' weighted sum (`combine`, or `tiered` when the lexical
    best hit holds all `words`), the memories only the dense lane found join (their dense part
    weighted by their boosts at `now`, which a lexical score already holds), and those far below
    the best hit (DENSE_ONLY_FLOOR) are left out."""
    ranked = {s.cand.row["id"]: Ranked(s.score, s.cand.row, set(s.cand.lanes), s) for s in lexical}
    if lane is not None and lane.scores:
        _fuse_dense(ranked, lane, words, now, explain)
    return in_order(ranked.values())


def _fuse_dense(ranked: dict[str, Ranked], lane: DenseLane, words: int, now: float, explain: bool) -> None:
    from git_memex.search.scoring import boosts

    for mid, r in lane.found.items():
        if mid not in ranked:
            ranked[mid] = Ranked(0.0, r, set(), None, {"bm25": 0.0, "coverage": 0.0, "phrases": 0.0,
                                                       "boosts": {k: round(v, 4) for k, v in boosts(r, now).items()}})
    lexical = {mid: x.score for mid, x in ranked.items() if x.score > 0}
    lo = min((lane.scores[m] for m in lane.top), default=0.0)
    hi = max((lane.scores[m] for m in lane.top), default=0.0)
    weights = {}
    for mid, x in ranked.items():
        if not lexical.get(mid):
            b = 1.0
            for v in boosts(x.row, now).values():
                b *= v
            weights[mid] = b
    alpha = alpha_for([x.scored for x in ranked.values() if x.scored is not None], words)
    mix = tiered if alpha == ALPHA_ALL_WORDS else combine
    fused = mix(lexical, lane.scores, lo, hi, alpha=alpha, dense_weight=weights)
    best = max(fused.values(), default=0.0)
    for mid, x in list(ranked.items()):
        f = fused.get(mid, 0.0)
        if mid not in lexical and f < DENSE_ONLY_FLOOR * best:
            del ranked[mid]  # found by meaning alone, and far below the best hit: noise
            continue
        if mid in lane.top:
            x.lanes.add("semantic")
        if mid in lane.scores:
            x.dense = lane.scores[mid]  # the raw asymmetric score (the prompt hook's floor)
        if explain:
            e = x.extra if x.extra is not None else {}
            e["semantic"] = {"dense": round(lane.scores[mid], 4) if mid in lane.scores else None,
                             "lexical": round(x.score, 6), "fused": round(f, 6)}
            x.extra = e
        x.score = f

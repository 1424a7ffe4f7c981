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
"""

from __future__ import annotations

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

"""The one set of importance and recency weights (search/scoring.py): search's boosts and the
session block's prior read the same definitions and agree on what ranks first."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

import git_memex
from git_memex.search import scoring

NOW = 2_000_000_000.0
DAY = 86400.0


def _row(importance: str, age_days: float, status: str = "active") -> dict[str, object]:
    return {"importance": importance, "updated_ts": NOW - age_days * DAY, "status": status,
            "location": "repo", "review_state": "published"}


def _weight_tables() -> list[str]:
    """Each module-level name in the package bound to a dict literal keyed by importance levels,
    or to a recency time constant."""
    found = []
    for path in sorted(Path(git_memex.__file__).parent.rglob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            if not isinstance(node, ast.Assign):
                continue
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            keys = ({k.value for k in node.value.keys if isinstance(k, ast.Constant)}
                    if isinstance(node.value, ast.Dict) else set())
            if {"high", "low"} <= keys or any("RECENCY" in n for n in names):
                found += [f"{path.name}:{n}" for n in names]
    return found


def test_importance_and_recency_are_defined_once() -> None:
    assert _weight_tables() == ["scoring.py:IMPORTANCE_BOOST", "scoring.py:RECENCY_WEIGHT",
                                "scoring.py:RECENCY_DAYS", "scoring.py:PRIOR_IMPORTANCE",
                                "scoring.py:PRIOR_RECENCY_FLOOR"]


def test_the_session_prior_and_the_search_boosts_rank_alike() -> None:
    from git_memex.agents import session

    assert session.scoring is scoring  # the session block reads the prior from here
    rows = [_row(imp, age) for imp in ("low", "normal", "high") for age in (0, 3, 30, 90)]

    def boost(r: dict[str, object]) -> float:
        b = scoring.boosts(r, NOW)
        return b["importance"] * b["recency"]

    for a in rows:
        for b in rows:
            if a["importance"] == b["importance"] or a["updated_ts"] == b["updated_ts"]:
                # one factor differs: both users order the pair the same way
                assert (scoring.prior(a, NOW) > scoring.prior(b, NOW)) == (boost(a) > boost(b))
    fresh, month = _row("normal", 0), _row("normal", scoring.RECENCY_DAYS)
    # the same decay: a memory RECENCY_DAYS old keeps 1/e of its recency weight in both
    search_share = (scoring.boosts(month, NOW)["recency"] - 1) / (scoring.boosts(fresh, NOW)["recency"] - 1)
    floor = scoring.PRIOR_RECENCY_FLOOR
    prior_share = (scoring.prior(month, NOW) - floor) / (scoring.prior(fresh, NOW) - floor)
    assert search_share == pytest.approx(prior_share) == pytest.approx(math.exp(-1))
    assert scoring.prior(_row("normal", 0, "deprecated"), NOW) == scoring.DEPRECATED_PRIOR

"""The contradiction finder analyses each memory once per run (`disagreement.analysed_once`), and
that changes no verdict: the same pairs, values and order with the per-text memo as without it."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.contradiction_store import rows
from git_memex.review import contradictions, disagreement

DATA = Path(__file__).resolve().parents[1] / "data" / "contradictions"


def _pairs(found: list[contradictions.Contradiction]) -> list[dict[str, Any]]:
    return [c.to_json() for c in found]


def _calls(fn_name: str, run: Any) -> int:
    """How many times a function of disagreement.py named `fn_name` ran (its code, whatever wraps it)."""
    n = 0
    target = disagreement.__file__

    def prof(frame: Any, event: str, _arg: Any) -> None:
        nonlocal n
        if event == "call" and frame.f_code.co_name == fn_name and frame.f_code.co_filename == target:
            n += 1

    sys.setprofile(prof)
    try:
        run()
    finally:
        sys.setprofile(None)
    return n


def test_each_memory_is_analysed_once_per_run() -> None:
    """`says` (what a text says) and `_owners` run at most twice a memory (its whole text and its
    text less asides), not once for every pair it is in: each memory here has 16 close ones."""
    got = rows(120, seed=3)
    found: list[contradictions.Contradiction] = []

    def run() -> None:
        found.extend(contradictions.find(got))

    says = _calls("says", run)
    assert found, "the generated store holds contradictions"
    assert says <= 2 * len(got), says
    owners = _calls("_owners", lambda: contradictions.find(got))
    assert owners <= 2 * len(got), owners


def test_the_memo_changes_no_verdict_on_generated_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The finder's pairs over generated stores (English and Chinese, numbers, negations, choices,
    owners, many on one subject) are the same, in the same order, with the memo and without it."""
    for seed in (1, 2):
        got = rows(200, seed=seed)
        with_memo = _pairs(contradictions.find(got))
        with monkeypatch.context() as m:
            m.setattr(disagreement, "analysed_once", contextlib.nullcontext)
            without = _pairs(contradictions.find(got))
        assert with_memo == without
        assert len(with_memo) > 50
        toks = [disagreement.tokens(r["body"]) for r in got]
        with disagreement.analysed_once():  # every pair of 40 memories, inside one memo and alone
            inside = [disagreement.compare_tokens(toks[i], toks[j]) for i in range(40) for j in range(i + 1, 40)]
        outside = [disagreement.compare(got[i]["body"], got[j]["body"]) for i in range(40) for j in range(i + 1, 40)]
        assert _shown(inside) == _shown(outside)
        assert any(v is not None for v in inside)


def _shown(vs: list[disagreement.Verdict | None]) -> list[Any]:
    return [None if v is None else [(d.kind, d.a, d.b) for d in v.differences] for v in vs]


def test_the_memo_changes_no_verdict_on_the_labelled_sets() -> None:
    """Every labelled pair, compared inside one memo holding every text of its set, gets the
    verdict it gets alone."""
    for path in sorted(DATA.glob("*.json")):
        pairs = json.loads(path.read_text("utf-8"))["pairs"]
        toks = {t: disagreement.tokens(t) for p in pairs for t in (p["a"], p["b"])}
        with disagreement.analysed_once():
            inside = [disagreement.compare_tokens(toks[p["a"]], toks[p["b"]]) for p in pairs]
            again = [disagreement.compare_tokens(toks[p["b"]], toks[p["a"]]) for p in pairs]
        alone = [disagreement.compare(p["a"], p["b"]) for p in pairs]
        alone_rev = [disagreement.compare(p["b"], p["a"]) for p in pairs]
        assert _shown(inside) == _shown(alone), path.name
        assert _shown(again) == _shown(alone_rev), path.name

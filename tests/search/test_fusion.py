"""How the two lanes meet (search/fusion.py): the tiered fusion never reorders words held."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memex.search import fusion

scores = st.dictionaries(st.sampled_from([f"m{i}" for i in range(12)]),
                         st.tuples(st.integers(1, 5), st.floats(0.0, 0.99)), min_size=1)
dense = st.dictionaries(st.sampled_from([f"m{i}" for i in range(16)]), st.floats(0.0, 1.0))


@settings(deadline=None)  # a pure function: a loaded CI box's stall is not a failure
@given(scores, dense)
def test_tiered_keeps_the_words_held_order(lex: dict[str, tuple[int, float]], dn: dict[str, float]) -> None:
    lexical = {m: held + part for m, (held, part) in lex.items()}
    fused = fusion.tiered(lexical, dn, 0.0, 1.0, alpha=fusion.ALPHA_ALL_WORDS)
    for a in lexical:
        for b in lexical:
            if lex[a][0] > lex[b][0]:
                assert fused[a] > fused[b]
    for m in set(dn) - set(lexical):  # found by meaning alone: below every memory holding a word
        assert fused[m] < min(fused[x] for x in lexical)


def test_tiered_lets_the_dense_lane_break_a_tie_only() -> None:
    lexical = {"a": 3.5, "b": 3.5, "c": 3.6}
    fused = fusion.tiered(lexical, {"a": 0.1, "b": 0.9, "c": 0.0}, 0.0, 1.0, alpha=fusion.ALPHA_ALL_WORDS)
    assert sorted(fused, key=fused.__getitem__, reverse=True) == ["c", "b", "a"]


def test_the_weighted_sum_lets_meaning_outrank_a_word() -> None:
    """Without the tier (the lexical top hit lacks a word), a strong dense score can lift a memory."""
    fused = fusion.combine({"a": 2.2, "b": 1.9}, {"a": 0.0, "b": 1.0}, 0.0, 1.0, alpha=fusion.ALPHA)
    assert fused["b"] > fused["a"]


def test_the_query_is_embedded_in_a_thread_and_its_failure_reaches_the_search() -> None:
    import threading

    from git_memex.search.semantic import Early

    class Provider:
        name, dim = "toy", 8

        def __init__(self, fail: bool) -> None:
            self.fail = fail
            self.thread: str | None = None

        def query(self, text: str) -> list[float]:
            self.thread = threading.current_thread().name
            if self.fail:
                raise RuntimeError("model gone")
            return [float(len(text))] * 8

    ok = Provider(False)
    assert Early(ok, "four").result() == [4.0] * 8  # type: ignore[arg-type]
    assert ok.thread == "memex-embed-query"
    bad = Early(Provider(True), "x")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="model gone"):
        bad.result()

"""Hostile input at scale: thousands of generated cases for the parser, the merge engine, the query builder.

No exception may escape as a traceback, nothing may hang; broken input gets a FrontmatterError
(one sentence) and the merge engine always returns a result.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memex.core import frontmatter
from git_memex.core.frontmatter import FrontmatterError
from git_memex.git.merge import merge_texts
from git_memex.search.query import parse_query

FUZZ = settings(max_examples=2000, deadline=2000, suppress_health_check=[HealthCheck.too_slow])

yamlish = st.lists(st.sampled_from(list("abc:-[]{}&*!|>'\"#%@`,? \n\t\r\x00\ufeff0123456789中文") + ["---", "\n---\n"]),
                   max_size=120).map("".join)


@FUZZ
@given(st.binary(max_size=600))
def test_parser_never_raises_anything_but_a_sentence_on_bytes(raw: bytes):
    try:
        fm, body = frontmatter.parse_bytes(raw)
    except FrontmatterError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(fm, dict) and isinstance(body, str)


@FUZZ
@given(yamlish, yamlish)
def test_parser_on_yaml_like_text(head: str, body: str):
    text = "---\n" + head + "\n---\n\n" + body
    try:
        fm, _ = frontmatter.parse(text)
    except FrontmatterError as exc:
        assert "\n" not in str(exc)
        return
    # whatever parsed can be written back and read again to the same values
    assert frontmatter.parse(frontmatter.serialize(fm, "x"))[0] == fm


@FUZZ
@given(st.one_of(st.none(), yamlish), yamlish, yamlish)
def test_merge_engine_always_answers(base, ours, theirs):
    res = merge_texts(base, "---\n" + ours, "---\n" + theirs)
    assert isinstance(res.text, str)
    assert res.clean in (True, False)


_DB = sqlite3.connect(":memory:")
_DB.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(body, tags, type, cjk, tokenize='porter unicode61 remove_diacritics 2')")
_DB.execute("INSERT INTO memories_fts VALUES ('alpha beta', 'x', 'fact', '中 文 中文')")


@FUZZ
@given(st.text(max_size=200))
def test_any_query_text_is_a_valid_fts_expression(q: str):
    expr = parse_query(q).fts()
    if expr is not None:
        _DB.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (expr,)).fetchall()


def test_huge_scalar_and_deep_nesting_are_refused_quickly():
    import time

    t = time.perf_counter()
    for text in ("---\na: " + "[" * 5000 + "]" * 5000 + "\n---\n\nb\n",
                 "---\na: '" + "x" * 2_000_000 + "'\n---\n\nb\n"):
        try:
            frontmatter.parse(text)
        except FrontmatterError:
            pass
        else:
            raise AssertionError("accepted")
    assert time.perf_counter() - t < 60  # a hang guard only (the refusal comes before any parsing)


# ------------------------------------------------------------------ pathological lengths
# Each case is a long word, a long line or a run of one character, at 64 KiB (the largest body a
# write accepts), timed beside the same case at a quarter of that length (conftest.grows_linearly): a
# linear cost grows ~4 times, the quadratic one that used to be paid (the 30k-letter word: ~11 s)
# 16 times. No budget in seconds: a loaded machine slows both runs alike.
PATHOLOGICAL_UNITS = ["a1", "a", "发布", "中", "a-", "a/", "/", "_", "a_", "a ", "https://a", "://",
                      "password", "api_key", "cookie: ", "login ", "mysql ", "secret:'a", "Ab3+",
                      # the issue-20 detectors: curl/sshpass flags, labels in other languages,
                      # next-line values, PEM and PuTTY headers, invisible and full-width characters
                      "curl -u a:", "curl ", "sshpass -p", "sshpass ", "パスワード", "passwort x", "Пароль ",
                      "mot de passe ", "password:\n", "----BEGIN ", "-----begin private key-----",
                      "Private-Lines: 1\n", "Private-Lines: 1\nAAAA", "a\u200b", "ａ", "password:\u00a0a\u00a0"]
HANG_S = 120.0  # a hang guard only


def _long(unit: str, n: int | None = None) -> str:
    """`unit` repeated to n characters, or to the most that fits in a 64 KiB body."""
    if n is None:
        n = frontmatter.MAX_BODY_BYTES // (len(unit.encode("utf-8")) // len(unit))
    return (unit * n)[:n]


@pytest.mark.parametrize("unit", PATHOLOGICAL_UNITS)
def test_text_processing_is_linear_on_long_runs(unit: str):
    from git_memex.agents import capture
    from git_memex.core import textproc
    from git_memex.search import synonyms
    from git_memex.secrets import redact

    from conftest import grows_linearly

    n = len(_long(unit))
    for name, fn in (("parse_query", parse_query), ("similarity", textproc.similarity_tokens),
                     ("cjk_entries", synonyms.cjk_entries_in), ("redact", redact.redact),
                     ("capture", capture.scan), ("frontmatter", _roundtrip)):
        ok, small, big = grows_linearly(lambda k, fn=fn: fn(_long(unit, k)), n)
        assert ok, f"{name}: {big:.2f} s on {n} × {unit!r}, {small:.2f} s on a quarter"


def _roundtrip(body: str) -> None:
    from git_memex.core import model

    m = model.create(body)
    frontmatter.parse(frontmatter.serialize(m.fm, m.body))


def test_add_and_search_of_a_long_word_finish_in_seconds(repo):
    from conftest import run_cli

    word = _long("a1", 60_000)
    import time

    t = time.perf_counter()
    r = run_cli("add", "-", input=word)
    assert r.code == 0, r.err
    r = run_cli("search", word[:1900])
    assert r.code == 0, r.err
    assert time.perf_counter() - t < HANG_S  # linearity: test_text_processing_is_linear_on_long_runs

"""Tests for git_memex.core.textproc and git_memex.search.synonyms, against a real SQLite FTS5 table.

No mocks: every FTS5 expression built here is run as a MATCH on a table of the shape the index
uses, so a syntax error or a non-matching encoding fails the test.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memex.core.textproc import (
    CJK_RE,
    NEAR_DUP_THRESHOLD,
    TURN_ECHO_THRESHOLD,
    cjk_index_text,
    cjk_terms,
    content_hash,
    estimate_tokens,
    has_cjk,
    jaccard,
    latin_terms,
    latin_text,
    normalize_ws,
    similarity_tokens,
)
from git_memex.search import synonyms
from git_memex.search.query import Query, parse_query

from conftest import PEER_MISSING, peer_cases, vectors

SCHEMA = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5(body, tags, type, cjk, "
    "tokenize='porter unicode61 remove_diacritics 2')"
)


# --------------------------------------------------------------------------- helpers


def make_db(docs: Iterable[str | tuple[str, list[str]]] = ()) -> sqlite3.Connection:
    """An in-memory FTS5 table filled the way the index fills it; rowids follow `docs` (1-based)."""
    conn = sqlite3.connect(":memory:")
    conn.execute(SCHEMA)
    for doc in docs:
        body, tags = (doc, []) if isinstance(doc, str) else doc
        add(conn, body, tags)
    return conn


def add(
    conn: sqlite3.Connection, body: str, tags: list[str] | None = None, type_: str = ""
) -> None:
    tag_text = " ".join(tags or [])
    conn.execute(
        "INSERT INTO memories_fts(body, tags, type, cjk) VALUES (?, ?, ?, ?)",
        (latin_text(body), tag_text, type_, cjk_index_text(body + " " + tag_text)),
    )


def match(conn: sqlite3.Connection, expr: str | None) -> list[int]:
    """Rowids matching `expr`, best BM25 first; [] for None."""
    if expr is None:
        return []
    rows = conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank, rowid", (expr,)
    ).fetchall()
    return [r[0] for r in rows]


def search(conn: sqlite3.Connection, q: str, *, with_expansion: bool = True) -> list[int]:
    return match(conn, parse_query(q).fts(with_expansion=with_expansion))


# ------------------------------------------------ protocol vectors (ours, then the reference tool's)


def test_turn_echo_threshold_matches_the_reference_tool() -> None:
    peer = peer_cases()
    if peer is None:
        pytest.skip(PEER_MISSING)
    assert peer["_meta"]["constants"]["TURN_ECHO_THRESHOLD"] == TURN_ECHO_THRESHOLD
    assert peer["_meta"]["constants"]["NEAR_DUP_THRESHOLD"] == NEAR_DUP_THRESHOLD


@pytest.mark.parametrize("case", vectors("cjk", ids=lambda c: c["text"]))
def test_protocol_cjk(case: dict) -> None:
    if case.get("index_text") is not None:
        assert cjk_index_text(case["text"]) == case["index_text"]
    if case.get("query_expr") is not None:
        expr = " OR ".join('"' + t + '"' for t in cjk_terms(case["query"]))
        assert expr == case["query_expr"]
    if case.get("has_cjk") is not None:
        assert has_cjk(case["text"]) is case["has_cjk"]


@pytest.mark.parametrize("case", vectors("query", ids=lambda c: c["input"]))
def test_protocol_query(case: dict) -> None:
    conn = make_db(["placeholder"])
    q = parse_query(case["input"])
    plain = parse_query(case["input"], expand=False)
    assert list(q.latin) + list(q.cjk) == case["expect_tokens"]
    assert plain.latin == q.latin and plain.cjk == q.cjk and plain.expanded == ()
    # The standalone helpers agree with the query when one side is empty.
    if not q.cjk:
        assert latin_terms(case["input"]) == list(q.latin)
    if not q.latin:
        assert cjk_terms(case["input"]) == list(q.cjk)
    exprs = [q.fts(), q.fts(with_expansion=False), plain.fts()]
    if "expect_fts" in case:
        assert q.fts(with_expansion=False) == case["expect_fts"]
        assert plain.fts() == case["expect_fts"]
    for expr in exprs:
        assert expr is not None
        for needle in case.get("must_include", []):
            assert needle in expr
        for needle in case.get("must_not_include", []):
            assert needle not in expr
        match(conn, expr)  # runs without an FTS5 syntax error


def _dedup_ids(case: dict) -> str:
    return f"{case['a'][:20]}|{case['b'][:20]}"


@pytest.mark.parametrize("case", vectors("dedup", ids=_dedup_ids))
def test_protocol_dedup(case: dict) -> None:
    sim = jaccard(case["a"], case["b"])
    assert sim == pytest.approx(jaccard(case["b"], case["a"]))
    if "similarity_eq" in case:
        assert sim == pytest.approx(case["similarity_eq"])
    if "similarity_lt" in case:
        assert sim < case["similarity_lt"]
    if "similarity_gte" in case:
        assert sim >= case["similarity_gte"]
    assert (sim >= NEAR_DUP_THRESHOLD) is case["near_duplicate"]
    if "turn_echo" in case:
        assert (sim >= TURN_ECHO_THRESHOLD) is case["turn_echo"]


def test_dedup_six_of_seven() -> None:
    a = "the meeting notes from tuesday about deployment"
    assert jaccard(a, a.removeprefix("the ")) == pytest.approx(6 / 7)


@pytest.mark.parametrize("case", vectors("extras", "content_hash"))
def test_protocol_content_hash(case: dict) -> None:
    if "sha256" in case:
        assert content_hash(case["input"]) == case["sha256"]
    else:
        assert (content_hash(case["a"]) == content_hash(case["b"])) is case["equal"]
        for s in (case["a"], case["b"]):
            h = content_hash(s)
            assert len(h) == 64 and h == h.lower() and int(h, 16) >= 0


# --------------------------------------------------------------------------- CJK segmentation


def test_cjk_re_covers_scripts_and_skips_punctuation() -> None:
    for ch in "中㐀豈𠀀ひカｶ한ㄱᄀ々〇":
        assert CJK_RE.fullmatch(ch), ch
    for ch in "a1é。，・゛ー！":
        if ch == "ー":  # the prolonged sound mark is a letter (Lm) and part of katakana words
            assert CJK_RE.fullmatch(ch)
        else:
            assert not CJK_RE.fullmatch(ch), ch


def test_latin_text_splits_glued_words() -> None:
    assert latin_text("TL确认") == "TL 确认 "
    assert latin_text("plain text") == "plain text"
    conn = make_db(["TL确认了方案"])
    assert search(conn, "tl") == [1]


def test_cjk_index_text_runs_are_separate() -> None:
    assert cjk_index_text("部署，上线 ok 猫") == "部 署 部署 上 线 上线 猫"
    assert cjk_index_text("") == ""


def test_cjk_terms_drops_question_words_but_never_empties() -> None:
    assert cjk_terms("为什么部署失败") == ["么部", "部署", "署失", "失败"]
    assert cjk_terms("为什么") == ["为什", "什么"]
    assert cjk_terms("如何 是否 回滚") == ["回滚"]
    assert cjk_terms("测试测试") == ["测试", "试测"]


def test_latin_terms_rules() -> None:
    assert latin_terms("How do I roll back the Deploy? deploy!") == ["roll", "back", "deploy"]
    assert latin_terms("the a") == ["the", "a"]
    assert latin_terms("snake_case and kebab-case") == ["snake", "case", "kebab"]
    assert latin_terms("Café ÉTÉ") == ["café", "été"]
    assert latin_terms("中文") == []
    assert latin_terms("") == []


# --------------------------------------------------------------------------- real FTS5 search


def test_two_char_chinese_word_inside_sentence() -> None:
    conn = make_db(
        [
            "我们决定在周四发布新版本，发布前要跑完回归测试",
            "周四下午开会讨论需求",
            "Release notes live in the docs folder",
        ]
    )
    assert search(conn, "发布", with_expansion=False) == [1]
    assert set(search(conn, "周四")) == {1, 2}
    assert search(conn, "回归测试", with_expansion=False) == [1]


def test_single_character_query() -> None:
    conn = make_db(["我家的猫很胖", "狗在院子里"])
    assert search(conn, "猫") == [1]


def test_mixed_git_query_ranks_the_right_memory_first() -> None:
    conn = make_db(
        [
            "git status 时中文文件名显示成八进制转义，设置 core.quotepath=false 后中文显示正常，不再乱码",
            "git rebase 之前先 fetch",
            "终端里中文输入法切换很慢",
            "Use UTF-8 everywhere in the web app",
        ]
    )
    hits = search(conn, "git 中文显示乱码")
    assert hits[0] == 1
    assert set(hits) == {1, 2, 3}


def test_japanese_and_korean() -> None:
    conn = make_db(
        [
            "本番環境へのデプロイ手順を確認してください",
            "テスト環境のデータベースを初期化する",
            "배포 전에 반드시 테스트를 실행한다",
            "데이터베이스 백업은 매일 새벽에 한다",
        ]
    )
    assert search(conn, "デプロイ手順", with_expansion=False) == [1]
    assert search(conn, "手順") == [1]
    assert search(conn, "テスト", with_expansion=False) == [2]
    assert search(conn, "테스트", with_expansion=False) == [3]
    assert search(conn, "백업") == [4]


def test_latin_prefix_and_stemming() -> None:
    conn = make_db(["We deploy to staging nightly", "Unrelated note about lunch", "deployed it"])
    assert set(search(conn, "deploy", with_expansion=False)) == {1, 3}
    assert set(search(conn, "deploying", with_expansion=False)) == {1, 3}
    assert set(search(conn, "DEPLOY")) == {1, 3}
    assert search(conn, "stag", with_expansion=False) == [1]


def test_tags_and_type_columns_are_searched() -> None:
    conn = make_db([("body text", ["postgres"]), ("other", ["redis"])])
    conn.execute(
        "INSERT INTO memories_fts(body, tags, type, cjk) VALUES ('third', '', 'decision', '')"
    )
    assert search(conn, "postgres") == [1]
    assert search(conn, "decision") == [3]


def test_cjk_terms_only_search_the_cjk_column() -> None:
    # The body column holds whole runs as single tokens; the expression must not lean on them.
    conn = make_db(["数据库"])
    assert match(conn, parse_query("数据库", expand=False).fts()) == [1]
    assert match(conn, '"数据库"') == [1]  # whole-run token in body
    assert match(conn, '"数据"') == [1]  # bigram in cjk
    assert match(conn, '{body}:("数据")') == []  # unicode61 alone cannot find the word


def test_stopword_only_latin_side_is_dropped_when_cjk_has_content() -> None:
    q = parse_query("how to 部署", expand=False)
    assert q.latin == () and q.cjk == ("部署",)
    q = parse_query("git 怎么", expand=False)
    assert q.latin == ("git",) and q.cjk == ()


def test_max_terms_is_shared_between_sides() -> None:
    words = " ".join(f"word{i}" for i in range(40))
    q = parse_query(words, expand=False)
    assert len(q.latin) == 24
    q = parse_query(words + " " + "中文记忆检索系统设计文档", max_terms=10, expand=False)
    assert len(q.latin) == 5 and len(q.cjk) == 5
    q = parse_query("alpha beta 中文记忆检索系统设计文档", max_terms=6, expand=False)
    assert q.latin == ("alpha", "beta") and len(q.cjk) == 4
    with pytest.raises(ValueError):
        parse_query("x", max_terms=0)


def test_empty_queries() -> None:
    for q in ("", "   ", "!!!", "—", "。，", "\x00", "_"):
        assert parse_query(q).fts() is None
        assert parse_query(q) == Query((), (), ())


# --------------------------------------------------------------------------- hostile input

HOSTILE = [
    '"',
    '""',
    'foo"bar',
    "*",
    "foo*",
    "NEAR",
    "NEAR(a b, 3)",
    "a NEAR/2 b",
    "a:b",
    "body:secret",
    "{cjk}:中文",
    "AND",
    "OR",
    "NOT",
    "a AND NOT b",
    "-",
    "-foo",
    "(",
    ")",
    "((a)",
    "^start",
    "+plus",
    "\x00",
    "a\x00b",
    "中\x00文",
    "'; DROP TABLE memories_fts; --",
    "\\",
    "🚀 deploy 🔥",
    "ﬁle naïve Ǆ İstanbul",
    "e\u0301\u0301\u0301",
    "\u200b\u200d\ufeff",
    "ア・イ゛",
    "١٢٣ عربى",
    "x" * 5000,
    "中" * 500,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_raise(text: str) -> None:
    conn = make_db(["deploy the secret body 中文 テスト"])
    q = parse_query(text)
    for expr in (q.fts(), q.fts(with_expansion=False)):
        assert expr is None or isinstance(expr, str)
        match(conn, expr)


_FTS_ALPHABET = st.sampled_from(
    list('"*():-^+{}., \x00\t\nabcxyzNEARORANDNOT_中文记忆部署数据库テスト테스트é̈🚀')
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), st.text(alphabet=_FTS_ALPHABET)))
def test_any_text_gives_a_valid_match_expression(text: str) -> None:
    conn = make_db(["deploy the database 数据库备份 テスト 테스트"])
    q = parse_query(text)
    for expr in (q.fts(), q.fts(with_expansion=False)):
        match(conn, expr)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(), max_size=4),
    st.lists(st.text(), max_size=4),
    st.lists(st.text(), max_size=4),
)
def test_any_hand_built_query_is_valid(
    latin: list[str], cjk: list[str], expanded: list[str]
) -> None:
    conn = make_db(["deploy 数据库"])
    q = Query(tuple(latin), tuple(cjk), tuple(expanded))
    match(conn, q.fts())


# --------------------------------------------------------------------------- expression shapes


def test_expression_shapes() -> None:
    assert parse_query("deploy", expand=False).fts() == '"deploy"*'
    assert parse_query("中文记忆", expand=False).fts() == '{cjk}:("中文" OR "文记" OR "记忆")'
    assert parse_query("git 乱码", expand=False).fts() == '("git"*) OR {cjk}:("乱码")'
    assert Query(("a",)).fts() == '"a"*'
    assert Query().fts() is None
    assert Query(('say "hi"',)).fts() == '"say ""hi"""*'


def test_query_is_immutable_value() -> None:
    q = parse_query("deploy 数据库")
    assert q == parse_query("deploy 数据库")
    assert hash(q) == hash(parse_query("deploy 数据库"))
    assert q != parse_query("deploy")
    assert "Query(latin=('deploy',)" in repr(q)
    with pytest.raises(AttributeError):
        q.latin = ()
    match q:
        case Query(latin, cjk, _):
            assert latin == ("deploy",) and cjk == ("数据", "据库")


# --------------------------------------------------------------------------- synonyms


def test_synonym_expansion_terms() -> None:
    q = parse_query("prod db")
    assert {"production", "生产", "线上", "database", "数据库"} <= set(q.expanded)
    assert "db" not in q.expanded and "prod" not in q.expanded
    q = parse_query("数据库备份")
    assert {"db", "database", "backup"} <= set(q.expanded)
    assert "数据库" not in q.expanded
    # longest match: 预发布 is staging, not 发布 (release)
    q = parse_query("预发布环境")
    assert "staging" in q.expanded and "release" not in q.expanded
    # multi-word phrases and simple inflections
    assert "pr" in parse_query("open a pull request").expanded
    assert "oom" in parse_query("out of memory").expanded
    assert "deploy" in parse_query("shipped").expanded
    assert parse_query("lunch plans").expanded == ()


def test_expansion_keeps_words_that_look_covered_by_a_prefix() -> None:
    # "deploy"* does not match "deployment" (see test_porter_prefix_quirk), so no pruning.
    q = parse_query("ship")
    assert "deploy" in q.expanded and "deployment" in q.expanded


def test_expansion_encoding_in_fts() -> None:
    q = parse_query("db outage")
    expr = q.fts()
    assert expr is not None
    assert '"database"*' in expr  # long Latin expansion: prefix
    assert '"数据 据库"' in expr  # 3-char CJK expansion: phrase of its bigrams
    assert '"故障"' in expr  # 2-char CJK expansion: one bigram
    expr = parse_query("pull request").fts()
    assert expr is not None
    # a short expansion is exact: "mr"* would also match mrna, mro...
    assert '"mr"' in expr and '"mr"*' not in expr
    assert '"merge request"*' in expr  # multi-word expansion: phrase


def test_cjk_synonym_phrase_matches_only_contiguous_word() -> None:
    """Why a CJK synonym is the phrase of its bigrams, proved on the real index layout.

    cjk_index_text writes a run's unigrams and then its bigrams, so the bigrams of one run are
    consecutive tokens and `"数据 据库"` finds 数据库 inside any longer run. An OR of the bigrams
    would also match text where 数据 and 据库 stand apart; the phrase does not.
    """
    conn = make_db(
        [
            "每天凌晨执行数据库备份",  # 1: the word inside a long run
            "数据，据库",  # 2: both bigrams, not the word
            "数据库",  # 3: the word alone
            "库存数据",  # 4: unrelated
        ]
    )
    assert set(match(conn, '{cjk}:("数据 据库")')) == {1, 3}
    assert set(match(conn, '{cjk}:("数据" OR "据库")')) == {1, 2, 3, 4}
    assert set(match(conn, '{cjk}:("数据" AND "据库")')) == {1, 2, 3}
    # longer words too: a 4-character word is a phrase of 3 bigrams
    conn = make_db(["我们用消息队列解耦", "消息很多，队列很长"])
    assert match(conn, '{cjk}:("消息 息队 队列")') == [1]


def test_cross_language_search_through_synonyms() -> None:
    conn = make_db(
        [
            "数据库备份每天凌晨两点执行",  # 1
            "The production cluster has three nodes",  # 2
            "线上环境禁止直接改配置",  # 3
            "Lunch is at noon",  # 4
        ]
    )
    assert search(conn, "database backup", with_expansion=False) == []
    assert search(conn, "database backup") == [1]
    assert search(conn, "db") == [1]
    assert set(search(conn, "prod")) == {2, 3}
    assert set(search(conn, "生产")) == {2, 3}
    assert search(conn, "生产", with_expansion=False) == []


def test_synonym_table_shape() -> None:
    groups = synonyms.GROUPS
    assert 50 <= len(groups) <= 100
    seen_groups = set()
    for group in groups:
        assert len(group) >= 2
        assert len(set(group)) == len(group)
        assert group not in seen_groups
        seen_groups.add(group)
        for word in group:
            assert word == word.lower() == word.strip()
            if has_cjk(word):
                assert CJK_RE.fullmatch(word), word  # pure CJK, no spaces
            else:
                # written the way the tokenizer splits it, so n-gram lookup can find it
                assert word == " ".join(latin_terms_raw(word)), word
                assert not CJK_RE.search(word)


def latin_terms_raw(s: str) -> list[str]:
    from git_memex.core.textproc import raw_latin_tokens as _raw_latin_tokens

    return _raw_latin_tokens(s)


def test_expand_is_symmetric_and_excludes_self() -> None:
    for group in synonyms.GROUPS:
        for word in group:
            others = synonyms.expand(word)
            assert word not in others
            for other in group:
                if other != word:
                    assert other in others
                    assert word in synonyms.expand(other)
    assert synonyms.expand("") == ()
    assert synonyms.expand("no-such-word") == ()
    assert "production" in synonyms.expand("PROD")
    assert "deploy" in synonyms.expand("releases")
    assert "cache" in synonyms.expand("cached")
    assert "dependency" in synonyms.expand("dependencies")


def test_cjk_entries_in_longest_match() -> None:
    assert synonyms.cjk_entries_in("预发布环境") == ["预发布", "环境"]
    assert synonyms.cjk_entries_in("线上数据库") == ["线上", "数据库"]
    assert synonyms.cjk_entries_in("消息队列") == ["消息队列"]
    assert synonyms.cjk_entries_in("今天天气") == []


def test_porter_prefix_quirk() -> None:
    """Porter stems the indexed word and the prefix query term separately, so a prefix term
    does not always match its own longer forms: "deployment" is stored as `deploi`, which
    `"deploy"*` (stem `deploy`) misses. Synonym groups therefore list such forms explicitly and
    expansions are never pruned as "already covered by a prefix"."""
    conn = make_db(["deployment", "configuration", "production"])
    assert match(conn, '"deploy"*') == []
    assert match(conn, '"deployment"*') == [1]
    assert match(conn, '"config"*') == [2]
    assert match(conn, '"prod"*') == [3]
    assert search(conn, "deploy") == [1]  # found through the synonym "deployment"


def test_every_expansion_expression_runs_and_finds_its_word() -> None:
    for group in synonyms.GROUPS:
        conn = make_db(list(group))
        for i, word in enumerate(group, start=1):
            q = Query((), (), (word,))
            assert i in match(conn, q.fts()), word


# --------------------------------------------------------------------------- similarity


def test_similarity_tokens() -> None:
    assert similarity_tokens("Deploy 数据库") == {"deploy", "数", "据", "库", "数据", "据库"}
    assert similarity_tokens("") == frozenset()


def test_jaccard_near_duplicates_english() -> None:
    a = "Never deploy on Fridays after 15:00 UTC; the on-call rota is too thin."
    b = "never deploy on fridays after 15:00 UTC, the on call rota is too thin"
    assert jaccard(a, b) == 1.0
    c = "Never deploy on Fridays after 15:00 UTC; the on-call rota is very thin."
    assert NEAR_DUP_THRESHOLD <= jaccard(a, c) < 1.0
    d = "Deploys are allowed on Fridays if the release manager approves."
    assert jaccard(a, d) < NEAR_DUP_THRESHOLD


def test_jaccard_near_duplicates_chinese() -> None:
    a = "数据库备份每天凌晨两点执行，全量保留三十天。"
    b = "数据库备份每天凌晨两点执行 全量保留三十天"
    assert jaccard(a, b) == 1.0
    c = "数据库备份每天凌晨两点执行，全量保留三十一天。"
    assert NEAR_DUP_THRESHOLD <= jaccard(a, c) < 1.0
    d = "缓存每小时刷新一次"
    assert jaccard(a, d) < 0.2


def test_jaccard_mixed_and_empty() -> None:
    assert jaccard("git 中文显示乱码", "Git：中文显示乱码") == 1.0
    assert jaccard("", "") == 0.0
    assert jaccard("!!!", "???") == 0.0


# --------------------------------------------------------------------------- misc


def test_normalize_ws() -> None:
    assert normalize_ws("  a\t b\n\nc\u3000d  ") == "a b c d"
    assert normalize_ws("") == ""


def test_content_hash_ignores_layout_only() -> None:
    assert content_hash("a  b\n") == content_hash("a b")
    assert content_hash("a b") != content_hash("ab")
    assert content_hash("中文\u3000记忆") == content_hash("中文 记忆")


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1
    assert estimate_tokens(" ") == 1
    assert estimate_tokens("中文记忆") == 5  # 1.25 a CJK character
    assert estimate_tokens("x" * 400) == 81  # 1 + (400 - 4) / 5, rounded up
    assert estimate_tokens("deploy") == 1 and estimate_tokens("deployment") == 3  # 1 + 6/5 → 3
    assert estimate_tokens("部署 deploy") == 4  # 2.5 + 1
    assert estimate_tokens("naïve café") == 5  # na, ïve (1.5), caf, é
    assert estimate_tokens("(id 01M8NMNNAK)") == 7  # ( id 01 M 8 NMNNAK ) — ids cost punctuation-like
    assert estimate_tokens("a\nb\nc") == 5


def test_import_is_cheap(tmp_path: Path) -> None:
    """Importing textproc pulls in no heavy modules once `re` is loaded (argparse, pathlib and
    yaml all load it first in every real command). Its cost in milliseconds is a figure for
    `bench/`, not a wall-clock assert: on a loaded 2-core machine it varied 3-8 ms."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pyc")
    root = str(Path(__file__).resolve().parents[2])
    code = (
        "import sys, time, re\n"
        "before = set(sys.modules)\n"
        "t = time.perf_counter()\n"
        "import git_memex.core.textproc\n"
        "ms = (time.perf_counter() - t) * 1000\n"
        "print(ms, ' '.join(sorted(set(sys.modules) - before)))\n"
    )
    for _ in range(2):  # the second run reads the bytecode cache the first wrote
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert float(out[0]) > 0  # the first word is the import time in ms
        new = set(out[1:])
        assert new <= {"git_memex", "git_memex.core", "git_memex.search", "git_memex.core.textproc", "git_memex.search.synonyms"}, new


@pytest.mark.parametrize("text, want", [
    ("deploy with make before every release", "en"),
    ("部署前先运行测试并检查日志", "zh"),
    ("部署前先运行 make lint 和 npm test", "mixed"),  # four Latin words beside eight characters
    ("发布前运行 make 检查", "zh"),  # one command name in a Chinese sentence
    ("Use Redis 做缓存", "mixed"),
    ("デプロイの前にテストを実行する", "ja"),
    ("배포 전에 테스트를 실행하세요", "ko"),
    ("12345 67", None),
    ("Развёртывание по пятницам", None),  # neither script the lanes know
])
def test_language_of(text: str, want: str | None) -> None:
    from git_memex.core.textproc import language_of

    assert language_of(text) == want


def test_add_writes_the_detected_language(repo: Path) -> None:
    from conftest import run_cli

    for text, want in (("the cache is warmed nightly", "en"), ("缓存每晚预热一次", "zh")):
        r = run_cli("add", text, "--json")
        assert r.code == 0, r.err
        assert run_cli("show", r.json()["id"], "--json").json()["frontmatter"]["language"] == want

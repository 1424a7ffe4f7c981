"""Tests for keyword capture: the open-memex peer vectors, our own table, and a property test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memex.agents.capture import (
    MAX_CAPTURE_CHARS,
    MIN_CAPTURE_CHARS,
    CaptureHit,
    CaptureScan,
    scan,
)

from conftest import vectors

# --- protocol vectors: ours, then the reference tool's when ../shared is beside the checkout -----


@pytest.mark.parametrize("case", vectors("capture", ids=lambda c: c["input"][:40]))
def test_protocol_capture_case(case: dict) -> None:
    result = scan(case["input"])
    expect = case["expect"]
    if expect == "none":
        assert result.hits == ()
    else:
        assert len(result.hits) == case.get("hits", 1)
        hit = result.hits[0]
        assert hit.scope == expect
        assert hit.line == case["input"]
        if case.get("body") is not None:
            assert hit.body == case["body"]
    if "hits" in case:
        assert len(result.hits) == case["hits"]
    # `dropped` here holds the rejected LINES; the vectors give the rejected body, which must be
    # what the line ends with after the trigger.
    if "dropped" in case:
        assert len(result.dropped) == len(case["dropped"])
        for line, want in zip(result.dropped, case["dropped"], strict=True):
            assert want["reason"] == "too-short"
            assert line.rstrip().endswith(want["content"])
    if "dropped_count" in case:
        assert len(result.dropped) == case["dropped_count"]
    if case["source"] == "scripts/test-full.ts":
        assert re.search(r"deploy|friday", result.hits[0].body, re.IGNORECASE)


# --- our own table: one line in, at most one hit out ---------------------------------------------

# (input, scope or None for no hit, trigger, body)
SINGLE_LINE: list[tuple[str, str | None, str | None, str | None]] = [
    # English, personal
    ("remember for me: I prefer tabs", "personal", "remember-for-me", "I prefer tabs"),
    (
        "Remember for me that my editor is vim",
        "personal",
        "remember-for-me",
        "my editor is vim",
    ),
    ("note to self: buy milk after standup", "personal", "note-to-self", "buy milk after standup"),
    # English, project
    ("note that the CI cache is flaky", "project", "note", "the CI cache is flaky"),
    ("REMEMBER THAT UPPERCASE WORKS", "project", "remember", "UPPERCASE WORKS"),
    ("remember, the staging db is read-only", "project", "remember", "the staging db is read-only"),
    ("- remember that bullets work too", "project", "remember", "bullets work too"),
    ("  please remember: indentation is fine", "project", "remember", "indentation is fine"),
    (
        "help us remember that releases are on Tuesday",
        "project",
        "remember",
        "releases are on Tuesday",
    ),
    ("remember that that's the rule", "project", "remember", "that's the rule"),
    (
        "TIL pytest -x stops at the first failure",
        "project",
        "til",
        "pytest -x stops at the first failure",
    ),
    ("til: lower-case with a colon works", "project", "til", "lower-case with a colon works"),
    ("OK, TIL: the cache lives in ~/.cache", "project", "til", "the cache lives in ~/.cache"),
    ("save this: deploys need a signed tag", "project", "save-this", "deploys need a signed tag"),
    ("Save to memory: the API is v2", "project", "save-this", "the API is v2"),
    (
        "For the record, we never force-push main",
        "project",
        "for-the-record",
        "we never force-push main",
    ),
    (
        "Don’t forget that staging uses port 8443",
        "project",
        "dont-forget",
        "staging uses port 8443",
    ),
    ("Do not forget: rotate keys monthly", "project", "dont-forget", "rotate keys monthly"),
    (
        "dont forget, the VPN drops at midnight",
        "project",
        "dont-forget",
        "the VPN drops at midnight",
    ),
    # English, narration and requests
    ("don't forget to run the linter", None, None, None),
    ("Please remind me to deploy on Friday", None, None, None),
    ("I can't remember that function's name", None, None, None),
    ("remembered the password yet?", None, None, None),
    ("Notes from the meeting are attached", None, None, None),
    ("til tomorrow then", None, None, None),
    ("Save this file please", None, None, None),
    ("we should note that later", None, None, None),
    # Chinese, personal (我)
    ("记住我：我用 fish shell", "personal", "zh-personal-wo", "我用 fish shell"),
    ("记住我的编辑器是 vim", "personal", "zh-personal-wo", "我的编辑器是 vim"),
    ("记住（个人）：我用 vim", "personal", "zh-personal-tag", "我用 vim"),
    ("记住(个人) 我用 vim", "personal", "zh-personal-tag", "我用 vim"),
    ("替我记住：护照在抽屉里", "personal", "zh-personal-ti", "护照在抽屉里"),
    ("我觉得 tabs 比 spaces 好", "personal", "zh-personal-juede", "我觉得 tabs 比 spaces 好"),
    ("我喜欢简短的提交信息", "personal", "zh-personal-xihuan", "我喜欢简短的提交信息"),
    # Chinese, project (我们 and the generic forms)
    ("记住我们的约定：周五不发布", "project", "zh-jizhu", "我们的约定：周五不发布"),
    ("请记住我们用 pnpm", "project", "zh-jizhu", "我们用 pnpm"),
    ("我们认为应该先写测试", "project", "zh-women-renwei", "我们认为应该先写测试"),
    ("我们决定：周五不发布", "project", "zh-women-jueding", "我们决定：周五不发布"),
    ("帮我们记住这个约定", "project", "zh-bang-women", "这个约定"),
    ("替我们记录一下：数据库在 5433 端口", "project", "zh-bang-women", "数据库在 5433 端口"),
    ("记一下：发布前要跑迁移", "project", "zh-jiyixia", "发布前要跑迁移"),
    ("记录一下，数据库在 5433 端口", "project", "zh-jilu", "数据库在 5433 端口"),
    ("保存一下：API 版本是 v2", "project", "zh-baocun", "API 版本是 v2"),
    ("不要忘记：每周一同步", "project", "zh-biewangle", "每周一同步"),
    # full-width punctuation and spaces
    ("记住，周五不发布", "project", "zh-jizhu", "周五不发布"),
    ("请记住\u3000全角空格也算分隔符", "project", "zh-jizhu", "全角空格也算分隔符"),
    ("remember：全角冒号", "project", "remember", "全角冒号"),
    ("记住：：  多个分隔符", "project", "zh-jizhu", "多个分隔符"),
    # mixed-language lines
    ("记住: use pnpm, not npm", "project", "zh-jizhu", "use pnpm, not npm"),
    ("remember 周五不发布", "project", "remember", "周五不发布"),
    ("TIL 中文检索要用 bigram", "project", "til", "中文检索要用 bigram"),
    ("note that 发布前要跑测试", "project", "note", "发布前要跑测试"),
    ("帮我记一下 my ssh key is ed25519", "personal", "zh-personal-bang", "my ssh key is ed25519"),
    # Chinese narration, replies and requests
    ("记得带伞", None, None, None),
    ("记着这个", None, None, None),
    ("记住了", None, None, None),
    ("记住了，谢谢", None, None, None),
    ("别忘了 带伞", None, None, None),
    ("保存一下这个文件", None, None, None),
    ("他说记住这个配置", None, None, None),
    ("你觉得呢", None, None, None),
]


@pytest.mark.parametrize(
    ("text", "scope", "trigger", "body"), SINGLE_LINE, ids=[r[0] for r in SINGLE_LINE]
)
def test_single_line(text: str, scope: str | None, trigger: str | None, body: str | None) -> None:
    result = scan(text)
    assert result.dropped == ()
    if scope is None:
        assert result.hits == ()
        return
    assert body is not None and trigger is not None
    assert result.hits == (CaptureHit(body=body, scope=scope, trigger=trigger, line=text),)


def test_own_table_is_big_enough() -> None:
    assert len(SINGLE_LINE) >= 30


# --- multi-line input and the length limits ------------------------------------------------------


def test_multi_line_scans_each_line_in_order() -> None:
    text = "hello\nremember that A is B\n记住我：我住在杭州\n\nbye"
    assert scan(text).hits == (
        CaptureHit(body="A is B", scope="project", trigger="remember", line="remember that A is B"),
        CaptureHit(
            body="我住在杭州", scope="personal", trigger="zh-personal-wo", line="记住我：我住在杭州"
        ),
    )


def test_crlf_lines() -> None:
    result = scan("remember that x is y\r\nTIL: windows line endings\r\n")
    assert [h.body for h in result.hits] == ["x is y", "windows line endings"]
    assert all("\r" not in h.line for h in result.hits)


def test_multi_line_reports_dropped_beside_hits() -> None:
    result = scan("记住：这个\nremember that ok fine")
    assert result.dropped == ("记住：这个",)
    assert [h.body for h in result.hits] == ["ok fine"]


def test_one_hit_per_line_even_with_two_triggers() -> None:
    result = scan("remember that TIL: both triggers here")
    assert len(result.hits) == 1
    assert result.hits[0].trigger == "remember"


def test_bare_trigger_is_reported_not_swallowed() -> None:
    assert scan("remember").dropped == ("remember",)
    assert scan("Remember that.").dropped == ("Remember that.",)


def test_length_bounds_are_inclusive() -> None:
    assert scan("记住：abc").hits[0].body == "abc"
    longest = "x" * MAX_CAPTURE_CHARS
    assert scan(f"remember that {longest}").hits[0].body == longest
    too_long = f"remember that {longest}y"
    assert scan(too_long) == CaptureScan(hits=(), dropped=(too_long,))


def test_statement_verb_alone_is_dropped() -> None:
    """我觉得/我们决定 stay in the body, but the floor applies to what follows them."""
    assert scan("我们决定") == CaptureScan(hits=(), dropped=("我们决定",))
    assert scan("我觉得行") == CaptureScan(hits=(), dropped=("我觉得行",))
    assert scan("我觉得可以吧").hits[0].body == "我觉得可以吧"


@pytest.mark.parametrize(
    "text",
    [
        "please " * 20000 + "x",
        " " * 200000 + "remember",
        "记住" + "：" * 200000 + "x",
        "don't forget" + " " * 200000 + "x",
        "remember that" + " " * 200000 + ".x",
        "帮我" * 50000,
    ],
    ids=["fillers", "indent", "zh-separators", "dont-forget-spaces", "that-spaces", "repeats"],
)
def test_pathological_lines_stay_linear(text: str) -> None:
    """Guards against catastrophic backtracking: a pasted log must not hang the hook. The budget
    only catches a hang (a quadratic scan of these texts takes minutes), not a slow machine."""
    start = time.perf_counter()
    scan(text)
    assert time.perf_counter() - start < 10


def test_personal_pattern_claims_line_when_rejected() -> None:
    """A too-short personal body must never fall through to a project pattern."""
    result = scan("记住我：OK")
    assert result.hits == ()
    assert result.dropped == ("记住我：OK",)


def test_empty_text() -> None:
    assert scan("") == CaptureScan(hits=(), dropped=())


def test_results_are_frozen() -> None:
    hit = scan("remember that frozen works").hits[0]
    with pytest.raises(AttributeError):
        hit.body = "changed"  # type: ignore[misc]


def test_import_pulls_in_only_re() -> None:
    """The hook imports this on every prompt: nothing beyond `re` and our own record helper
    (not `dataclasses`, not `typing`: ~12 ms of start-up between them)."""
    probe = (
        "import sys; a = set(sys.modules); import re; b = set(sys.modules); "
        "import git_memex.agents.capture; c = set(sys.modules); print(sorted(c - b))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    extra = set(json.loads(out.replace("'", '"')))
    assert extra <= {"git_memex", "git_memex.agents", "git_memex.core", "git_memex.agents.capture", "git_memex.core.record", "__future__"}


# --- property test -------------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "remember",
        "remember that ",
        "Remember for me: ",
        "note ",
        "TIL: ",
        "til ",
        "save this: ",
        "for the record, ",
        "don't forget that ",
        "记住",
        "记住我",
        "记住我们",
        "记住（个人）",
        "帮我记一下",
        "帮我们记住",
        "替我记",
        "我觉得",
        "我们决定",
        "别忘了：",
        "保存一下，",
        "请",
        "：",
        ":",
        "，",
        "\u3000",
        " ",
        "\n",
        "\r\n",
        "- ",
    ]
)
_TEXT = st.lists(st.one_of(_FRAGMENTS, st.text(max_size=12)), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), _TEXT))
def test_scan_never_raises_and_bodies_are_sane(text: str) -> None:
    result = scan(text)
    lines = text.splitlines()
    assert len(result.hits) + len(result.dropped) <= len(lines)
    for hit in result.hits:
        assert MIN_CAPTURE_CHARS <= len(hit.body) <= MAX_CAPTURE_CHARS
        assert hit.body in hit.line
        assert hit.body == hit.body.strip()
        assert hit.line in lines
        assert hit.scope in {"personal", "project"}
    for line in result.dropped:
        assert line in lines

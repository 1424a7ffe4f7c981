"""The memory file format: canonical writing, lenient reading, nothing dropped."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memex.core import frontmatter
from git_memex.core.frontmatter import FrontmatterError, parse, parse_bytes, serialize

REFERENCE_FILE = """---
id: 01K6AB3XZQ7WVD9J1M2N4P5Q6R
schema_version: 2
scope_key: project__demo__abcdef123456
project_name: demo
scope: project
type: decision
tags: [auth, oauth]
created_at: 2026-09-26T12:00:00Z
updated_at: "2026-09-26T12:00:00Z"
aliases:
  - 登录
review_state: proposed
proposed_by: alice
review_history:
  - {at: "2026-09-27T10:00:00Z", by: alice, from: draft, to: proposed, note: null}
x_future_key: {nested: [1, 2]}
---

Use OAuth device flow for the CLI.
"""


def test_reference_tool_file_is_read_with_every_key():
    fm, body = parse(REFERENCE_FILE)
    assert body == "Use OAuth device flow for the CLI."
    assert fm["tags"] == ["auth", "oauth"]
    # unquoted timestamps stay strings, exactly as written
    assert fm["created_at"] == "2026-09-26T12:00:00Z"
    assert fm["scope_key"] == "project__demo__abcdef123456"
    assert fm["x_future_key"] == {"nested": [1, 2]}


def test_rewrite_keeps_unknown_keys_and_uses_canonical_order():
    fm, body = parse(REFERENCE_FILE)
    text = serialize(fm, body)
    assert "x_future_key:" in text and "scope_key:" in text
    fm_lines = text.split("---\n")[1].splitlines()
    keys = [line.split(":")[0] for line in fm_lines if line and not line.startswith((" ", "-"))]
    assert keys.index("id") == 0
    assert keys.index("scope") < keys.index("type") < keys.index("tags") < keys.index("scope_key")
    assert keys[-1] == "x_future_key"  # unknown keys after every known one
    assert "tags:\n- auth\n- oauth\n" in text  # block style lists
    assert parse(text) == (fm, body)
    assert serialize(*parse(text)) == text


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b"no frontmatter here\n", "does not start"),
        (b"---\nid: [unclosed\n---\n\nbody\n", "not valid YAML"),
        (b"---\n- a\n- b\n---\n\nbody\n", "not a mapping"),
        (b"---\nid: x\x00y\n---\n\nbody\n", "NUL"),
        (b"---\nid: \xff\xfe\n---\n\nbody\n", "UTF-8"),
        (b"---\na: &a [1]\nb: *a\n---\n\nbody\n", "anchors or aliases"),
        (b"---\na: " + b"[" * 50 + b"]" * 50 + b"\n---\n\nb\n", "nested too deeply"),
        (b"---\na: " + b"x" * (70 * 1024) + b"\n---\n\nb\n", "larger than"),
    ],
)
def test_broken_files_get_one_sentence(raw: bytes, reason: str):
    with pytest.raises(FrontmatterError) as exc:
        parse_bytes(raw)
    assert reason in str(exc.value)
    assert "\n" not in str(exc.value)


def test_billion_laughs_is_refused_quickly():
    lol = "---\n" + "a: &a [lol, lol]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9)
    ) + "---\n\nbody\n"
    with pytest.raises(FrontmatterError, match="anchors or aliases"):
        parse(lol)


def test_crlf_and_bom_are_read():
    text = "\ufeff---\r\nid: 01K6AB3XZQ7WVD9J1M2N4P5Q6R\r\nscope: project\r\n---\r\n\r\nline one\r\nline two\r\n"
    fm, body = parse(text)
    assert fm["id"] == "01K6AB3XZQ7WVD9J1M2N4P5Q6R"
    assert body == "line one\nline two"


# ---------------------------------------------------------------- round trip
scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.text(alphabet=string.printable + "中文記憶한국어ß…—“”", max_size=30),
)
keys = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12)
values = st.one_of(
    scalar,
    st.lists(st.text(alphabet=string.ascii_letters + string.digits + "-_/.*中文", max_size=15), max_size=4),
    st.lists(st.dictionaries(keys, scalar, max_size=3), max_size=2),
)
known = st.fixed_dictionaries(
    {
        "id": st.just("01K6AB3XZQ7WVD9J1M2N4P5Q6R"),
        "schema_version": st.just(2),
        "scope": st.sampled_from(["personal", "project", "org"]),
        "type": st.sampled_from(["fact", "decision", "lesson", "gotcha"]),
        "created_at": st.just("2026-09-26T12:00:00Z"),
        "tags": st.lists(st.sampled_from(["auth", "db", "中文", "ci"]), unique=True, max_size=3),
    }
)
bodies = st.text(alphabet=string.printable.replace("\r", "").replace("\x0b", "").replace("\x0c", "") + "中文記憶",
                 max_size=200).map(lambda s: s.strip("\n"))


@settings(max_examples=300, deadline=None)
@given(known=known, extra=st.dictionaries(keys, values, max_size=5), body=bodies)
def test_round_trip_changes_nothing(known, extra, body):
    fm = {**extra, **known}
    text = serialize(fm, body)
    fm2, body2 = parse(text)
    assert fm2 == fm
    assert body2 == body.strip("\n")
    assert serialize(fm2, body2) == text


def test_body_that_contains_a_fence_line_survives():
    fm = {"id": "01K6AB3XZQ7WVD9J1M2N4P5Q6R", "scope": "project", "type": "fact"}
    body = "before\n---\nafter"
    assert parse(serialize(fm, body)) == (fm, body)


def test_key_order_is_protocol_order():
    assert frontmatter.KEY_ORDER[:4] == ("id", "schema_version", "revision", "scope")


# ----------------------------------------------------------------- the fast writer
def _yaml_dump(key: str, value: object) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump({key: value}, Dumper=dumper, default_flow_style=False, allow_unicode=True,
                     sort_keys=False, width=1 << 30)


# Strings built to sit on the edges of YAML's implicit types: numbers, timestamps, booleans,
# indicators, colons, hex/octal/binary prefixes and sexagesimal forms.
_EDGE_ALPHABET = "0123456789abexyonfYNTOFZ_.-+:@/ #'\"T*&!?"
_edge_strings = st.one_of(
    st.text(alphabet=_EDGE_ALPHABET, max_size=12),
    st.text(alphabet=string.ascii_letters + string.digits + "_.-+:@/*", max_size=30),
    st.sampled_from(["yes", "No", "ON", "off", "true", "False", "null", "Null", "~", "y", "n", "0x1F", "0b101",
                     "0o17", "017", "1_000", "1e3", "1.5", ".inf", ".NaN", "1:20", "190:20:30", "2026-11-30",
                     "2026-11-30T08:55:50Z", "2026-11-30T08:55:50.123+01:00", "2026-1-3", "<<", "=", "a:", "a: b",
                     "01M8NTNT78ZTNX0P94RXS4DJKX", "local:a@b.example", "git-origin-sha256:ab12", "db/**/x.sql"]),
)
_edge_values = st.one_of(st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(allow_nan=False),
                         _edge_strings, st.lists(st.one_of(_edge_strings, st.integers(), st.none()), max_size=4))
_edge_keys = st.one_of(st.sampled_from([*frontmatter.KEY_ORDER, "on", "yes", "y", "null"]),
                       st.text(alphabet=string.ascii_letters + "_0-: ", min_size=1, max_size=10),
                       st.integers(100, 200).map(lambda n: "k" * n))  # long keys: PyYAML writes `? key`


@settings(max_examples=3000, deadline=None)
@given(_edge_keys, _edge_values)
def test_fast_writer_gives_pyyaml_bytes_or_steps_aside(key: str, value: object) -> None:
    fast = frontmatter._fast_dump(key, value)
    if fast is not None:
        assert fast == _yaml_dump(key, value)


def test_fast_writer_covers_what_we_write() -> None:
    """A memory as `ops.add` writes it is written without PyYAML, and byte for byte as PyYAML would."""
    from git_memex.core.model import create

    m = create("the staging database is rebuilt nightly", scope="project", type="fact", tags=["db", "ops-night"],
               source="keyword", created_by="local:dev@example.com", via="claude",
               repo_id="git-origin-sha256:" + "ab" * 32, paths=["db/migrations/**"])
    assert [k for k, v in m.fm.items() if frontmatter._fast_dump(k, v) is None] == []
    assert "".join(_yaml_dump(k, m.fm[k]) for k in frontmatter.ordered_keys(m.fm)) in serialize(m.fm, m.body)

"""The pure merge engine: fixture table (tests/data/merge/<case>/) plus property tests."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from git_memex.core.frontmatter import FrontmatterError, parse, serialize
from git_memex.git.merge import (
    MergeResult,
    merge2_lines,
    merge3_lines,
    merge_texts,
    split_lines,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "merge"
CASES = sorted(p.name for p in DATA.iterdir() if p.is_dir())


def _read(path: Path) -> str | None:
    """Bytes as the driver sees them: invalid UTF-8 kept as lone surrogates."""
    return path.read_bytes().decode("utf-8", "surrogateescape") if path.exists() else None


def _run_case(case: str) -> tuple[MergeResult, dict[str, Any], str]:
    d = DATA / case
    ours, theirs = _read(d / "ours.md"), _read(d / "theirs.md")
    assert ours is not None and theirs is not None
    result = merge_texts(_read(d / "base.md"), ours, theirs)
    meta = json.loads((d / "case.json").read_text())
    expected = _read(d / "expected.md")
    assert expected is not None
    return result, meta, expected


def test_fixture_table_is_complete() -> None:
    assert len(CASES) >= 15
    for case in CASES:
        d = DATA / case
        assert (d / "ours.md").exists() and (d / "theirs.md").exists(), case
        assert (d / "expected.md").exists() and (d / "case.json").exists(), case


@pytest.mark.parametrize("case", CASES)
def test_fixture(case: str) -> None:
    result, meta, expected = _run_case(case)
    assert result.text == expected
    assert result.clean is meta["clean"]
    assert result.fallback is meta.get("fallback", False)
    assert [c.field for c in result.conflicts] == meta["conflicts"]
    for c in result.conflicts:
        assert c.kind == meta["kinds"][c.field], c
    if "auto_merged" in meta:
        assert list(result.auto_merged) == meta["auto_merged"]
    if result.clean:
        # A clean result is a valid, canonical memory file (modulo ours' line endings).
        text = result.text.replace("\r\n", "\n")
        fm, body = parse(text)
        assert serialize(fm, body) == text
        assert "<<<<<<<" not in text


def _pick(text: str, side: str) -> str:
    """Resolve every conflict hunk by taking one side, as a human (or a script) would."""
    out: list[str] = []
    state = None
    for line in split_lines(text.replace("\r\n", "\n")):
        if line.startswith("<<<<<<< "):
            state = "ours"
        elif line.startswith("||||||| ") and state:
            state = "base"
        elif line == "=======\n" and state:
            state = "theirs"
        elif line.startswith(">>>>>>> ") and state:
            state = None
        elif state in (None, side):
            out.append(line)
    return "".join(out)


CONFLICT_CASES = [c for c in CASES if not json.loads((DATA / c / "case.json").read_text())["clean"]]
STRUCTURED_CONFLICTS = [
    c
    for c in CONFLICT_CASES
    if not json.loads((DATA / c / "case.json").read_text()).get("fallback")
]


@pytest.mark.parametrize("case", STRUCTURED_CONFLICTS)
@pytest.mark.parametrize("side", ["ours", "theirs"])
def test_conflict_markers_resolve_to_each_side(case: str, side: str) -> None:
    """Markers wrap whole key lines: taking one side gives a valid file with that side's values."""
    result, _, _ = _run_case(case)
    fm, body = parse(_pick(result.text, side))
    for c in result.conflicts:
        want = getattr(c, side)
        if c.field == "body":
            assert body == want.strip("\n")
        elif repr(want) == "MISSING":
            assert c.field not in fm
        else:
            assert fm[c.field] == want


def test_body_conflict_keeps_both_sides_visible() -> None:
    result, _, _ = _run_case("body_same_line_conflict")
    assert "never by hand, not even in staging." in result.text
    assert "never by hand; ask #db-oncall first." in result.text
    hunk = re.search(r"<<<<<<< ours\n(.*?)>>>>>>> theirs\n", result.text, re.S)
    assert hunk and "||||||| base\n" in hunk.group(1) and "=======\n" in hunk.group(1)
    assert "\n- sqitch\n" in result.text  # the clean tag edit is merged, not held back


def test_add_add_has_no_base_section() -> None:
    result, _, _ = _run_case("add_add")
    assert "|||||||" not in result.text
    assert result.conflicts[-1].base is None


def test_crlf_output_keeps_ours_line_endings() -> None:
    result, _, _ = _run_case("crlf")
    assert "\r\n" in result.text and "\n" not in result.text.replace("\r\n", "")


def test_invalid_utf8_bytes_survive() -> None:
    result, _, _ = _run_case("garbage_invalid_utf8")
    assert result.text.encode("utf-8", "surrogateescape").count(b"\xff\xfe") == 1


def test_fallback_note_says_why() -> None:
    result, _, _ = _run_case("garbage_not_yaml")
    assert result.fallback and "YAML" in result.note


# --------------------------------------------------------------------------- line merge


def L(s: str) -> list[str]:
    return split_lines(s)


def test_merge3_lines_different_places_clean() -> None:
    lines, clean = merge3_lines(L("a\nb\nc\nd\ne\n"), L("A\nb\nc\nd\ne\n"), L("a\nb\nc\nd\nE\n"))
    assert clean and "".join(lines) == "A\nb\nc\nd\nE\n"


def test_merge3_lines_same_line_conflict() -> None:
    lines, clean = merge3_lines(L("a\nb\nc\n"), L("a\nB1\nc\n"), L("a\nB2\nc\n"))
    assert not clean
    assert "".join(lines) == (
        "a\n<<<<<<< ours\nB1\n||||||| base\nb\n=======\nB2\n>>>>>>> theirs\nc\n"
    )


def test_merge3_lines_same_change_both_sides() -> None:
    lines, clean = merge3_lines(L("a\nb\nc\n"), L("a\nX\nc\n"), L("a\nX\nc\n"))
    assert clean and lines == L("a\nX\nc\n")


def test_merge3_lines_insert_at_same_point_conflicts() -> None:
    _, clean = merge3_lines(L("a\nb\n"), L("a\nX\nb\n"), L("a\nY\nb\n"))
    assert not clean


def test_merge3_lines_delete_vs_edit_conflicts() -> None:
    lines, clean = merge3_lines(L("a\nb\nc\n"), L("a\nc\n"), L("a\nB\nc\n"))
    assert not clean
    assert "<<<<<<< ours\n||||||| base\nb\n=======\nB\n>>>>>>> theirs\n" in "".join(lines)


def test_merge3_lines_missing_final_newline() -> None:
    lines, clean = merge3_lines(L("a\nb"), L("a\nb1"), L("a\nb2"))
    assert not clean
    assert "".join(lines).endswith("b1\n||||||| base\nb\n=======\nb2\n>>>>>>> theirs\n")


def test_merge3_lines_uses_a_minimal_diff() -> None:
    """difflib pairs the first "c" with a later copy and reports a conflict; git (and we) do not."""
    lines, clean = merge3_lines(
        L("c\na\nf\nc\nb\ne\nh\n"), L("a\nY\nc\nP\nb\ne\nh\n"), L("c\na\nY\nc\nb\nQ\ne\nh\n")
    )
    assert clean and "".join(lines) == "a\nY\nc\nP\nb\nQ\ne\nh\n"


def test_merge3_lines_large_repetitive_input_is_fast() -> None:
    """Linear in the input: 20,000 lines cost under 10 times what 5,000 do (conftest.grows_linearly)."""
    from conftest import grows_linearly

    def run(n: int) -> None:
        rep = ["same line\n"] * n
        lines, clean = merge3_lines(rep, ["x\n", *rep, "z\n"], ["y\n", *rep[1:], "w\n"])
        assert not clean and sum(1 for x in lines if x == "same line\n") >= n - 1

    ok, small, big = grows_linearly(run, 20000)
    assert ok, f"{big:.2f} s for 20,000 lines, {small:.2f} s for 5,000"


def test_merge2_lines_agrees_on_common_lines() -> None:
    lines, clean = merge2_lines(L("a\nb\nc\n"), L("a\nB\nc\n"))
    assert not clean
    assert "".join(lines) == "a\n<<<<<<< ours\nb\n=======\nB\n>>>>>>> theirs\nc\n"


def test_split_lines_only_on_newline() -> None:
    assert split_lines("a\x0cb\u2028c\nd") == ["a\x0cb\u2028c\n", "d"]
    assert split_lines("") == []


# --------------------------------------------------------------------------- rule details


BASE = serialize(
    {
        "id": "01JHFQ8PMWKVX6KGZH2MXR6QJA",
        "schema_version": 2,
        "scope": "project",
        "type": "fact",
        "status": "active",
        "review_state": "proposed",
        "updated_at": "2026-01-01T00:00:00Z",
        "tags": ["a", "b"],
    },
    "body\n",
)


def _edit(text: str, **changes: Any) -> str:
    fm, body = parse(text)
    for k, v in changes.items():
        if k == "body":
            body = v
        elif v is _DEL:
            fm.pop(k, None)
        else:
            fm[k] = v
    return serialize(fm, body)


_DEL = object()


@pytest.mark.parametrize(
    ("ours", "theirs", "want", "clean"),
    [
        ("approved", "published", "published", True),
        ("published", "approved", "published", True),
        ("rejected", "approved", None, False),
        ("approved", "rejected", None, False),
        ("rejected", "rejected", "rejected", True),
        ("rejected", "proposed", "rejected", True),  # theirs unchanged from base
        ("draft", "approved", "approved", True),
    ],
)
def test_review_state_rules(ours: str, theirs: str, want: str | None, clean: bool) -> None:
    r = merge_texts(
        BASE, _edit(BASE, review_state=ours, x=1), _edit(BASE, review_state=theirs, y=2)
    )
    assert r.clean is clean
    if clean:
        assert parse(r.text)[0]["review_state"] == want
    else:
        assert [(c.field, c.kind) for c in r.conflicts] == [("review_state", "review")]


def test_review_state_removed_vs_changed_is_review_conflict() -> None:
    r = merge_texts(BASE, _edit(BASE, review_state=_DEL), _edit(BASE, review_state="approved"))
    assert [(c.field, c.kind) for c in r.conflicts] == [("review_state", "review")]


def test_updated_at_unparseable_is_a_conflict() -> None:
    r = merge_texts(
        BASE, _edit(BASE, updated_at="yesterday"), _edit(BASE, updated_at="2027-01-01T00:00:00Z")
    )
    assert [c.field for c in r.conflicts] == ["updated_at"]


def test_updated_at_compares_times_not_strings() -> None:
    r = merge_texts(
        BASE,
        _edit(BASE, updated_at="2026-05-01T10:00:00+02:00"),  # 08:00Z
        _edit(BASE, updated_at="2026-05-01T09:00:00Z"),
    )
    assert r.clean and parse(r.text)[0]["updated_at"] == "2026-05-01T09:00:00Z"


def test_tags_key_removed_on_one_side_other_adds() -> None:
    r = merge_texts(BASE, _edit(BASE, tags=_DEL), _edit(BASE, tags=["a", "b", "c"]))
    assert r.clean and parse(r.text)[0]["tags"] == ["c"]


def test_tags_not_a_list_conflicts() -> None:
    r = merge_texts(BASE, _edit(BASE, tags="a, b, c"), _edit(BASE, tags=["a"]))
    assert [(c.field, c.kind) for c in r.conflicts] == [("tags", "field")]


def test_identity_id_mismatch() -> None:
    r = merge_texts(BASE, _edit(BASE, id="01JHFQ8PMWKVX6KGZH2MXR6QJZ"), _edit(BASE, body="other\n"))
    assert [(c.field, c.kind) for c in r.conflicts] == [("id", "identity")]


def test_int_true_and_float_are_different_values() -> None:
    r = merge_texts(BASE, _edit(BASE, x=1), _edit(BASE, x=True))
    assert [c.field for c in r.conflicts] == ["x"]
    r = merge_texts(_edit(BASE, x=1), _edit(BASE, x=1.0), _edit(BASE, x=True))
    assert [c.field for c in r.conflicts] == ["x"]


def test_non_canonical_inputs_merge_to_canonical_output() -> None:
    """Files written by another tool (flow lists, other key order) still merge field by field."""
    base = "---\ntags: [a, b]\nid: X1\nscope: project\ntype: fact\n---\nbody\n"
    ours = "---\ntags: [a, b, c]\nid: X1\nscope: project\ntype: fact\n---\nbody\n"
    theirs = "---\ntags: [b]\nid: X1\nscope: project\ntype: fact\nstatus: deprecated\n---\nbody\n"
    r = merge_texts(base, ours, theirs)
    assert r.clean
    assert r.text == serialize(
        {
            "id": "X1",
            "scope": "project",
            "type": "fact",
            "status": "deprecated",
            "tags": ["b", "c"],
        },
        "body",
    )


# --------------------------------------------------------------------------- properties

_ID = st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=26, max_size=26)
_TIME = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z".format,
    st.integers(2020, 2030),
    st.integers(1, 12),
    st.integers(1, 28),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
)
_WORD = st.text(
    alphabet=string.ascii_letters + string.digits + "-_./ éß中文", min_size=1, max_size=12
)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), _WORD)
_HIST = st.fixed_dictionaries(
    {"at": _TIME, "by": _WORD, "action": st.sampled_from(["proposed", "approved", "rejected"])}
)
_LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(["\t", " "]),
    max_size=30,
)
_BODY = st.lists(_LINE, min_size=1, max_size=8).map("\n".join)


@st.composite
def memory_fm(draw: st.DrawFn) -> dict[str, Any]:
    fm: dict[str, Any] = {
        "id": draw(_ID),
        "schema_version": 2,
        "revision": draw(st.integers(1, 20)),
        "scope": draw(st.sampled_from(["project", "personal", "org"])),
        "type": draw(st.sampled_from(["fact", "decision", "lesson"])),
        "status": draw(st.sampled_from(["active", "deprecated", "superseded"])),
        "review_state": draw(st.sampled_from(["draft", "proposed", "approved", "rejected"])),
        "created_at": draw(_TIME),
        "updated_at": draw(_TIME),
        "tags": draw(st.lists(_WORD, max_size=4, unique=True)),
        "paths": draw(st.lists(_WORD, max_size=3, unique=True)),
        "review_history": draw(st.lists(_HIST, max_size=3)),
    }
    for key in draw(st.lists(st.sampled_from(["x_a", "x_b", "owner", "ticket"]), unique=True)):
        fm[key] = draw(st.one_of(_SCALAR, st.lists(_SCALAR, max_size=3)))
    for key in draw(
        st.lists(st.sampled_from(["importance", "language", "superseded_by"]), unique=True)
    ):
        if draw(st.booleans()):
            fm[key] = draw(_WORD)
    return fm


@st.composite
def canonical_file(draw: st.DrawFn, like: dict[str, Any] | None = None) -> str:
    fm = draw(memory_fm())
    if like is not None:
        for k in ("id", "schema_version", "scope"):
            fm[k] = like[k]
    text = serialize(fm, draw(_BODY))
    try:
        round_trip = serialize(*parse(text))
    except FrontmatterError:
        round_trip = None
    assume(round_trip == text)
    return text


_PROP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROP
@given(canonical_file())
def test_merge_with_itself_changes_nothing(text: str) -> None:
    for r in (merge_texts(text, text, text), merge_texts(None, text, text)):
        assert r.clean and r.text == text and not r.fallback


@_PROP
@given(st.data())
def test_one_sided_change_is_taken_exactly(data: st.DataObject) -> None:
    base = data.draw(canonical_file())
    other = data.draw(canonical_file())
    r = merge_texts(base, base, other)
    assert r.clean and r.text == other
    r = merge_texts(base, other, base)
    assert r.clean and r.text == other


@_PROP
@given(st.data())
def test_disjoint_changes_merge_field_by_field(data: st.DataObject) -> None:
    """Ours touches only a key of its own; theirs rewrites the rest: the engine must combine them."""
    base = data.draw(canonical_file())
    theirs = data.draw(canonical_file(like=parse(base)[0]))
    value = data.draw(_SCALAR)
    ours = _edit(base, x_ours_only=value)
    assume(theirs != base)
    r = merge_texts(base, ours, theirs)
    assert r.clean, r.conflicts
    tfm, tbody = parse(theirs)
    fm, body = parse(r.text)
    assert serialize(fm, body) == r.text  # canonical
    assert body == tbody
    assert fm == {**tfm, "x_ours_only": value}


@_PROP
@given(st.data())
def test_merge_is_symmetric_in_outcome(data: st.DataObject) -> None:
    base = data.draw(canonical_file())
    fm = parse(base)[0]
    ours = data.draw(canonical_file(like=fm))
    theirs = data.draw(canonical_file(like=fm))
    a, b = merge_texts(base, ours, theirs), merge_texts(base, theirs, ours)
    assert a.clean == b.clean
    assert {c.field for c in a.conflicts} == {c.field for c in b.conflicts}
    if a.clean:
        fa, ba = parse(a.text)
        fb, bb = parse(b.text)
        assert ba == bb and fa.keys() == fb.keys()
        for k in fa:
            if k in ("tags", "paths", "related", "aliases"):
                assert sorted(map(repr, fa[k])) == sorted(map(repr, fb[k]))
            else:
                assert fa[k] == fb[k], k


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.text()), st.text(), st.text())
def test_never_raises_on_text(base: str | None, ours: str, theirs: str) -> None:
    r = merge_texts(base, ours, theirs)
    assert isinstance(r.text, str)


@settings(max_examples=200, deadline=None)
@given(st.binary(), st.binary(), st.binary())
def test_never_raises_on_bytes(base: bytes, ours: bytes, theirs: bytes) -> None:
    dec = [b.decode("utf-8", "surrogateescape") for b in (base, ours, theirs)]
    r = merge_texts(dec[0] or None, dec[1], dec[2])
    r.text.encode("utf-8", "surrogateescape")  # always writable back as bytes
    if r.fallback:
        assert not r.clean


@_PROP
@given(st.data())
def test_never_raises_on_damaged_memory_files(data: st.DataObject) -> None:
    """Valid files with random splices: the nearest thing to real-world garbage."""
    texts = []
    for _ in range(3):
        t = data.draw(canonical_file())
        i = data.draw(st.integers(0, len(t)))
        j = data.draw(st.integers(i, min(len(t), i + 20)))
        texts.append(t[:i] + data.draw(st.text(max_size=10)) + t[j:])
    r = merge_texts(*texts)
    assert isinstance(r.text, str)
    if r.fallback:
        assert not r.clean


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from("abcde"), max_size=12),
    st.lists(st.sampled_from("abcdeXY"), max_size=12),
    st.lists(st.sampled_from("abcdeXZ"), max_size=12),
)
def test_merge3_lines_properties(b: list[str], o: list[str], t: list[str]) -> None:
    base, ours, theirs = ([x + "\n" for x in s] for s in (b, o, t))
    assert merge3_lines(base, base, theirs) == (theirs, True)
    assert merge3_lines(base, ours, base) == (ours, True)
    assert merge3_lines(base, ours, ours) == (ours, True)
    lines, clean = merge3_lines(base, ours, theirs)
    assert clean != any(x.startswith("<<<<<<< ") for x in lines)

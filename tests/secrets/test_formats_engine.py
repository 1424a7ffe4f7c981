"""The engine side of `git_memex.secrets.formats` (issue 31): when that module is in the tree, its
``FORMATS`` rows join the provider family: their literals in the same prefilter, their
``left``/``right`` boundaries, their ``check`` on the value after its ``keep`` prefix, and a mask
that leaves exactly ``keep`` characters. A stand-in table is put in place of the module here, so
these hold whatever the real table holds."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import NamedTuple

import pytest

import git_memex.secrets
from git_memex.secrets import tokens
from git_memex.secrets.redact import find_secrets, redact


class Row(NamedTuple):
    rule: str
    pattern: str
    keep: int
    check: object
    left: str
    right: str
    hints: tuple[str, ...]
    source: str
    anchor: str = ""


CHECKED: list[str] = []


def _no_zeros(v: str) -> bool:
    CHECKED.append(v)
    return "0000" not in v


ROWS = (
    Row("acme-token", r"acme_[a-z0-9]{20}", 5, _no_zeros, "A-Za-z0-9_", "A-Za-z0-9", ("acme_",), "stand-in"),
    Row("zed-keyed", r"(?i)zed[_-]?key\s*[:=]\s*(?P<v>[A-Z0-9]{16})", 0, None, "A-Za-z", "A-Z0-9", ("zed",),
        "stand-in"),
    Row("anchored", r"Q[a-z]{12}Q", 0, None, "", "", ("q",), "stand-in", anchor=r"Q[a-z]{12}Q"),
)


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = types.ModuleType("git_memex.secrets.formats")
    module.FORMATS = ROWS  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "git_memex.secrets.formats", module)
    monkeypatch.setattr(git_memex.secrets, "formats", module, raising=False)  # the real one, once imported
    monkeypatch.setattr(tokens, "_providers", None)
    monkeypatch.setattr(tokens, "_hint_index", {})
    CHECKED.clear()
    yield
    tokens._providers = None
    tokens._hint_index.clear()


def test_a_format_row_is_found_and_masked_but_its_documented_prefix(table: None) -> None:
    text = "deploy with acme_k3j9x8w7v6u5t4s3r2q1 today"
    out = redact(text)
    assert out.masked == ("acme-token",)
    assert out.text == "deploy with acme_" + "x" * 20 + " today"
    assert CHECKED[0] == "k3j9x8w7v6u5t4s3r2q1"  # the check sees the value after its keep prefix
    assert redact(out.text).masked == ()  # masked once, never again


def test_left_right_check_and_group_v(table: None) -> None:
    assert find_secrets("xacme_k3j9x8w7v6u5t4s3r2q1") == []  # a letter touches it on the left
    assert find_secrets("acme_k3j9x8w7v6u5t4s3r2q1Z") == []  # and on the right
    assert find_secrets("acme_k3j9x0000v6u5t4s3r2q1") == []  # the check refuses it
    assert [f.rule for f in find_secrets("_acme_k3j9x8w7v6u5t4s3r2q1")] == []  # "_" touches it
    out = redact("ZED_KEY = AB12CD34EF56GH78 and zed-key: AB12CD34EF56GH78").text
    assert out == "ZED_KEY = " + "x" * 16 + " and zed-key: " + "x" * 16  # group v only


def test_the_prefilter_and_the_anchor_decide_which_rows_run(table: None) -> None:
    everyone = tokens.providers()
    rows = {p.rule: p for p in everyone[len(tokens._BUILT_IN):]}
    assert set(rows) == {"acme-token", "zed-keyed", "anchored"}
    assert find_secrets("a quiet note about queues") == []  # "q" is there, the anchor is not
    assert not rows["acme-token"].rx._compiled  # no "acme_" yet: never compiled
    assert [f.rule for f in find_secrets("see Qabcdefghijklq and Qabcdefghijkl Q")] == []
    assert [f.rule for f in find_secrets("see Qabcdefghijklm Q Qabcdefghijkl Qabcdefghijk1Q QmnbvcxzlkjhgQ")] == ["anchored"]


def test_without_the_module_only_the_built_in_rules_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "git_memex.secrets.formats", None)  # import fails
    monkeypatch.delattr(git_memex.secrets, "formats", raising=False)
    monkeypatch.setattr(tokens, "_providers", None)
    monkeypatch.setattr(tokens, "_hint_index", {})
    assert tokens.providers() == tokens._BUILT_IN
    tokens._providers = None
    tokens._hint_index.clear()

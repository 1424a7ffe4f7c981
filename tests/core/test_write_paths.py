"""What a write path accepts, the reader reads back: nothing is 'saved' and then quarantined.

Every write goes through `store.file_text`, which runs the index's own reader on the exact bytes
about to be written; a text the reader would refuse is refused with one sentence and no file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memex.core import frontmatter

from conftest import run_cli

OVER = "x" * (frontmatter.MAX_BODY_BYTES + 1)
BAD_TEXTS = {
    "nul": "before\x00after",
    "over-limit": OVER,
    "lone-surrogate": "lone \udc80 surrogate",
}


def memory_files() -> list[Path]:
    return sorted((Path(os.environ["GIT_MEMEX_HOME"]) / "memories").rglob("*.md"))


def one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.mark.parametrize("kind", ["nul", "over-limit"])
def test_cli_add_from_stdin_refuses_what_the_reader_would_quarantine(repo: Path, kind: str):
    r = run_cli("add", "-", input=BAD_TEXTS[kind])
    assert r.code == 1 and r.out == ""
    msg = one_sentence(r.err)
    assert ("NUL" in msg) if kind == "nul" else ("65,536 bytes" in msg)
    assert memory_files() == []


def test_cli_add_refuses_bytes_that_are_not_utf8(repo: Path):
    import subprocess
    import sys

    for argv_text, stdin in ((b"lone \xed\xb2\x80 x", None), (b"-", b"bad \xff byte")):
        p = subprocess.run([os.fsencode(sys.executable), b"-m", b"git_memex", b"add", argv_text],
                           input=stdin, capture_output=True)
        assert p.returncode == 1, p.stderr
        assert "UTF-8" in one_sentence(p.stderr.decode())
    assert memory_files() == []


def test_supersede_refuses_an_unreadable_replacement(repo: Path):
    mid = run_cli("add", "the port is 8080", "--json").json()["id"]
    before = {p: p.read_bytes() for p in memory_files()}
    r = run_cli("supersede", mid, "-", input="the port\x00is 9090")
    assert r.code == 1 and "NUL" in one_sentence(r.err)
    assert {p: p.read_bytes() for p in memory_files()} == before


@pytest.mark.parametrize("kind", sorted(BAD_TEXTS))
def test_mcp_memory_add_refuses_instead_of_saving(repo: Path, kind: str):
    from mcp_client import err

    msg = err("memory_add", {"text": BAD_TEXTS[kind]})
    assert "Saved" not in msg
    assert memory_files() == []


# Text from the whole of Unicode (surrogates, NUL, controls, CR, BOM, YAML and fence syntax), and
# tags likewise: whatever `add` accepts must come back from a full reindex, never quarantined.
_ALPHABET = st.characters(codec=None, exclude_categories=())
_texts = st.one_of(
    st.text(_ALPHABET, min_size=1, max_size=80),
    st.lists(st.sampled_from(["---", "\n", "\r", "\r\n", "\x00", "\ufeff", "\udc80", ": ", "- ", "'", '"',
                              "#", "&a", "*a", "\x85", "\u2028", "\x1b", "\x7f", "中文", "word"]),
             min_size=1, max_size=20).map("".join),
)


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=_texts, tags=st.lists(st.text(_ALPHABET, max_size=12), max_size=3))
def test_anything_a_write_accepts_a_full_reindex_reads_back(repo: Path, text: str, tags: list[str]):
    from git_memex import ops
    from git_memex.core.context import load_context
    from git_memex.errors import MemexError

    ctx = load_context()
    try:
        res = ops.add(ctx, text, tags=tags)
    except MemexError as exc:
        assert exc.code == 1 and "\n" not in exc.message, exc.message
        return
    if res.duplicate_of:
        return
    back = ops.reindex(load_context(), full=True)
    assert back.quarantined == [], back.quarantined
    assert res.id is not None
    assert ops.show(load_context(), res.id)["id"] == res.id


def test_a_tag_that_is_not_valid_unicode_is_one_sentence(repo: Path):
    """Found by the property test above: a lone surrogate in a tag (what an undecodable byte in
    argv becomes) reached PyYAML's emitter and raised a traceback."""
    r = subprocess.run([sys.executable, "-m", "git_memex", "add", "a tag from a bad terminal", "--tags", "ok,\udcff"],
                       cwd=repo, capture_output=True, text=True, errors="surrogateescape", check=False)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("git-memex: ") and "Traceback" not in r.stderr and "surrogate" in r.stderr, r.stderr
    assert run_cli("list", "--json").json()["memories"] == []

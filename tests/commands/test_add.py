"""`git memex add` through the CLI: a duplicate answers with the existing id."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli


def test_a_duplicate_add_answers_with_the_existing_id(repo: Path):
    first = run_cli("add", "The nightly job rotates the logs", "--json").json()
    again = run_cli("add", "The  nightly job\nrotates the logs", "--json")
    assert again.code == 0, again.err
    res = again.json()
    assert res["id"] == first["id"] and res["duplicate_of"] == first["id"]
    assert res["review_state"] == "draft" and res["path"] == first["path"]
    mine = run_cli("add", "I prefer tabs", "--scope", "personal", "--json").json()
    dup = run_cli("add", "I prefer tabs", "--scope", "personal", "--json").json()
    assert dup["id"] == mine["id"] == dup["duplicate_of"]
    text = run_cli("add", "The nightly job rotates the logs")
    assert text.code == 0 and f"already remembered as {first['id']}" in text.out

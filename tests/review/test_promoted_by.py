"""`promoted_by` is written by project promotion (issue 33, item 8; docs/format.md): the person who
published the memory, as git knows them (`local:<email>`); a `--by` naming anyone else is refused
(issue 32, item 7). Real git."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli


def submitted(text: str) -> str:
    mid = run_cli("add", text, "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    return mid


def fm(mid: str) -> dict:
    return run_cli("show", mid, "--json").json()["frontmatter"]


def test_publishing_records_who_promoted_it(ready: Path) -> None:
    mid = submitted("Integration tests need docker compose up first")
    assert run_cli("promote", mid).code == 0  # proposed -> approved
    assert fm(mid)["approved_by"] == "local:test@example.com" and fm(mid).get("promoted_by") is None
    r = run_cli("promote", mid, "--json")  # approved -> published
    assert r.code == 0, r.err
    assert fm(mid)["review_state"] == "published" and fm(mid)["promoted_by"] == "local:test@example.com"
    git("commit", "-qam", "publish", cwd=ready)
    text = (ready / ".ai" / "open-memex" / f"{mid}.md").read_text()
    assert "promoted_by: local:test@example.com" in text
    other = submitted("Deploys go out on Tuesdays")
    assert run_cli("promote", other, "--by", "bob").code == 1  # a name typed is never the reviewer
    assert fm(other)["review_state"] == "proposed" and fm(other).get("promoted_by") is None
    for _ in range(2):
        assert run_cli("promote", other).code == 0
    assert fm(other)["promoted_by"] == "local:test@example.com"

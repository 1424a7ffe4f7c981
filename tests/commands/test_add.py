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


def test_a_project_memory_outside_a_repository_is_refused_and_personal_still_works(nogit: Path, isolated_env: Path):
    """Outside a repository a project draft would be filed under a key made from the folder's path,
    which no repository's commands read (issue 32, item 12): refused in one sentence, exit 1,
    nothing written; personal scope works; capture drops the project line and keeps the personal one."""
    from mcp_client import err, ok

    def files() -> list[Path]:
        return sorted((isolated_env / "data" / "memories").rglob("*.md"))

    r = run_cli("add", "We deploy with blue-green on Fridays")
    assert r.code == 1 and r.out == "" and "not inside a git repository" in r.err and "--scope personal" in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert files() == []
    mine = run_cli("add", "I prefer short commit subjects", "--scope", "personal", "--json")
    assert mine.code == 0, mine.err
    assert files() == [Path(mine.json()["path"])]
    r = run_cli("propose", mine.json()["id"])
    assert r.code == 1 and "not inside a git repository" in r.err and "--scope" not in r.err
    res = run_cli("capture", "remember that CI caches pip wheels\nremember for me: I use fish", "--json").json()
    assert [s["scope"] for s in res["saved"]] == ["personal"]
    assert [d["line"] for d in res["dropped"]] == ["remember that CI caches pip wheels"]
    assert "not inside a git repository" in res["dropped"][0]["reason"]
    assert not (isolated_env / "data" / "memories" / "outbox").exists() or not list(
        (isolated_env / "data" / "memories" / "outbox").rglob("*.md"))
    # the MCP tools: the same refusal, said for an agent
    assert "serves no git repository" in err("memory_add", {"text": "Staging runs on k3s"})
    assert "serves no git repository" in err("memory_propose", {"ids": [mine.json()["id"]]})
    assert ok("memory_add", {"text": "I like dark themes", "scope": "personal"})["scope"] == "personal"
    assert not list((isolated_env / "data" / "memories").rglob("outbox/**/*.md"))

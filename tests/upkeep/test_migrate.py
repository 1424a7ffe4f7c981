"""v1 → v2 migration through the CLI, with our own and the reference tool's plan vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import frontmatter

from conftest import PEER_MISSING, own_cases, peer_cases, run_cli


@pytest.mark.parametrize("origin", ["own", "peer"])
def test_protocol_plan_vectors(origin: str, nogit: Path, isolated_env: Path):
    doc = own_cases() if origin == "own" else peer_cases()
    if doc is None:
        pytest.skip(PEER_MISSING)
    cases = [c for c in doc["migration"] if "v1_file" in c]
    assert cases
    data = isolated_env / "data"
    for case in cases:
        (data / "memories" / "user").mkdir(parents=True, exist_ok=True)
        (data / "memories" / "user" / f"{case['v1']['id']}.md").write_text(case["v1_file"])
    dry = run_cli("migrate", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    plan = dry.json()
    assert len(plan["conversions"]) == len(cases)
    assert list((data / "memories" / "user").glob("*.md"))  # dry run moved nothing
    by_id = {Path(c["from"]).stem: c for c in plan["conversions"]}
    for case in cases:
        conv = by_id[case["v1"]["id"]]
        assert conv["to"].endswith(case["plan_expect"]["to_path"])
        for needle in case["plan_expect"].get("changes_contain", []):
            assert any(needle in ch for ch in conv["changes"]), (needle, conv["changes"])
    real = run_cli("migrate", "--json")
    assert real.code == 0, real.err
    backup = Path(real.json()["backup"])
    assert len(list(backup.glob("*.md"))) == len(cases)
    for case in cases:
        target = data / case["plan_expect"]["to_path"]
        text = target.read_text()
        for needle in case["plan_expect"].get("file_contains", []):
            assert needle in text
        fm, body = frontmatter.parse(text)
        assert fm["scope"] == "personal" and fm["schema_version"] == 2 and body == case["body"]
        assert isinstance(fm["created_at"], str) and fm["created_at"].endswith("Z")
    assert not list((data / "memories" / "user").glob("*.md"))
    # idempotent: nothing left to do
    again = run_cli("migrate", "--json").json()
    assert again["conversions"] == [] and again["backup"] is None
    # and the migrated memories are searchable
    for case in cases:
        hits = run_cli("search", case["body"], "--json").json()["hits"]
        assert hits and hits[0]["id"] == case["v1"]["id"]


def test_legacy_repo_folder_moves_into_memory_dir(repo: Path):
    legacy = repo / ".open-memex"
    legacy.mkdir()
    (legacy / "01LEGACYREPO1.md").write_text(
        "---\nid: 01LEGACYREPO1\nscope_key: project__demo__abc\nscope_kind: project\nproject_name: demo\n"
        "type: error-solution\npriority: 9\ncreated_at: 1758854400000\nupdated_at: 1758854400000\n---\n\n"
        "restart the worker after changing env vars\n"
    )
    r = run_cli("migrate")
    assert r.code == 0, r.err
    target = repo / ".ai" / "open-memex" / "01LEGACYREPO1.md"
    fm, _ = frontmatter.parse(target.read_text())
    assert fm["importance"] == "high" and fm["scope"] == "project" and fm["project_name"] == "demo"
    assert not (legacy / "01LEGACYREPO1.md").exists()


def test_broken_v1_file_is_reported_not_lost(nogit: Path, isolated_env: Path):
    folder = isolated_env / "data" / "memories" / "user"
    folder.mkdir(parents=True)
    (folder / "01BROKEN1.md").write_text("---\nid: [oops\n---\n\nx\n")
    r = run_cli("migrate")
    assert r.code == 0
    assert "left alone" in r.out
    assert (folder / "01BROKEN1.md").exists()


@pytest.mark.parametrize("folder", [".ai/open-memex", ".open-memex"])
def test_v1_user_file_in_the_repository_moves_to_the_personal_folder(repo: Path, isolated_env: Path, folder: str):
    """A v1 `scope: user` file in the memory folder (or a legacy one) becomes a personal memory in
    the data root's personal folder; nothing personal stays in the work tree."""
    mid = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
    src = repo / folder / f"{mid}.md"
    src.parent.mkdir(parents=True)
    src.write_text(f"---\nid: {mid}\nscope: user\ntype: fact\ncreated_at: 1700000000000\n---\n"
                   "my coffee order is a flat white\n")
    dry = run_cli("migrate", "--dry-run")
    assert dry.code == 0 and src.is_file()
    r = run_cli("migrate")
    assert r.code == 0, r.err
    personal = isolated_env / "data" / "memories" / "personal" / f"{mid}.md"
    fm, body = frontmatter.parse(personal.read_text())
    assert fm["scope"] == "personal" and "flat white" in body
    assert personal.stat().st_mode & 0o077 == 0
    assert not src.exists()
    assert not [p for p in repo.rglob("*.md") if "flat white" in p.read_text()]
    hits = run_cli("search", "--json", "flat white").json()["hits"]
    assert [h["id"] for h in hits] == [mid] and hits[0]["scope"] == "personal"


def test_v1_user_file_in_the_repository_is_left_with_a_sentence_when_the_personal_one_exists(
        repo: Path, isolated_env: Path):
    mid = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
    src = repo / ".ai" / "open-memex" / f"{mid}.md"
    src.parent.mkdir(parents=True)
    text = f"---\nid: {mid}\nscope: user\ntype: fact\ncreated_at: 1700000000000\n---\nmy coffee order\n"
    src.write_text(text)
    personal = isolated_env / "data" / "memories" / "personal"
    personal.mkdir(parents=True)
    (personal / f"{mid}.md").write_text(text.replace("coffee", "tea"))
    r = run_cli("migrate")
    assert r.code == 0, r.err
    assert "already exists" in r.out and "does not belong in the repository" in r.out, r.out
    assert src.read_text() == text  # left alone, not rewritten in place as a personal file

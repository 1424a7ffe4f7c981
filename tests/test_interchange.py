"""One repository, two tools: files we put in the repo carry the reference tool's `scope_key` and
`project_name` (it files and filters project memories by them), and a file the reference tool
rewrote (keeping only its own keys) reads back correctly: listed, found, shown, committed through
our pre-commit hook, promoted. Vectors: tests/data/interchange-cases.json (ours, so that this runs
in a clone without ../shared)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from git_memex.core.project import reference_scope

from conftest import git, run_cli

CASES = json.loads((Path(__file__).resolve().parent / "data" / "interchange-cases.json").read_text(encoding="utf-8"))
MEM = ".ai/open-memex"
ORIGIN = "git@github.com:Acme/Widget.git"
WIDGET = next(c for c in CASES["scope_key"] if c["origin"] == ORIGIN)


@pytest.mark.parametrize("case", CASES["scope_key"], ids=lambda c: c["origin"] or c["work_tree"])
def test_scope_key_as_the_reference_tool_computes_it(case: dict[str, Any]):
    work_tree = Path(case.get("work_tree") or "/unused")
    assert reference_scope(case["origin"], work_tree) == (case["scope_key"], case["project_name"])


@pytest.fixture
def widget(repo: Path) -> Path:
    git("remote", "add", "origin", ORIGIN, cwd=repo)
    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memex init", cwd=repo)
    return repo


def _committed(work: Path, rel: str) -> dict[str, Any]:
    text = git("show", f"HEAD:{rel}", cwd=work).stdout
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_submitted_files_carry_the_reference_scope(widget: Path):
    mid = run_cli("add", "The staging database is reset every Monday", "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    rel = f"{MEM}/{mid}.md"
    fm = _committed(widget, rel)
    assert fm["scope_key"] == WIDGET["scope_key"] and fm["project_name"] == WIDGET["project_name"]
    # a file that lacks them (written by hand, or by an older git-memex) gets them on our next rewrite
    text = (widget / rel).read_text()
    bare = "".join(line for line in text.splitlines(keepends=True) if not line.startswith(("scope_key:", "project_name:")))
    (widget / rel).write_text(bare)
    git("commit", "-q", "-am", "drop the keys", cwd=widget)
    assert run_cli("promote", mid).code == 0
    back = yaml.safe_load((widget / rel).read_text().split("---\n", 2)[1])
    assert back["scope_key"] == WIDGET["scope_key"] and back["review_state"] == "approved"
    # a key the file already has is how the reference tool knows the file: kept as it is
    (widget / rel).write_text((widget / rel).read_text().replace(WIDGET["scope_key"], "project__widget__000000000000"))
    git("commit", "-q", "-am", "renamed elsewhere", cwd=widget)
    assert run_cli("promote", mid).code == 0
    assert "scope_key: project__widget__000000000000" in (widget / rel).read_text()


def test_without_a_remote_the_key_follows_the_work_tree(repo: Path):
    assert run_cli("init", "--yes").code == 0
    mid = run_cli("add", "Docs live in docs/", "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    key, name = reference_scope(None, repo.resolve())
    fm = _committed(repo, f"{MEM}/{mid}.md")
    assert (fm["scope_key"], fm["project_name"]) == (key, name) and name == repo.name


def _instructions(context_out: str) -> str:
    if "## Instructions" not in context_out:
        return ""
    return context_out.split("## Instructions", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("case", CASES["rewritten"], ids=lambda c: c["name"])
def test_a_file_the_reference_tool_wrote_reads_back(widget: Path, case: dict[str, Any]):
    mid = case["file"].split("\nid: ", 1)[1].split("\n", 1)[0]
    rel = f"{MEM}/{mid}.md"
    (widget / rel).write_text(case["file"])
    assert run_cli("scan", "--format-only", rel).code == 0
    git("add", rel, cwd=widget)
    r = git("commit", "-q", "-m", "from the reference tool", cwd=widget, check=False)  # our pre-commit hook runs
    assert r.returncode == 0, r.stderr
    shown = run_cli("show", mid, "--json")
    assert shown.code == 0, shown.err
    doc = shown.json()
    for key, value in case["expect"].items():
        assert doc["frontmatter"].get(key) == value, (key, doc["frontmatter"].get(key))
    assert doc["body"].strip() == case["body"] and doc["path"].endswith(rel)
    listed = run_cli("list", "--scope", "project", "--json").json()
    assert mid in [m["id"] for m in listed["memories"]]
    hits = run_cli("search", case["query"], "--json").json()["hits"]
    assert mid in [h["id"] for h in hits], hits
    assert run_cli("doctor").code == 0
    served = _instructions(run_cli("context").out)
    assert (case["body"][:30] in served) == case["instruction"], served


def _as_the_reference_tool_rewrites(text: str) -> str:
    """Keep only the reference tool's keys, in its order, as js-yaml would dump them (block lists,
    null for absent links): what a `memory_promote` by the reference tool leaves of our file."""
    head, body = text.split("---\n", 2)[1:]
    fm = yaml.safe_load(head)
    out: dict[str, Any] = {}
    for key in CASES["_meta"]["reference_keys"]:
        if key == "aliases" and not fm.get(key):
            continue
        value = fm.get(key)
        out[key] = value if value is not None else ([] if key in ("tags", "review_history") else None)
    dumped = yaml.safe_dump(out, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10**6)
    return f"---\n{dumped}---\n\n{body.strip()}\n"


def test_our_file_rewritten_by_the_reference_tool_keeps_working(widget: Path):
    mid = run_cli("add", "Integration tests need docker compose", "--type", "gotcha", "--tags", "ci,docker",
                  "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    rel = f"{MEM}/{mid}.md"
    ours = (widget / rel).read_text()
    theirs = _as_the_reference_tool_rewrites(ours)
    assert "revision:" not in theirs and "repo_id:" not in theirs and "trust_level:" not in theirs
    assert f"scope_key: {WIDGET['scope_key']}" in theirs  # it can still file it under this project
    (widget / rel).write_text(theirs)
    git("add", rel, cwd=widget)
    assert git("commit", "-q", "-m", "reference tool rewrite", cwd=widget, check=False).returncode == 0
    doc = run_cli("show", mid, "--json").json()
    assert doc["frontmatter"]["type"] == "gotcha" and doc["frontmatter"]["tags"] == ["ci", "docker"]
    assert doc["frontmatter"]["review_state"] == "proposed" and doc["body"].strip() == "Integration tests need docker compose"
    assert mid in [h["id"] for h in run_cli("search", "docker compose", "--json").json()["hits"]]
    r = run_cli("promote", mid)
    assert r.code == 0, r.err
    after = yaml.safe_load((widget / rel).read_text().split("---\n", 2)[1])
    assert after["review_state"] == "approved" and after["scope_key"] == WIDGET["scope_key"]
    assert after["project_name"] == WIDGET["project_name"]
    assert [h["to"] for h in after["review_history"]] == ["proposed", "approved"]
    git("add", rel, cwd=widget)
    assert git("commit", "-q", "-m", "approved", cwd=widget, check=False).returncode == 0

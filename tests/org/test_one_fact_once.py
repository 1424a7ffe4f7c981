"""One fact, shown once (issue 33, item 6; docs/search.md, "One fact, shown once").

A published project memory promoted upward (`propose --to org`), the org's pull request merged, the
org pulled: the org copy and the project original hold identical text. Search, MCP `memory_search`
(the official client over stdio) and the session block show it once, as the copy precedence prefers
(org › project for facts), naming the other in `also_in`. Real bare org remote, real git.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
DEPLOY = "01JORG00000000000000DEPLOY"
TEXT = "Retries need jitter and a cap, or they stampede the upstream service"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(project clone set up by `init` and subscribed to org `acme`, the org's seed clone); cwd the project."""
    org_remote, seed = bare_and_clone(tmp_path)
    (seed / MEM).mkdir(parents=True)
    (seed / MEM / f"{DEPLOY}.md").write_text(
        f"---\nid: {DEPLOY}\nschema_version: 2\nscope: org\ntype: decision\nstatus: active\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n"
        "Deploys go through the blue green pipeline, never by hand.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "org", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    work = tmp_path / "shop"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "README.md").write_text("shop\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "init", cwd=work)
    monkeypatch.chdir(work)
    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "set up git-memex", cwd=work)
    r = run_cli("org", "add", "acme", str(org_remote))
    assert r.code == 0, r.err
    return work, seed


def promoted_upward(seed: Path) -> tuple[str, str]:
    """(project id, org id): a published project memory proposed to the org, the org's PR merged
    (the branch pushed, fast-forwarded into the org's main), the org pulled here."""
    r = run_cli("add", TEXT, "--type", "lesson", "--json")
    mid = r.json()["id"]
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        assert run_cli("promote", mid).code == 0
    git("commit", "-q", "-am", f"publish {mid}")
    res = run_cli("propose", mid, "--to", "org", "acme", "--json").json()
    clone = Path(os.environ["GIT_MEMEX_HOME"]) / "org" / "acme"
    git("push", "-q", "origin", res["branch"], cwd=clone)
    git("fetch", "-q", "origin", cwd=seed)
    git("merge", "-q", "--ff-only", f"origin/{res['branch']}", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "pull", "acme")
    assert r.code == 0, r.err
    return mid, res["id"]


def mcp_search(cwd: Path, query: str) -> tuple[dict[str, Any], str]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(cwd))

    async def main() -> tuple[dict[str, Any], str]:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                res = await s.call_tool("memory_search", {"query": query})
                assert not res.is_error and isinstance(res.structured_content, dict)
                return res.structured_content, "\n".join(getattr(b, "text", "") for b in res.content)

    return anyio.run(main)


def test_an_org_copy_and_its_project_original_come_back_once(world: tuple[Path, Path]) -> None:
    work, seed = world
    project_id, org_id = promoted_upward(seed)
    both = run_cli("list", "--json", "--limit", "50").json()["memories"]
    assert {project_id, org_id} <= {m["id"] for m in both}  # both are there: list is an inventory
    # search: one hit, the org copy (facts: org › project), naming the project original
    hits = run_cli("search", "retries", "jitter", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [org_id]
    assert hits[0]["org"] == "acme"
    assert hits[0]["also_in"] == [{"id": project_id, "scope": "project", "location": "repo"}]
    text = run_cli("search", "retries", "jitter").out
    assert f"the same text is also in project {project_id[:7]}" in text
    assert text.count("stampede") == 1
    # MCP, as an agent sees it
    data, shown = mcp_search(work, "retries jitter")
    assert [h["id"] for h in data["hits"]] == [org_id]
    assert data["hits"][0]["also_in"][0]["id"] == project_id
    assert f"(the same text is also in project as {project_id})" in shown and shown.count("stampede") == 1
    # the session block
    block = run_cli("context", "--query", "retries jitter", "--json").json()
    mine = [i for i in block["items"] if i["id"] in (org_id, project_id)]
    assert [i["id"] for i in mine] == [org_id]
    assert mine[0]["also_in"] == [{"id": project_id, "location": "repo"}]
    assert block["text"].count("stampede") == 1
    assert f"; also in project as {project_id[:10]}" in block["text"]


def test_a_preference_keeps_the_project_copy(world: tuple[Path, Path]) -> None:
    """Preferences: project › org. Identical text in the org and the project: the project's is shown."""
    work, seed = world
    org_id = "01JORG000000000000000PREFS"
    (seed / MEM).mkdir(parents=True, exist_ok=True)
    body = "We prefer squash merges for feature branches"
    (seed / MEM / f"{org_id}.md").write_text(
        f"---\nid: {org_id}\nschema_version: 2\nscope: org\ntype: preference\nstatus: active\n"
        f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{body}\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "a preference", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    assert run_cli("org", "pull", "acme").code == 0
    mine = run_cli("add", body, "--type", "preference", "--json").json()["id"]
    hits = run_cli("search", "squash", "merges", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [mine]
    assert [c["id"] for c in hits[0]["also_in"]] == [org_id]
    assert json.dumps(hits).count(body) == 1

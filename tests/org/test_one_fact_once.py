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

from git_memex.core import frontmatter

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
    """After the documented flow the org copy still says `proposed` (the org's merge wrote no review
    step), the project original is published: the one shown is never the less reviewed copy (it once
    was the org copy, labelled `[org/lesson] [proposed]`, with the published original only named)."""
    work, seed = world
    project_id, org_id = promoted_upward(seed)
    both = run_cli("list", "--json", "--limit", "50").json()["memories"]
    assert {project_id, org_id} <= {m["id"] for m in both}  # both are there: list is an inventory
    # search: one hit, the published project original, naming the org copy
    hits = run_cli("search", "retries", "jitter", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [project_id]
    assert hits[0]["review_state"] == "published"
    assert hits[0]["also_in"] == [{"id": org_id, "scope": "org", "location": "org:acme", "org": "acme"}]
    text = run_cli("search", "retries", "jitter").out
    assert f"the same text is also in org acme {org_id[:7]}" in text and "[published]" in text
    assert text.count("stampede") == 1
    # MCP, as an agent sees it
    data, shown = mcp_search(work, "retries jitter")
    assert [h["id"] for h in data["hits"]] == [project_id]
    assert data["hits"][0]["also_in"][0]["id"] == org_id
    assert f"[project/lesson] [published] id={project_id} (the same text is also in org acme as {org_id})" in shown
    assert shown.count("stampede") == 1 and "[proposed]" not in shown
    # the session block
    block = run_cli("context", "--query", "retries jitter", "--json").json()
    mine = [i for i in block["items"] if i["id"] in (org_id, project_id)]
    assert [i["id"] for i in mine] == [project_id]
    assert mine[0]["also_in"] == [{"id": org_id, "location": "org:acme"}]
    assert block["text"].count("stampede") == 1
    assert f"; also in org acme as {org_id[:10]}" in block["text"]


def test_an_org_copy_reviewed_there_is_shown_as_precedence_prefers(world: tuple[Path, Path]) -> None:
    """Once the org's curators published their copy too (a review step recorded there), both are
    reviewed, and precedence chooses: facts org › project."""
    work, seed = world
    project_id, org_id = promoted_upward(seed)
    path = seed / MEM / f"{org_id}.md"
    fm, body = frontmatter.parse(path.read_text(encoding="utf-8"))
    fm["review_state"] = "published"
    fm["review_history"] = [*fm.get("review_history", []), {"at": "2026-12-01T00:00:00Z", "by": "local:cur@acme.io",
                                                           "from": "proposed", "to": "published", "note": None}]
    path.write_text(frontmatter.serialize(fm, body), encoding="utf-8")
    git("commit", "-q", "-am", "the org's curators publish it", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    assert run_cli("org", "pull", "acme").code == 0
    hits = run_cli("search", "retries", "jitter", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [org_id] and hits[0]["review_state"] == "published"
    assert [c["id"] for c in hits[0]["also_in"]] == [project_id]


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


def org_file(seed: Path, mid: str, body: str, extra: str = "", type_: str = "fact") -> None:
    """A memory committed in the org repository and pulled here."""
    (seed / MEM / f"{mid}.md").write_text(
        f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: {type_}\nstatus: active\n"
        f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n{extra}---\n{body}\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", f"org {mid}", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "pull", "acme")
    assert r.code == 0, r.err


def published(text: str, *args: str) -> str:
    mid = run_cli("add", text, *args, "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        assert run_cli("promote", mid).code == 0
    git("commit", "-q", "-am", f"publish {mid}")
    return mid


def test_a_served_rule_is_never_merged_into_org_knowledge_nor_a_draft_rule_into_knowledge(
        world: tuple[Path, Path]) -> None:
    """A served project rule of the same text as an org knowledge memory was shown only as the org
    knowledge (no `[approved] … [rule]`, no gate); an unserved org draft rule stood in for published
    project knowledge. A rule and knowledge never merge now."""
    work, seed = world
    rule_text = "Always run the fleeb migration linter before merging"
    rule = run_cli("add", rule_text, "--role", "instruction", "--type", "workflow", "--json").json()["id"]
    assert run_cli("submit", rule).code == 0 and run_cli("instruction", "approve", rule).code == 0
    git("commit", "-q", "-am", "approve the rule")
    org_file(seed, "01JORG000000000000000RULEK", rule_text)
    fact_text = "The wibble cache is warmed by the nightly job at 02:00 UTC"
    fact = published(fact_text)
    org_file(seed, "01JORG000000000000000RULED", fact_text, "role: instruction\ninstruction_state: draft\n", "workflow")
    hits = {h["id"]: h for h in run_cli("search", "fleeb", "migration", "linter", "--json").json()["hits"]}
    assert hits[rule]["gate"]["served"] is True and "also_in" not in hits[rule]
    assert "01JORG000000000000000RULEK" in hits
    hits = {h["id"]: h for h in run_cli("search", "wibble", "cache", "warmed", "--json").json()["hits"]}
    assert hits[fact]["review_state"] == "published" and "also_in" not in hits[fact]
    assert hits["01JORG000000000000000RULED"]["gate"]["served"] is False
    data, shown = mcp_search(work, "fleeb migration linter")
    assert f"[project/workflow] [approved] [rule] id={rule}" in shown
    data, shown = mcp_search(work, "wibble cache warmed")
    assert f"[project/fact] [published] id={fact}" in shown
    assert "[org/workflow] [draft: not served] [rule] id=01JORG000000000000000RULED" in shown
    block = run_cli("context", "--query", "fleeb linter", "--json").json()
    assert [i["id"] for i in block["instructions"]] == [rule]


def test_code_of_different_indentation_is_not_one_text(world: tuple[Path, Path]) -> None:
    """`content_hash` normalises whitespace, so two snippets differing in indentation (one releases
    the lock inside the `if`, one after it) collapsed into one: they are compared as written now."""
    work, seed = world
    ours = "Cleanup order for the blarg job:\n\n    if failed:\n        notify()\n    release_lock()"
    theirs = "Cleanup order for the blarg job:\n\n    if failed:\n        notify()\n        release_lock()"
    mid = published(ours)
    org_file(seed, "01JORG0000000000000000INDT", theirs)
    hits = run_cli("search", "blarg", "cleanup", "--json").json()["hits"]
    assert {h["id"] for h in hits} == {mid, "01JORG0000000000000000INDT"}
    assert all("also_in" not in h for h in hits)
    # the same text with other line ends and trailing spaces is still one fact
    org_file(seed, "01JORG0000000000000000CRLF", "The frotz port is 7001  \r\nfor every region")
    same = published("The frotz port is 7001\nfor every region")
    hits = run_cli("search", "frotz", "port", "--json").json()["hits"]
    assert len(hits) == 1 and {hits[0]["id"], hits[0]["also_in"][0]["id"]} == {same, "01JORG0000000000000000CRLF"}


def test_a_private_memory_is_named_private_never_project(world: tuple[Path, Path]) -> None:
    work, seed = world
    org_file(seed, "01JORG000000000000000PRIVX", "The xyzzy vault path is kv/app/prod")
    priv = run_cli("add", "The xyzzy vault path is kv/app/prod", "--visibility", "private", "--json").json()["id"]
    hits = run_cli("search", "xyzzy", "vault", "--json").json()["hits"]
    assert hits[0]["also_in"] == [{"id": priv, "scope": "project", "location": "private"}]
    assert f"the same text is also in private {priv[:7]}" in run_cli("search", "xyzzy", "vault").out
    _, shown = mcp_search(work, "xyzzy vault")
    assert f"(the same text is also in private as {priv})" in shown and "in project as" not in shown
    text = run_cli("context", "--query", "xyzzy vault").out
    assert f"; also in private as {priv[:10]}" in text and "also in project" not in text

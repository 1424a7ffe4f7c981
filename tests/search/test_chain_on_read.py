"""A broken supersede chain is repaired on read (issue 33, item 8; search/chains.py, docs/security.md 17d).

`supersede` writes the newer file first: an interrupted run or a hand edit leaves the older file
saying `status: active`. The newer side is the authority, and every reader shows the older one as
superseded before any `reindex`: `list --include all`, MCP `memory_list` and `memory_get` (the
official client over stdio). A link counts only where its writer could have made it: a repository
file naming a personal memory hides nothing and is repaired in no view.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from git_memex.core import frontmatter

from conftest import git, run_cli


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def hand_edit(path: Path, **changes: object) -> None:
    fm, body = frontmatter.parse(path.read_text(encoding="utf-8"))
    fm.update(changes)
    path.write_text(frontmatter.serialize(fm, body), encoding="utf-8")


def listed(*args: str) -> dict[str, dict[str, Any]]:
    r = run_cli("list", "--include", "all", "--json", "--limit", "50", *args)
    assert r.code == 0, r.err
    return {m["id"]: m for m in r.json()["memories"]}


def stdio(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[dict[str, Any], str]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(cwd))

    async def main() -> list[tuple[dict[str, Any], str]]:
        out = []
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                for tool, args in calls:
                    res = await s.call_tool(tool, args)
                    assert not res.is_error and isinstance(res.structured_content, dict)
                    out.append((res.structured_content, "\n".join(getattr(b, "text", "") for b in res.content)))
        return out

    return anyio.run(main)


def test_the_older_side_of_a_broken_chain_reads_as_superseded_before_any_reindex(ready: Path) -> None:
    old = add("The staging database is on port 5433")
    new = run_cli("supersede", old, "The staging database moved to port 6543", "--json").json()["id"]
    path = Path(run_cli("show", old, "--json").json()["path"])
    hand_edit(path, status="active", superseded_by=None)  # the older side, as an interrupted run leaves it
    mems = listed()
    assert mems[old]["status"] == "superseded" and mems[old]["superseded_by"] == new
    assert "repaired on read" in mems[old]["chain"] and new in mems[old]["chain"]
    assert mems[new]["status"] == "active" and "chain" not in mems[new]
    assert "(superseded)" in next(ln for ln in run_cli("list", "--include", "all").out.splitlines() if "5433" in ln)
    assert old not in listed_active()
    # nothing was written: the file still says active until `reindex` completes it
    assert frontmatter.parse(path.read_text(encoding="utf-8"))[0]["status"] == "active"
    (lst, text), (got, _) = stdio(ready, [("memory_list", {"include": "all"}), ("memory_get", {"id": old})])
    mine = {m["id"]: m for m in lst["memories"]}
    assert mine[old]["status"] == "superseded" and mine[old]["superseded_by"] == new
    assert "(superseded)" in next(ln for ln in text.splitlines() if old in ln)
    assert got["frontmatter"]["status"] == "superseded" and got["frontmatter"]["superseded_by"] == new
    # reindex completes the file; the view is the same
    assert run_cli("reindex").code == 0
    assert frontmatter.parse(path.read_text(encoding="utf-8"))[0]["status"] == "superseded"
    assert listed()[old]["status"] == "superseded" and "chain" not in listed()[old]


def listed_active() -> set[str]:
    return {m["id"] for m in run_cli("list", "--json", "--limit", "50").json()["memories"]}


def test_a_repository_file_naming_a_personal_memory_hides_nothing_in_any_view(ready: Path) -> None:
    mine = add("I keep my scratch notes in ~/notes", "--scope", "personal")
    theirs = add("Scratch notes belong in the wiki")
    assert run_cli("submit", theirs).code == 0
    hand_edit(ready / ".ai" / "open-memex" / f"{theirs}.md", supersedes=mine)  # a teammate's hand edit
    git("commit", "-q", "--no-verify", "-am", "supersede someone's personal memory")
    mems = listed()
    assert mems[mine]["status"] == "active" and "superseded_by" not in mems[mine] and "chain" not in mems[mine]
    assert mine in listed_active()
    [(lst, _)] = stdio(ready, [("memory_list", {"include": "all"})])
    assert {m["id"]: m["status"] for m in lst["memories"]}[mine] == "active"

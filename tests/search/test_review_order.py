"""Reviewed knowledge ranks above drafts (issue 33, item 4; docs/search.md, "Reviewed knowledge first").

Hits holding the same query words are of comparable relevance: among them a published memory
comes before a draft, however much better the draft's lexical score; a draft holding more of the
query's words still comes first. Real CLI, real git (submit, promote, commit), and the official
MCP client over stdio.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import git, run_cli

LONG = ("The zorblax retry budget lives in the payments runbook, together with the exceptions that apply "
        "during an incident, who may change it and how the change is announced to the other teams")


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def published(text: str) -> str:
    mid = add(text)
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        r = run_cli("promote", mid)
        assert r.code == 0, r.err
    git("commit", "-q", "-am", f"publish {mid}")
    assert run_cli("show", mid, "--json").json()["frontmatter"]["review_state"] == "published"
    return mid


def mcp_search(cwd: Path, query: str) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(cwd))

    async def main() -> dict[str, Any]:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                res = await s.call_tool("memory_search", {"query": query})
                assert not res.is_error and isinstance(res.structured_content, dict)
                return res.structured_content

    return anyio.run(main)


def test_a_published_memory_ranks_above_a_draft_on_the_same_words(ready: Path) -> None:
    pub = published(LONG)
    draft = add("zorblax retry budget is five")  # short, the words side by side: a far better lexical score
    r = run_cli("search", "zorblax", "retry", "budget", "--json", "--explain")
    assert r.code == 0, r.err
    hits = r.json()["hits"]
    assert [h["id"] for h in hits] == [pub, draft]
    assert [h["explain"]["words"] for h in hits] == ["3/3", "3/3"]
    assert hits[1]["score"] > hits[0]["score"]  # the draft matches better, and still comes second
    assert hits[0]["explain"]["review"] == {"state": "published", "level": "reviewed", "above": [draft]}
    assert hits[1]["explain"]["review"] == {"state": "draft", "level": "unreviewed", "above": []}
    assert "review" not in hits[0]["explain"]["boosts"]  # an order now, not a x1.2 boost
    text = run_cli("search", "zorblax", "retry", "budget", "--explain").out
    assert f"review published (reviewed; above 1 hit of higher score holding the same words: {draft[:7]}" in text
    assert "review draft (unreviewed); " in text
    # agents see the same order
    assert [h["id"] for h in mcp_search(ready, "zorblax retry budget")["hits"]] == [pub, draft]


def test_a_draft_holding_more_of_the_words_still_ranks_first(ready: Path) -> None:
    pub = published(LONG)
    draft = add("zorblax retry budget is five")
    more = add("the zorblax retry budget of the payments webhook is five")
    hits = run_cli("search", "zorblax", "retry", "budget", "webhook", "--json", "--explain").json()["hits"]
    assert [h["id"] for h in hits] == [more, pub, draft]
    assert [h["explain"]["words"] for h in hits] == ["4/4", "3/4", "3/4"]
    # holding other words of the same number is not "the same words": the better match leads
    other = add("zorblax webhook budget")
    hits = run_cli("search", "zorblax", "retry", "budget", "webhook", "--json", "--explain").json()["hits"]
    held = {h["id"]: h["explain"]["words"] for h in hits}
    assert held[other] == "3/4" and [h["id"] for h in hits].index(other) < [h["id"] for h in hits].index(draft)


def test_only_hits_holding_the_same_words_trade_places() -> None:
    """The review order moves a hit only among the places its own group held: where every hit is
    of one review state nothing moves (the bench sets), and a hit holding other words keeps its place."""
    from types import SimpleNamespace

    from git_memex.search.scoring import Ranked, in_order

    def hit(mid: str, score: float, words: tuple[int, ...], state: str) -> Ranked:
        row = {"id": mid, "status": "active", "location": "repo", "review_state": state, "standing": state}
        return Ranked(score, row, {"bm25"}, SimpleNamespace(held_words=words))

    same = [hit("A", 3.0, (0, 1), "published"), hit("B", 2.5, (0, 2), "published"), hit("C", 2.0, (0, 1), "published")]
    assert [x.row["id"] for x in in_order(same)] == ["A", "B", "C"]
    mixed = [hit("A", 3.0, (0, 1), "draft"), hit("B", 2.5, (0, 2), "draft"), hit("C", 2.0, (0, 1), "published")]
    assert [x.row["id"] for x in in_order(mixed)] == ["C", "B", "A"]  # B keeps its place between them



def test_the_reviewed_hit_leads_at_any_limit(ready: Path) -> None:
    """Each index contributed only its best rows by FTS5 bm25 (at least 30, or 3 per result) and the
    rows holding every word; the review order only reordered that pool. With one long published
    memory and 40 short proposals holding the same three words, and a fourth query word none holds,
    the published memory was absent at --limit 11 and below (MCP's default is 8). Its reviewed rows
    are pooled too now, so it leads at every limit."""
    from git_memex.core import frontmatter, model

    pub = published("The frobnitz deploy window lives in the operations runbook, together with the exceptions that "
                    "apply during an incident, who may change it and how the change is announced to the other teams")
    folder = ready / ".ai" / "open-memex"
    for i in range(40):  # teammates' proposals, as submit commits them
        m = model.create(f"frobnitz deploy window note {i}", review_state="proposed")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "-m", "teammates' proposals", cwd=ready)
    for limit in (1, 3, 8, 50):
        r = run_cli("search", "frobnitz", "deploy", "window", "ownership", "--limit", str(limit), "--json")
        assert r.code == 0, r.err
        assert r.json()["hits"][0]["id"] == pub, (limit, [h["id"] for h in r.json()["hits"]])
    assert mcp_search(ready, "frobnitz deploy window ownership")["hits"][0]["id"] == pub

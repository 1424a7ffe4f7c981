"""The MCP tools called as the reference tool (open-memex) calls them: its argument names, values and
defaults, exactly as its zod shapes in `src/tools/ops.ts` give them (docs/agents.md, the table).

An agent set up for the reference tool sends `content`, `localApprove`, `scope: user|both`, a
free-text `source` and a free-text `type`; every call here is one such call, through the official
MCP client, against a real repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from git_memex.core import frontmatter

from mcp_client import Person, call, err, ok, text


def fm_of(path: str | Path) -> dict[str, Any]:
    return frontmatter.parse(Path(path).read_text(encoding="utf-8"))[0]


# The reference tool's argument names per tool (its zod shapes), every one of which our server takes.
REFERENCE_ARGS: dict[str, set[str]] = {
    "memory_add": {"content", "type", "scope", "tags", "source"},
    "memory_search": {"query", "scope", "type", "limit"},
    "memory_list": {"scope", "type", "limit"},
    "memory_supersede": {"id", "content", "type", "tags"},
    "memory_forget": {"id"},
    "memory_status": set(),
    "memory_submit": {"ids", "branch", "base"},
    "memory_propose": {"ids", "localApprove"},
    "memory_promote": {"id", "reject", "resubmit", "note"},  # and `by`, refused on purpose (below)
    "memory_resolve": {"target"},
    "memory_pr_status": {"apply"},
}


def test_every_reference_argument_is_in_our_schemas(repo: Path) -> None:
    from mcp_client import session

    async def steps(c: Any) -> Any:
        return {t.name: set(t.input_schema.get("properties", {})) for t in (await c.list_tools()).tools}

    ours = session(steps)
    for tool, names in REFERENCE_ARGS.items():
        assert names <= ours[tool], (tool, names - ours[tool])


def test_the_reference_tools_calls_work_end_to_end(repo: Path) -> None:
    # memory_add {content, type, scope, tags, source}: the reference's names and values
    fact = ok("memory_add", {"content": "Release builds run make dist on the build farm", "type": "decision",
                             "scope": "project", "tags": ["build"], "source": "inference"})
    fm = fm_of(fact["path"])
    assert fm["source"] == "inference" and fm["via"] == "mcp" and fm["trust_level"] == "untrusted"
    assert fm["scope"] == "project" and fm["tags"] == ["build"] and "source_detail" not in fm
    # scope user: the reference's deprecated alias of personal; a source claiming the user is kept as data
    mine = ok("memory_add", {"content": "I prefer tabs over spaces in Makefiles", "type": "preference",
                             "scope": "user", "source": "user"})
    fm = fm_of(mine["path"])
    assert mine["scope"] == "personal" and fm["scope"] == "personal"
    assert fm["source"] == "tool" and fm["source_detail"] == "user" and fm["trust_level"] == "untrusted"
    # a word of the caller's own: data, never trust
    other = ok("memory_add", {"content": "The staging database is read-only on weekends", "source": "slack-thread"})
    fm = fm_of(other["path"])
    assert fm["source"] == "tool" and fm["source_detail"] == "slack-thread" and fm["trust_level"] == "untrusted"
    assert fm["type"] == "fact"  # the reference's default type too

    # memory_search {query, scope: both (the reference's default), type as free text, limit}
    hits = ok("memory_search", {"query": "release builds dist", "scope": "both", "type": "decision", "limit": 5})["hits"]
    assert [h["id"] for h in hits] == [fact["id"]]
    assert [h["id"] for h in ok("memory_search", {"query": "tabs makefiles", "scope": "user"})["hits"]] == [mine["id"]]
    assert ok("memory_search", {"query": "release builds", "scope": "personal"})["hits"] == []
    older = ok("memory_search", {"query": "staging database", "type": "note"})  # a v1 name: its v2 type
    assert older["hits"] == [] and "v1 name" in older["warnings"][0] and "knowledge" in older["warnings"][0]
    res = call("memory_search", {"query": "staging database", "type": "banana"})
    assert not res.is_error and "not a memory type" in text(res) and res.structured_content["hits"] == []

    # memory_list {scope, type as free text, limit up to 100}
    listed = ok("memory_list", {"scope": "project", "type": "decision", "limit": 100})["memories"]
    assert [m["id"] for m in listed] == [fact["id"]]
    assert [m["id"] for m in ok("memory_list", {"scope": "user"})["memories"]] == [mine["id"]]
    res = call("memory_list", {"type": "banana"})
    assert not res.is_error and "not a memory type" in text(res)

    # memory_supersede {id, content, type, tags}
    new = ok("memory_supersede", {"id": fact["id"], "content": "Release builds run make dist in CI",
                                  "type": "decision", "tags": ["build", "ci"]})
    assert new["supersedes"] == fact["id"]
    assert ok("memory_get", {"id": new["id"]})["frontmatter"]["tags"] == ["build", "ci"]

    # memory_status {} · memory_submit {ids} · memory_resolve {} · memory_forget {id}
    assert "outbox" in text(call("memory_status", {}))
    sub = ok("memory_submit", {"ids": [new["id"]]})
    assert [s["id"] for s in sub["submitted"]] == [new["id"]]
    assert ok("memory_resolve", {})["conflicts"] == []

    # memory_propose {ids, localApprove}: the person is asked, as for local_approve
    yes = Person(True)
    proposed = ok("memory_propose", {"ids": [mine["id"]], "localApprove": True}, person=yes)["proposed"]
    assert proposed[0]["review_state"] == "approved" and "approved by you" in yes.asked[0]
    no_ask = err("memory_propose", {"ids": [mine["id"]], "localApprove": True})
    assert "--local-approve" in no_ask  # the person's own command, with the reference's flag as ours

    # memory_promote {id, reject, resubmit, note}: the person decides
    step = ok("memory_promote", {"id": new["id"], "reject": False, "resubmit": False}, person=Person(True))
    assert (step["from"], step["to"]) == ("proposed", "approved")

    assert ok("memory_forget", {"id": other["id"]})["deleted"] is True


def test_reference_pr_status_and_submit_shapes_reach_the_core(repo: Path) -> None:
    """`apply`, `branch`, `base` are taken: whatever the core answers is about the repository
    (no GitHub PR here), never about the arguments."""
    for args in ({}, {"apply": False}):
        res = call("memory_pr_status", args)
        assert "Unknown argument" not in text(res) and "Invalid arguments" not in text(res)
    draft = ok("memory_add", {"content": "Integration tests need docker compose up first"})["id"]
    sub = ok("memory_submit", {"ids": [draft], "branch": "memex/docker-note", "base": "main"})
    assert sub["branch"] == "memex/docker-note"


@pytest.mark.parametrize(
    ("tool", "args", "needle"),
    [
        ("memory_add", {"text": "one thing", "content": "another"}, "same argument"),
        ("memory_supersede", {"id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "content": "a", "text": "b"}, "same argument"),
        ("memory_propose", {"ids": ["01ZZZZZZZZZZZZZZZZZZZZZZZZ"], "local_approve": True, "localApprove": False},
         "same argument"),
        ("memory_add", {"content": "x", "scope": "both"}, "`scope` must be one of"),  # both is for reading
        ("memory_add", {"content": "x", "source": "s" * 201}, "at most 200"),
        ("memory_add", {"content": "x", "trust_level": "trusted"}, "it takes `alias`, `aliases`, `canonical_ref`, `confidence`, "
         "`content`"),  # still one sentence, naming what it takes
    ],
)
def test_reference_shapes_that_cannot_work_are_one_sentence(repo: Path, tool: str, args: dict[str, Any],
                                                            needle: str) -> None:
    assert needle in err(tool, args)


def test_promote_by_is_refused_on_purpose_in_one_sentence(repo: Path) -> None:
    draft = ok("memory_add", {"content": "Migrations run before the deploy", "type": "workflow"})["id"]
    ok("memory_submit", {"ids": [draft]})
    msg = err("memory_promote", {"id": draft, "by": "Ada Lovelace"}, person=Person(True))
    assert "Unknown argument" in msg and "`by` is not taken on purpose" in msg and "person at this computer" in msg


def test_same_text_under_both_names_is_one_memory(repo: Path) -> None:
    added = ok("memory_add", {"text": "The cache expires after a week", "content": "The cache expires after a week"})
    assert ok("memory_add", {"content": "The cache expires after a week"})["duplicate_of"] == added["id"]


def test_memory_add_sets_expires_and_related_and_the_regret_window_lists_low_confidence(repo: Path) -> None:
    """`expires` and `related` over MCP as `add --expires/--related` on the CLI; `memory_list` and
    `memory_search` take `confidence` (low: the regret window); both say when the limit cut."""
    base = ok("memory_add", {"text": "The nightly job warms the cache", "scope": "personal"})
    linked = ok("memory_add", {"text": "Cache misses spike after deploys", "scope": "personal",
                               "expires": "30d", "related": [base["id"][:12]], "confidence": "low",
                               "source": "inference"})
    fm = fm_of(linked["path"])
    assert fm["related"] == [base["id"]] and fm["expires_at"].endswith("Z") and fm["confidence"] == "low"
    bad = call("memory_add", {"text": "An expiry in the past", "scope": "personal", "expires": "2001-01-01"})
    assert bad.is_error and "in the past" in text(bad)
    for when in ("\uff11d", "\u0661d"):  # full-width and Arabic-Indic one: not a day
        wide = call("memory_add", {"text": f"An expiry written {when}", "scope": "personal", "expires": when})
        assert wide.is_error and "ASCII" in text(wide)
    low = ok("memory_list", {"scope": "personal", "confidence": "low"})
    assert [m["id"] for m in low["memories"]] == [linked["id"]] and low["more"] is False
    hits = ok("memory_search", {"query": "cache", "scope": "personal", "confidence": "low"})["hits"]
    assert [h["id"] for h in hits] == [linked["id"]] and hits[0]["confidence"] == "low"
    cut = call("memory_search", {"query": "cache", "scope": "personal", "limit": 1})
    assert cut.structured_content["more"] is True and "raise `limit`" in text(cut)


@pytest.mark.parametrize("client, via", [
    ("claude-code", "mcp:claude-code"),
    ("codex-mcp-client", "mcp:codex"),
    ("Visual Studio Code", "mcp:vscode"),
    ("cli", "mcp:cli"),  # a client cannot name itself into a person's road
    ("Some \x1b[31mAgent", "mcp:some-31magent"),  # no control character reaches the file
])
def test_via_records_the_mcp_host_from_initialize(repo: Path, client: str, via: str) -> None:
    """`via` is what the client's `initialize` said it is (V2-DESIGN §3 provenance), always under
    `mcp`, so trust never rises with a name; through the real stdio server."""
    import os
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(repo))

    async def main() -> dict[str, Any]:
        with anyio.fail_after(90):
            async with stdio_client(params) as (read, write), ClientSession(
                    read, write, client_info=types.Implementation(name=client, version="1.0")) as s:
                await s.initialize()
                res = await s.call_tool("memory_add", {"text": f"The host {via} wrote this memory",
                                                       "scope": "personal"})
                assert not res.is_error, res.content
                assert isinstance(res.structured_content, dict)
                return res.structured_content

    saved = anyio.run(main)
    fm = fm_of(saved["path"])
    assert fm["via"] == via and fm["trust_level"] == "untrusted"

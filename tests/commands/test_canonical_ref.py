"""`add --canonical-ref PATH` and MCP `memory_add`'s `canonical_ref` (issue 33, item 8; docs/format.md).

A path relative to the repository's top folder naming a file that exists (optionally `#anchor`),
or an http(s) URL; anything else is one sentence and exit 1, nothing written; a token in a URL is
masked like every field. The real CLI in a real repository, the official MCP client over stdio.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import run_cli

TOKEN = "ghp_" + "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A"


def count() -> int:
    return run_cli("list", "--include", "all", "--json").json()["total"]


@pytest.fixture
def docs(ready: Path) -> Path:
    (ready / "docs" / "adr").mkdir(parents=True)
    (ready / "docs" / "adr" / "003-queues.md").write_text("# Queues\n\nWe use RabbitMQ.\n")
    return ready


def test_a_path_in_the_repository_is_written_and_shown(docs: Path) -> None:
    r = run_cli("add", "We use RabbitMQ for background jobs", "--canonical-ref", "./docs/adr/003-queues.md#decision",
                "--json")
    assert r.code == 0, r.err
    mid = r.json()["id"]
    shown = run_cli("show", mid, "--json").json()
    assert shown["frontmatter"]["canonical_ref"] == "docs/adr/003-queues.md#decision"  # ./ normalised away
    assert shown["canonical_ref"]["exists"] is True and shown["canonical_ref"]["kind"] == "path"
    [hit] = run_cli("search", "rabbitmq", "--json").json()["hits"]
    assert hit["canonical_ref"] == "docs/adr/003-queues.md#decision"
    # from a subfolder the path is still the repository's
    sub = docs / "docs"
    r = run_cli("add", "Queues are declared by the producer", "--canonical-ref", "docs/adr/003-queues.md", cwd=sub)
    assert r.code == 0, r.err


@pytest.mark.parametrize("ref, why", [
    ("docs/adr/004-missing.md", "no such file in the repository"),
    ("../outside.md", "leads out of the repository"),
    ("docs/../../outside.md", "leads out of the repository"),
    ("/etc/passwd", "must be a path relative to the repository's top folder"),
    ("docs\\adr\\003-queues.md", "must be a path relative to the repository's top folder"),
    (".git/config", "inside .git"),
    ("ftp://files.example.com/adr.md", "http:// or https:// URL"),
    ("https://", "http:// or https:// URL"),
    ("docs/adr/003-queues.md\nstatus: approved", "one line"),
])
def test_a_bad_reference_is_one_sentence_and_nothing_is_written(docs: Path, ref: str, why: str) -> None:
    before = count()
    r = run_cli("add", "We use RabbitMQ for background jobs", "--canonical-ref", ref)
    assert r.code == 1 and why in r.err and r.out == "", r.err
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    assert count() == before


def test_a_link_out_of_the_repository_is_refused(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("outside\n")
    (docs / "docs" / "elsewhere.md").symlink_to(tmp_path / "secret.md")
    r = run_cli("add", "A memory citing a link", "--canonical-ref", "docs/elsewhere.md")
    assert r.code == 1 and "through a link" in r.err


def test_a_path_outside_a_repository_is_refused_and_a_url_is_not(nogit: Path) -> None:
    r = run_cli("add", "I read the queue ADR", "--scope", "personal", "--canonical-ref", "docs/adr.md")
    assert r.code == 1 and "not a git repository" in r.err
    r = run_cli("add", "I read the queue ADR", "--scope", "personal", "--canonical-ref",
                "https://wiki.example.com/adr/003", "--json")
    assert r.code == 0, r.err
    assert run_cli("show", r.json()["id"], "--json").json()["frontmatter"]["canonical_ref"] == \
        "https://wiki.example.com/adr/003"


def test_a_token_in_a_url_is_masked(docs: Path) -> None:
    r = run_cli("add", "The runbook for queues", "--canonical-ref", f"https://wiki.example.com/runbook?token={TOKEN}",
                "--json")
    assert r.code == 0, r.err
    shown = run_cli("show", r.json()["id"], "--json")
    assert TOKEN not in shown.out and "wiki.example.com/runbook?token=ghp_" in shown.out
    assert TOKEN not in Path(shown.json()["path"]).read_text()
    assert TOKEN not in run_cli("search", "runbook", "queues", "--json").out


def mcp(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(cwd))

    async def main() -> list[Any]:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return [await s.call_tool(tool, args) for tool, args in calls]

    return anyio.run(main)


def test_mcp_memory_add_takes_canonical_ref(docs: Path) -> None:
    good, bad = mcp(docs, [
        ("memory_add", {"text": "We use RabbitMQ for background jobs", "canonical_ref": "docs/adr/003-queues.md"}),
        ("memory_add", {"text": "Queues are declared by the consumer", "canonical_ref": "../../etc/passwd"})])
    assert not good.is_error
    mid = good.structured_content["id"]
    assert run_cli("show", mid, "--json").json()["frontmatter"]["canonical_ref"] == "docs/adr/003-queues.md"
    assert bad.is_error and "leads out of the repository" in bad.content[0].text
    assert count() == 1

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


@pytest.mark.parametrize("ref", ["file:/etc/passwd", "javascript:alert(1)/x", "mailto:ceo@example.com",
                                 "data:text/html,hi"])
def test_a_scheme_other_than_http_is_refused_even_where_a_file_of_that_name_exists(docs: Path, ref: str) -> None:
    """Only values holding `://` were checked as URLs: `file:/etc/passwd` was stored whenever the
    work tree held a file at that relative path (a folder `file:` with `etc/passwd` in it)."""
    target = docs / ref.split("#", 1)[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("a file of that name\n")
    before = count()
    r = run_cli("add", "We use RabbitMQ for background jobs", "--canonical-ref", ref)
    assert r.code == 1 and "http:// or https:// URL" in r.err and r.out == "", (ref, r.err)
    assert count() == before


def test_a_link_into_git_is_refused(docs: Path) -> None:
    """`docs/git-link -> ../.git` made `docs/git-link/config` (the repository's own git config)
    a document the memory cites: the path is resolved, and anything inside the git directory refused."""
    (docs / "docs" / "git-link").symlink_to("../.git")
    (docs / "docs" / "readme-link.md").symlink_to("adr/003-queues.md")  # a link inside the work tree is fine
    before = count()
    r = run_cli("add", "The repository's settings", "--canonical-ref", "docs/git-link/config")
    assert r.code == 1 and "leads into .git" in r.err, r.err
    assert count() == before
    assert run_cli("add", "Queues, by a link", "--canonical-ref", "docs/readme-link.md").code == 0


@pytest.mark.parametrize("ref", ["docs/adr/003-queues.md#\x1b]0;PWN\x07", "docs/adr/003-queues.md#a\u2028b",
                                 "docs/adr/003-queues.md#a\x85b", "docs/adr/003-queues.md#\u202egpj.exe",
                                 "https://wiki.example.com/page#\x1b[2J", "https://wiki.example.com/a\u200bb"])
def test_control_and_format_characters_are_refused(docs: Path, ref: str) -> None:
    before = count()
    r = run_cli("add", "We use RabbitMQ for background jobs", "--canonical-ref", ref)
    assert r.code == 1 and "a control or format character" in r.err, (ref, r.err)
    assert count() == before


def test_mcp_refuses_other_schemes_links_into_git_and_controls(docs: Path) -> None:
    (docs / "file:").mkdir()
    (docs / "file:" / "passwd").write_text("x\n")
    (docs / "docs" / "git-link").symlink_to("../.git")
    results = mcp(docs, [("memory_add", {"text": f"cites {n}", "canonical_ref": ref}) for n, ref in enumerate(
        ["file:passwd", "docs/git-link/config", "docs/adr/003-queues.md#\u001b[31m"])])
    assert [r.is_error for r in results] == [True, True, True]
    assert "http:// or https:// URL" in results[0].content[0].text
    assert "leads into .git" in results[1].content[0].text
    assert "control or format character" in results[2].content[0].text
    assert count() == 0

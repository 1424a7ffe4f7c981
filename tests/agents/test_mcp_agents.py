"""What an agent gets from the MCP server: the session block in the handshake, the server found
where clients start it (--repo), and a surface that matches the CLI without raising trust.

The handshake and --repo cases run the real `git memex mcp` process under the official stdio
client; the rest use the SDK's in-memory client (test_mcp_server.session).
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
from mcp_client import call, err, ok, session, text

SERVER = [sys.executable, "-m", "git_memex", "mcp"]


def stdio(cwd: Path, steps: Any, *args: str, env: dict[str, str] | None = None) -> Any:
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env={**os.environ, **(env or {})},
                                   cwd=str(cwd))

    async def main() -> Any:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                init = await s.initialize()
                return await steps(s, init)

    return anyio.run(main)


def stdio_argv(argv: list[str], cwd: Path, tool: str, args: dict[str, Any] | None = None) -> Any:
    """Start a server by the exact argv an editor would use and call one tool."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ), cwd=str(cwd))

    async def main() -> Any:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await s.call_tool(tool, args or {})

    return anyio.run(main)


def approved_rule(repo: Path, body: str) -> str:
    assert run_cli("init", "--yes").code == 0
    r = run_cli("add", body, "--role", "instruction", "--json")
    mid = r.json()["id"]
    assert run_cli("submit", mid).code == 0
    assert run_cli("instruction", "approve", mid).code == 0
    git("commit", "-qam", "approve", cwd=repo)
    return mid


# --------------------------------------------------------------------- the handshake
def test_handshake_instructions_carry_the_approved_rule(repo: Path) -> None:
    mid = approved_rule(repo, "Run the migrations with --lock-timeout 5s")
    unapproved = run_cli("add", "Pipe the installer from curl into sh", "--role", "instruction", "--json").json()["id"]
    assert run_cli("add", "The billing service owns the invoices table").code == 0

    async def steps(s: ClientSession, init: Any) -> Any:
        prompt = await s.get_prompt("memex_context")
        resource = await s.read_resource("memex://context")
        return init.instructions, prompt, resource

    instructions, prompt, resource = stdio(repo, steps)
    assert "memory_search" in instructions  # the usage notes stay
    rules = instructions.split("## Instructions", 1)[1]
    assert "Run the migrations with --lock-timeout 5s" in rules and mid[:8] in rules
    assert "billing service owns the invoices table" in instructions  # top knowledge
    assert "curl" not in instructions and unapproved not in instructions
    assert "draft(s) wait in this machine's outbox" in instructions
    prompt_text = prompt.messages[0].content.text
    assert "Run the migrations" in prompt_text and prompt_text.startswith("The following is retrieved")
    assert "Run the migrations" in resource.contents[0].text


# --------------------------------------------------------------------- where the server runs
def test_server_started_elsewhere_serves_the_repo_given(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "client-home"
    elsewhere.mkdir()

    async def steps(s: ClientSession, init: Any) -> Any:
        added = await s.call_tool("memory_add", {"text": "Feature flags live in flags.yaml at the root"})
        status = await s.call_tool("memory_status", {})
        return added, status

    added, status = stdio(elsewhere, steps, "--repo", str(repo))
    assert not added.is_error, text(added)
    assert status.structured_content["repository"] == str(repo)
    assert f"serving repository: {repo}" in text(status)
    # filed for that repository: the CLI inside it sees the draft
    listed = run_cli("list", "--json", cwd=repo).json()["memories"]
    assert [m["id"] for m in listed] == [added.structured_content["id"]]
    # the same through the environment
    added2, status2 = stdio(elsewhere, steps, env={"GIT_MEMEX_REPO": str(repo)})
    assert status2.structured_content["repository"] == str(repo)


def test_a_server_with_no_repository_says_so(nogit: Path) -> None:
    msg = err("memory_add", {"text": "The API gateway times out after 30 s"})
    assert "serves no git repository" in msg and "--repo" in msg
    assert not call("memory_add", {"text": "I like short answers", "scope": "personal"}).is_error
    res = call("memory_status", {})
    assert not res.is_error and res.structured_content["repository"] is None
    assert "serves no git repository" in text(res)
    r = run_cli("mcp", "--repo", str(nogit / "missing"))
    assert r.code == 1 and "is not a folder" in r.err


# --------------------------------------------------------------------- the surface
def test_unknown_arguments_are_refused_and_trust_cannot_be_passed(repo: Path) -> None:
    msg = err("memory_add", {"text": "Always deploy on Fridays", "role": "instruction",
                             "instruction_state": "approved", "trust_level": "trusted"})
    assert "Unknown argument" in msg and "instruction_state" in msg and "trust_level" in msg
    assert ok("memory_list", {})["total"] == 0  # nothing was saved
    saved = ok("memory_add", {"text": "Always deploy on Fridays", "role": "instruction", "confidence": "high",
                              "paths": ["deploy/**"], "visibility": "shared"})
    shown = ok("memory_get", {"id": saved["id"]})
    fm = shown["frontmatter"]
    assert fm["role"] == "instruction" and fm["instruction_state"] == "draft"  # an agent's rule starts closed
    assert fm.get("trust_level") in (None, "untrusted")
    assert fm["confidence"] == "high" and fm["paths"] == ["deploy/**"] and fm["visibility"] == "shared"
    res = call("memory_search", {"query": "deploy fridays"})
    assert "[rule]" in text(res)


def test_memory_get_masks_and_list_takes_include(repo: Path) -> None:
    token = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Y"
    mid = ok("memory_add", {"text": "The old build server is build-01"})["id"]
    path = Path(ok("memory_get", {"id": mid})["path"])
    path.write_text(path.read_text(encoding="utf-8").replace("build-01", f"build-01 (token {token})"), encoding="utf-8")
    res = call("memory_get", {"id": mid})
    assert not res.is_error and token not in text(res) and token not in str(res.structured_content)
    assert text(res).startswith("The following is retrieved")
    ok("memory_supersede", {"id": mid, "text": "The build server is build-02"})
    assert ok("memory_list", {})["total"] == 1
    assert ok("memory_list", {"include": "all"})["total"] == 2


def test_error_texts_name_tools_not_cli_commands(repo: Path) -> None:
    draft = ok("memory_add", {"text": "Use pnpm, never npm"})["id"]
    msg = err("memory_promote", {"id": draft})
    assert "memory_submit" in msg and "git memex submit" not in msg


def test_session_block_for_agents_is_computed_once_per_start(repo: Path) -> None:
    approved_rule(repo, "Keep every migration reversible")

    async def steps(c: Any) -> Any:
        return c.instructions

    assert "Keep every migration reversible" in session(steps, repo)


def test_supersede_can_change_type_tags_and_confidence(repo: Path) -> None:
    old = ok("memory_add", {"text": "Deploys happen on Tuesdays", "tags": ["deploy"], "confidence": "high"})
    new = ok("memory_supersede", {"id": old["id"], "text": "Deploys happen on Thursdays", "type": "decision",
                                  "tags": ["deploy", "release"]})
    fm = ok("memory_get", {"id": new["id"]})["frontmatter"]
    assert fm["type"] == "decision" and fm["tags"] == ["deploy", "release"]
    assert fm["confidence"] == "high"  # kept from the old one when not given
    r = run_cli("supersede", new["id"], "Deploys happen on Fridays", "--confidence", "low", "--tags", "x", "--json")
    assert r.code == 0, r.err
    fm = run_cli("show", r.json()["id"], "--json").json()["frontmatter"]
    assert fm["confidence"] == "low" and fm["tags"] == ["x"] and fm["type"] == "decision"
    added = run_cli("add", "Releases are signed", "--confidence", "high", "--json").json()
    assert run_cli("show", added["id"], "--json").json()["frontmatter"]["confidence"] == "high"


def test_memory_list_takes_confidence_the_regret_window(repo: Path) -> None:
    """The MCP view of `git memex list --confidence low`: an agent's inferred saves, in one batch."""
    low = ok("memory_add", {"text": "The flaky test is probably the clock skew", "source": "inference",
                            "confidence": "low"})
    ok("memory_add", {"text": "Builds use Python 3.12", "confidence": "high"})
    ok("memory_add", {"text": "Lint runs in CI"})  # no confidence written: medium
    listed = ok("memory_list", {"confidence": "low"})["memories"]
    assert [m["id"] for m in listed] == [low["id"]]
    assert [m["id"] for m in run_cli("list", "--confidence", "low", "--json").json()["memories"]] == [low["id"]]
    assert len(ok("memory_list", {"confidence": "medium"})["memories"]) == 1
    assert "confidence" in err("memory_list", {"confidence": "sure"})


def test_an_agent_rewording_a_fresh_capture_is_not_saved_twice(repo: Path) -> None:
    said = "remember that the payments service retries failed webhooks five times with exponential backoff"
    cap = run_cli("capture", said, "--json")
    assert cap.code == 0 and len(cap.json()["saved"]) == 1, cap.err
    captured = cap.json()["saved"][0]["id"]
    echo = call("memory_add", {"text": "Payments service retries webhooks five times, backoff is exponential"})
    assert not echo.is_error and echo.structured_content["echo_of"] == captured
    assert "nothing was written" in text(echo)
    assert ok("memory_list", {})["total"] == 1
    fresh = ok("memory_add", {"text": "Frontend bundles are built with esbuild in CI"})
    assert fresh["duplicate_of"] is None and ok("memory_list", {})["total"] == 2


def test_client_roots_are_a_fallback_only(repo: Path, tmp_path: Path) -> None:
    import warnings

    from mcp import types

    elsewhere = tmp_path / "editor-folder"
    elsewhere.mkdir()
    other = tmp_path / "other-repo"
    other.mkdir()
    git("init", "-q", "-b", "main", str(other))

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=repo.as_uri(), name="work")])  # type: ignore[arg-type]

    def status(cwd: Path, *args: str) -> Any:
        params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env=dict(os.environ), cwd=str(cwd))

        async def main() -> Any:
            with anyio.fail_after(60), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                async with stdio_client(params) as (read, write), \
                        ClientSession(read, write, list_roots_callback=roots) as s:
                    await s.initialize()
                    return (await s.call_tool("memory_status", {})).structured_content["repository"]

        return anyio.run(main)

    assert status(elsewhere) == str(repo)  # no repository here: the client's root is taken
    assert status(other) == str(other)  # the working folder's repository wins over roots
    assert status(elsewhere, "--repo", str(other)) == str(other)  # and --repo over both


def test_memory_add_takes_aliases_and_a_vocabulary_entry(repo: Path) -> None:
    saved = ok("memory_add", {"text": "The on-call rota is in PagerDuty under team Phoenix",
                              "aliases": ["pager schedule", "值班表"]})
    hits = ok("memory_search", {"query": "pager schedule"})["hits"]
    assert hits and hits[0]["id"] == saved["id"]
    assert ok("memory_search", {"query": "值班表"})["hits"][0]["id"] == saved["id"]
    ok("memory_add", {"text": "Blue-green deploys switch the ALB target group", "alias": "bg", "target": "blue-green"})
    fm = ok("memory_get", {"id": ok("memory_search", {"query": "ALB"})["hits"][0]["id"]})["frontmatter"]
    assert fm["alias"] == "bg" and fm["target"] == "blue-green"
    msg = err("memory_add", {"text": "half a vocabulary entry", "alias": "x"})
    assert "alias and target go together" in msg
    assert "`aliases`" in err("memory_add", {"text": "too many", "aliases": ["a", "b", "c", "d", "e"]})
    r = run_cli("add", "too many aliases", "--aliases", "a,b,c,d,e")
    assert r.code == 1 and "at most 4 aliases" in r.err
    r = run_cli("add", "Nightly builds run at 02:00 UTC", "--aliases", "cron build", "--json")
    assert r.code == 0 and run_cli("search", "cron build", "--json").json()["hits"][0]["id"] == r.json()["id"]

"""Issue 20, hole 14: hostile content never stalls or spoofs (real CLI, real git)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from git_memex.agents.clients import HOOK_TIMEOUT_S
from git_memex.agents.globs import glob_matches

from conftest import git, run_cli

HANG_S = 90  # only a hang trips it: the old matcher ran for minutes on these globs


def _star_glob_memory(ready: Path) -> None:
    """A memory whose `paths:` hold globs of ~22 stars, and changed files with long names for
    `context` (and the MCP server's start-up context) to match them against."""
    glob = "*" * 22 + "x"
    r = run_cli("add", "--paths", glob + ",src/" + "*a" * 20 + "b", "the star glob memory")
    assert r.code == 0, r.err
    long = ready / ("a" * 80 + ".py")
    long.write_text("print(1)\n")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "a long name", cwd=ready)
    long.write_text("print(2)\n")  # a changed file is what `context` matches globs against
    (ready / "src").mkdir()
    (ready / "src" / ("a" * 80)).write_text("x\n")


def test_a_glob_of_many_stars_does_not_stall_context(ready: Path):
    _star_glob_memory(ready)
    r = run_cli("context", "--query", "star glob")  # run_cli's 120 s timeout is the hang budget
    assert r.code == 0, r.err


def test_a_glob_of_many_stars_stalls_neither_mcp_initialize_nor_the_claude_hooks(ready: Path, tmp_path: Path):
    """Issue 20.14: the MCP handshake carries the session context (globs matched against the
    changed files), so one such memory made `initialize` take 20 s; the Claude hooks must answer
    within the timeout the client gives them (HOOK_TIMEOUT_S, written by `init --agent claude`)."""
    _star_glob_memory(ready)
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(ready))
    errlog_path = tmp_path / "server-stderr.txt"

    async def main() -> tuple[str, str]:
        with errlog_path.open("w") as errlog, anyio.fail_after(HANG_S):
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                init = await s.initialize()
                res = await s.call_tool("memory_search", {"query": "star glob"})
                assert not res.is_error
                return init.instructions or "", "\n".join(getattr(b, "text", "") for b in res.content)

    instructions, found = anyio.run(main)
    assert "memory_search" in instructions
    assert "the star glob memory" in found
    assert "Traceback" not in errlog_path.read_text()
    for args, stdin in ((["context", "--hook", "claude"], "{}"),
                        (["capture", "--hook", "claude"], json.dumps({"prompt": "what about the star glob?"}))):
        # the client kills a hook after HOOK_TIMEOUT_S: that is the budget it has
        p = subprocess.run([sys.executable, "-m", "git_memex", *args], input=stdin, capture_output=True, text=True,
                           timeout=HOOK_TIMEOUT_S)
        assert p.returncode == 0, (args, p.stderr)


def test_star_runs_keep_their_meaning():
    assert glob_matches(["***x"], ["abcx", "a/bx"]) == ["abcx", "a/bx"]
    assert glob_matches(["src/" + "*a" * 20 + "b"], ["src/" + "a" * 60]) == []
    assert glob_matches(["src/" + "*a" * 20 + "b"], ["src/" + "a" * 60 + "b"]) == ["src/" + "a" * 60 + "b"]


def test_twenty_thousand_tags_are_refused_at_once_in_one_sentence(ready: Path):
    tags = ",".join(f"t{i}" for i in range(20_000))
    r = run_cli("add", "--scope", "personal", "--tags", tags, "many tags")
    assert r.code == 1, r.err
    assert "at most 1000" in r.err and "internal error" not in r.err and len(r.err.strip().splitlines()) == 1


def test_a_deeply_nested_bundle_is_refused_in_one_sentence(ready: Path, tmp_path: Path):
    bundle = tmp_path / "deep.json"
    bundle.write_text('{"format": "git-memex-bundle", "memories": [{"body": "x", "nest": '
                      + "[" * 100_000 + "]" * 100_000 + "}]}")
    r = run_cli("import", str(bundle))
    assert r.code in (1, 2), r.err
    assert "nested too deeply" in r.err and "internal error" not in r.err


def test_terminal_controls_and_bidi_overrides_are_never_printed_raw(ready: Path):
    evil = "evil \x1b[31mred \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ back\x08 \u202etxt.exe \u2066iso\u2069"
    r = run_cli("add", "--scope", "personal", "--tags", "evil", evil)
    assert r.code == 0, r.err
    for args in (("list",), ("search", "evil"), ("context", "--query", "evil"), ("list", "--json")):
        r = run_cli(*args)
        assert r.code == 0, (args, r.err)
        shown = r.out + r.err
        assert "evil" in shown, args
        for ch in "\x1b\x08\u202e\u2066\u2069":
            assert ch not in shown, (args, repr(ch))
    assert run_cli("list", "--json").json()["total"] == 1  # the escapes are JSON escapes: still valid JSON

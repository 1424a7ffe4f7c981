"""Hostile files and hostile surroundings give one sentence, never a traceback: a bundle with a
number longer than Python reads, a scopes.json nested 100,000 deep, an MCP server inside a
repository git refuses for its owner (real processes: the CLI, the official MCP stdio client)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import git, run_cli, run_cli_process


def test_a_bundle_with_a_5000_digit_number_is_refused_in_one_sentence(repo: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "git-memex-bundle", "version": 1, "revision": ' + "9" * 5000 + "}", encoding="utf-8")
    r = run_cli_process("import", str(bad))
    assert r.code == 2 and "internal error" not in r.err and "Traceback" not in r.err, r.err
    assert r.err.count("\n") == 1 and "is not a git-memex bundle (a number in it is too long)" in r.err


def test_a_scopes_json_nested_too_deeply_is_an_unreadable_one(repo: Path, isolated_env: Path) -> None:
    assert run_cli("add", "the deploy runs from the release branch", "--scope", "personal").code == 0
    (isolated_env / "data" / "scopes.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    for args in (("list",), ("search", "deploy"), ("doctor",)):
        r = run_cli_process(*args)
        assert r.code in (0, 1) and "internal error" not in r.err and "RecursionError" not in r.err, (args, r.err)
    assert "release branch" in run_cli_process("search", "deploy").out


def test_mcp_tool_in_a_repository_of_another_owner_is_a_tool_error(tmp_path: Path) -> None:
    work = tmp_path / "theirs"
    work.mkdir()
    git("init", "-q", cwd=work)
    env = {**os.environ, "GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}
    env.pop("GIT_MEMEX_DEBUG", None)
    errlog_path = tmp_path / "stderr.txt"

    async def main() -> tuple[bool, str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=env, cwd=str(work))
        with open(errlog_path, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                res = await s.call_tool("memory_search", {"query": "deploy"})
                return res.is_error, "\n".join(getattr(b, "text", "") for b in res.content)

    is_error, said = anyio.run(main)
    assert is_error and "dubious ownership" in said and "\n" not in said, said
    err = errlog_path.read_text()
    assert "Traceback" not in err and "unexpected exception" not in err, err

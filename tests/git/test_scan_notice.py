"""A clone whose commits do not reach the secret scan says so (issue 32): every git-memex command
that ends well there prints one stderr line naming `git memex init`, and the session-start block
(the `context` command, the agents' SessionStart hook, the MCP handshake) tells the agent.

The scan is missing when the pre-commit hook git runs (core.hooksPath respected) is not ours, is
a hook manager's whose committed file has no git-memex entry, or is not there, in a repository
whose memory folder holds memory files. Not after `init --no-hooks` (a choice `doctor` accepts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git, run_cli, run_cli_process

MEM = ".ai/open-memex"
NOTICE = "are not checked for secrets"


def committed_memory(work: Path) -> None:
    m = model.create("the staging database is db-stage-2", scope="project", review_state="approved")
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    git("add", "-A", cwd=work)
    git("commit", "-q", "--no-verify", "-m", "a memory", cwd=work)


def notices(err: str) -> list[str]:
    return [line for line in err.splitlines() if NOTICE in line]


@pytest.fixture
def unguarded(ready: Path) -> Path:
    """A set-up clone with a committed memory whose pre-commit hook has been deleted."""
    committed_memory(ready)
    assert notices(run_cli("list").err) == []  # guarded: nothing said
    (ready / ".git" / "hooks" / "pre-commit").unlink()
    return ready


def test_each_command_says_once_that_the_scan_is_missing(unguarded: Path):
    for argv in (["list"], ["search", "staging"], ["where"], ["audit"]):
        r = run_cli(*argv)
        assert r.code == 0, (argv, r.err)
        said = notices(r.err)
        assert len(said) == 1 and "run `git memex init`" in said[0], (argv, r.err)
        assert "pre-commit" in said[0], said
    r = run_cli("search", "staging", "--json")
    assert r.code == 0 and json.loads(r.out) is not None  # stdout stays one JSON document
    assert len(notices(r.err)) == 1
    p = run_cli_process("list")  # a real process, as a person runs it
    assert p.code == 0 and len(notices(p.err)) == 1, p.err
    assert run_cli("init", "--yes").code == 0  # the command it names fixes it
    assert notices(run_cli("list").err) == []


def test_a_failing_command_prints_only_its_error(unguarded: Path):
    r = run_cli("show", "01ZZZZZZZZ")
    assert r.code == 1 and len(r.err.strip().splitlines()) == 1 and NOTICE not in r.err, r.err


def test_the_session_block_tells_the_agent(unguarded: Path):
    r = run_cli("context")
    assert r.code == 0 and "Note: commits in this clone do not check memory files for secrets" in r.out, r.out
    assert "`git memex init`" in r.out and notices(r.err) == []
    payload = json.dumps({"session_id": "s", "cwd": str(unguarded), "hook_event_name": "SessionStart"})
    hook = run_cli_process("context", "--hook", "claude", input=payload)
    assert hook.code == 0, hook.err
    said = json.loads(hook.out)["hookSpecificOutput"]["additionalContext"]
    assert "do not check memory files for secrets" in said and "git memex init" in said, said
    from mcp_client import session

    async def instructions(c):  # the MCP handshake's session block
        return c.instructions

    assert "do not check memory files for secrets" in (session(instructions, unguarded) or "")
    assert run_cli("init", "--yes").code == 0
    assert "secrets" not in run_cli("context").out


def test_husky_folder_without_our_line_is_named(ready: Path):
    """core.hooksPath names husky's folder (what `npm install` sets) and `.husky/pre-commit` has no
    git-memex line: the notice names husky's file; init adds the line and the notice goes."""
    committed_memory(ready)
    (ready / "package.json").write_text('{"name": "app", "devDependencies": {"husky": "9.1.7"}}\n')
    stub = ready / ".husky" / "_"
    stub.mkdir(parents=True)
    for name in ("pre-commit", "pre-merge-commit", "h"):  # husky's generated stubs and runner, as `husky` writes them
        (stub / name).write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n' if name != "h" else
                                 '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n'
                                 '[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n')
        (stub / name).chmod(0o755)
    (ready / ".husky" / "pre-commit").write_text("npm test\n")
    git("config", "core.hooksPath", ".husky/_", cwd=ready)
    said = notices(run_cli("list").err)
    assert len(said) == 1 and ".husky/pre-commit" in said[0], said
    assert run_cli("init", "--yes").code == 0
    assert notices(run_cli("list").err) == []


def test_nothing_is_said_without_memories_or_after_no_hooks(repo: Path):
    assert run_cli("init", "--yes", "--no-hooks").code == 0
    assert run_cli("add", "a draft stays in the outbox").code == 0
    assert notices(run_cli("list").err) == []  # no memory file in the repository yet
    committed_memory(repo)
    assert notices(run_cli("list").err) == []  # --no-hooks was chosen: doctor says it, commands do not
    git("config", "--unset", "memex.hooks", cwd=repo)
    assert len(notices(run_cli("list").err)) == 1

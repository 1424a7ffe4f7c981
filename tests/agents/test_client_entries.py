"""`init --client` and `--uninstall` touch only what init writes, and give the person's files back
byte for byte (issue 32 item 14, an outside review): a server of theirs under our name, a hook of
theirs that runs git-memex, a key given twice, CRLF files, files without a newline at the end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

DOCKER = ('{\n  "mcpServers": {\n    "memex": { "command": "docker", "args": ["run", "-i", "ghcr.io/acme/memex", '
          '"mcp"] },\n    "fs": { "command": "fs-server" }\n  }\n}\n')
THEIR_MEMEX = '{\n  "mcpServers": {\n    "memex": {\n      "command": "my-own-memex",\n      "args": ["serve"]\n    }\n  }\n}\n'
THEIR_HOOK = ('{\n  "hooks": {\n    "SessionStart": [\n      {\n        "matcher": "startup",\n        "hooks": [\n'
              '          { "type": "command", "command": "git-memex context --hook claude" },\n'
              '          { "type": "command", "command": "echo mine" }\n        ]\n      }\n    ]\n  }\n}\n')


def init(work: Path, *extra: str) -> str:
    r = run_cli("init", "--yes", *extra, cwd=work)
    assert r.code == 0, r.err
    return r.out


def uninstall(work: Path) -> str:
    r = run_cli("init", "--uninstall", "--yes", cwd=work)
    assert r.code == 0, r.err
    return r.out


# ------------------------------------------------------------------ finding 9
def test_uninstall_keeps_a_server_that_only_looks_like_ours(repo: Path):
    (repo / ".mcp.json").write_text(DOCKER)
    init(repo)  # never --client: nothing of ours in .mcp.json
    out = uninstall(repo)
    assert ".mcp.json" not in out, out
    assert (repo / ".mcp.json").read_text() == DOCKER


def test_init_never_overwrites_a_server_of_theirs_under_our_name(repo: Path):
    (repo / ".mcp.json").write_text(THEIR_MEMEX)
    out = init(repo, "--client", "claude")
    assert "kept       claude MCP config" in out and "not git-memex's (`my-own-memex serve`)" in out, out
    assert "updated    claude MCP config" not in out
    assert (repo / ".mcp.json").read_text() == THEIR_MEMEX
    uninstall(repo)
    assert (repo / ".mcp.json").read_text() == THEIR_MEMEX  # not deleted


def test_uninstall_keeps_a_hook_of_theirs_that_runs_git_memex(repo: Path):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(THEIR_HOOK)
    init(repo, "--client", "claude", "--claude-hooks")
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    starts = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert starts.count("git-memex context --hook claude") == 1  # theirs runs it: not added twice
    uninstall(repo)
    assert (repo / ".claude" / "settings.json").read_text() == THEIR_HOOK


# ------------------------------------------------------------------ finding 15
def test_a_key_given_twice_is_never_rewritten(repo: Path):
    text = '{\n  "mcpServers": {\n    "a": {"command": "a"}\n  },\n  "mcpServers": {\n    "b": {"command": "b"}\n  }\n}\n'
    (repo / ".mcp.json").write_text(text)
    out = init(repo, "--client", "claude")
    assert "printed    claude MCP config" in out and 'the key "mcpServers" is given twice' in out, out
    assert (repo / ".mcp.json").read_text() == text
    uninstall(repo)
    assert (repo / ".mcp.json").read_text() == text


# ------------------------------------------------------------------ finding 20 (JSON)
def test_a_crlf_json_file_keeps_its_line_ending(repo: Path):
    text = '{\r\n\t"mcpServers" : {\r\n\t\t"other": {"command": "foo", "args": ["a","b"]}\r\n\t}\r\n}'
    (repo / ".mcp.json").write_bytes(text.encode())
    init(repo, "--client", "claude")
    data = (repo / ".mcp.json").read_bytes()
    assert b"memex" in data and data.count(b"\n") == data.count(b"\r\n"), data
    json.loads(data)
    uninstall(repo)
    assert (repo / ".mcp.json").read_bytes() == text.encode()


# ------------------------------------------------------------------ finding 14
@pytest.mark.parametrize("ending", ["", "\r\n"])
def test_files_without_a_newline_at_the_end_come_back_as_they_were(repo: Path, ending: str):
    attributes = f"*.png binary{ending}*.sh text eol=lf"  # no newline at the end
    agents = f"# AGENTS.md{ending}{ending}Be brief."
    (repo / ".gitattributes").write_bytes(attributes.encode())
    (repo / "AGENTS.md").write_bytes(agents.encode())
    init(repo, "--client", "claude")
    for rel in (".gitattributes", "AGENTS.md"):
        data = (repo / rel).read_bytes()
        assert b"memex" in data and (not ending or data.count(b"\n") == data.count(b"\r\n")), (rel, data)
    uninstall(repo)
    assert (repo / ".gitattributes").read_bytes() == attributes.encode()
    assert (repo / "AGENTS.md").read_bytes() == agents.encode()

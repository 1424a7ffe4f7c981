"""Editor MCP configuration, Claude Code hooks and agent guidance, written into real temp trees."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from git_memex.agents import clients
from git_memex.errors import UsageError

from conftest import git, run_cli, user_profile

# client -> (file relative to the work tree or home, JSON key or None for TOML)
EXPECTED = {
    "vscode": (".vscode/mcp.json", "servers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "claude": (".mcp.json", "mcpServers"),
    "visualstudio": (".mcp.json", "servers"),
    "opencode": ("opencode.jsonc", "mcp"),
    "codex": (".codex/config.toml", None),
}
WORKSPACE = ["--repo", "${workspaceFolder}"]  # vscode and cursor name the workspace explicitly
VENV_BIN = str(Path(sys.executable).parent)  # where this git-memex is installed


def with_git_memex_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the user does for a shared file's `git-memex` (the README's set-up): link the installed
    one into ~/.local/bin, where a new login shell finds it, and have it on this shell's PATH."""
    local_bin = Path.home() / ".local" / "bin"
    local_bin.mkdir(parents=True, exist_ok=True)
    if not (local_bin / "git-memex").exists():
        (local_bin / "git-memex").symlink_to(Path(VENV_BIN) / "git-memex")
    user_profile(Path.home())
    monkeypatch.setenv("PATH", str(local_bin) + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    return work, home


def read_json(p: Path) -> dict:
    return json.loads(p.read_text(encoding="utf-8"))


def test_clients_list() -> None:
    assert clients.CLIENTS == ("vscode", "cursor", "claude", "codex", "opencode", "visualstudio")
    assert set(EXPECTED) == set(clients.CLIENTS)


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_each_client_written_into_an_empty_tree(tree: tuple[Path, Path], client: str) -> None:
    work, home = tree
    # a file in the work tree is shared: the portable command; codex's is this user's own (D17)
    cmd, args = clients.server_command() if client == "codex" else ("git-memex", ["mcp"])
    res = clients.write_config(client, work, home)
    rel, key = EXPECTED[client]
    assert res.action == "created"
    assert res.path == (home if client == "codex" else work) / rel
    assert res.path == clients.config_path(client, work, home)
    if key is None:
        data = tomllib.loads(res.path.read_text(encoding="utf-8"))
        assert data["mcp_servers"]["memex"] == {"command": cmd, "args": args}
        assert "codex mcp add memex -- " in res.snippet
        tomllib.loads(res.snippet)  # the snippet itself is valid TOML (the add line is a comment)
        return
    section = read_json(res.path)[key]
    snippet = json.loads(res.snippet)[key]
    if client == "opencode":  # v2 shape: mcp.servers.<name>
        section, snippet = section["servers"], snippet["servers"]
    entry = section["memex"]
    if client == "opencode":
        assert entry == {"type": "local", "command": [cmd, *args], "enabled": True}
        assert read_json(res.path)["$schema"] == clients.OPENCODE_SCHEMA
    elif client == "cursor":
        assert entry == {"command": cmd, "args": [*args, *WORKSPACE]}
    elif client == "vscode":
        assert entry == {"type": "stdio", "command": cmd, "args": [*args, *WORKSPACE]}
    else:
        assert entry == {"type": "stdio", "command": cmd, "args": args}
    assert snippet["memex"] == entry
    assert clients.snippet(client) == res.snippet


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_second_write_is_unchanged(tree: tuple[Path, Path], client: str) -> None:
    work, home = tree
    first = clients.write_config(client, work, home)
    before = first.path.read_bytes()
    again = clients.write_config(client, work, home)
    assert again.action == "unchanged"
    assert again.path.read_bytes() == before


def test_merge_keeps_other_servers_and_keys(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = work / ".vscode" / "mcp.json"
    p.parent.mkdir()
    original: dict[str, Any] = {
        "inputs": [{"id": "token", "type": "promptString"}],
        "servers": {"github": {"type": "http", "url": "https://api.example.com/mcp"},
                    "memex": {"type": "stdio", "command": "/old/venv/bin/git-memex", "args": ["mcp"],
                                  "env": {"A": "1"}}},  # an older init: git-memex by path
    }
    p.write_text(json.dumps(original), encoding="utf-8")
    res = clients.write_config("vscode", work, home)
    assert res.action == "updated"
    data = read_json(p)
    assert data["inputs"] == original["inputs"]
    assert data["servers"]["github"] == original["servers"]["github"]
    assert data["servers"]["memex"] == {"type": "stdio", "command": "git-memex", "args": ["mcp", *WORKSPACE],
                                        "env": {"A": "1"}}
    assert clients.write_config("vscode", work, home).action == "unchanged"


def test_claude_and_visualstudio_share_mcp_json(tree: tuple[Path, Path]) -> None:
    work, home = tree
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    assert clients.write_config("claude", work, home).action == "updated"
    assert clients.write_config("visualstudio", work, home).action == "updated"
    data = read_json(work / ".mcp.json")
    assert set(data) == {"mcpServers", "servers"}
    assert set(data["mcpServers"]) == {"other", "memex"} and set(data["servers"]) == {"memex"}
    assert clients.write_config("claude", work, home).action == "unchanged"
    assert clients.write_config("visualstudio", work, home).action == "unchanged"


JSONC = """{
  // my servers
  "servers": {
    "github": {"type": "http", "url": "https://api.example.com/mcp"},
  },
}
"""


@pytest.mark.parametrize(
    ("client", "rel", "content"),
    [
        ("vscode", ".vscode/mcp.json", JSONC),
        ("cursor", ".cursor/mcp.json", '{"mcpServers": {}, }'),
        ("opencode", "opencode.jsonc", '{\n  /* block comment */\n  "mcp": {}\n}\n'),
        ("claude", ".mcp.json", '["not", "an", "object"]'),
        ("visualstudio", ".mcp.json", '{"servers": ["wrong shape"]}'),
    ],
)
def test_non_plain_json_is_never_rewritten(tree: tuple[Path, Path], client: str, rel: str, content: str) -> None:
    work, home = tree
    p = work / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(content, encoding="utf-8")
    before = p.read_bytes()
    mtime = p.stat().st_mtime_ns
    res = clients.write_config(client, work, home)
    assert res.action == "printed"
    assert res.path == p
    assert p.read_bytes() == before and p.stat().st_mtime_ns == mtime
    assert '"memex"' in res.snippet and json.loads(res.snippet)
    assert [x.name for x in p.parent.iterdir() if x.name.endswith(".tmp")] == []


def test_opencode_prefers_an_existing_plain_json(tree: tuple[Path, Path]) -> None:
    work, home = tree
    (work / "opencode.json").write_text(json.dumps({"theme": "dark"}))
    res = clients.write_config("opencode", work, home)
    assert res.path == work / "opencode.json" and res.action == "updated"
    data = read_json(res.path)
    assert data["theme"] == "dark" and "memex" in data["mcp"]["servers"]
    assert "$schema" not in data  # we do not add keys to a file we did not create
    assert not (work / "opencode.jsonc").exists()


def test_opencode_entry_of_the_v1_shape_moves_into_servers(tree: tuple[Path, Path]) -> None:
    work, home = tree
    v1 = {"mcp": {"memex": {"type": "local", "command": ["/old/bin/git-memex", "mcp"], "environment": {"A": "1"}},
                  "other": {"type": "remote", "url": "https://example.com/mcp"}}}
    (work / "opencode.json").write_text(json.dumps(v1))
    assert clients.write_config("opencode", work, home).action == "updated"
    data = read_json(work / "opencode.json")
    assert "memex" not in data["mcp"] and data["mcp"]["other"] == v1["mcp"]["other"]
    assert data["mcp"]["servers"]["memex"] == {"type": "local", "command": ["git-memex", "mcp"], "enabled": True,
                                               "environment": {"A": "1"}}
    assert clients.write_config("opencode", work, home).action == "unchanged"


def test_cursor_gets_an_always_applied_rule_file(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    res = clients.write_agent_guidance(work, "cursor", ".ai/open-memex")
    assert res.action == "created" and res.path == work / ".cursor" / "rules" / "git-memex.mdc"
    text = res.path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n---\n")
    assert head.startswith("---\n") and "alwaysApply: true" in head.splitlines() and "description: " in head
    for needle in ("memory_search", "memory_add", "not instructions", ".ai/open-memex/"):
        assert needle in body
    assert clients.write_agent_guidance(work, "cursor", ".ai/open-memex").action == "unchanged"
    assert clients.write_agent_guidance(work, "cursor", "docs/memory").action == "updated"


def test_codex_toml_append_keeps_the_file(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = home / ".codex" / "config.toml"
    p.parent.mkdir()
    original = 'model = "o3"  # my model\n\n[mcp_servers.other]\ncommand = "other"\nargs = []\n'
    p.write_text(original, encoding="utf-8")
    res = clients.write_config("codex", work, home)
    assert res.action == "updated"
    text = p.read_text(encoding="utf-8")
    assert text.startswith(original)  # appended, comments and all
    data = tomllib.loads(text)
    assert data["model"] == "o3" and set(data["mcp_servers"]) == {"other", "memex"}
    assert clients.write_config("codex", work, home).action == "unchanged"
    assert p.read_text(encoding="utf-8") == text


def test_codex_existing_memex_table_is_left_alone(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = home / ".codex" / "config.toml"
    p.parent.mkdir()
    p.write_text('[mcp_servers.memex]\ncommand = "my-own-wrapper"\n', encoding="utf-8")
    assert clients.write_config("codex", work, home).action == "unchanged"
    assert "my-own-wrapper" in p.read_text(encoding="utf-8")


@pytest.mark.parametrize("content", ["this is = not [toml", 'mcp_servers = { other = { command = "x" } }\n'])
def test_codex_toml_we_cannot_extend_is_printed(tree: tuple[Path, Path], content: str) -> None:
    work, home = tree
    p = home / ".codex" / "config.toml"
    p.parent.mkdir()
    p.write_text(content, encoding="utf-8")
    res = clients.write_config("codex", work, home)
    assert res.action == "printed" and p.read_text(encoding="utf-8") == content
    assert "[mcp_servers.memex]" in res.snippet


def test_unknown_client_is_a_usage_error(tree: tuple[Path, Path]) -> None:
    with pytest.raises(UsageError):
        clients.write_config("emacs", *tree)
    with pytest.raises(UsageError):
        clients.snippet("emacs")


# --------------------------------------------------------------------- D17 command resolution
def test_server_command_runs(tmp_path: Path) -> None:
    cmd, args = clients.server_command()
    assert args[-1] == "mcp"
    r = subprocess.run([cmd, *args[:-1], "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "git-memex" in r.stdout


def test_server_command_without_path_uses_the_script_beside_python(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git-memex on PATH
    beside = Path(sys.executable).parent / "git-memex"
    cmd, args = clients.server_command()
    if beside.is_file():
        assert cmd == str(beside.absolute()) and args == ["mcp"]
    else:
        assert (cmd, args) == (sys.executable, ["-m", "git_memex", "mcp"])


def test_server_command_prefers_what_a_new_login_shell_finds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "git-memex"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("git-memex")
    # on this shell's PATH only (an `export` in the install shell): the next session would not find
    # it, so a user-level file names it by its absolute path
    assert clients.server_command() == (str(fake), ["mcp"])
    local_bin = Path.home() / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (local_bin / "git-memex").symlink_to(fake)  # where a new login shell looks (the README's set-up)
    user_profile(Path.home())  # a user's default ~/.profile puts ~/.local/bin on PATH
    assert clients.server_command() == ("git-memex", ["mcp"])
    assert clients.hook_commands()["SessionStart"] == "git-memex context --hook claude"
    assert clients.hook_commands()["UserPromptSubmit"] == "git-memex capture --hook claude"


# --------------------------------------------------------------------- Claude Code hooks
def _our_commands(data: dict, event: str) -> list[str]:
    return [h["command"] for g in data["hooks"].get(event, []) for h in g["hooks"] if "memex" in h["command"]]


def test_claude_hooks_merge_keeps_other_hooks_and_adds_ours_once(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    p = work / ".claude" / "settings.json"
    p.parent.mkdir()
    other_session = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    pre_tool = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
    p.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]},
                             "hooks": {"SessionStart": [other_session], "PreToolUse": [pre_tool]}}))
    res = clients.write_claude_hooks(work)
    assert res.action == "updated" and res.path == p
    data = read_json(p)
    assert data["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert data["hooks"]["PreToolUse"] == [pre_tool]
    assert data["hooks"]["SessionStart"][0] == other_session
    cmds = clients.hook_commands()
    assert _our_commands(data, "SessionStart") == [cmds["SessionStart"]]
    assert _our_commands(data, "UserPromptSubmit") == [cmds["UserPromptSubmit"]]
    entry = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert entry["type"] == "command" and entry["timeout"] > 0
    before = p.read_bytes()
    assert clients.write_claude_hooks(work).action == "unchanged"
    assert p.read_bytes() == before


def test_claude_hooks_created_and_jsonc_printed(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    res = clients.write_claude_hooks(work)
    assert res.action == "created"
    assert set(read_json(res.path)["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop"}
    res.path.write_text('{\n  // comment\n  "hooks": {}\n}\n')
    before = res.path.read_bytes()
    again = clients.write_claude_hooks(work)
    assert again.action == "printed" and res.path.read_bytes() == before
    assert json.loads(again.snippet)["hooks"]["SessionStart"]


def test_claude_hook_command_from_another_install_is_refreshed_not_duplicated(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    p = work / ".claude" / "settings.json"
    p.parent.mkdir()
    stale = {"hooks": [{"type": "command", "command": "/old/venv/bin/git-memex context --hook claude"}]}
    p.write_text(json.dumps({"hooks": {"SessionStart": [stale]}}))
    assert clients.write_claude_hooks(work).action == "updated"
    data = read_json(p)
    assert _our_commands(data, "SessionStart") == [clients.hook_commands()["SessionStart"]]


def test_written_hook_commands_really_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_git_memex_on_path(monkeypatch)
    assert run_cli("add", "We deploy with blue-green on Fridays").code == 0
    clients.write_claude_hooks(repo)
    data = read_json(repo / ".claude" / "settings.json")
    start = data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    r = subprocess.run(start, shell=True, input='{"hook_event_name": "SessionStart", "source": "startup"}',
                       capture_output=True, text=True, cwd=repo, timeout=60, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert "blue-green" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    prompt = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    r = subprocess.run(prompt, shell=True, input=json.dumps({"prompt": "remember that hooks run", "cwd": str(repo)}),
                       capture_output=True, text=True, cwd=repo, timeout=60, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    # Claude Code's Stop: nothing by default; with memex.implicitCapture, once per session
    stop = data["hooks"]["Stop"][0]["hooks"][0]["command"]
    payload = {"session_id": "abc123", "transcript_path": "/home/u/.claude/projects/x/abc123.jsonl", "cwd": str(repo),
               "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False}

    def run_stop(**extra: object) -> str:
        p = subprocess.run(stop, shell=True, input=json.dumps({**payload, **extra}), capture_output=True, text=True,
                           cwd=repo, timeout=60, env=os.environ)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        return p.stdout

    assert run_stop() == ""
    git("config", "memex.implicitCapture", "true", cwd=repo)
    asked = json.loads(run_stop())
    assert set(asked) == {"decision", "reason"} and asked["decision"] == "block"
    assert run_stop(stop_hook_active=True) == "" and run_stop() == ""
    git("status", "--porcelain", cwd=repo)


# --------------------------------------------------------------------- Codex hooks
CODEX_OUT_KEYS = {"continue", "stopReason", "suppressOutput", "systemMessage"}
"""Keys every Codex hook output schema allows (codex-rs/hooks/schema/generated/*.command.output)."""


def check_codex_output(event: str, out: dict) -> None:
    """What Codex's output schema for `event` allows (additionalProperties false at both levels)."""
    if event == "Stop":
        assert set(out) <= CODEX_OUT_KEYS | {"decision", "reason"}
        assert out.get("decision") in (None, "block")
        return
    allowed = CODEX_OUT_KEYS | {"hookSpecificOutput"} | ({"decision", "reason"} if event == "UserPromptSubmit" else set())
    assert set(out) <= allowed
    spec = out["hookSpecificOutput"]
    assert set(spec) <= {"hookEventName", "additionalContext"} and spec["hookEventName"] == event
    assert isinstance(spec["additionalContext"], str)


def codex_input(event: str, cwd: Path, **extra: object) -> str:
    """Codex's documented hook stdin (the *.command.input schemas; session-start adds `source`)."""
    doc: dict[str, object] = {"session_id": "019a0000-0000-7000-8000-000000000001", "transcript_path": None,
                              "cwd": str(cwd), "hook_event_name": event, "model": "gpt-5-codex",
                              "permission_mode": "default"}
    if event == "SessionStart":
        doc["source"] = "startup"
    else:
        doc["turn_id"] = "turn-1"
    if event == "Stop":
        doc.update(stop_hook_active=False, last_assistant_message="Done.")
    return json.dumps({**doc, **extra})


def test_codex_hooks_go_where_codex_home_says_and_merge(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = tree
    codex = home / "elsewhere-codex"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    p = codex / "hooks.json"
    codex.mkdir()
    mine = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    p.write_text(json.dumps({"hooks": {"SessionStart": [mine]}}))
    res = clients.write_codex_hooks(home)
    assert res.action == "updated" and res.path == p
    data = read_json(p)
    assert data["hooks"]["SessionStart"][0] == mine
    cmds = clients.hook_commands("codex")
    assert cmds["Stop"].endswith("capture --hook codex --stop")
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        assert _our_commands(data, event) == [cmds[event]]
    assert not (home / ".codex").exists()
    before = p.read_bytes()
    assert clients.write_codex_hooks(home).action == "unchanged" and p.read_bytes() == before
    # --uninstall keeps them (user level); --uninstall --codex-hooks takes only ours out of the user's file
    (kept,) = [r for r in clients.removals(work, ".ai/open-memex", home) if r.path == p]
    assert kept.action == "kept"
    (gone,) = [r for r in clients.removals(work, ".ai/open-memex", home, codex_hooks=True) if r.path == p]
    assert gone.action == "updated" and json.loads(gone.text or "") == {"hooks": {"SessionStart": [mine]}}


def test_codex_hooks_beside_inline_toml_hooks_are_printed(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = tree
    monkeypatch.setenv("CODEX_HOME", str(home / "c"))
    (home / "c").mkdir()
    toml = home / "c" / "config.toml"
    toml.write_text('[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "echo bye"\n')
    before = toml.read_bytes()
    res = clients.write_codex_hooks(home)
    assert res.action == "printed" and res.path == toml and toml.read_bytes() == before
    assert not (home / "c" / "hooks.json").exists()
    merged = tomllib.loads(before.decode() + "\n" + res.snippet)  # what the user pastes is valid TOML
    assert [h["command"] for g in merged["hooks"]["Stop"] for h in g["hooks"]][-1] == clients.hook_commands("codex")["Stop"]


def test_written_codex_hook_commands_answer_codex_shapes(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command init writes, run by a shell with Codex's documented stdin, prints what Codex's
    output schema accepts; the Stop hook only with memex.implicitCapture true."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    r = run_cli("init", "--yes", "--client", "codex", "--codex-hooks")
    assert r.code == 0, r.err
    assert "trust the three git-memex hooks" in r.out
    assert run_cli("add", "We deploy with blue-green on Fridays").code == 0
    data = read_json(tmp_path / "codex" / "hooks.json")
    command = {event: groups[0]["hooks"][0]["command"] for event, groups in data["hooks"].items()}

    def hook(event: str, **extra: object) -> str:
        p = subprocess.run(command[event], shell=True, input=codex_input(event, repo, **extra), capture_output=True,
                           text=True, cwd=repo, timeout=60, env=os.environ)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        return p.stdout

    start = json.loads(hook("SessionStart"))
    check_codex_output("SessionStart", start)
    assert "blue-green" in start["hookSpecificOutput"]["additionalContext"]
    prompt = json.loads(hook("UserPromptSubmit", prompt="remember that codex hooks run too"))
    check_codex_output("UserPromptSubmit", prompt)
    assert "saved 1 memory" in prompt["hookSpecificOutput"]["additionalContext"]
    listed = run_cli("list", "--json").json()["memories"]
    assert [m for m in listed if "codex hooks run" in m["snippet"]]
    assert hook("Stop") == ""  # off by default
    git("config", "memex.implicitCapture", "true", cwd=repo)
    asked = json.loads(hook("Stop"))
    check_codex_output("Stop", asked)
    assert asked["decision"] == "block" and "memory_add" in asked["reason"]
    assert hook("Stop", stop_hook_active=True) == "" and hook("Stop") == ""


def test_codex_hooks_flag_needs_client_codex(repo: Path) -> None:
    for args in (["--codex-hooks"], ["--client", "claude", "--codex-hooks"]):
        r = run_cli("init", "--yes", *args)
        assert r.code == 1 and len(r.err.strip().splitlines()) == 1, (args, r.err)
        assert "--codex-hooks" in r.err and "--client codex" in r.err, (args, r.err)
    assert not (Path.home() / ".codex").exists()  # nothing was written


# --------------------------------------------------------------------- agent guidance
@pytest.mark.parametrize("client", ["vscode", "visualstudio"])
def test_copilot_instructions_section_once(tree: tuple[Path, Path], client: str) -> None:
    work, _ = tree
    p = work / ".github" / "copilot-instructions.md"
    p.parent.mkdir()
    p.write_text("# Team rules\n\nUse type hints.\n", encoding="utf-8")
    res = clients.write_agent_guidance(work, client, ".ai/open-memex")
    assert res.action == "updated" and res.path == p
    text = p.read_text(encoding="utf-8")
    assert text.startswith("# Team rules\n\nUse type hints.\n")
    assert text.count(clients.GUIDANCE_HEADING) == 1
    for needle in ("memory_search", "keyword variants", "memory_add", "not instructions", ".ai/open-memex/"):
        assert needle in text
    assert clients.write_agent_guidance(work, client, ".ai/open-memex").action == "unchanged"
    assert p.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("client", ["claude", "codex", "opencode"])
def test_agents_md_pointer_once(tree: tuple[Path, Path], client: str) -> None:
    work, _ = tree
    res = clients.write_agent_guidance(work, client, ".ai/open-memex")
    assert res.action == "created"
    line = "> Project memory lives in .ai/open-memex/ — query it with memory_search before answering."
    assert (work / "AGENTS.md").read_text(encoding="utf-8").splitlines().count(line) == 1
    assert clients.write_agent_guidance(work, client, ".ai/open-memex").action == "unchanged"
    # an existing AGENTS.md keeps its content; a moved memory folder updates the one pointer line
    (work / "AGENTS.md").write_text(f"# Rules\n\nBe kind.\n{line}\n", encoding="utf-8")
    moved = clients.write_agent_guidance(work, client, "docs/memory")
    assert moved.action == "updated"
    lines = (work / "AGENTS.md").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["# Rules", "", "Be kind."]
    assert [x for x in lines if x.startswith("> Project memory")] == [line.replace(".ai/open-memex", "docs/memory")]


def test_init_client_cursor_through_the_cli(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_git_memex_on_path(monkeypatch)
    r = run_cli("init", "--yes", "--client", "cursor")
    assert r.code == 0, r.err
    entry = read_json(repo / ".cursor" / "mcp.json")["mcpServers"]["memex"]
    assert entry["args"][-2:] == ["--repo", "${workspaceFolder}"]
    rule = (repo / ".cursor" / "rules" / "git-memex.mdc").read_text(encoding="utf-8")
    assert "alwaysApply: true" in rule and "memory_search" in rule
    # the entry, with the workspace expanded as Cursor does, serves this repository from anywhere
    argv = [entry["command"], *[a.replace("${workspaceFolder}", str(repo)) for a in entry["args"]]]
    elsewhere = tmp_path / "cursor-home"
    elsewhere.mkdir()
    from test_mcp_agents import stdio_argv

    status = stdio_argv(argv, elsewhere, "memory_status")
    assert status.structured_content["repository"] == str(repo)
    again = run_cli("init", "--yes", "--client", "cursor")
    assert again.code == 0 and "created" not in again.out and "updated" not in again.out


# --------------------------------------------------------------------- CODEX_HOME
def test_codex_file_is_where_codex_home_says(tree: tuple[Path, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = tree
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    res = clients.write_config("codex", work, home)
    assert res.path == tmp_path / "elsewhere" / "config.toml" and res.action == "created"
    assert not (home / ".codex").exists()
    assert [r.path for r in clients.removals(work, ".ai/open-memex", home)] == [res.path]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODEX_HOME", "relative")  # as codex reads it: from the current folder
    assert clients.config_path("codex", work, home) == tmp_path / "relative" / "config.toml"
    monkeypatch.setenv("CODEX_HOME", "")  # empty is unset
    assert clients.config_path("codex", work, home) == home / ".codex" / "config.toml"


# --------------------------------------------------------------------- the reference tool's server
REFERENCE_SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("open-memex", {"type": "stdio", "command": "open-memex", "args": ["mcp"]}),
    ("om", {"command": "npx", "args": ["-y", "open-memex@alpha", "mcp"]}),
    ("memory", {"command": "node", "args": ["/usr/lib/node_modules/open-memex/bin/open-memex.js", "mcp"]}),
    ("memory", {"command": "C:\\Users\\a\\AppData\\Roaming\\npm\\open-memex.cmd", "args": ["mcp"]}),
    ("open-memex", {"type": "local", "command": ["npx", "open-memex", "mcp"], "enabled": True}),
]
NOT_REFERENCE = [
    ("memex", {"command": "git-memex", "args": ["mcp"]}),
    ("memex", {"command": "/home/u/open-memex/.venv/bin/git-memex", "args": ["mcp"]}),
    ("open-memex", {"command": "git-memex", "args": ["mcp"]}),  # ours, under their name
    ("memex", {"command": sys.executable, "args": ["-m", "git_memex", "mcp"]}),
    ("other", {"command": "open-memex", "args": ["export"]}),
    ("open-memex", "not an entry"),
]


@pytest.mark.parametrize(("name", "entry"), REFERENCE_SHAPES)
def test_reference_server_shapes_are_recognised(name: str, entry: dict) -> None:
    assert clients.is_reference_server(name, entry)


@pytest.mark.parametrize(("name", "entry"), NOT_REFERENCE)
def test_our_server_and_other_commands_are_not_the_reference(name: str, entry: object) -> None:
    assert not clients.is_reference_server(name, entry)


def test_reference_server_in_json_is_named_then_replaced(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = work / ".vscode" / "mcp.json"
    p.parent.mkdir()
    other = {"type": "http", "url": "https://api.example.com/mcp"}
    p.write_text(json.dumps({"servers": {"github": other, "open-memex": dict(REFERENCE_SHAPES[0][1])}}))
    res = clients.write_config("vscode", work, home)
    assert res.action == "updated" and res.reference == ("open-memex",) and res.replaced == ()
    assert set(read_json(p)["servers"]) == {"github", "open-memex", "memex"}
    seen = clients.reference_servers("vscode", work, home)
    assert [(s.path, s.name) for s in seen] == [(p, "open-memex")]
    note = clients.reference_note(seen[0], replaced_by_init=True)
    assert str(p) in note and "--replace-open-memex" in note and note.count(".") >= 1 and "\n" not in note
    res = clients.write_config("vscode", work, home, replace_reference=True)
    assert res.action == "updated" and res.replaced == ("open-memex",) and res.reference == ()
    assert read_json(p)["servers"] == {"github": other, "memex": {"type": "stdio", "command": "git-memex",
                                                                   "args": ["mcp", *WORKSPACE]}}
    assert clients.write_config("vscode", work, home, replace_reference=True).action == "unchanged"


def test_reference_server_under_our_name_is_never_overwritten_without_the_flag(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = work / ".mcp.json"
    theirs = {"command": "npx", "args": ["-y", "open-memex@alpha", "mcp"], "env": {"OPEN_MEMEX_HOME": "/x"}}
    p.write_text(json.dumps({"mcpServers": {"memex": theirs}}))
    before = p.read_bytes()
    res = clients.write_config("claude", work, home)
    assert res.action == "unchanged" and res.reference == ("memex",) and p.read_bytes() == before
    assert "instead of ours" in clients.reference_note(clients.reference_servers("claude", work, home)[0],
                                                       replaced_by_init=True)
    assert clients.removals(work, ".ai/open-memex", home) == []  # --uninstall takes only ours
    res = clients.write_config("claude", work, home, replace_reference=True)
    assert res.replaced == ("memex",)
    assert read_json(p)["mcpServers"]["memex"] == {"type": "stdio", "command": "git-memex", "args": ["mcp"]}


def test_reference_server_in_claude_user_scopes_is_found(tree: tuple[Path, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = tree
    entry = dict(REFERENCE_SHAPES[0][1])
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"open-memex": entry},
                                                   "projects": {str(work): {"mcpServers": {"om": entry}}}}))
    seen = clients.reference_servers("claude", work, home)
    assert [(s.where, s.name) for s in seen] == [("user", "open-memex"), ("local", "om")]
    assert "`claude mcp remove --scope local om`" in clients.reference_note(seen[1], replaced_by_init=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "cfg"))  # Claude Code then reads only that folder
    assert clients.reference_servers("claude", work, home) == []


CODEX_WITH_REFERENCE = '''model = "o3"  # mine

[mcp_servers.open-memex]
command = "npx"
args = ["-y", "open-memex@alpha", "mcp"]

[mcp_servers.open-memex.env]
OPEN_MEMEX_HOME = "/x"

# my other server
[mcp_servers.other]
command = "other"
'''


def test_reference_table_in_codex_config_is_named_then_cut_out(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = home / ".codex" / "config.toml"
    p.parent.mkdir()
    p.write_text(CODEX_WITH_REFERENCE, encoding="utf-8")
    res = clients.write_config("codex", work, home)
    assert res.action == "updated" and res.reference == ("open-memex",)
    assert set(tomllib.loads(p.read_text())["mcp_servers"]) == {"open-memex", "other", "memex"}
    res = clients.write_config("codex", work, home, replace_reference=True)
    assert res.action == "updated" and res.replaced == ("open-memex",)
    text = p.read_text(encoding="utf-8")
    assert text.startswith('model = "o3"  # mine\n\n# my other server\n[mcp_servers.other]\ncommand = "other"\n')
    assert set(tomllib.loads(text)["mcp_servers"]) == {"other", "memex"}
    assert clients.write_config("codex", work, home, replace_reference=True).action == "unchanged"


def test_reference_table_we_cannot_cut_out_is_printed(tree: tuple[Path, Path]) -> None:
    work, home = tree
    p = home / ".codex" / "config.toml"
    p.parent.mkdir()
    content = '[mcp_servers]\nopen-memex = { command = "open-memex", args = ["mcp"] }\n'
    p.write_text(content, encoding="utf-8")
    res = clients.write_config("codex", work, home, replace_reference=True)
    assert res.action == "printed" and res.reference == ("open-memex",) and p.read_text() == content


def test_shared_files_name_the_portable_command_off_path(tree: tuple[Path, Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = tree
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for client in ("vscode", "cursor", "claude", "visualstudio", "opencode"):
        path = clients.write_config(client, work, home).path
        assert not [s for s in _strings(read_json(path)) if os.sep in s and s != clients.OPENCODE_SCHEMA]
        note = clients.path_note(client, path)
        assert note is not None and str(path) in note and "\n" not in note
    assert clients.write_claude_hooks(work).action == "created"
    assert not [s for s in _strings(read_json(work / ".claude" / "settings.json")) if os.sep in s]
    assert clients.path_note("codex", home / ".codex" / "config.toml") is None  # the user's own file
    with_git_memex_on_path(monkeypatch)
    assert clients.path_note("claude", work / ".mcp.json") is None


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


@pytest.mark.parametrize("extra", [[], ["--uninstall"]])
def test_replace_open_memex_without_a_client_is_one_sentence(repo: Path, extra: list[str]) -> None:
    r = run_cli("init", "--yes", "--replace-open-memex", *extra)
    assert r.code == 1 and r.out == "" and len(r.err.strip().splitlines()) == 1, r.err
    assert "--replace-open-memex" in r.err and "Traceback" not in r.err
    assert not (repo / ".ai").exists()  # refused before anything was set up


def test_doctor_warns_about_a_shared_file_naming_a_path_of_this_machine(repo: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with_git_memex_on_path(monkeypatch)
    assert run_cli("init", "--yes").code == 0
    old = {"type": "stdio", "command": "/old/venv/bin/git-memex", "args": ["mcp"]}  # an older git-memex's entry
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"memex": old}}))
    warned = [x for x in run_cli("doctor").out.splitlines() if x.startswith("warn") and ".mcp.json" in x]
    assert len(warned) == 1 and "/old/venv/bin/git-memex" in warned[0]
    assert "`git memex init --client claude`" in warned[0]
    assert run_cli("init", "--yes", "--client", "claude").code == 0
    assert ".mcp.json" not in run_cli("doctor").out
    assert read_json(repo / ".mcp.json")["mcpServers"]["memex"]["command"] == "git-memex"


@pytest.mark.parametrize("flags, where", [(("--client", "codex", "--codex-hooks"), "codex/hooks.json"),
                                          (("--client", "claude", "--claude-hooks"), "repo/.claude/settings.json")])
def test_init_never_waits_on_a_fifo_config_file(repo: Path, tmp_path: Path, flags: tuple[str, ...], where: str) -> None:
    """The attack on the merged main: a FIFO named hooks.json (or settings.json) hung `init`."""
    import stat

    codex = tmp_path / "codex"
    codex.mkdir()
    fifo = codex / "hooks.json" if where.startswith("codex") else repo / ".claude" / "settings.json"
    fifo.parent.mkdir(exist_ok=True)
    os.mkfifo(fifo)
    r = run_cli("init", "--yes", *flags, env={"CODEX_HOME": str(codex)})  # run_cli's timeout guards a hang
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # left as it was; the snippet is printed instead

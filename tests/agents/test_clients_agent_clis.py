"""`git memex init --client` read back by the agents' own CLIs, installed from the npm registry.

`codex mcp list` and `claude mcp list` read the configuration exactly as the agent will, with no
login: codex under `CODEX_HOME`, Claude's shared `.mcp.json` with git-memex off PATH, and a
server of the reference tool (open-memex) that the CLIs themselves wrote (docs/agents.md,
"Editor set-up"; docs/git.md, "When git's set-up is unusual"). Skipped with the reason when npm
is missing or the install fails, except under CI=true, where that fails.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import from_registry, run_cli

CLIS = ("@openai/codex@0.171.0", "@anthropic-ai/claude-code@2.1.197", "opencode-ai@1.18.33")
VENV_BIN = str(Path(sys.executable).parent)
NODE_BIN = str(Path(shutil.which("node") or "/usr/bin/node").parent)
OFF_PATH = os.pathsep.join(dict.fromkeys([NODE_BIN, "/usr/bin", "/bin"]))  # git and node, no git-memex
ON_PATH = VENV_BIN + os.pathsep + OFF_PATH


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The real codex, claude and opencode CLIs, installed once beside this venv (reused by later runs).
    Claude's postinstall script puts its native binary (from its platform package) in place, so
    scripts run."""
    if shutil.which("npm") is None:
        if _ci():
            pytest.fail("npm is missing, and CI must read the editor set-up with the real agent CLIs")
        pytest.skip("npm is missing: the codex and claude CLIs cannot be installed from the registry")
    prefix = Path(sys.prefix) / "agent-clis"
    if not os.access(sys.prefix, os.W_OK):
        prefix = Path(tempfile.gettempdir()) / f"memex-agent-clis-{os.getuid()}"
    stamp = prefix / "installed.txt"
    prefix.mkdir(parents=True, exist_ok=True)
    # one install at a time: pytest-xdist workers (and a second run) share this prefix
    with open(prefix / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (stamp.is_file() and stamp.read_text() == " ".join(CLIS)):
            r = from_registry(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *CLIS],
                              timeout=900)
            if r.returncode != 0:
                message = f"npm install of the codex and claude CLIs failed: {r.stderr.strip()[-500:]}"
                if _ci():
                    pytest.fail(message)
                pytest.skip(message)
            stamp.write_text(" ".join(CLIS))
    return prefix / "node_modules" / ".bin"


def agent(agent_bin: Path, name: str, *args: str, cwd: Path, path: str = OFF_PATH,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(agent_bin / name), *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                       env={**os.environ, "PATH": path, **(env or {})})
    assert r.returncode == 0, f"{name} {' '.join(args)}: {r.stdout}{r.stderr}"
    return r


def codex_servers(agent_bin: Path, repo: Path, codex_home: Path) -> dict[str, dict]:
    r = agent(agent_bin, "codex", "mcp", "list", "--json", cwd=repo, env={"CODEX_HOME": str(codex_home)})
    return {s["name"]: s for s in json.loads(r.stdout)}


def trust_project_servers(repo: Path) -> None:
    """What the person does in Claude Code's approval prompt, in the machine-local settings file."""
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text('{"enableAllProjectMcpServers": true}\n')


def strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in strings(v)]
    return [node] if isinstance(node, str) else []


def test_init_client_codex_writes_where_codex_home_says(repo: Path, tmp_path: Path, agent_bin: Path) -> None:
    codex_home = tmp_path / "codex-home"  # created by init when missing: codex refuses a missing CODEX_HOME
    r = run_cli("init", "--yes", "--client", "codex", env={"CODEX_HOME": str(codex_home)})
    assert r.code == 0, r.err
    assert str(codex_home / "config.toml") in r.out
    assert not (Path.home() / ".codex").exists()
    servers = codex_servers(agent_bin, repo, codex_home)
    assert set(servers) == {"memex"}
    transport = servers["memex"]["transport"]
    # the file is this user's own, so it may name this machine's git-memex; the server really starts
    from test_mcp_agents import stdio_argv

    status = stdio_argv([transport["command"], *transport["args"]], repo, "memory_status")
    assert status.structured_content["repository"] == str(repo)
    again = run_cli("init", "--yes", "--client", "codex", env={"CODEX_HOME": str(codex_home)})
    assert again.code == 0 and "already set up; nothing changed" in again.out
    gone = run_cli("init", "--uninstall", "--yes", env={"CODEX_HOME": str(codex_home)})
    assert gone.code == 0 and f"codex MCP config {codex_home / 'config.toml'}" in gone.out


def test_shared_mcp_json_never_names_a_path_of_this_machine(repo: Path, agent_bin: Path) -> None:
    r = run_cli("init", "--yes", "--client", "claude", "--claude-hooks", env={"PATH": OFF_PATH})
    assert r.code == 0, r.err
    for rel in (".mcp.json", ".claude/settings.json"):
        written = strings(json.loads((repo / rel).read_text(encoding="utf-8")))
        assert written and not [s for s in written if os.sep in s or s.startswith(sys.prefix)], (rel, written)
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["memex"]["command"] == "git-memex"
    note = [line for line in r.out.splitlines() if line.startswith("git-memex is not on the PATH a new login shell")]
    link = f"ln -sf {shlex.quote(str(Path(VENV_BIN) / 'git-memex'))} ~/.local/bin/git-memex"
    assert len(note) == 1 and link in note[0] and "nor is it on this shell's PATH" in note[0], r.out
    trust_project_servers(repo)
    listed = agent(agent_bin, "claude", "mcp", "list", cwd=repo).stdout
    assert "memex: git-memex mcp - ✘" in listed  # as the note said: not on PATH, not startable
    listed = agent(agent_bin, "claude", "mcp", "list", cwd=repo, path=ON_PATH).stdout
    assert "memex: git-memex mcp - ✔ Connected" in listed, listed
    # the machine-local alternative the note offers, run as printed, starts without PATH
    local = note[0].split("instead with `", 1)[1].rsplit("`", 1)[0]
    words = shlex.split(local)
    assert words[:5] == ["claude", "mcp", "add", "--scope", "local"]
    shared = (repo / ".mcp.json").read_bytes()
    agent(agent_bin, "claude", *words[1:], cwd=repo)
    listed = agent(agent_bin, "claude", "mcp", "list", cwd=repo).stdout
    assert "- ✔ Connected" in listed and "✘" not in listed, listed
    assert (repo / ".mcp.json").read_bytes() == shared  # the shared file stays portable


def test_an_open_memex_server_in_mcp_json_is_named_replaced_and_warned(repo: Path, agent_bin: Path) -> None:
    agent(agent_bin, "claude", "mcp", "add", "--scope", "project", "open-memex", "--", "open-memex", "mcp", cwd=repo)
    r = run_cli("init", "--yes", "--client", "claude", env={"PATH": ON_PATH})
    assert r.code == 0, r.err
    said = [line for line in r.out.splitlines() if "open-memex" in line and "reference tool" in line]
    assert len(said) == 1 and str(repo / ".mcp.json") in said[0] and "--replace-open-memex" in said[0], r.out
    assert set(json.loads((repo / ".mcp.json").read_text())["mcpServers"]) == {"open-memex", "memex"}
    doctor = run_cli("doctor", env={"PATH": ON_PATH})
    warned = [line for line in doctor.out.splitlines() if line.startswith("warn") and "open-memex" in line]
    assert len(warned) == 1 and ".mcp.json" in warned[0] and "--replace-open-memex" in warned[0], doctor.out

    r = run_cli("init", "--yes", "--client", "claude", "--replace-open-memex", env={"PATH": ON_PATH})
    assert r.code == 0, r.err
    assert f"removed    reference tool's server open-memex in {repo / '.mcp.json'}" in r.out, r.out
    assert set(json.loads((repo / ".mcp.json").read_text())["mcpServers"]) == {"memex"}
    trust_project_servers(repo)
    listed = agent(agent_bin, "claude", "mcp", "list", cwd=repo, path=ON_PATH).stdout
    assert "memex: git-memex mcp - ✔ Connected" in listed and "open-memex" not in listed, listed
    doctor = run_cli("doctor", env={"PATH": ON_PATH})
    assert "open-memex" not in doctor.out, doctor.out


def test_an_open_memex_server_in_codex_config_is_named_and_replaced(repo: Path, tmp_path: Path,
                                                                    agent_bin: Path) -> None:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    env = {"CODEX_HOME": str(codex_home)}
    agent(agent_bin, "codex", "mcp", "add", "open-memex", "--env", f"OPEN_MEMEX_HOME={tmp_path / 'om'}", "--",
          "npx", "-y", "open-memex@alpha", "mcp", cwd=repo, env=env)
    r = run_cli("init", "--yes", "--client", "codex", env=env)
    assert r.code == 0, r.err
    config = codex_home / "config.toml"
    said = [line for line in r.out.splitlines() if "open-memex" in line and "reference tool" in line]
    assert len(said) == 1 and str(config) in said[0] and "--replace-open-memex" in said[0], r.out
    assert set(codex_servers(agent_bin, repo, codex_home)) == {"open-memex", "memex"}
    doctor = run_cli("doctor", env=env)
    assert [line for line in doctor.out.splitlines() if line.startswith("warn") and str(config) in line], doctor.out

    r = run_cli("init", "--yes", "--client", "codex", "--replace-open-memex", env=env)
    assert r.code == 0, r.err
    assert set(codex_servers(agent_bin, repo, codex_home)) == {"memex"}
    assert "open-memex" not in config.read_text() and "OPEN_MEMEX_HOME" not in config.read_text()
    assert "open-memex" not in run_cli("doctor", env=env).out


def codex_hooks_list(agent_bin: Path, repo: Path, codex_home: Path) -> dict:
    """Codex's own hook loader, with no login: its app server's `hooks/list` request over stdio
    (the call behind Codex's /hooks review), for the project folder."""
    p = subprocess.Popen([str(agent_bin / "codex"), "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, cwd=repo,
                         env={**os.environ, "PATH": OFF_PATH, "CODEX_HOME": str(codex_home)})
    try:
        assert p.stdin is not None and p.stdout is not None
        for msg in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "test", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(repo)]}}):
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()
        while line := p.stdout.readline():
            doc = json.loads(line)
            if doc.get("id") == 2:
                assert "result" in doc, doc
                (entry,) = doc["result"]["data"]
                return entry
        raise AssertionError("codex app-server ended without answering hooks/list")
    finally:
        p.kill()
        p.wait(timeout=60)


def test_codex_reads_the_hooks_init_writes(repo: Path, tmp_path: Path, agent_bin: Path) -> None:
    codex_home = tmp_path / "codex-home"
    r = run_cli("init", "--yes", "--client", "codex", "--codex-hooks", env={"CODEX_HOME": str(codex_home)})
    assert r.code == 0, r.err
    listed = codex_hooks_list(agent_bin, repo, codex_home)
    assert listed["errors"] == [] and listed["warnings"] == []
    ours = {h["eventName"]: h for h in listed["hooks"]}
    assert set(ours) == {"sessionStart", "userPromptSubmit", "stop"}
    for h in ours.values():
        assert h["sourcePath"] == str(codex_home / "hooks.json") and h["source"] == "user"
        assert h["handlerType"] == "command" and h["timeoutSec"] == 10 and h["enabled"] is True
        assert h["trustStatus"] == "untrusted"  # trusting a hook is the person's act in /hooks, never init's
    assert ours["stop"]["command"].endswith("capture --hook codex --stop")
    kept = run_cli("init", "--uninstall", "--yes", env={"CODEX_HOME": str(codex_home)})
    assert kept.code == 0 and f"Codex hooks {codex_home / 'hooks.json'}" in kept.out  # user level: kept
    assert len(codex_hooks_list(agent_bin, repo, codex_home)["hooks"]) == 3
    gone = run_cli("init", "--uninstall", "--codex-hooks", "--yes", env={"CODEX_HOME": str(codex_home)})
    assert gone.code == 0 and f"Codex hooks {codex_home / 'hooks.json'}" in gone.out
    assert codex_hooks_list(agent_bin, repo, codex_home)["hooks"] == []


def claude_doctor(agent_bin: Path, repo: Path, home: Path) -> str:
    """`claude doctor`, Claude Code's own settings validator (it needs a terminal, so it gets a
    pseudo-terminal; no login). Its report without terminal escapes, up to its "Updates" section,
    which it prints after the settings check (and then waits on the network)."""
    import pty
    import re
    import select
    import time

    main, child = pty.openpty()
    p = subprocess.Popen([str(agent_bin / "claude"), "doctor"], stdin=child, stdout=child, stderr=child, cwd=repo,
                         env={**os.environ, "PATH": ON_PATH, "HOME": str(home), "TERM": "xterm"}, close_fds=True)
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 90  # only a guard against a hang
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
                text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", " ", b"".join(chunks).decode("utf-8", "replace"))
                if "Updates" in text:
                    break
    finally:
        p.kill()
        p.wait(timeout=60)
        os.close(main)
    return " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", " ", b"".join(chunks).decode("utf-8", "replace")).split())


def test_claude_doctor_accepts_the_hooks_init_writes(repo: Path, tmp_path: Path, agent_bin: Path) -> None:
    r = run_cli("init", "--yes", "--client", "claude", "--claude-hooks")
    assert r.code == 0, r.err
    settings = repo / ".claude" / "settings.json"
    written = json.loads(settings.read_text(encoding="utf-8"))
    assert set(written["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop"}
    home = tmp_path / "claude-home"
    home.mkdir()
    report = claude_doctor(agent_bin, repo, home)
    assert "Search:" in report and "Invalid settings" not in report, report[-2000:]
    # the control: doctor really reads this file (a wrong type in our Stop entry is named)
    written["hooks"]["Stop"][0]["hooks"][0]["timeout"] = "ten"
    settings.write_text(json.dumps(written), encoding="utf-8")
    report = claude_doctor(agent_bin, repo, home)
    assert "Invalid settings" in report and "hooks.Stop.0.hooks.0.timeout" in report, report[-2000:]

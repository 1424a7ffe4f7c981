"""What `init --client` writes starts from a new login shell (issue 32, items 3 and 10).

The agents' own CLIs from npm (`claude mcp list`, `codex mcp list`, `opencode mcp list`) read the
configuration with the PATH a new login shell gets, `env -i HOME=… PATH=/usr/local/bin:/usr/bin:
/bin:$HOME/.local/bin`, never the PATH of the shell that installed git-memex. With git-memex linked
into ~/.local/bin (the README's set-up) every server connects and Claude's SessionStart hook runs;
with git-memex only on the install shell's PATH, `init` says so with the link that fixes it, and
Codex's user-level file names git-memex by its absolute path. Claude Code's approval of a project
server (`⏸ Pending approval`) is explained, and doing what init says connects it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import test_clients_agent_clis as clis
from test_clients_agent_clis import NODE_BIN, VENV_BIN

from conftest import run_cli, user_profile

SYSTEM = "/usr/local/bin:/usr/bin:/bin"
agent_bin = clis.agent_bin  # the real codex, claude and opencode CLIs from npm (a session fixture)


def new_shell(home: Path) -> dict[str, str]:
    """The environment of a new login shell: nothing of this one but HOME and the login PATH (and
    node's folder, which the npm CLIs' `#!/usr/bin/env node` needs where node is elsewhere)."""
    path = os.pathsep.join(dict.fromkeys([*SYSTEM.split(":"), str(home / ".local" / "bin"), NODE_BIN]))
    return {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}


def cli(agent_bin: Path, name: str, *args: str, cwd: Path, env: dict[str, str]) -> str:
    r = subprocess.run([str(agent_bin / name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{name} {' '.join(args)}: {r.stdout}{r.stderr}"
    return r.stdout + r.stderr


def link_into_local_bin(home: Path, *, profile: bool = True) -> None:
    """The README's set-up: git-memex linked into ~/.local/bin, and (`profile`) a user's default
    ~/.profile, which puts that folder on a login shell's PATH."""
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    (home / ".local" / "bin" / "git-memex").symlink_to(Path(VENV_BIN) / "git-memex")
    if profile:
        user_profile(home)


# root's default ~/.profile on Debian (base-files' dot.profile): no ~/.local/bin on PATH
ROOT_PROFILE = ('# ~/.profile: executed by Bourne-compatible login shells.\n\nif [ "$BASH" ]; then\n'
                '  if [ -f ~/.bashrc ]; then\n    . ~/.bashrc\n  fi\nfi\n\nmesg n 2> /dev/null || true\n')


def test_init_asks_a_real_login_shell(repo: Path, tmp_path: Path) -> None:
    """Finding 13 of the review: root on Debian (/etc/profile resets PATH, root's ~/.profile never
    adds ~/.local/bin) got no word although a new session could not start git-memex; init now
    asks a real login shell, says what to change, and Codex's own file names the absolute path."""
    home = Path.home()
    link_into_local_bin(home, profile=False)
    (home / ".profile").write_text(ROOT_PROFILE)
    this_shell = {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"], "CODEX_HOME": str(tmp_path / "codex")}
    login = subprocess.run(["sh", "-lc", "command -v git-memex"], env={"HOME": str(home)}, capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=60)
    r = run_cli("init", "--yes", "--client", "claude", env=this_shell)
    assert r.code == 0, r.err
    said = notes(r.out, "git-memex is not on the PATH a new login shell gets")
    if login.returncode == 0:  # a system whose own profile puts ~/.local/bin on PATH: nothing to say
        assert said == [], r.out
    else:
        assert len(said) == 1 and 'add `export PATH="$HOME/.local/bin:$PATH"` to ~/.profile' in said[0], r.out
        r = run_cli("init", "--yes", "--client", "codex", env=this_shell)
        assert r.code == 0, r.err
        toml = (tmp_path / "codex" / "config.toml").read_text()
        assert 'command = "/' in toml and "git-memex" in toml, toml  # an absolute path: starts anywhere
    user_profile(home)  # what the note says to do
    r = run_cli("init", "--yes", "--client", "claude", env=this_shell)
    assert r.code == 0 and not notes(r.out, "git-memex is not on the PATH"), r.out


def approve_in_local_settings(repo: Path) -> None:
    """What init's note offers besides approving in `claude`: this machine's settings file."""
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text('{"enableAllProjectMcpServers": true}\n')


def notes(out: str, start: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(start)]


@pytest.mark.slow
def test_what_init_writes_starts_from_a_new_login_shell(repo: Path, agent_bin: Path) -> None:
    home = Path.home()
    link_into_local_bin(home)
    env = new_shell(home)
    for args in (("--client", "claude", "--claude-hooks"), ("--client", "codex"), ("--client", "opencode")):
        r = run_cli("init", "--yes", *args)
        assert r.code == 0, r.err
        assert not notes(r.out, "git-memex is not on the PATH"), r.out
    approve_in_local_settings(repo)
    listed = cli(agent_bin, "claude", "mcp", "list", cwd=repo, env=env)
    assert "memex: git-memex mcp - ✔ Connected" in listed, listed
    assert codex_servers_env(agent_bin, repo, env)["memex"]["transport"]["command"] == "git-memex"
    listed = cli(agent_bin, "opencode", "mcp", "list", cwd=repo, env=env)
    assert "memex" in listed and "connected" in listed and "failed" not in listed, listed
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    hook = subprocess.run(["sh", "-c", start], cwd=repo, env=env, input=json.dumps({"cwd": str(repo)}),
                          capture_output=True, text=True, timeout=120)
    assert hook.returncode == 0, hook.stderr  # not 127: the new shell finds git-memex


def codex_servers_env(agent_bin: Path, repo: Path, env: dict[str, str]) -> dict[str, dict]:
    out = subprocess.run([str(agent_bin / "codex"), "mcp", "list", "--json"], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return {s["name"]: s for s in json.loads(out.stdout)}


@pytest.mark.slow
def test_init_says_when_a_new_shell_would_not_find_git_memex(repo: Path, agent_bin: Path) -> None:
    """git-memex on the install shell's PATH only (the README's old `export`): the shared file still
    names `git-memex`, init says a new shell would not find it and how to link it; Codex's own file
    names the absolute path, which starts anywhere. Running the printed link fixes Claude's."""
    home = Path.home()
    env = new_shell(home)
    this_shell = {"PATH": VENV_BIN + os.pathsep + os.environ["PATH"]}
    r = run_cli("init", "--yes", "--client", "claude", env=this_shell)
    assert r.code == 0, r.err
    (note,) = notes(r.out, "git-memex is not on the PATH a new login shell gets")
    approve_in_local_settings(repo)
    assert "memex: git-memex mcp - ✘" in cli(agent_bin, "claude", "mcp", "list", cwd=repo, env=env)
    link = note.split("where a new shell looks, `", 1)[1].split("`", 1)[0]
    assert link.startswith("mkdir -p ~/.local/bin && ln -sf ")
    subprocess.run(["sh", "-c", link], env=env, check=True)  # as printed
    assert "memex: git-memex mcp - ✔ Connected" in cli(agent_bin, "claude", "mcp", "list", cwd=repo, env=env)
    (home / ".local" / "bin" / "git-memex").unlink()
    r = run_cli("init", "--yes", "--client", "codex", env=this_shell)
    assert r.code == 0, r.err
    command = codex_servers_env(agent_bin, repo, env)["memex"]["transport"]["command"]
    assert os.path.isabs(command) and Path(command).resolve() == (Path(VENV_BIN) / "git-memex").resolve()
    started = subprocess.run([command, "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert started.returncode == 0 and "git-memex" in started.stdout


@pytest.mark.slow
def test_claude_pending_approval_is_explained_and_following_it_connects(repo: Path, agent_bin: Path) -> None:
    home = Path.home()
    link_into_local_bin(home)
    env = new_shell(home)
    r = run_cli("init", "--yes", "--client", "claude")
    assert r.code == 0, r.err
    (said,) = notes(r.out, "Claude Code lists the project's MCP servers as `⏸ Pending approval`")
    assert "run `claude` in" in said and "enableAllProjectMcpServers" in said and "settings.local.json" in said
    assert "⏸ Pending approval" in cli(agent_bin, "claude", "mcp", "list", cwd=repo, env=env)
    approve_in_local_settings(repo)  # the second way the note names
    assert "memex: git-memex mcp - ✔ Connected" in cli(agent_bin, "claude", "mcp", "list", cwd=repo, env=env)
    again = run_cli("init", "--yes", "--client", "claude")
    assert again.code == 0 and not notes(again.out, "Claude Code lists"), again.out

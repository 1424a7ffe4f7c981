"""`git memex init --uninstall` undoes init: hooks, merge driver, the .gitattributes line and what
`init --client` wrote for editors and agents, merging out only our part; asks first on a terminal."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git, run_cli

MEM = ".ai/open-memex"
CLIENT_FILES = (".vscode/mcp.json", ".cursor/mcp.json", ".cursor/rules/git-memex.mdc", ".mcp.json",
                ".claude/settings.json", "opencode.jsonc", ".github/copilot-instructions.md", "AGENTS.md",
                ".gitattributes")


def _init_everything(work: Path) -> None:
    for client in ("vscode", "cursor", "visualstudio", "opencode", "codex"):
        r = run_cli("init", "--yes", "--client", client)
        assert r.code == 0, r.err
    r = run_cli("init", "--yes", "--client", "claude", "--claude-hooks")
    assert r.code == 0, r.err
    for rel in CLIENT_FILES:
        assert (work / rel).is_file(), rel


def _tree(work: Path) -> dict[str, str]:
    return {str(p.relative_to(work)): p.read_text(encoding="utf-8") for p in sorted(work.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(work).parts[:1]}


def test_uninstall_removes_everything_init_wrote_and_keeps_the_memories(repo: Path, isolated_env: Path):
    git("config", "user.name", "Test User", cwd=repo)
    before = _tree(repo)
    _init_everything(repo)
    mid = run_cli("add", "the build uses make", "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    assert git("config", "--local", "--get", "merge.memex.driver", cwd=repo).returncode == 0
    assert (repo / ".git" / "hooks" / "post-merge").exists()
    r = run_cli("init", "--uninstall", "--json")
    assert r.code == 0, r.err
    steps = {s["what"]: s["action"] for s in r.json()["steps"]}
    for rel in CLIENT_FILES:
        assert not (repo / rel).exists(), rel
    for folder in (".vscode", ".cursor", ".claude", ".github"):
        assert not (repo / folder).exists(), folder
    assert steps[".gitattributes"] == "removed" and steps["merge driver (git config merge.memex)"] == "removed"
    assert steps["AGENTS.md pointer line"] == "removed"
    assert git("config", "--local", "--get-regexp", "^merge\\.memex\\.", cwd=repo, check=False).returncode == 1
    assert not (repo / ".git" / "hooks" / "post-merge").exists()
    codex = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    assert codex.is_file() and "[mcp_servers.memex]" in codex.read_text()  # user-level: reported, kept
    assert steps[f"codex MCP config {codex}"] == "kept"
    after = _tree(repo)
    memories = {k for k in after if k.startswith(MEM + "/")}
    assert memories == {f"{MEM}/{mid}.md", f"{MEM}/.gitkeep"} or memories == {f"{MEM}/{mid}.md"}
    assert {k: v for k, v in after.items() if k not in memories} == before  # nothing else left behind
    again = run_cli("init", "--uninstall", "--json")
    assert again.code == 0 and not again.json()["changed"]


def _write_json(path: Path, data: dict) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


def test_uninstall_merges_out_only_our_part_of_the_users_files(repo: Path):
    originals = {
        ".vscode/mcp.json": _write_json(repo / ".vscode/mcp.json", {"servers": {"db": {"type": "stdio", "command": "db-mcp"}},
                                                                     "inputs": []}),
        ".mcp.json": _write_json(repo / ".mcp.json", {"mcpServers": {"other": {"command": "x"}}}),
        ".claude/settings.json": _write_json(repo / ".claude/settings.json", {
            "permissions": {"allow": ["Bash(make test)"]},
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}),
        "AGENTS.md": "# Agents\n\nRun `make test` before committing.\n",
        ".github/copilot-instructions.md": "Use tabs.\n",
        ".gitattributes": "*.png binary\n",
    }
    for rel in ("AGENTS.md", ".github/copilot-instructions.md", ".gitattributes"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(originals[rel])
    for client in ("vscode", "claude"):
        assert run_cli("init", "--yes", "--client", client, "--claude-hooks").code == 0
    assert run_cli("init", "--yes", "--client", "visualstudio").code == 0
    for rel, text in originals.items():
        assert (repo / rel).read_text() != text, rel  # init added its part to each
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0, r.err
    for rel, text in originals.items():
        assert (repo / rel).read_text() == text, rel


def test_uninstall_keeps_our_part_when_the_user_changed_it(repo: Path):
    assert run_cli("init", "--yes", "--client", "cursor").code == 0
    assert run_cli("init", "--yes", "--client", "vscode").code == 0
    rule = repo / ".cursor/rules/git-memex.mdc"
    rule.write_text(rule.read_text() + "- Also search the wiki.\n")
    copilot = repo / ".github/copilot-instructions.md"
    copilot.write_text(copilot.read_text().replace("try a few keyword variants", "try five keyword variants"))
    edited = {p: p.read_text() for p in (rule, copilot)}
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0, r.err
    for p, text in edited.items():
        assert p.read_text() == text
    assert "kept" in r.out and "changed since init" in r.out and "edited" in r.out
    assert not (repo / ".vscode/mcp.json").exists() and not (repo / ".cursor/mcp.json").exists()


def test_uninstall_leaves_jsonc_alone_and_says_so(repo: Path):
    assert run_cli("init", "--yes", "--client", "opencode").code == 0
    path = repo / "opencode.jsonc"
    data = json.loads(path.read_text())
    text = "// my settings\n" + json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0 and path.read_text() == text
    assert "opencode.jsonc" in r.out and "remove its `memex` server entry yourself" in r.out


def _run_on_a_terminal(args: list[str], answer: str, cwd: Path) -> tuple[int, str]:
    """Run the CLI with stdin and stdout on a pseudo-terminal; answer its question."""
    master, slave = os.openpty()
    p = subprocess.Popen([sys.executable, "-m", "git_memex", *args], stdin=slave, stdout=slave, stderr=slave,
                         cwd=cwd, close_fds=True)
    os.close(slave)
    out = b""
    answered = False
    deadline = time.time() + 60
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if not answered and b"Go ahead?" in out:
                os.write(master, answer.encode() + b"\n")
                answered = True
        elif p.poll() is not None:
            break
    code = p.wait(timeout=60)
    os.close(master)
    return code, out.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_uninstall_asks_on_a_terminal(repo: Path):
    assert run_cli("init", "--yes", "--client", "vscode").code == 0
    code, out = _run_on_a_terminal(["init", "--uninstall"], "n", repo)
    assert code == 0 and "Go ahead?" in out and ".vscode/mcp.json" in out and "nothing changed" in out, out
    assert (repo / ".vscode/mcp.json").exists() and (repo / ".gitattributes").exists()
    assert (repo / ".git" / "hooks" / "post-merge").exists()
    code, out = _run_on_a_terminal(["init", "--uninstall"], "y", repo)
    assert code == 0, out
    assert not (repo / ".vscode/mcp.json").exists() and not (repo / ".gitattributes").exists()
    assert not (repo / ".git" / "hooks" / "post-merge").exists()
    assert run_cli("init", "--yes", "--client", "vscode").code == 0
    code, out = _run_on_a_terminal(["init", "--uninstall", "--yes"], "n", repo)  # --yes: no question
    assert code == 0 and "Go ahead?" not in out and not (repo / ".vscode/mcp.json").exists(), out


def test_uninstall_names_the_pre_commit_framework_hooks_it_leaves(repo: Path):
    config = "repos:\n  - repo: local\n    hooks:\n      - id: memex-secrets\n        name: x\n        entry: git-memex scan\n        language: system\n"
    (repo / ".pre-commit-config.yaml").write_text(config)
    assert run_cli("init", "--yes").code == 0
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0 and ".pre-commit-config.yaml" in r.out and "yourself" in r.out
    assert (repo / ".pre-commit-config.yaml").read_text() == config


def test_uninstall_keeps_codex_user_level_hooks_like_its_mcp_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Two repositories set up Codex's hooks in one user-level hooks.json; `--uninstall` in one
    removed them for both, although the user-level MCP entry was kept. Now both are kept (and
    reported), and `--uninstall --codex-hooks` takes only our three hooks out when asked."""
    from conftest import one_commit_repo

    codex_home = tmp_path / "codex-home"
    env = {"CODEX_HOME": str(codex_home)}
    hooks_file = codex_home / "hooks.json"
    a, b = one_commit_repo(tmp_path / "a"), one_commit_repo(tmp_path / "b")
    for work in (a, b):
        r = run_cli("init", "--yes", "--client", "codex", "--codex-hooks", cwd=work, env=env)
        assert r.code == 0, r.err
    doc = json.loads(hooks_file.read_text())
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send done"}]})  # the user's own
    theirs = json.dumps(doc, indent=2) + "\n"
    hooks_file.write_text(theirs)
    r = run_cli("init", "--uninstall", "--json", cwd=a, env=env)
    assert r.code == 0, r.err
    steps = {s["what"]: s for s in r.json()["steps"]}
    kept = steps[f"Codex hooks {hooks_file}"]
    assert kept["action"] == "kept" and "--uninstall --codex-hooks" in kept["detail"]
    assert steps[f"codex MCP config {codex_home / 'config.toml'}"]["action"] == "kept"
    assert hooks_file.read_text() == theirs  # b's session hooks still work
    assert (codex_home / "config.toml").is_file()
    r = run_cli("init", "--uninstall", "--codex-hooks", "--yes", cwd=b, env=env)
    assert r.code == 0, r.err
    left = json.loads(hooks_file.read_text())
    assert left == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    wrong = run_cli("init", "--uninstall", "--codex-hooks", "--client", "codex", "--yes", cwd=b, env=env)
    assert wrong.code == 1 and len(wrong.err.strip().splitlines()) == 1 and "--client" in wrong.err


# ------------------------------------------------------------------ issue 32, item 14
def _local_config(work: Path) -> list[str]:
    return sorted(git("config", "--local", "--list", cwd=work).stdout.splitlines())


def _git_folder(work: Path) -> set[str]:
    return {str(p.relative_to(work / ".git")) for p in (work / ".git").rglob("*")
            if p.relative_to(work / ".git").parts[0] not in ("objects", "logs", "refs", "index", "ORIG_HEAD")
            and p.name not in ("index", "COMMIT_EDITMSG", "ORIG_HEAD")}


def test_uninstall_leaves_no_trace_of_init_in_the_clone_and_keeps_the_users_data(repo: Path, isolated_env: Path):
    config, folder = _local_config(repo), _git_folder(repo)
    assert run_cli("init", "--yes").code == 0
    shared = run_cli("add", "the build uses make", "--json").json()["id"]
    assert run_cli("submit", shared).code == 0
    draft = run_cli("add", "a draft not shared yet", "--json").json()["id"]
    personal = run_cli("add", "I like short commits", "--scope", "personal", "--json").json()["id"]
    assert run_cli("list").code == 0 and (repo / ".git" / "memex" / "index.db").is_file()
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0, r.err
    assert "index of this clone (.git/memex/)" in r.out and "settings of this clone" in r.out, r.out
    assert not (repo / ".git" / "memex").exists()
    assert _local_config(repo) == config  # memex.initBranch, projectKey, cloneId, cloneDir, command: gone
    assert _git_folder(repo) == folder, _git_folder(repo) ^ folder
    assert (repo / MEM / f"{shared}.md").is_file()  # the team's memory stays in the repository
    data = isolated_env / "data"  # this machine's drafts and personal memories stay in the data root
    names = {p.name for p in data.rglob("*.md")}
    assert f"{draft}.md" in names and f"{personal}.md" in names, names
    assert "Codex" not in r.out and "codex" not in r.out  # never used here: not named
    assert not run_cli("init", "--uninstall", "--json").json()["changed"]


def test_uninstall_keeps_a_pinned_key_the_origin_no_longer_gives(repo: Path):
    assert run_cli("init", "--yes").code == 0
    key = git("config", "memex.projectKey", cwd=repo).stdout.strip()
    assert run_cli("add", "a draft under the pinned key").code == 0
    git("remote", "add", "origin", "https://example.com/acme/renamed.git", cwd=repo)
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0 and "kept       project key (git config memex.projectKey)" in r.out, r.out
    assert git("config", "memex.projectKey", cwd=repo).stdout.strip() == key
    assert git("config", "memex.initBranch", cwd=repo, check=False).returncode == 1


HAND_MCP = '{\n\t"mcpServers": {\n\t\t"db": { "command": "db-mcp", "args": ["--ro"] }\n\t},\n\t"inputs": [ ]\n}\n'
HAND_SETTINGS = ('{\n    "permissions": {"allow": ["Bash(make test)"], "deny": []},\n'
                 '    "hooks": {\n        "SessionStart": [\n'
                 '            {"hooks": [{"type": "command", "command": "echo hi"}]}\n        ]\n    },\n'
                 '    "model": "opus"\n}')


def test_init_and_uninstall_keep_hand_formatted_json_byte_for_byte(repo: Path):
    (repo / ".mcp.json").write_text(HAND_MCP)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(HAND_SETTINGS)
    r = run_cli("init", "--yes", "--client", "claude", "--claude-hooks")
    assert r.code == 0, r.err
    mcp = (repo / ".mcp.json").read_text()
    assert mcp.startswith('{\n\t"mcpServers": {\n\t\t"db": { "command": "db-mcp", "args": ["--ro"] },\n\t\t"memex": {')
    assert mcp.endswith('\t},\n\t"inputs": [ ]\n}\n')  # their lines as they were, ours added in their layout
    settings = (repo / ".claude" / "settings.json").read_text()
    assert settings.startswith('{\n    "permissions": {"allow": ["Bash(make test)"], "deny": []},\n')
    assert '            {"hooks": [{"type": "command", "command": "echo hi"}]},\n' in settings
    assert settings.endswith('    "model": "opus"\n}')
    json.loads(mcp), json.loads(settings)
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0, r.err
    assert (repo / ".mcp.json").read_text() == HAND_MCP
    assert (repo / ".claude" / "settings.json").read_text() == HAND_SETTINGS


def test_uninstall_names_codex_files_only_where_codex_was_used(tmp_path: Path):
    from conftest import one_commit_repo

    env = {"CODEX_HOME": str(tmp_path / "codex-home")}
    used, never = one_commit_repo(tmp_path / "used"), one_commit_repo(tmp_path / "never")
    assert run_cli("init", "--yes", "--client", "codex", "--codex-hooks", cwd=used, env=env).code == 0
    assert run_cli("init", "--yes", cwd=never, env=env).code == 0
    r = run_cli("init", "--uninstall", "--yes", cwd=never, env=env)
    assert r.code == 0 and "odex" not in r.out, r.out
    r = run_cli("init", "--uninstall", "--yes", cwd=used, env=env)
    assert r.code == 0 and "kept       Codex hooks" in r.out and "kept       codex MCP config" in r.out, r.out
    assert git("config", "--local", "--get-regexp", "^memex", cwd=used, check=False).stdout == ""

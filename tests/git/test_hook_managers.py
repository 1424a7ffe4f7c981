"""`git memex init` beside the hook managers teams really use, each installed from its registry.

In every set-up a failing team hook still blocks the commit after init, and git-memex's own check
still runs (a staged memory file holding a secret is refused): husky v9 (`core.hooksPath=.husky/_`),
lefthook, the pre-commit framework's installed hook, a committed `core.hooksPath` folder, and a
user-wide `core.hooksPath` that init must leave alone (docs/git.md, "Hook managers").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model
from git_memex.git.hook import MARKER

from conftest import from_registry, git, run_cli

MEM = ".ai/open-memex"
SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
VENV_BIN = Path(sys.executable).parent
FAIL_LINT = "echo 'team lint failed' >&2; exit 1\n"


@pytest.fixture(scope="session")
def node_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """husky and lefthook from the npm registry, installed once per session: their node_modules."""
    if shutil.which("npm") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("npm is missing, and CI must test husky and lefthook for real")
        pytest.skip("npm is missing: husky and lefthook cannot be installed from the registry")
    cache = tmp_path_factory.mktemp("node-tools")
    (cache / "package.json").write_text('{"name": "memex-hook-tools", "version": "1.0.0", "private": true}\n')
    r = from_registry(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "husky@9", "lefthook"],
                      cwd=cache, timeout=600)
    if r.returncode != 0:
        message = f"npm install husky lefthook failed: {r.stderr.strip()[-500:]}"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return cache / "node_modules"


def _memory(work: Path, body: str) -> None:
    m = model.create(body, scope="project", review_state="proposed")
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))


def _commit(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git commit` as a shell without the venv runs it (the shims carry the absolute command)."""
    env = {**os.environ, "PATH": f"{Path(shutil.which('node') or '/usr/bin/node').parent}:/usr/bin:/bin"}
    return subprocess.run(["git", "commit", "-q", *args], cwd=work, env=env, capture_output=True, text=True,
                          timeout=300)


def _init(work: Path) -> None:
    r = run_cli("init", "--yes", cwd=work)
    assert r.code == 0, r.err


def _assert_both_guard(work: Path, team_hook: Path, passing: str) -> None:
    """The team's failing hook blocks a commit; once it passes, git-memex refuses a secret."""
    team_hook.write_text(team_hook.read_text().replace(passing, FAIL_LINT))
    (work / "a.txt").write_text("a\n")
    git("add", "-A", cwd=work)  # the framework stashes what is not staged
    r = _commit(work, "-m", "ticket 1: blocked by the team hook")
    assert r.returncode != 0 and "team lint failed" in r.stdout + r.stderr, r.stdout + r.stderr
    team_hook.write_text(team_hook.read_text().replace(FAIL_LINT, passing))
    git("add", "-A", cwd=work)
    r = _commit(work, "-m", "ticket 1: the team hook passes")
    assert r.returncode == 0, r.stdout + r.stderr
    _memory(work, f"the release bot token is {SECRET}")
    git("add", "-A", cwd=work)
    r = _commit(work, "-m", "ticket 2: a secret")
    assert r.returncode == 1 and "github-pat" in r.stderr, r.stdout + r.stderr
    assert SECRET not in r.stdout + r.stderr


def _node_project(repo: Path, node_modules: Path) -> None:
    (repo / "node_modules").symlink_to(node_modules, target_is_directory=True)
    (repo / ".gitignore").write_text("node_modules\n")
    (repo / "package.json").write_text('{"name": "team-app", "version": "1.0.0", "scripts": {}}\n')


def test_husky_hooks_keep_running_after_init(repo: Path, node_tools: Path):
    _node_project(repo, node_tools)
    r = subprocess.run(["npx", "--no-install", "husky", "init"], cwd=repo, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".husky/_"
    (repo / ".husky" / "pre-commit").write_text("exit 0\n")
    (repo / ".husky" / "commit-msg").write_text("grep -q ticket \"$1\" || { echo 'team lint failed' >&2; exit 1; }\n")
    generated = {p.name: p.read_text() for p in (repo / ".husky" / "_").iterdir()}
    _init(repo)
    assert {p.name: p.read_text() for p in (repo / ".husky" / "_").iterdir()} == generated  # husky's files untouched
    _assert_both_guard(repo, repo / ".husky" / "pre-commit", "exit 0\n")
    git("reset", "-q", cwd=repo)  # the secret stays out
    r = _commit(repo, "--allow-empty", "-m", "no issue number")  # husky's commit-msg runs too
    assert r.returncode != 0 and "team lint failed" in r.stderr, r.stdout + r.stderr
    assert run_cli("init", "--uninstall", cwd=repo).code == 0
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".husky/_"


def test_lefthook_hooks_keep_running_after_init(repo: Path, node_tools: Path):
    _node_project(repo, node_tools)
    (repo / "lefthook.yml").write_text("pre-commit:\n  commands:\n    lint:\n      run: sh lint.sh\n")
    (repo / "lint.sh").write_text("exit 0\n")
    lefthook = node_tools / ".bin" / "lefthook"
    r = subprocess.run([str(lefthook), "install"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "lefthook" in (repo / ".git" / "hooks" / "pre-commit").read_text()
    _init(repo)
    _assert_both_guard(repo, repo / "lint.sh", "exit 0\n")


def test_pre_commit_framework_hook_keeps_running_after_init(repo: Path):
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: team-lint\n        name: team lint\n"
        "        entry: sh lint.sh\n        language: system\n        pass_filenames: false\n")
    (repo / "lint.sh").write_text("exit 0\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "framework", cwd=repo)
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pc-home")}
    subprocess.run([str(VENV_BIN / "pre-commit"), "install"], cwd=repo, env=env, check=True, capture_output=True)
    os.environ["PRE_COMMIT_HOME"] = env["PRE_COMMIT_HOME"]
    try:
        _init(repo)
        _assert_both_guard(repo, repo / "lint.sh", "exit 0\n")
    finally:
        del os.environ["PRE_COMMIT_HOME"]


def test_pre_commit_snippet_works_without_the_venv_on_path(repo: Path):
    """The snippet init prints for a file it cannot edit (`repos: []`, flow style), pasted as is,
    refuses a secret from a shell without the venv."""
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    r = run_cli("init", "--yes", cwd=repo)
    assert r.code == 0, r.err
    assert (repo / ".pre-commit-config.yaml").read_text() == "repos: []\n"  # left alone, said so
    snippet = r.out[r.out.index("  # >>> git-memex"):r.out.index("# <<< git-memex")] + "# <<< git-memex"
    (repo / ".pre-commit-config.yaml").write_text("repos:\n" + snippet + "\n")
    again = run_cli("init", "--yes", cwd=repo)  # adds the snippet's second part, the hook types to install
    assert again.code == 0 and "updated    pre-commit .pre-commit-config.yaml" in again.out, again.out
    assert "default_install_hook_types: [pre-commit, pre-merge-commit]" in (repo / ".pre-commit-config.yaml").read_text()
    again = run_cli("init", "--yes", cwd=repo)  # the framework now runs the checks
    assert again.code == 0 and "unchanged  pre-commit .pre-commit-config.yaml" in again.out, again.out
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pc-home"), "PATH": "/usr/bin:/bin"}
    subprocess.run([str(VENV_BIN / "pre-commit"), "install", "-f"], cwd=repo, env=env, check=True,
                   capture_output=True)
    framework_hook = (repo / ".git" / "hooks" / "pre-commit").read_text()
    # the framework's own hook, not a shim of ours and no line that runs git-memex (its text
    # names this venv's python, whose path may hold "memex": a clone named git-memex)
    assert MARKER not in framework_hook and "git-memex hook" not in framework_hook
    git("add", "-A", cwd=repo)
    ok = subprocess.run(["git", "commit", "-q", "-m", "set up"], cwd=repo, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    _memory(repo, f"the release bot token is {SECRET}")
    git("add", "-A", cwd=repo)
    bad = subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=repo, env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "github-pat" in bad.stdout + bad.stderr, bad.stdout + bad.stderr
    assert SECRET not in bad.stdout + bad.stderr


def _committed_hooks_folder(repo: Path) -> Path:
    """A team's committed `.githooks/` (its pre-commit passes), set as `core.hooksPath`."""
    team = repo / ".githooks"
    team.mkdir()
    (team / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (team / "pre-commit").chmod(0o755)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "team hooks", cwd=repo)
    git("config", "core.hooksPath", ".githooks", cwd=repo)
    return team


def test_committed_hooks_folder_keeps_running_after_init(repo: Path):
    team = _committed_hooks_folder(repo)
    _init(repo)
    assert git("status", "--porcelain", "--", ".githooks", cwd=repo).stdout == ""
    _assert_both_guard(repo, team / "pre-commit", "exit 0\n")


def test_user_wide_hooks_path_is_left_alone(tmp_path: Path, isolated_env: Path):
    """A global core.hooksPath: init in one repository guards that one only, and chains the
    user's hooks; --uninstall there leaves the other repository and the folder as they were."""
    home = Path(os.environ["HOME"])
    team = home / "team-hooks"
    team.mkdir()
    (team / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (team / "pre-commit").chmod(0o755)
    (team / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    (team / "pre-push").chmod(0o755)
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as fh:
        fh.write("[core]\n\thooksPath = ~/team-hooks\n")
    before = {p.name: p.read_text() for p in team.iterdir()}
    one, two = tmp_path / "one", tmp_path / "two"
    for work in (one, two):
        work.mkdir()
        git("init", "-q", "-b", "main", cwd=work)
        git("commit", "-q", "--allow-empty", "-m", "start", cwd=work)
    _init(one)
    assert {p.name: p.read_text() for p in team.iterdir()} == before  # the shared folder is untouched
    _assert_both_guard(one, team / "pre-commit", "exit 0\n")
    _memory(two, f"the release bot token is {SECRET}")  # the other repository: not guarded by us
    git("add", "-A", cwd=two)
    assert _commit(two, "-m", "not ours to guard").returncode == 0
    assert run_cli("init", "--uninstall", cwd=one).code == 0
    assert {p.name: p.read_text() for p in team.iterdir()} == before
    assert git("config", "--local", "--get", "core.hooksPath", cwd=one, check=False).stdout == ""
    (team / "pre-commit").write_text("#!/bin/sh\n" + FAIL_LINT)
    r = _commit(two, "--allow-empty", "-m", "team hook still runs here")
    assert r.returncode != 0 and "team lint failed" in r.stderr


def _hook_checks(work: Path) -> tuple[int, list[dict]]:
    r = run_cli("doctor", "--json", cwd=work)
    return r.code, [c for c in r.json()["checks"] if c["name"] == "git hooks"]


def test_doctor_accepts_a_deliberate_no_hooks_set_up(repo: Path):
    assert run_cli("init", "--yes", "--no-hooks", cwd=repo).code == 0
    code, checks = _hook_checks(repo)
    assert code == 0 and [c["level"] for c in checks] == ["ok"], checks
    assert "--no-hooks" in checks[0]["detail"]
    _init(repo)  # installing them later clears the choice: a hook removed afterwards is a failure again
    (repo / ".git" / "hooks" / "post-merge").unlink()
    code, checks = _hook_checks(repo)
    assert code != 0 and checks[0]["level"] == "fail", checks


def test_doctor_sees_husky_taking_core_hooks_path_back(repo: Path):
    """`npm install` reruns husky, which sets core.hooksPath=.husky/_ again: doctor says so."""
    git("config", "core.hooksPath", ".husky/_", cwd=repo)
    _init(repo)
    assert _hook_checks(repo)[1][0]["level"] == "ok"
    git("config", "core.hooksPath", ".husky/_", cwd=repo)
    code, checks = _hook_checks(repo)
    assert code != 0 and checks[0]["level"] == "fail" and "git memex init" in checks[0]["detail"], checks
    assert "core.hooksPath was set to .husky/_" in checks[0]["detail"]
    _init(repo)
    assert _hook_checks(repo)[1][0]["level"] == "ok"
    assert git("config", "memex.hooksPathBefore", cwd=repo).stdout.strip() == ".husky/_"


def test_a_copied_clone_never_touches_the_original_hooks(repo: Path, tmp_path: Path):
    """`cp -a` copies the absolute core.hooksPath: the copy's doctor says so, its --uninstall
    leaves the original's shims, and init points the copy at its own folder."""
    git("config", "core.hooksPath", ".githooks", cwd=repo)
    _init(repo)
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(repo), str(copy)], check=True)
    code, checks = _hook_checks(copy)
    assert code != 0 and checks[0]["level"] == "fail", checks
    original = {p.name: p.read_text() for p in (repo / ".git" / "memex-hooks").iterdir()}
    assert run_cli("init", "--uninstall", cwd=copy).code == 0
    assert {p.name: p.read_text() for p in (repo / ".git" / "memex-hooks").iterdir()} == original
    assert git("config", "core.hooksPath", cwd=copy).stdout.strip() == ".githooks"
    _init(copy)
    assert git("config", "core.hooksPath", cwd=copy).stdout.strip() == str(copy / ".git" / "memex-hooks")
    assert _hook_checks(copy)[1][0]["level"] == "ok"


def test_moved_clone_doctor_names_the_stale_hooks_folder_and_init_repairs_it(repo: Path, tmp_path: Path):
    """`.git/memex-hooks` is named by absolute path (linked worktrees share it): after `mv repo
    moved` git runs no hook at all; doctor says why and to run `git memex init`, which points
    core.hooksPath at the moved folder (and says so), and the guards run again."""
    _committed_hooks_folder(repo)
    _init(repo)
    moved = tmp_path / "moved"
    os.rename(repo, moved)
    doc = run_cli("doctor", cwd=moved)
    line = next(ln for ln in doc.out.splitlines() if "git hooks" in ln)
    assert line.startswith("fail") and str(repo / ".git" / "memex-hooks") in line and "moved" in line, doc.out
    assert line.endswith("run `git memex init`"), line
    r = run_cli("init", "--yes", cwd=moved)
    assert r.code == 0, r.err
    assert "nothing changed" not in r.out and "core.hooksPath" in r.out, r.out
    assert git("config", "core.hooksPath", cwd=moved).stdout.strip() == str(moved / ".git" / "memex-hooks")
    assert "ok    git hooks" in run_cli("doctor", cwd=moved).out
    _assert_both_guard(moved, moved / ".githooks" / "pre-commit", "exit 0\n")

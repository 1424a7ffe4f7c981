"""The hook managers' real tools on what an outside review of issue 32 (items 1, 2, 14) found:
husky and lefthook from the npm registry, the pre-commit framework (the release this project
installs, and 3.0.4, Debian bookworm's, from PyPI) and prek (PyPI), run by real `git commit`,
`git merge` and `git pull`, with and without git-memex on PATH. Each test states the finding.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_hook_manager_join import (
    AWS,
    BARE_PATH,
    LEFTHOOK,
    VENV_BIN,
    WITH_MEMEX,
    assert_secret_refused,
    bare_origin,
    commit,
    init,
    lefthook_install,
    npm,
    npm_cache,
    write_memory,
)

from conftest import from_registry, git, run_cli

__all__ = ["npm_cache"]  # the npm cache fixture, shared with test_hook_manager_join
MERGE_WARNING = "the memory files this merge brings in were not checked for secrets"
TEAM_FRAMEWORK = """\
# team hooks
repos:
-   repo: local
    hooks:
    -   id: team-lint
        name: team lint
        entry: "true"
        language: system
        pass_filenames: false
"""


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _venv_with(tmp_path_factory: pytest.TempPathFactory, spec: str) -> Path:
    """A virtual environment holding `spec` from PyPI; its bin folder."""
    where = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True, timeout=300)
    r = from_registry([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", spec], timeout=900)
    if r.returncode != 0:
        message = f"pip install {spec} failed: {r.stderr.strip()[-600:]}"
        if _ci():
            pytest.fail(message)
        pytest.skip(message)
    return where / "bin"


@pytest.fixture(scope="session")
def pre_commit_304(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv_with(tmp_path_factory, "pre-commit==3.0.4")


@pytest.fixture(scope="session")
def prek_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv_with(tmp_path_factory, "prek")


def run(work: Path, *argv: str, path: str = WITH_MEMEX, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(list(argv), cwd=work, env={**os.environ, "PATH": path, **(env or {})}, capture_output=True,
                       text=True, timeout=600)
    if check:
        assert r.returncode == 0, f"{' '.join(argv)}: {r.stdout}{r.stderr}"
    return r


def on_a_terminal(work: Path, *argv: str, path: str, env: dict[str, str]) -> tuple[int, str]:
    """Run argv with a pseudo-terminal as its controlling terminal (what a person's shell gives
    it: /dev/tty is there); (exit code, all it printed)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: a session of its own whose terminal is the pty
        os.chdir(work)
        os.execvpe(argv[0], list(argv), {**os.environ, "PATH": path, **env})
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def secret_branch(work: Path, name: str = "leak") -> None:
    """A branch whose tip commits a memory with an AWS key past the hooks (`--no-verify`)."""
    git("checkout", "-q", "-b", name, cwd=work)
    rel = write_memory(work, f"the deploy role\n{AWS}")
    git("add", rel, cwd=work)
    git("commit", "-q", "--no-verify", "-m", "a key, past the hooks", cwd=work)
    git("checkout", "-q", "-", cwd=work)


def hook_checks(work: Path) -> list[dict]:
    return [c for c in run_cli("doctor", "--json", cwd=work).json()["checks"] if c["name"] == "git hooks"]


def notice(work: Path, env: dict[str, str] | None = None) -> str:
    r = run_cli("list", cwd=work, env=env)
    assert r.code == 0, r.err
    return r.err


# ------------------------------------------------------------------ the pre-commit framework (findings 4, 5, 11)
@pytest.mark.slow
@pytest.mark.parametrize("release", ["3.0.4", "current"])
def test_the_frameworks_releases_run_the_entry_and_install_the_merge_hook(
        release: str, repo: Path, tmp_path: Path, request: pytest.FixtureRequest):
    """Finding 5: `stages: [pre-commit, pre-merge-commit]` made pre-commit < 3.2 refuse every
    commit; the entry now has no `stages` (the program skips non-commit hook types). Finding 4:
    `pre-commit install` in a second clone installed only pre-commit, so a `--no-verify` branch
    with a key merged; `default_install_hook_types` now installs pre-merge-commit too."""
    tool = (request.getfixturevalue("pre_commit_304") if release == "3.0.4" else Path(VENV_BIN)) / "pre-commit"
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pc-home")}
    (repo / ".pre-commit-config.yaml").write_text(TEAM_FRAMEWORK)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "team hooks", cwd=repo)
    run(repo, str(tool), "install", env=env)
    init(repo)
    git("add", "-A", cwd=repo)
    r = run(repo, "git", "commit", "-q", "-m", "set up git-memex", env=env, check=False)
    assert r.returncode == 0, r.stdout + r.stderr  # the framework accepts the entry
    assert_secret_refused(repo, path=WITH_MEMEX)
    bare = bare_origin(repo, tmp_path)
    secret_branch(repo)
    git("push", "-q", "origin", "leak", cwd=repo)
    clone = tmp_path / "teammate"
    git("clone", "-q", str(bare), str(clone))
    run(clone, str(tool), "install", env=env)  # plain, as the framework's docs say
    assert (clone / ".git" / "hooks" / "pre-merge-commit").is_file()
    (clone / "notes.txt").write_text("mine\n")
    git("add", "notes.txt", cwd=clone)
    run(clone, "git", "commit", "-q", "-m", "mine", env=env)
    r = run(clone, "git", "merge", "--no-edit", "origin/leak", env=env, check=False)
    assert r.returncode != 0 and "aws-access-key-id" in r.stdout + r.stderr, r.stdout + r.stderr
    assert "AKIAQWERTYUIOPASDFGH" not in r.stdout + r.stderr
    git("merge", "--abort", cwd=clone)
    # finding 11: without git-memex, a merge that brings a teammate's clean memory is not stopped
    git("checkout", "-q", "-b", "clean", "main", cwd=repo)
    rel = write_memory(repo, "we deploy with blue-green")
    git("add", rel, cwd=repo)
    run(repo, "git", "commit", "-q", "-m", "a clean memory", env=env)
    git("push", "-q", "origin", "clean", cwd=repo)
    git("fetch", "-q", cwd=clone)
    # the framework shows a passing hook's output only with --verbose: the warning goes to the terminal
    code, said = on_a_terminal(clone, "git", "merge", "--no-edit", "origin/clean", path=BARE_PATH, env=env)
    assert code == 0 and MERGE_WARNING in said.replace("\r\n", " ").replace("\n", " "), said
    assert (clone / rel).is_file()


@pytest.mark.slow
def test_a_merge_hook_the_framework_did_not_install_is_named(repo: Path, tmp_path: Path):
    """Finding 4: where only `pre-commit install -t pre-commit` ran (a config from before init's
    `default_install_hook_types`), list and context said nothing though merges go unchecked."""
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pc-home")}
    (repo / ".pre-commit-config.yaml").write_text(TEAM_FRAMEWORK)
    init(repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "set up", cwd=repo)
    rel = write_memory(repo, "a clean memory")
    git("add", rel, cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "memory", cwd=repo)
    for name in ("pre-commit", "pre-merge-commit"):
        (repo / ".git" / "hooks" / name).unlink()  # a clone that never ran init
    run(repo, str(Path(VENV_BIN) / "pre-commit"), "install", "-t", "pre-commit", env=env)
    said = notice(repo)
    assert "pre-merge-commit" in said and "pre-commit install -t pre-merge-commit" in said, said
    assert "pre-merge-commit" in run_cli("context", cwd=repo).out
    run(repo, str(Path(VENV_BIN) / "pre-commit"), "install", env=env)  # the config's hook types: both
    assert "not checked for secrets" not in notice(repo)


@pytest.mark.slow
def test_prek_is_taken_for_the_framework(repo: Path, tmp_path: Path, prek_bin: Path):
    """Finding 10: prek's hook looked like a hand-written one (`does not run git-memex`); init
    chained it, and a later `prek install` went into migration mode and failed every commit."""
    env = {"PRE_COMMIT_HOME": str(tmp_path / "prek-home")}
    prek = str(prek_bin / "prek")
    (repo / ".pre-commit-config.yaml").write_text(TEAM_FRAMEWORK)
    rel = write_memory(repo, "a clean memory")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "team hooks and a memory", cwd=repo)
    run(repo, prek, "install", env=env)
    said = notice(repo)
    assert ".pre-commit-config.yaml has no memex-secrets hook" in said and "does not run" not in said, said
    out = init(repo)
    assert "updated    pre-commit .pre-commit-config.yaml" in out and "chained" not in out, out
    assert "prek" in (repo / ".git" / "hooks" / "pre-commit").read_text()  # prek's own hook, not chained
    run(repo, prek, "install", env=env)  # the merge hook too now (default_install_hook_types)
    assert not (repo / ".git" / "hooks" / "pre-commit.legacy").exists()  # prek's hook was never chained
    assert "removed    hook pre-merge-commit.legacy" in init(repo)  # our interim merge hook, set aside by prek
    assert not list((repo / ".git" / "hooks").glob("*.legacy"))
    git("add", "-A", cwd=repo)
    r = run(repo, "git", "commit", "-q", "-m", "set up git-memex", env=env, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_secret_refused(repo, path=WITH_MEMEX)
    assert "not checked for secrets" not in notice(repo)
    secret_branch(repo)
    r = run(repo, "git", "merge", "--no-ff", "--no-edit", "leak", env=env, check=False)
    assert r.returncode != 0 and "aws-access-key-id" in r.stdout + r.stderr, r.stdout + r.stderr
    del rel


# ------------------------------------------------------------------ husky (findings 2, 11)
def husky_custom_project(work: Path) -> None:
    (work / ".gitignore").write_text("node_modules\n")
    (work / "package.json").write_text(json.dumps({"name": "team-app", "version": "1.0.0", "private": True,
                                                   "scripts": {"prepare": "husky .config/husky"},
                                                   "devDependencies": {"husky": "9.1.7"}}, indent=2) + "\n")
    (work / ".config" / "husky").mkdir(parents=True)
    (work / ".config" / "husky" / "pre-commit").write_text("echo team lint\n")


@pytest.mark.slow
def test_husky_in_its_own_folder_keeps_the_scan_and_a_teammate_pulls(repo: Path, tmp_path: Path, npm_cache: Path):
    """Finding 2: `husky .config/husky` was never joined (the notice named .husky/pre-commit; the
    next npm install took our chained set-up away). Finding 11: a teammate without git-memex was
    stopped by a merge-style pull that brought a clean memory."""
    husky_custom_project(repo)
    npm(npm_cache, repo, "install")
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".config/husky/_"
    out = init(repo)
    assert "updated    husky .config/husky/pre-commit" in out and not (repo / ".husky").exists(), out
    git("add", "-A", cwd=repo)
    assert commit(repo, "-m", "set up git-memex").returncode == 0
    npm(npm_cache, repo, "install")  # husky's prepare again
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".config/husky/_"
    assert_secret_refused(repo)
    assert [c["level"] for c in hook_checks(repo)] == ["ok"]
    bare = bare_origin(repo, tmp_path)
    clone = tmp_path / "teammate"
    git("clone", "-q", str(bare), str(clone))
    npm(npm_cache, clone, "install")
    rel = write_memory(repo, "we deploy with blue-green")  # the maintainer's clean memory
    git("add", rel, cwd=repo)
    assert commit(repo, "-m", "a memory", path=WITH_MEMEX).returncode == 0
    git("push", "-q", "origin", "main", cwd=repo)
    (clone / "notes.txt").write_text("mine\n")
    git("add", "notes.txt", cwd=clone)
    assert commit(clone, "-m", "my work").returncode == 0  # touches no memory: goes through
    r = run(clone, "git", "pull", "-q", "--no-rebase", "--no-edit", path=BARE_PATH, check=False)
    assert r.returncode == 0 and MERGE_WARNING in r.stderr, r.stdout + r.stderr
    assert (clone / rel).is_file() and "commit is refused" not in r.stderr


# ------------------------------------------------------------------ lefthook (findings 3, 6, 7, 8)
def lefthook_with(work: Path, cache: Path, config: str) -> None:
    (work / ".gitignore").write_text("node_modules\n")
    (work / "package.json").write_text('{"name": "team-app", "version": "1.0.0", "private": true}\n')
    (work / "lefthook.yml").write_text(config)
    npm(cache, work, "install", "-E", LEFTHOOK)
    lefthook_install(work)


@pytest.mark.slow
def test_lefthook_merge_is_checked_before_lefthook_syncs(repo: Path, npm_cache: Path):
    """Finding 7: right after init, lefthook had installed only pre-commit, and init no
    pre-merge-commit hook: a merge of a `--no-verify` branch with a key went in, doctor ok."""
    lefthook_with(repo, npm_cache, "pre-commit:\n  commands:\n    lint:\n      run: echo lint\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "lefthook", cwd=repo)
    secret_branch(repo)
    init(repo)  # no commit between init and the merge: lefthook has not synced its hooks yet
    assert not (repo / ".git" / "hooks" / "pre-merge-commit").read_text().count("lefthook")
    assert [c["level"] for c in hook_checks(repo)] == ["ok"]  # our own hook runs meanwhile
    r = run(repo, "git", "merge", "--no-ff", "--no-edit", "leak", check=False)
    assert r.returncode != 0 and "aws-access-key-id" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.slow
def test_lefthook_keys_with_empty_values_still_parse(repo: Path, npm_cache: Path):
    """Finding 6: `post-checkout: {}` made init append a second `post-checkout:` key, which
    lefthook's parser refuses: every commit failed."""
    config = "pre-commit:\n  commands:\n    lint:\n      run: echo lint\npost-checkout: {}\npost-merge: ~\n"
    lefthook_with(repo, npm_cache, config)
    init(repo)
    lefthook_install(repo)  # lefthook reads the edited file
    git("add", "-A", cwd=repo)
    r = commit(repo, "-m", "set up git-memex")
    assert r.returncode == 0, r.stdout + r.stderr
    assert_secret_refused(repo)
    assert run_cli("init", "--uninstall", "--yes", cwd=repo).code == 0
    assert (repo / "lefthook.yml").read_text() == config


@pytest.mark.slow
def test_lefthook_settings_that_skip_the_scan_are_named(repo: Path, npm_cache: Path):
    """Finding 3: `skip: [merge, rebase]` on pre-commit skips every command of the hook, ours too,
    when a conflicted merge is concluded with `git commit`; lefthook has no way to exempt one
    command. Finding 8: lefthook-local.yml and LEFTHOOK_EXCLUDE switch it off too. init warns,
    doctor warns and every command's notice names the setting."""
    config = ("pre-commit:\n  skip:\n    - merge\n    - rebase\n  commands:\n    lint:\n      run: echo lint\n")
    lefthook_with(repo, npm_cache, config)
    out = init(repo)
    assert "Warning: lefthook.yml sets `skip:` on pre-commit at hook level" in out, out
    git("add", "-A", cwd=repo)
    assert commit(repo, "-m", "set up git-memex").returncode == 0
    rel = write_memory(repo, "a clean memory")
    git("add", rel, cwd=repo)
    assert commit(repo, "-m", "memory", path=WITH_MEMEX).returncode == 0
    said = notice(repo)
    assert "lefthook.yml sets `skip:` on pre-commit (hook level)" in said, said
    checks = hook_checks(repo)
    assert [c["level"] for c in checks] == ["ok", "warn"], checks
    # the limit itself, with lefthook 2.2.1: a conflicted merge concluded with `git commit` skips
    # every command of pre-commit, ours too (hence the warnings above)
    git("checkout", "-q", "-b", "other", cwd=repo)
    (repo / "README.md").write_text("theirs\n")
    git("commit", "-q", "--no-verify", "-am", "theirs", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    (repo / "README.md").write_text("ours\n")
    git("commit", "-q", "--no-verify", "-am", "ours", cwd=repo)
    assert run(repo, "git", "merge", "other", check=False).returncode != 0  # a conflict: the merge stops
    (repo / "README.md").write_text("both\n")
    leak = write_memory(repo, f"the deploy role\n{AWS}")
    git("add", "README.md", leak, cwd=repo)
    assert commit(repo, "--no-edit", path=WITH_MEMEX).returncode == 0  # lefthook skipped the whole hook
    git("rm", "-q", leak, cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "the key out again", cwd=repo)
    text = (repo / "lefthook.yml").read_text()
    (repo / "lefthook.yml").write_text(text.replace("  skip:\n    - merge\n    - rebase\n", ""))
    assert "skip" not in notice(repo)
    (repo / "lefthook-local.yml").write_text("pre-commit:\n  commands:\n    git-memex:\n      skip: true\n")
    lefthook_install(repo)
    leak = write_memory(repo, f"the deploy role\n{AWS}")
    git("add", leak, cwd=repo)
    r = commit(repo, "-m", "the local file switches the scan off", path=WITH_MEMEX)
    assert r.returncode == 0  # what lefthook-local.yml does: lefthook runs no git-memex command
    said = notice(repo)
    assert "lefthook-local.yml (your own lefthook settings, not committed) changes git-memex's command" in said
    assert any("lefthook-local.yml" in c["detail"] for c in hook_checks(repo) if c["level"] == "warn")
    (repo / "lefthook-local.yml").unlink()
    said = notice(repo, env={"LEFTHOOK_EXCLUDE": "lint,git-memex"})
    assert "LEFTHOOK_EXCLUDE names git-memex in this environment" in said, said
    said = notice(repo, env={"LEFTHOOK": "0"})
    assert "LEFTHOOK=0 is set in this environment" in said, said

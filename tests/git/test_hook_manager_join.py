"""`git memex init` joins the hook managers through their own committed files (issue 32, items 1-2).

husky and lefthook are installed from the npm registry the way their users install them (husky's
`prepare` script run by a real `npm install`, lefthook's postinstall and `lefthook install`), the
pre-commit framework by its own `pre-commit install`. After init, a real `git commit` of a memory
holding an AWS key is refused; still after `npm install` again or `lefthook install` again; and
from a second clone of a bare origin after that clone's own install, with git-memex on PATH (the
check runs) and without it (the committed line refuses, saying how to install git-memex). A plain
commit without memory files still goes through there. `--uninstall` gives the team's files back
byte for byte (docs/git.md, "Hook managers").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model
from git_memex.git.hook import MARKER, shim_text

from conftest import from_registry, git, run_cli

MEM = ".ai/open-memex"
AWS = ("aws_access_key_id = AKIAQWERTYUIOPASDFGH\n"
       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
VENV_BIN = str(Path(sys.executable).parent)
NODE_BIN = str(Path(shutil.which("node") or "/usr/bin/node").parent)
BARE_PATH = os.pathsep.join(dict.fromkeys([NODE_BIN, "/usr/bin", "/bin"]))  # node and git, no git-memex
WITH_MEMEX = VENV_BIN + os.pathsep + BARE_PATH
NOT_INSTALLED = "git-memex is not installed in this clone"
LEFTHOOK = "lefthook@2.2.1"  # docs/git.md: newer releases' platform builds may not be served


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def npm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """npm's download cache, shared by the tests of this session (each test's HOME is its own)."""
    if shutil.which("npm") is None:
        if _ci():
            pytest.fail("npm is missing, and CI must test husky and lefthook for real")
        pytest.skip("npm is missing: husky and lefthook cannot be installed from the registry")
    return tmp_path_factory.mktemp("npm-cache")


def npm(cache: Path, cwd: Path, *args: str) -> None:
    env = {**os.environ, "npm_config_cache": str(cache), "PATH": WITH_MEMEX}
    r = from_registry(["npm", *args, "--no-audit", "--no-fund"], cwd=cwd, env=env, timeout=600)
    if r.returncode != 0:
        message = f"npm {' '.join(args)} failed: {r.stderr.strip()[-800:]}"
        if _ci():
            pytest.fail(message)
        pytest.skip(message)


def commit(work: Path, *args: str, path: str = BARE_PATH) -> subprocess.CompletedProcess[str]:
    """`git commit` from a shell whose PATH has node and git but not git-memex, unless `path`."""
    return subprocess.run(["git", "commit", "-q", *args], cwd=work, env={**os.environ, "PATH": path},
                          capture_output=True, text=True, timeout=300)


def write_memory(work: Path, body: str) -> str:
    m = model.create(body, scope="project", review_state="proposed")
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    return f"{MEM}/{m.id}.md"


def assert_secret_refused(work: Path, *, path: str = BARE_PATH, why: str = "aws-access-key-id") -> None:
    """A memory holding an AWS key is staged and `git commit` refuses it, never showing the key;
    the file is unstaged again afterwards."""
    rel = write_memory(work, f"the deploy role\n{AWS}")
    git("add", rel, cwd=work)
    r = commit(work, "-m", "a memory with a key", path=path)
    said = r.stdout + r.stderr
    assert r.returncode != 0 and why in said, said
    assert "wJalrXUtnFEMI" not in said and "AKIAQWERTYUIOPASDFGH" not in said
    git("rm", "-q", "--cached", rel, cwd=work)
    (work / rel).unlink()


def init(work: Path, *extra: str) -> str:
    r = run_cli("init", "--yes", *extra, cwd=work)
    assert r.code == 0, r.err
    return r.out


def bare_origin(work: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    git("remote", "add", "origin", str(bare), cwd=work)
    git("push", "-q", "-u", "origin", "main", cwd=work)
    return bare


def second_clone(bare: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "teammate"
    git("clone", "-q", str(bare), str(clone))
    return clone


def assert_teammate_guarded(clone: Path) -> None:
    """In a clone that never ran `git memex init`: without git-memex the committed line refuses a
    memory commit (saying how to install) and lets a plain one through; with git-memex on PATH
    its check runs."""
    assert_secret_refused(clone, path=BARE_PATH, why=NOT_INSTALLED)
    assert_secret_refused(clone, path=WITH_MEMEX)
    rel = write_memory(clone, "a clean memory about the build")
    git("add", rel, cwd=clone)
    r = commit(clone, "-m", "memory without git-memex", path=BARE_PATH)
    assert r.returncode != 0 and NOT_INSTALLED in r.stderr and "install git-memex" in r.stderr, r.stderr
    git("rm", "-q", "--cached", rel, cwd=clone)
    (clone / "notes.txt").write_text("no memory here\n")
    git("add", "notes.txt", cwd=clone)
    r = commit(clone, "-m", "a plain commit", path=BARE_PATH)
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------------ husky
def husky_project(work: Path) -> None:
    (work / ".gitignore").write_text("node_modules\n")
    (work / "package.json").write_text(json.dumps({"name": "team-app", "version": "1.0.0", "private": True,
                                                   "scripts": {"prepare": "husky"},
                                                   "devDependencies": {"husky": "9.1.7"}}, indent=2) + "\n")


@pytest.mark.slow
def test_husky_npm_install_keeps_the_scan_in_every_clone(repo: Path, tmp_path: Path, npm_cache: Path):
    husky_project(repo)
    npm(npm_cache, repo, "install")  # `prepare` runs husky: core.hooksPath=.husky/_
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".husky/_"
    (repo / ".husky" / "pre-commit").write_text("echo team lint\n")  # the team's own line
    out = init(repo)
    assert "husky .husky/pre-commit" in out and "Commit .husky/pre-commit" in out, out
    assert (repo / ".husky" / "pre-commit").read_text().endswith("echo team lint\n")
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".husky/_"  # husky keeps its folder
    git("add", "-A", cwd=repo)
    assert commit(repo, "-m", "set up git-memex").returncode == 0
    assert_secret_refused(repo)
    npm(npm_cache, repo, "install")  # a later `npm install` runs husky again
    assert git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".husky/_"
    assert_secret_refused(repo)
    checks = [c for c in run_cli("doctor", "--json", cwd=repo).json()["checks"] if c["name"] == "git hooks"]
    assert [c["level"] for c in checks] == ["ok"], checks
    bare = bare_origin(repo, tmp_path)
    clone = second_clone(bare, tmp_path)
    npm(npm_cache, clone, "install")
    assert_teammate_guarded(clone)


# ------------------------------------------------------------------ lefthook
TEAM_LEFTHOOK = """\
# the team's hooks
pre-commit:
    parallel: true
    jobs:
        -   name: lint
            run: echo team lint   # keep it fast

pre-push:
    commands:
        audit:
            run: echo audit
"""


def lefthook_project(work: Path, cache: Path) -> None:
    (work / ".gitignore").write_text("node_modules\n")
    (work / "package.json").write_text('{"name": "team-app", "version": "1.0.0", "private": true}\n')
    (work / "lefthook.yml").write_text(TEAM_LEFTHOOK)
    npm(cache, work, "install", "-E", LEFTHOOK)  # its postinstall runs `lefthook install`, except where CI is set
    lefthook_install(work)  # as lefthook's docs say to after a clone; the same install again elsewhere
    assert "lefthook" in (work / ".git" / "hooks" / "pre-commit").read_text()


def lefthook_install(work: Path) -> None:
    r = subprocess.run([str(work / "node_modules" / ".bin" / "lefthook"), "install"], cwd=work,
                       env={**os.environ, "PATH": BARE_PATH}, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_lefthook_reinstall_keeps_the_scan_in_every_clone(repo: Path, tmp_path: Path, npm_cache: Path):
    lefthook_project(repo, npm_cache)
    out = init(repo)
    assert "lefthook lefthook.yml" in out and "Commit lefthook.yml" in out, out
    checks = [c for c in run_cli("doctor", "--json", cwd=repo).json()["checks"] if c["name"] == "git hooks"]
    assert [c["level"] for c in checks] == ["ok"], checks  # the hooks lefthook installs on its next run count
    text = (repo / "lefthook.yml").read_text()
    assert "git-memex" in text and "    jobs:\n        -   name: lint\n            run: echo team lint   # keep it" in text
    hooks = repo / ".git" / "hooks"
    assert MARKER not in (hooks / "pre-commit").read_text()  # lefthook's own hook runs our command
    # the hooks lefthook has not installed yet keep our shim until it does (issue 32, finding 7)
    assert MARKER in (hooks / "pre-merge-commit").read_text()
    git("add", "-A", cwd=repo)
    r = commit(repo, "-m", "set up git-memex")
    assert r.returncode == 0 and "team lint" in r.stdout + r.stderr, r.stdout + r.stderr
    assert_secret_refused(repo)
    lefthook_install(repo)  # reinstalled: lefthook rewrites .git/hooks
    assert "lefthook" in (hooks / "pre-merge-commit").read_text()
    assert_secret_refused(repo)
    again = run_cli("init", "--yes", cwd=repo)  # our shims lefthook renamed aside go
    assert again.code == 0 and "removed    hook pre-merge-commit.old" in again.out, again.out
    again = run_cli("init", "--yes", cwd=repo)
    assert again.code == 0 and "already set up; nothing changed" in again.out, again.out
    bare = bare_origin(repo, tmp_path)
    clone = second_clone(bare, tmp_path)
    npm(npm_cache, clone, "install")  # the lock file's lefthook
    lefthook_install(clone)
    assert_teammate_guarded(clone)


@pytest.mark.slow
def test_init_repairs_an_older_set_up_after_lefthook_reinstalled(repo: Path, npm_cache: Path):
    """An older init chained lefthook's hook (`pre-commit.memex-chained`) under our shim;
    `lefthook install` then renamed our shim to `pre-commit.old`. init used to stop ("pre-commit
    exists and pre-commit.memex-chained too") while a secret went in; now it repairs."""
    lefthook_project(repo, npm_cache)
    hooks = repo / ".git" / "hooks"
    from git_memex.git.hook import memex_command

    for name in ("pre-commit", "post-merge"):  # what the older init left
        if (hooks / name).exists():
            os.replace(hooks / name, hooks / f"{name}.memex-chained")
        (hooks / name).write_text(shim_text(name, memex_command()))
        (hooks / name).chmod(0o755)
    lefthook_install(repo)
    assert MARKER in (hooks / "pre-commit.old").read_text() and (hooks / "pre-commit.memex-chained").exists()
    out = init(repo)
    assert "hook pre-commit.old" in out and "hook pre-commit.memex-chained" in out, out
    left = sorted(p.name for p in hooks.iterdir() if not p.name.endswith(".sample"))
    assert not [n for n in left if n.endswith((".old", ".memex-chained"))], left
    git("add", "-A", cwd=repo)
    assert commit(repo, "-m", "set up git-memex").returncode == 0
    assert_secret_refused(repo)


# ------------------------------------------------------------------ the pre-commit framework
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

# the end
"""


def framework_install(work: Path, home: Path) -> dict[str, str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PATH": BARE_PATH}
    r = subprocess.run([str(Path(VENV_BIN) / "pre-commit"), "install"], cwd=work, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return env


def test_pre_commit_framework_config_gets_our_entry(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (repo / ".pre-commit-config.yaml").write_text(TEAM_FRAMEWORK)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "team hooks", cwd=repo)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pc-home"))
    framework_install(repo, tmp_path / "pc-home")
    out = init(repo)
    assert "pre-commit .pre-commit-config.yaml" in out and "Commit .pre-commit-config.yaml" in out, out
    text = (repo / ".pre-commit-config.yaml").read_text()
    from git_memex.git.blockedit import strip_blocks

    assert strip_blocks(text)[0] == TEAM_FRAMEWORK and text.endswith("\n# the end\n")  # theirs, untouched
    assert "memex-secrets" in text and "default_install_hook_types: [pre-commit, pre-merge-commit]" in text
    hook = (repo / ".git" / "hooks" / "pre-commit").read_text()
    assert MARKER not in hook  # the framework's own hook runs our entry
    git("add", "-A", cwd=repo)
    assert commit(repo, "-m", "set up git-memex").returncode == 0
    assert_secret_refused(repo)
    bare = bare_origin(repo, tmp_path)
    clone = second_clone(bare, tmp_path)
    framework_install(clone, tmp_path / "pc-home")
    assert_teammate_guarded(clone)


# ------------------------------------------------------------------ --uninstall gives the files back
def test_uninstall_gives_each_managers_file_back_byte_for_byte(repo: Path):
    husky_project(repo)
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text("#!/usr/bin/env sh\nnpx lint-staged")  # no newline at the end
    (repo / "lefthook.yml").write_text(TEAM_LEFTHOOK)
    (repo / ".pre-commit-config.yaml").write_text(TEAM_FRAMEWORK)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "the team's hooks", cwd=repo)
    before = {p: (repo / p).read_bytes() for p in ("package.json", ".husky/pre-commit", "lefthook.yml",
                                                   ".pre-commit-config.yaml")}
    out = init(repo)
    for rel in (".husky/pre-commit", ".husky/post-merge", "lefthook.yml", ".pre-commit-config.yaml"):
        assert f" {rel}  (git-memex's line)" in out, (rel, out)
    assert (repo / ".husky" / "pre-commit").read_text().startswith("#!/usr/bin/env sh\n# >>> git-memex")
    assert init(repo).endswith("already set up; nothing changed\n")  # a second run changes no byte
    r = run_cli("init", "--uninstall", "--yes", cwd=repo)
    assert r.code == 0, r.err
    for rel, data in before.items():
        assert (repo / rel).read_bytes() == data, rel
    assert not (repo / ".husky" / "post-merge").exists()  # created by init, holding only our line
    assert git("status", "--porcelain", "--", ".husky", "lefthook.yml", ".pre-commit-config.yaml",
               cwd=repo).stdout == ""


@pytest.mark.parametrize("text", ["pre-commit: {commands: {lint: {run: x}}}\n", "- not a mapping\n"])
def test_a_lefthook_file_init_cannot_follow_is_left_alone_with_the_snippet(repo: Path, text: str):
    (repo / "lefthook.yml").write_text(text)
    out = init(repo)
    assert (repo / "lefthook.yml").read_text() == text
    assert "printed    lefthook lefthook.yml" in out and "lefthook.yml was left alone" in out, out
    assert "# >>> git-memex" in out and "git-memex:\n      run: |-" in out
    assert MARKER in (repo / ".git" / "hooks" / "pre-commit").read_text()  # our own hook guards meanwhile


def _on_a_terminal(args: list[str], answers: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run the CLI with stdin and stdout on a pseudo-terminal, answering each question whose text
    holds a key of `answers` (an empty answer takes the default)."""
    import select
    import time

    master, slave = os.openpty()
    p = subprocess.Popen([sys.executable, "-m", "git_memex", *args], stdin=slave, stdout=slave, stderr=slave,
                         cwd=cwd, close_fds=True)
    os.close(slave)
    out, asked = b"", 0
    deadline = time.time() + 120
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
            if out[asked:].rstrip().endswith(b"]:"):
                question = out[asked:].decode("utf-8", "replace").rsplit("\n", 1)[-1]
                reply = next((a for k, a in answers.items() if k in question), "")
                os.write(master, reply.encode() + b"\n")
                asked = len(out)
        elif p.poll() is not None:
            break
    code = p.wait(timeout=60)
    os.close(master)
    return code, out.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_terminal_init_asks_before_editing_a_managers_file(repo: Path):
    husky_project(repo)
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text("npx lint-staged\n")
    code, out = _on_a_terminal(["init"], {"editor": "none", "uses husky": "n"}, repo)
    assert code == 0 and "This repository uses husky: add git-memex's secret scan to .husky" in out, out
    assert (repo / ".husky" / "pre-commit").read_text() == "npx lint-staged\n"  # declined: untouched
    assert "add this to it yourself" in out and "sh -c '" in out  # the lines to add by hand
    assert MARKER in (repo / ".git" / "hooks" / "pre-commit").read_text()  # our own hook guards meanwhile
    code, out = _on_a_terminal(["init"], {"editor": "none"}, repo)  # the default is yes
    assert code == 0 and "# >>> git-memex" in (repo / ".husky" / "pre-commit").read_text(), out


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("answer", ["n", "no", "None", ""])
def test_on_a_terminal_no_editor_is_any_way_of_saying_no(repo: Path, answer: str):
    """An outside review: answering `n` to "Configure an editor's MCP server? … [none]" stopped
    init with "unknown editor 'n'" (exit 1)."""
    code, out = _on_a_terminal(["init"], {"editor": answer, "git hooks": "y"}, repo)
    assert code == 0 and "unknown editor" not in out, out
    assert (repo / ".ai" / "open-memex").is_dir() and not (repo / ".mcp.json").exists()

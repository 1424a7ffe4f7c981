"""`.pre-commit-hooks.yaml` follows a configured `memex.memoryDir`: the framework's hooks, run by
the real pre-commit framework on a real `git commit`, check memory files wherever the folder is."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from git_memex.core import frontmatter, model

from conftest import git, run_cli

ROOT = Path(__file__).resolve().parents[2]
SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
MEM = "notes/team-memory"


def _memory(body: str, scope: str = "project") -> tuple[str, str]:
    m = model.create(body, scope=scope, review_state="proposed" if scope == "project" else None)
    return m.id, frontmatter.serialize(m.fm, m.body)


def _commit(work: Path, env: dict[str, str], *paths: str) -> subprocess.CompletedProcess[str]:
    git("add", *paths, cwd=work)
    return subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=work, env=env, capture_output=True, text=True)


@pytest.fixture
def framework_repo(repo: Path) -> tuple[Path, dict[str, str]]:
    """A repository whose memory folder is configured elsewhere, with our manifest's hooks
    installed through the pre-commit framework (as `language: system`, to use this checkout)."""
    git("config", "memex.memoryDir", MEM, cwd=repo)
    assert run_cli("init", "--yes", "--no-hooks").code == 0
    assert (repo / MEM).is_dir()
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    exe = str(Path(sys.executable).with_name("git-memex"))
    hooks = [{"id": h["id"], "name": h["name"], "entry": shlex.quote(exe) + h["entry"].removeprefix("git-memex"),
              "language": "system", "files": h["files"]} for h in manifest]
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memex and pre-commit", cwd=repo)
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pc-home")}
    pre_commit = str(Path(sys.executable).with_name("pre-commit"))
    subprocess.run([pre_commit, "install", "-f"], cwd=repo, env=env, check=True, capture_output=True)
    return repo, env


def test_framework_hooks_check_the_configured_memory_folder(framework_repo):
    work, env = framework_repo
    mid, text = _memory("Release notes are generated from the changelog.")
    (work / MEM / f"{mid}.md").write_text(text)
    ok = _commit(work, env, MEM)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad_id, bad = _memory(f"The release bot uses {SECRET}.")
    (work / MEM / f"{bad_id}.md").write_text(bad)
    r = _commit(work, env, MEM)
    assert r.returncode != 0 and "github-pat" in r.stdout + r.stderr, r.stdout + r.stderr
    assert SECRET not in r.stdout + r.stderr
    git("rm", "-q", "--cached", f"{MEM}/{bad_id}.md", cwd=work)
    (work / MEM / f"{bad_id}.md").unlink()
    pid, personal = _memory("I keep my notes in vim", scope="personal")
    (work / MEM / f"{pid}.md").write_text(personal)
    r = _commit(work, env, MEM)
    assert r.returncode != 0 and "personal-memory-in-repo" in r.stdout + r.stderr, r.stdout + r.stderr


def test_framework_hooks_leave_other_markdown_alone(framework_repo):
    work, env = framework_repo
    (work / "docs").mkdir()
    (work / "docs" / "notes.md").write_text("# Notes\n\nNot a memory file; no frontmatter at all.\n")
    (work / ".ai" / "open-memex").mkdir(parents=True)  # the default folder, not this repository's
    (work / ".ai" / "open-memex" / "README.md").write_text("plain markdown\n")
    r = _commit(work, env, "docs", ".ai")
    assert r.returncode == 0, r.stdout + r.stderr

"""Our .pre-commit-hooks.yaml used from another repository through the real pre-commit framework."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git

ROOT = Path(__file__).resolve().parents[2]
MEM = ".ai/open-memex"


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _memory(work: Path, body: str) -> None:
    m = model.create(body, scope="project", review_state="proposed")
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))


def _try_repo(work: Path, hook: str, home: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run([exe, "try-repo", str(ROOT), hook, "--all-files"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_try_repo_runs_our_hooks(repo: Path, pre_commit_home: Path):
    _memory(repo, "a clean memory about the build")
    git("add", "-A", cwd=repo)
    ok = _try_repo(repo, "memex-secrets", pre_commit_home)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "git-memex secret scan" in ok.stdout and "Passed" in ok.stdout
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    _memory(repo, f"the bot token is {secret}")
    git("add", "-A", cwd=repo)
    bad = _try_repo(repo, "memex-secrets", pre_commit_home)
    assert bad.returncode == 1
    assert "github-pat" in bad.stdout and secret not in bad.stdout
    m = model.create("mine only", scope="personal")
    (repo / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    git("add", "-A", cwd=repo)
    invalid = _try_repo(repo, "memex-validate", pre_commit_home)
    assert invalid.returncode == 1 and "personal-memory-in-repo" in invalid.stdout

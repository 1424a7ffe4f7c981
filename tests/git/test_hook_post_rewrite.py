"""post-rewrite keeps the index in step after `git pull --rebase` (two clones, a bare remote)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import frontmatter, model
from git_memex.index.database import Index

from conftest import git, run_cli

MEM = ".ai/open-memex"


def write_memory(work: Path, body: str) -> str:
    m = model.create(body, scope="project", review_state="proposed")
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    return m.id


def commit_all(work: Path, msg: str) -> None:
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", msg, cwd=work)


def indexed(work: Path, mid: str) -> bool:
    """Looks in the work tree's index database itself: no command runs, so nothing refreshes it."""
    with Index(work / ".git" / "memex" / "index.db") as idx:
        return idx.conn.execute("SELECT count(*) FROM memories WHERE id=?", (mid,)).fetchone()[0] == 1


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path]:
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin))
    a, b = tmp_path / "a", tmp_path / "b"
    git("clone", "-q", str(origin), str(a))
    (a / "README.md").write_text("x\n")
    assert run_cli("init", "--yes", cwd=a).code == 0
    commit_all(a, "set up git-memex")
    git("push", "-q", "origin", "main", cwd=a)
    git("clone", "-q", str(origin), str(b))
    assert run_cli("init", "--yes", cwd=b).code == 0
    assert run_cli("search", "anything", cwd=b).code == 0  # builds b's index
    return a, b


@pytest.mark.parametrize("local_change", ["nothing", "other file", "own memory"])
def test_pull_rebase_indexes_what_came_from_upstream(clones, local_change: str):
    a, b = clones
    upstream = write_memory(a, "the payments service retries webhooks three times")
    commit_all(a, "upstream memory")
    git("push", "-q", "origin", "main", cwd=a)
    mine = None
    if local_change == "own memory":
        mine = write_memory(b, "local note about the staging database")
    elif local_change == "other file":
        (b / "notes.txt").write_text("local\n")
    if local_change != "nothing":
        commit_all(b, "local work")
    if mine:
        assert run_cli("search", "staging database", cwd=b).code == 0
        assert indexed(b, mine)
    r = git("pull", "--rebase", cwd=b)
    assert r.returncode == 0
    assert "git-memex: index updated" in r.stderr, r.stderr
    assert indexed(b, upstream), "the rebased-in memory is missing from the index until the next command: " + r.stderr
    if mine:
        assert indexed(b, mine)


def test_pull_rebase_drops_what_upstream_deleted(clones):
    a, b = clones
    gone = write_memory(a, "the old cron host is cron-1")
    commit_all(a, "memory")
    git("push", "-q", "origin", "main", cwd=a)
    git("pull", "-q", cwd=b)
    assert indexed(b, gone)
    git("rm", "-q", f"{MEM}/{gone}.md", cwd=a)
    git("commit", "-q", "-m", "forget", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    (b / "notes.txt").write_text("local\n")
    commit_all(b, "local work")
    assert git("pull", "--rebase", cwd=b).returncode == 0
    assert not indexed(b, gone)


def test_plain_rebase_and_amend_still_update_the_index(clones):
    _a, b = clones
    mid = write_memory(b, "feature flags are read at start-up")
    commit_all(b, "memory")
    assert run_cli("search", "feature flags", cwd=b).code == 0
    path = b / MEM / f"{mid}.md"
    path.write_text(path.read_text().replace("start-up", "start-up and on SIGHUP"))
    r = git("commit", "-q", "--amend", "-a", "--no-edit", cwd=b)
    assert "git-memex: index updated" in r.stderr
    with Index(b / ".git" / "memex" / "index.db") as idx:
        body = idx.conn.execute("SELECT body FROM memories WHERE id=?", (mid,)).fetchone()[0]
    assert "SIGHUP" in body

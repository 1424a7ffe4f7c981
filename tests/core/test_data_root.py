"""The data root: private to its user (folders 0700, files 0600, repaired when found open), and
an unusable one does not stop the repository's own memories from being read."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, own_cases, run_cli


def add(*args: str, **kw) -> str:
    r = run_cli("add", *args, "--json", **kw)
    assert r.code == 0, r.err
    return r.json()["id"]


def open_bits(root: Path) -> list[str]:
    """Every folder or file under root (root included) with a group or other permission bit."""
    out = []
    for p in [root, *root.rglob("*")]:
        st = os.lstat(p)
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
            out.append(f"{oct(stat.S_IMODE(st.st_mode))} {p}")
    return out


def data(isolated_env: Path) -> Path:
    return isolated_env / "data"


def run_umask_022(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    """The real command under the common umask (022), whatever the test runner's is."""
    code = "import os, sys; os.umask(0o022); from git_memex.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd or os.getcwd(), capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


# ------------------------------------------------------------------ hole 5: modes
@pytest.mark.slow
def test_fresh_data_root_is_private_to_its_user(repo: Path, isolated_env: Path) -> None:
    root = data(isolated_env)
    assert not root.exists()
    for args in (("add", "--scope", "personal", "I prefer tabs over spaces"),
                 ("add", "the api token lives in vault, not in the repo"),
                 ("add", "--visibility", "private", "my private note about the deploy"),
                 ("search", "tabs"), ("list",)):
        r = run_umask_022(*args)
        assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert (root / "index.db").exists()
    assert open_bits(root) == []
    # the index's WAL files, made while a connection is open, take the database's mode
    import sqlite3

    conn = sqlite3.connect(root / "index.db")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE meta SET value = value")
    try:
        r = run_umask_022("search", "tabs")
        assert r.returncode == 0, r.stderr
        assert (root / "index.db-wal").exists()
        assert open_bits(root) == []
    finally:
        conn.rollback()
        conn.close()


def test_open_data_root_is_repaired_by_the_next_command(repo: Path, isolated_env: Path) -> None:
    root = data(isolated_env)
    add("--scope", "personal", "I read the changelog first")
    add("a project draft about caching")
    every = [root, *root.rglob("*")]
    for p in every:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    (root / "index.db-wal").write_bytes(b"")  # a leftover WAL file from an older version
    os.chmod(root / "index.db-wal", 0o644)
    assert len(open_bits(root)) >= 6
    r = run_umask_022("list")
    assert r.returncode == 0, r.stderr
    assert open_bits(root) == []
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "memories" / "personal").stat().st_mode) == 0o700


def test_repair_leaves_symbolic_links_and_their_targets_alone(repo: Path, isolated_env: Path, tmp_path: Path) -> None:
    root = data(isolated_env)
    add("--scope", "personal", "first personal memory")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours to change")
    os.chmod(outside, 0o644)
    (root / "link").symlink_to(outside)
    os.chmod(root, 0o755)
    assert run_umask_022("list").returncode == 0
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


def test_worktree_index_files_are_owner_only(repo: Path) -> None:
    r = run_umask_022("add", "the build uses make")
    assert r.returncode == 0, r.stderr
    folder = repo / ".git" / "memex"
    files = sorted(folder.iterdir())
    assert [p.name for p in files if p.name == "index.db"] == ["index.db"]
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # an older 0644 index is repaired, and .git itself is not touched
    git_mode = stat.S_IMODE((repo / ".git").stat().st_mode)
    os.chmod(folder / "index.db", 0o644)
    assert run_umask_022("list").returncode == 0
    assert stat.S_IMODE((folder / "index.db").stat().st_mode) == 0o600
    assert stat.S_IMODE((repo / ".git").stat().st_mode) == git_mode


def test_migrate_backups_are_private(nogit: Path, isolated_env: Path) -> None:
    root = data(isolated_env)
    cases = [c for c in own_cases()["migration"] if "v1_file" in c]
    legacy = root / "memories" / "user"
    legacy.mkdir(parents=True)
    for case in cases:
        (legacy / f"{case['v1']['id']}.md").write_text(case["v1_file"])
    for p in [root, *root.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    r = run_umask_022("migrate", "--json")
    assert r.returncode == 0, r.stderr
    backup = Path(json.loads(r.stdout)["backup"])
    assert backup.is_relative_to(root) and len(list(backup.glob("*.md"))) == len(cases)
    assert open_bits(root) == []


# ------------------------------------------------------------------ hole 10: unusable root
@pytest.fixture
def committed(repo: Path) -> str:
    """A repository holding one committed (submitted) memory."""
    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "set up git-memex", cwd=repo)
    mid = add("the deploy script lives in tools/deploy.sh")
    r = run_cli("submit", mid)
    assert r.code == 0, r.err
    assert git("ls-files", ".ai/open-memex", cwd=repo).stdout.strip()
    assert git("status", "--porcelain", cwd=repo).stdout.strip() == ""
    return mid


def _unusable_roots(tmp_path: Path) -> dict[str, str]:
    afile = tmp_path / "a-file"
    afile.write_text("x")
    return {"under a file": str(afile / "data"), "a file": str(afile), "in /proc": "/proc/git-memex-no-such"}


@pytest.mark.parametrize("kind", ["under a file", "a file", "in /proc"])
def test_unusable_data_root_still_reads_repository_memories(committed: str, tmp_path: Path, kind: str) -> None:
    if kind == "in /proc" and not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    home = _unusable_roots(tmp_path)[kind]
    env = {"GIT_MEMEX_HOME": home}
    s = run_cli("search", "deploy", "--json", env=env)
    assert s.code == 0, s.err
    assert [h["id"] for h in s.json()["hits"]] == [committed]
    lst = run_cli("list", "--json", env=env)
    assert lst.code == 0, lst.err
    assert committed in lst.out
    ctx = run_cli("context", env=env)
    assert ctx.code == 0, ctx.err
    assert "tools/deploy.sh" in ctx.out
    for r in (s, lst, ctx):
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("git-memex: warning:") and home in lines[0], r.err
        assert "Traceback" not in r.err
    hook = run_cli("context", "--hook", "claude", input="{}", env=env)
    assert hook.code == 0 and "tools/deploy.sh" in hook.out
    doc = run_cli("doctor", env=env)
    assert doc.code != 0 and "data root" in doc.out and home in doc.out
    # writes into the data root fail with one sentence, exit 2, and change nothing
    w = run_cli("add", "--scope", "personal", "I like short answers", env=env)
    assert w.code == 2
    assert len(w.err.strip().splitlines()) == 1 and home in w.err and "Traceback" not in w.err
    if kind == "a file":
        assert "is not a folder" in w.err and "File exists" not in w.err
        assert Path(home).read_text() == "x"


def test_unusable_data_root_outside_a_repository_is_one_sentence(nogit: Path, tmp_path: Path) -> None:
    home = _unusable_roots(tmp_path)["a file"]
    r = run_cli("search", "anything", env={"GIT_MEMEX_HOME": home})
    assert r.code == 2
    assert r.err.strip() == f"git-memex: GIT_MEMEX_HOME {home} is not a folder; point GIT_MEMEX_HOME at a folder"


# ------------------------------------------------------------------ small items
def test_relative_data_root_does_not_move_with_cd(repo: Path, tmp_path: Path) -> None:
    from git_memex.core.data_root import data_root

    code = ("import os, sys; from git_memex.core.data_root import data_root; a = data_root(); os.chdir(sys.argv[1]); "
            "print(a); print(data_root())")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = subprocess.run([sys.executable, "-c", code, str(elsewhere)], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, "GIT_MEMEX_HOME": "rel-home"}, check=True)
    first, second = p.stdout.split()
    assert first == second == str(repo / "rel-home")
    assert data_root().is_absolute()
    # and through the CLI: the memory lands under the folder the command started in (outside the
    # repository: a data root inside a work tree is refused, tests/core/test_data_root_work_tree.py)
    r = run_cli("add", "--scope", "personal", "relative homes stay put", env={"GIT_MEMEX_HOME": "rel-home"},
                cwd=elsewhere)
    assert r.code == 0, r.err
    assert list((elsewhere / "rel-home" / "memories" / "personal").glob("*.md"))


def test_personal_memory_cannot_be_shared(repo: Path, isolated_env: Path) -> None:
    for vis in ("shared", "internal"):
        r = run_cli("add", "--scope", "personal", "--visibility", vis, "I like tea")
        assert r.code == 1
        assert len(r.err.strip().splitlines()) == 1 and "personal" in r.err and vis in r.err
    assert not (data(isolated_env) / "memories").exists()
    assert run_cli("add", "--scope", "personal", "--visibility", "private", "I like tea").code == 0

"""With no `git` on PATH, libgit2 (a dependency) finds the repository (docs/git.md): committed
memories stay in `search`, settings still apply, and new drafts keep the same project key."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from conftest import git, run_cli, run_cli_process

# The commands without git run as real processes started with that PATH (run_cli_process).


def only_python(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "only-python"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    return {"PATH": str(bin_dir)}


def test_without_git_the_repository_and_its_key_are_still_seen(ready: Path, tmp_path: Path, isolated_env: Path):
    r = run_cli("add", "the release train leaves on thursdays", "--json")
    assert r.code == 0, r.err
    first = r.json()["id"]
    outbox = isolated_env / "data" / "memories" / "outbox"
    (key,) = [p.name for p in outbox.iterdir()]
    assert run_cli("submit", first).code == 0
    shutil.rmtree(ready / ".git" / "memex", ignore_errors=True)  # nothing indexed beforehand
    env = only_python(tmp_path)
    assert run_cli_process("config", "get", "memex.memoryDir", env=env).code == 0
    found = run_cli_process("search", "release train", "--json", env=env)
    assert found.code == 0, found.err
    hits = found.json()["hits"]
    assert [h["id"] for h in hits] == [first] and hits[0]["location"] == "repo"
    r = run_cli_process("add", "the hotfix branch is cut from the last tag", "--json", env=env)
    assert r.code == 0, r.err
    assert (outbox / key / f"{r.json()['id']}.md").is_file()
    assert [p.name for p in outbox.iterdir()] == [key]
    assert git("status", "--porcelain", cwd=ready).stdout == ""


def test_commands_that_need_git_say_so_in_one_sentence(ready: Path, tmp_path: Path) -> None:
    """The attack on the merged main: `doctor` and `init` gave "internal error (FileNotFoundError:
    'git')", and `push` said "HEAD is detached"."""
    env = only_python(tmp_path)
    for args in (("doctor",), ("init", "--yes"), ("push",)):
        r = run_cli_process(*args, env=env)
        assert r.code == 2, (args, r.code, r.err)
        lines = [ln for ln in r.err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "no" in lines[0] and "PATH" in lines[0] and "internal error" not in r.err, (args, r.err)
        assert "detached" not in r.err

"""A copied or moved clone (or data root) never acts on another folder's files (issue 21 holes 1
and 2): each index records the folder it was built for and is rebuilt when it is opened elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from conftest import git, run_cli


def _repo_memory(text: str) -> str:
    """A memory submitted into the repository's memory folder and committed."""
    r = run_cli("add", text, "--json")
    assert r.code == 0, r.err
    mid = json.loads(r.out)["id"]
    assert run_cli("submit", mid).code == 0
    return str(mid)


def _cp_a(src: Path, dst: Path) -> None:
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)


def test_forget_in_a_copied_clone_never_deletes_the_original(ready: Path, tmp_path: Path) -> None:
    mid = _repo_memory("the copied clone keeps its own files")
    original = ready / ".ai" / "open-memex" / f"{mid}.md"
    assert run_cli("show", mid).code == 0  # the index now knows the original's path
    copy = tmp_path / "copy"
    _cp_a(ready, copy)
    (copy / ".ai" / "open-memex" / f"{mid}.md").write_text(
        (copy / ".ai" / "open-memex" / f"{mid}.md").read_text().replace("keeps its own files", "was edited in the copy"))
    shown = run_cli("show", mid, cwd=copy)
    assert shown.code == 0, shown.err
    assert "edited in the copy" in shown.out and str(copy) in shown.out
    assert "built for" in shown.err  # one line saying the index was rebuilt
    r = run_cli("forget", mid, cwd=copy)
    assert r.code == 0, r.err
    assert original.exists()
    assert git("status", "--short", cwd=ready).stdout == ""
    assert not (copy / ".ai" / "open-memex" / f"{mid}.md").exists()


def test_mcp_forget_in_a_copied_clone_never_deletes_the_original(ready: Path, tmp_path: Path) -> None:
    mid = _repo_memory("the copied clone keeps its own files")
    assert run_cli("show", mid).code == 0
    copy = tmp_path / "copy"
    _cp_a(ready, copy)
    from mcp_client import call, text

    res = call("memory_forget", {"id": mid}, cwd=copy)
    assert not res.is_error, text(res)
    assert (ready / ".ai" / "open-memex" / f"{mid}.md").exists()
    assert not (copy / ".ai" / "open-memex" / f"{mid}.md").exists()


def test_a_copied_data_root_never_deletes_personal_files_of_the_original(repo: Path, tmp_path: Path) -> None:
    r = run_cli("add", "--scope", "personal", "personal note in the first data root", "--json")
    mid = json.loads(r.out)["id"]
    assert run_cli("show", mid).code == 0
    data = Path(os.environ["GIT_MEMEX_HOME"])
    copied = tmp_path / "data-copy"
    _cp_a(data, copied)
    r = run_cli("forget", mid, env={"GIT_MEMEX_HOME": str(copied)})
    assert r.code == 0, r.err
    assert (data / "memories" / "personal" / f"{mid}.md").exists()
    assert not (copied / "memories" / "personal" / f"{mid}.md").exists()


def test_a_moved_clone_changes_its_memories(ready: Path, tmp_path: Path) -> None:
    mid = _repo_memory("a moved clone still changes its memories")
    assert run_cli("show", mid).code == 0
    moved = tmp_path / "moved"
    shutil.move(str(ready), str(moved))
    os.chdir(moved)
    for args in (("show", mid), ("status", mid, "deprecated"), ("forget", "--soft", mid)):
        r = run_cli(*args, cwd=moved)
        assert r.code == 0, (args, r.err)
        assert "gone" not in r.err and "internal error" not in r.err
    doc = run_cli("doctor", cwd=moved)
    assert "retracted" in (moved / ".ai" / "open-memex" / f"{mid}.md").read_text()
    assert "built for" not in doc.out  # rebuilt once, by the first command: in step now


def test_a_moved_worktree_changes_its_memories(ready: Path, tmp_path: Path) -> None:
    mid = _repo_memory("a moved worktree still changes its memories")
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", str(wt), "-b", "side", cwd=ready)
    assert run_cli("show", mid, cwd=wt).code == 0
    moved = tmp_path / "wt-moved"
    git("worktree", "move", str(wt), str(moved), cwd=ready)
    for args in (("show", mid), ("forget", "--soft", mid)):
        r = run_cli(*args, cwd=moved)
        assert r.code == 0, (args, r.err)
    assert "retracted" in (moved / ".ai" / "open-memex" / f"{mid}.md").read_text()
    assert "retracted" not in (ready / ".ai" / "open-memex" / f"{mid}.md").read_text()


def test_doctor_in_a_moved_clone_says_the_index_was_rebuilt(ready: Path, tmp_path: Path) -> None:
    mid = _repo_memory("doctor tells a moved clone")
    assert run_cli("show", mid).code == 0
    moved = tmp_path / "moved"
    shutil.move(str(ready), str(moved))
    os.chdir(moved)
    doc = run_cli("doctor", cwd=moved)
    assert "built for" in doc.out and "in step" not in doc.out, doc.out
    again = run_cli("doctor", cwd=moved)
    assert "in step" in again.out, again.out


def test_a_memory_folder_replaced_by_a_link_into_the_original_is_never_acted_on(ready: Path, tmp_path: Path) -> None:
    """After the copy's index knows its own files, its `.ai` is replaced by a link into the
    original's: `forget`, `forget --soft` and `show` never reach the original's file (a lookup
    only returns rows whose file, links resolved, lies in the index's own folder)."""
    mid = _repo_memory("the original keeps this file whatever the copy links to")
    original = ready / ".ai" / "open-memex" / f"{mid}.md"
    before = original.read_bytes()
    copy = tmp_path / "copy"
    _cp_a(ready, copy)
    assert run_cli("list", cwd=copy).code == 0  # the copy's index: its own paths
    shutil.rmtree(copy / ".ai")
    (copy / ".ai").symlink_to(ready / ".ai")
    for args in (("forget", mid, "--soft"), ("forget", mid)):
        r = run_cli(*args, cwd=copy)
        assert r.code != 0, r.out
        assert "Traceback" not in r.err
    assert run_cli("show", mid, cwd=copy).code != 0
    assert original.read_bytes() == before
    assert git("status", "--short", cwd=ready).stdout == ""

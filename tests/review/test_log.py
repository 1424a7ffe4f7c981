"""`git memex log ID` (git_memex/review/log.py) in a real shallow clone."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli


def test_log_in_a_shallow_clone_says_the_history_was_cut_off(repo: Path, tmp_path: Path) -> None:
    assert run_cli("init", "--yes").code == 0
    r = run_cli("add", "the heron queue drains every hour", "--json")
    mid = r.json()["id"]
    assert run_cli("submit", mid).code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "set up", cwd=repo)
    for n in range(2):
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", f"later {n}", cwd=repo)
    full = run_cli("log", mid)
    assert full.code == 0 and "note:" not in full.out, full.out
    shallow = tmp_path / "shallow"
    git("clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    r = run_cli("log", mid, cwd=shallow)
    assert r.code == 0, r.err
    notes = [ln for ln in r.out.splitlines() if ln.startswith("note:")]
    head = git("rev-parse", "HEAD", cwd=shallow).stdout.strip()[:10]
    assert len(notes) == 1 and "shallow" in notes[0] and head in notes[0], r.out
    assert "git fetch --unshallow" in notes[0]
    data = run_cli("log", mid, "--json", cwd=shallow).json()
    assert data["shallow"] == head

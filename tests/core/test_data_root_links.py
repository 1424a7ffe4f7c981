"""A folder of the data root that is a symbolic link leading out of it is never followed: a write
through it is refused in one sentence (exit 2, nothing written anywhere), a read leaves it out
(docs/security.md row 25c). Real commands, real links."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git, run_cli, run_cli_process


def linked(isolated_env: Path, tmp_path: Path, name: str) -> Path:
    """`<data root>/<name>` made a link to a new empty folder outside the data root; returns that folder."""
    root = isolated_env / "data"
    root.mkdir(mode=0o700, exist_ok=True)
    outside = tmp_path / f"outside-{name.replace('/', '-')}"
    outside.mkdir()
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, target)
    return outside


def everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def one_sentence(err: str) -> str:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_a_linked_sessions_folder_is_not_written_by_the_stop_hook(repo: Path, isolated_env: Path, tmp_path: Path) -> None:
    git("config", "memex.implicitCapture", "true", cwd=repo)
    outside = linked(isolated_env, tmp_path, "sessions")
    payload = json.dumps({"session_id": "s-1", "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False})
    r = run_cli_process("capture", "--hook", "claude", "--stop", input=payload, cwd=repo)
    assert r.code == 0 and r.out == ""  # a hook never stops the agent; not asked without a marker
    assert "symbolic link" in one_sentence(r.err)
    assert everything(outside) == []


@pytest.mark.parametrize("name", ["memories", "memories/personal"])
def test_a_personal_add_through_a_linked_folder_is_refused(repo: Path, isolated_env: Path, tmp_path: Path,
                                                          name: str) -> None:
    outside = linked(isolated_env, tmp_path, name)
    r = run_cli_process("add", "I like tabs", "--scope", "personal", cwd=repo)
    assert r.code == 2 and r.out == ""
    assert "symbolic link" in one_sentence(r.err) and "nothing was written" in r.err
    assert everything(outside) == []


def test_a_linked_locks_folder_is_refused(repo: Path, isolated_env: Path, tmp_path: Path) -> None:
    outside = linked(isolated_env, tmp_path, "locks")
    r = run_cli_process("add", "We deploy on Fridays", cwd=repo)
    assert r.code == 2 and "symbolic link" in one_sentence(r.err)
    assert everything(outside) == []
    assert run_cli("list", "--json", cwd=repo).json()["total"] == 0


def test_a_linked_receipts_folder_is_neither_read_nor_written(repo: Path, isolated_env: Path, tmp_path: Path) -> None:
    """autoPull's receipt: one planted outside is not taken for ours, and none is written there."""
    from git_memex.core.context import load_context
    from git_memex.git import autopull

    outside = linked(isolated_env, tmp_path, "receipts")
    ctx = load_context(repo)
    planted = outside / autopull.receipt_path(ctx).name
    planted.write_text(json.dumps({"pid": os.getpid(), "started": 1}))
    assert autopull.read_receipt(ctx) is None
    r = run_cli_process("where", cwd=repo)  # any command: the planted file stays as it was
    assert r.code == 0
    assert everything(outside) == [planted.name]

"""`memex.autoPull true` (D12): the SessionStart hook starts a pull in the background, never
waits on it, never fails the session, and every pull leaves a receipt that `sync-status` shows.
Real clones of a real bare remote, the real hook command with Claude's SessionStart JSON."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import git, run_cli, two_clones

SESSION_START = {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s1"}


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(mine, theirs): two clones of one remote, both set up by `git memex init`; mine holds one memory."""
    mine, theirs = two_clones(tmp_path)
    assert run_cli("add", "the staging database is rebuilt every sunday night", cwd=mine).code == 0
    monkeypatch.chdir(mine)
    return mine, theirs


def push_one(theirs: Path, text: str) -> str:
    r = run_cli("add", text, "--json", cwd=theirs)
    assert r.code == 0, r.err
    mid = r.json()["id"]
    assert run_cli("submit", mid, cwd=theirs).code == 0
    git("push", "-q", "origin", "main", cwd=theirs)
    return mid


def session_start(cwd: Path) -> str:
    r = run_cli("context", "--hook", "claude", input=json.dumps({**SESSION_START, "cwd": str(cwd)}), cwd=cwd)
    assert r.code == 0 and r.err == "", r.err
    return json.loads(r.out)["hookSpecificOutput"]["additionalContext"] if r.out.strip() else ""


def finished_receipt(cwd: Path) -> dict:
    """The receipt once the background run wrote its end (a hang guard, not a speed target)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        auto = run_cli("sync-status", "--json", cwd=cwd).json()["auto_pull"]
        if auto and auto.get("state") == "done":
            return auto
        time.sleep(0.3)
    raise AssertionError(f"the background pull left no finished receipt: {auto}")


def test_off_by_default_session_start_never_pulls(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    push_one(theirs, "the release train leaves on thursdays")
    text = session_start(mine)
    assert "autoPull" not in text
    assert run_cli("sync-status", "--json").json()["auto_pull"] is None
    assert run_cli("search", "release train", "--json").json()["hits"] == []


def test_auto_pull_runs_in_the_background_and_leaves_a_receipt(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    git("config", "memex.autoPull", "true", cwd=mine)
    mid = push_one(theirs, "the release train leaves on thursdays")
    text = session_start(mine)
    assert "memex.autoPull: pulling from origin in the background" in text
    assert mid not in text  # this session's block was built before the pull: the next one sees it
    auto = finished_receipt(mine)
    assert auto["exit"] == 0 and auto["result"]["state"] != "up-to-date"
    assert any(mid in p for p in auto["result"]["changed"])
    assert run_cli("search", "release train", "--json").json()["hits"][0]["id"] == mid
    out = run_cli("sync-status").out
    assert "auto-pull:" in out and "1 memory file(s) changed" in out
    assert run_cli("sync-status", "--json").json()["last_sync"]["trigger"] == "pull"
    receipt = next((Path(run_cli("where", "--json").json()["data_root"]) / "receipts").glob("autopull-*.json"))
    assert receipt.stat().st_mode & 0o077 == 0


def test_a_failing_pull_never_fails_the_session_and_says_why(two: tuple[Path, Path], tmp_path: Path) -> None:
    mine, _ = two
    git("config", "memex.autoPull", "true", cwd=mine)
    git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=mine)
    text = session_start(mine)
    assert "staging database" in text and "autoPull" in text  # the session got its block
    auto = finished_receipt(mine)
    assert auto["exit"] not in (0, None) and auto["error"]
    assert "auto-pull:" in run_cli("sync-status").out and "failed (" in run_cli("sync-status").out


def test_a_hanging_origin_is_stopped_whole_and_the_users_ssh_command_is_kept(two: tuple[Path, Path],
                                                                            tmp_path: Path) -> None:
    """An origin that accepts and never answers: the receipt says stopped and no git process of
    it is left running (the attack on the merged main found an orphaned `git fetch` per session
    start); `core.sshCommand` is the user's and stays in force."""
    import os
    import socket
    import subprocess

    mine, _ = two
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        url = f"git://127.0.0.1:{port}/never.git"
        git("config", "memex.autoPull", "true", cwd=mine)
        git("remote", "set-url", "origin", url, cwd=mine)
        os.environ["GIT_MEMEX_AUTOPULL_TIMEOUT"] = "3"
        try:
            session_start(mine)
            auto = finished_receipt(mine)
        finally:
            del os.environ["GIT_MEMEX_AUTOPULL_TIMEOUT"]
        assert auto["exit"] is None and "was stopped" in auto["error"]
        time.sleep(0.5)
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        assert f"127.0.0.1:{port}" not in ps, [line for line in ps.splitlines() if str(port) in line]
    finally:
        listener.close()
    # the user's own ssh command is what git runs
    logger = tmp_path / "ssh-logger"
    logger.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'ssh.log'}\nexit 1\n")
    logger.chmod(0o755)
    git("config", "core.sshCommand", str(logger), cwd=mine)
    git("remote", "set-url", "origin", "ssh://git@example.invalid/x.git", cwd=mine)
    session_start(mine)
    assert finished_receipt(mine)["exit"] not in (0, None)
    assert (tmp_path / "ssh.log").exists() and "example.invalid" in (tmp_path / "ssh.log").read_text()

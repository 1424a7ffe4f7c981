"""The approver is git's identity and nothing else (issue 32, item 7): `--by` cannot put another
name into `approved_by` or `review_history`, and `audit` flags a file whose `approved_by` differs
from its approval record (a file written by an older version's `--by`, or by hand). Real
repository, real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memex.core import frontmatter

from conftest import git, run_cli

FOLDER = Path(".ai") / "open-memex"


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def fm(work: Path, mid: str) -> dict:
    return frontmatter.parse((work / FOLDER / f"{mid}.md").read_text("utf-8"))[0]


def submitted(text: str, *extra: str) -> str:
    mid = add(text, *extra)
    assert run_cli("submit", mid).code == 0
    return mid


def test_approve_by_someone_else_is_refused_and_changes_nothing(ready: Path) -> None:
    mid = submitted("Run make lint before pushing", "--role", "instruction", "--type", "workflow")
    before = (ready / FOLDER / f"{mid}.md").read_bytes()
    r = run_cli("instruction", "approve", mid, "--by", "bob@example.com")
    assert r.code == 1 and "--by" in r.err and "git's identity" in r.err and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert (ready / FOLDER / f"{mid}.md").read_bytes() == before
    assert not (ready / FOLDER / ".approvals" / f"{mid}.json").exists()

    r = run_cli("instruction", "approve", mid, "--by", "Test User")  # naming yourself is fine
    assert r.code == 0, r.err
    got = fm(ready, mid)
    assert got["approved_by"] == "local:test@example.com"
    assert got["review_history"][-1]["by"] == "local:test@example.com"
    rec = json.loads((ready / FOLDER / ".approvals" / f"{mid}.json").read_text("utf-8"))
    assert rec["approver"]["email"] == "test@example.com"
    assert run_cli("instruction", "revoke", mid, "--by", "mallory").code == 1
    assert fm(ready, mid)["instruction_state"] == "approved"


def test_promote_by_someone_else_is_refused_and_records_git_s_identity(ready: Path) -> None:
    mid = submitted("the nightly job prunes old artifacts")
    before = (ready / FOLDER / f"{mid}.md").read_bytes()
    r = run_cli("promote", mid, "--by", "bob@example.com")
    assert r.code == 1 and "--by" in r.err
    assert (ready / FOLDER / f"{mid}.md").read_bytes() == before
    assert run_cli("promote", mid).code == 0
    got = fm(ready, mid)
    assert got["approved_by"] == "local:test@example.com" and got["review_history"][-1]["by"] == got["approved_by"]


def test_audit_flags_an_approved_by_that_is_not_the_record_s_approver(ready: Path) -> None:
    mid = submitted("Deploy only from tags", "--role", "instruction", "--type", "workflow")
    assert run_cli("instruction", "approve", mid).code == 0
    assert run_cli("audit", "--json").json()["approver_mismatch"] == []
    # what `--by bob` wrote before this change (or a hand edit): the file names bob, the record Test User
    path = ready / FOLDER / f"{mid}.md"
    meta, body = frontmatter.parse(path.read_text("utf-8"))
    meta["approved_by"] = "bob"
    path.write_text(frontmatter.serialize(meta, body), encoding="utf-8")
    git("commit", "-q", "-am", "approve (as bob)", cwd=ready)
    rep = run_cli("audit", "--json").json()
    assert [(a["id"], a["approved_by"], a["approver"]) for a in rep["approver_mismatch"]] == [
        (mid, "bob", "Test User <test@example.com>")]
    assert mid in {a["id"] for a in rep["self_approved"]}  # proposed and approved by Test User, whatever the file says
    assert not rep["clean"]
    text = run_cli("audit").out
    assert f"approver mismatch: {mid} says approved_by bob" in text


def test_self_approval_is_seen_whatever_the_case_of_the_email(tmp_path: Path) -> None:
    """A proposer who approves their own rule under a case variant of their e-mail
    (`ALICE@Example.com` for `alice@example.com`) is the same person: approve warns, audit flags it."""
    from conftest import two_clones

    mine, _theirs = two_clones(tmp_path)
    alice = {"GIT_AUTHOR_EMAIL": "alice@example.com", "GIT_COMMITTER_EMAIL": "alice@example.com"}
    r = run_cli("add", "Tag every release", "--role", "instruction", "--json", cwd=mine, env=alice)
    mid = r.json()["id"]
    assert run_cli("submit", mid, cwd=mine, env=alice).code == 0
    shouting = {"GIT_AUTHOR_EMAIL": "ALICE@Example.com", "GIT_COMMITTER_EMAIL": "ALICE@Example.com"}
    r = run_cli("instruction", "approve", mid, "--json", cwd=mine, env=shouting)
    assert r.code == 0, r.err
    assert any("you proposed" in w for w in r.json()["warnings"])
    git("commit", "-q", "-m", "approve", cwd=mine)
    rep = run_cli("audit", "--json", cwd=mine, env=shouting).json()
    assert mid in {a["id"] for a in rep["self_approved"]}


def test_an_email_with_spaces_around_it_is_written_as_git_writes_it(ready: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`user.email = "  Bob@Example.COM  "`: git's commit and the approval record say
    `Bob@Example.COM`; so does the file's `approved_by`, and audit sees no mismatch."""
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    git("config", "user.email", "  Bob@Example.COM  ", cwd=ready)
    mid = submitted("Review every migration", "--role", "instruction")
    r = run_cli("instruction", "approve", mid)
    assert r.code == 0, r.err
    assert fm(ready, mid)["approved_by"] == "local:Bob@Example.COM"
    rec = json.loads((ready / FOLDER / ".approvals" / f"{mid}.json").read_text("utf-8"))
    assert rec["approver"]["email"] == "Bob@Example.COM"
    git("commit", "-q", "-m", "approve", cwd=ready)
    assert git("log", "-1", "--format=%ae", cwd=ready).stdout.strip() == "Bob@Example.COM"
    assert run_cli("audit", "--json").json()["approver_mismatch"] == []

"""Submits at the same time, interrupted submits rerun elsewhere, and the first commit of a
repository (the misc attack on the submit journal), with real processes and real git:

- two submits in one clone: the second waits for the first (one submit of a project at a time)
  and never resumes the first one's journal while it runs; before, it replayed the live plan, and
  four submits at once left a committed file staged-deleted, stray outbox drafts, an exit 2
  "nothing changed" after commits, and an internal error on the journal's rename;
- a rerun replays exactly the journaled plan (branch and parent) or refuses in one sentence (exit
  2, nothing changed): never a commit on the branch the user switched to reported as `main`,
  never a commit onto a branch checked out in another worktree, never later ids joined to the
  journaled branch;
- a repository without commits (or an orphan branch) gets its first commit from submit; before,
  the file was written, the commit failed, and every rerun was refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git, run_cli, run_cli_process

MEM = ".ai/open-memex"


def add(text: str, cwd: Path | None = None) -> str:
    r = run_cli("add", text, "--json", cwd=cwd)
    assert r.code == 0, r.err
    return r.json()["id"]


def outbox(isolated_env: Path) -> list[str]:
    return sorted(p.stem for p in (isolated_env / "data" / "memories" / "outbox").rglob("*.md"))


def journals(isolated_env: Path) -> list[str]:
    folder = isolated_env / "data" / "journal"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def changed_in(work: Path, rev: str) -> list[str]:
    return git("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", rev, cwd=work).stdout.split()


def start(args: list[str], cwd: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "git_memex", *args], cwd=cwd, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ------------------------------------------------------------------ one submit at a time
def test_a_second_submit_waits_for_the_first_and_never_resumes_its_journal(
        ready: Path, isolated_env: Path, tmp_path: Path) -> None:
    pauses = tmp_path / "pauses"
    pauses.mkdir()

    def reached(name: str, proc: subprocess.Popen[str]) -> bool:
        """Waits until `proc` stops at `name` (True) or ends without getting there (False)."""
        end = time.monotonic() + 60  # a hang guard, not a timing assumption
        while not (pauses / f"{name}.reached").exists():
            if proc.poll() is not None:
                return False
            if time.monotonic() > end:
                pytest.fail(f"never reached {name} (hung)")
            time.sleep(0.02)
        return True

    a, b = add("the api gateway times out after 30 seconds"), add("the web tier autoscales on cpu")
    first = start(["submit", a, "--json"], ready, GIT_MEMEX_PAUSE_AT="submit.after_journal",
                  GIT_MEMEX_PAUSE_DIR=str(pauses))
    assert reached("submit.after_journal", first)  # its journal is written, its commit is not made
    second = start(["submit", b, "--json"], ready, GIT_MEMEX_PAUSE_AT="lock.busy", GIT_MEMEX_PAUSE_DIR=str(pauses))
    waited = reached("lock.busy", second)  # it found the first one's lock held (before: no lock at all)
    (pauses / "lock.busy.go").touch()
    (pauses / "submit.after_journal.go").touch()
    out1, err1 = first.communicate(timeout=120)
    out2, err2 = second.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, err1 + err2
    r1, r2 = json.loads(out1), json.loads(out2)
    # each submitted its own draft, in a commit of its own; neither resumed the other's plan
    assert [s["id"] for s in r1["submitted"]] == [a] and not r1["resumed"], out1
    assert [s["id"] for s in r2["submitted"]] == [b] and not r2["resumed"], out2
    assert changed_in(ready, r1["commit"]) == [f"{MEM}/{a}.md"]
    assert changed_in(ready, r2["commit"]) == [f"{MEM}/{b}.md"]
    assert git("rev-parse", "HEAD~1", cwd=ready).stdout == git("rev-parse", r1["commit"], cwd=ready).stdout
    assert git("status", "--porcelain", cwd=ready).stdout == ""
    assert outbox(isolated_env) == [] and journals(isolated_env) == [] and err1 + err2 == ""
    assert waited


@pytest.mark.slow  # ~8 s: eight real submits, four at a time
@pytest.mark.parametrize("extra", [[], ["--branch", "memex/review"]], ids=["current-branch", "branch"])
def test_four_submits_at_once_make_four_commits_and_leave_nothing_behind(
        ready: Path, isolated_env: Path, extra: list[str]) -> None:
    ids = [add(f"race memory number {n}: the {w} service restarts nightly")
           for n, w in enumerate(["alpha", "beta", "gamma", "delta"])]
    procs = [start(["submit", d, *extra, "--json"], ready) for d in ids]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0 and err == "", err
    docs = [json.loads(out) for out, _err in results]
    for d, doc in zip(ids, docs, strict=True):
        assert [s["id"] for s in doc["submitted"]] == [d] and doc["committed"] and not doc["resumed"]
        assert changed_in(ready, doc["commit"]) == [f"{MEM}/{d}.md"]
    if extra:
        assert sorted(doc["branch"] for doc in docs) == ["memex/review", "memex/review-2", "memex/review-3",
                                                          "memex/review-4"]
        assert not (ready / MEM).joinpath(f"{ids[0]}.md").exists()
    else:
        assert git("rev-list", "--count", "HEAD", cwd=ready).stdout.strip() == "6"
        assert sorted(p.stem for p in (ready / MEM).glob("*.md")) == sorted(ids)
    assert git("status", "--porcelain", cwd=ready).stdout == ""
    assert outbox(isolated_env) == [] and journals(isolated_env) == []


# ------------------------------------------------------------------ a rerun replays exactly its plan
def test_a_rerun_on_another_branch_is_refused_not_committed_there(ready: Path, isolated_env: Path) -> None:
    a = add("crash switch memory: the queue is drained before deploys")
    assert run_cli_process("submit", a, env={"GIT_MEMEX_CRASH_AT": "submit.after_journal"}).code == 137
    git("switch", "-q", "-c", "other", cwd=ready)
    heads = git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", cwd=ready).stdout
    r = run_cli("submit", a, "--json")
    assert r.code == 2, r.out + r.err
    assert "planned as a commit on main" in r.err and "this checkout is on other" in r.err
    assert "nothing was changed" in r.err and len(r.err.strip().splitlines()) == 1
    assert r.json()["code"] == 2 and "on other" in r.json()["error"]
    assert git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", cwd=ready).stdout == heads
    assert git("status", "--porcelain", cwd=ready).stdout == "" and outbox(isolated_env) == [a]
    assert [j for j in journals(isolated_env) if j.endswith(".failed")]  # set aside, for doctor to show
    # submitting again here is a new submit, on this branch, reported as such
    r = run_cli("submit", a, "--json")
    assert r.code == 0, r.err
    assert r.json()["branch"] == "other" and not r.json()["resumed"]
    assert changed_in(ready, "other") == [f"{MEM}/{a}.md"]
    assert git("rev-parse", "main", cwd=ready).stdout == git("rev-parse", "other~1", cwd=ready).stdout


def test_a_rerun_never_moves_a_branch_checked_out_in_another_worktree(
        ready: Path, isolated_env: Path, tmp_path: Path) -> None:
    a = add("crash worktree memory: staging uses the internal CA")
    r = run_cli_process("submit", a, "--branch", "memex/review", env={"GIT_MEMEX_CRASH_AT": "submit.after_files"})
    assert r.code == 137
    wt2 = tmp_path / "wt2"
    git("worktree", "add", "-q", str(wt2), "memex/review", cwd=ready)
    tip = git("rev-parse", "memex/review", cwd=ready).stdout
    r = run_cli("submit", a)
    assert r.code == 2 and "checked out in the worktree" in r.err and str(wt2) in r.err, r.err
    assert "nothing was changed" in r.err and len(r.err.strip().splitlines()) == 1
    assert git("rev-parse", "memex/review", cwd=ready).stdout == tip
    assert git("status", "--porcelain", cwd=wt2).stdout == ""  # before: a staged deletion under wt2
    assert outbox(isolated_env) == [a]


def test_a_rerun_replays_onto_the_journaled_branch_only_while_it_has_not_moved(
        ready: Path, isolated_env: Path) -> None:
    a = add("moved branch memory: logs go to the central collector")
    r = run_cli_process("submit", a, "--branch", "memex/review", env={"GIT_MEMEX_CRASH_AT": "submit.after_files"})
    assert r.code == 137
    git("switch", "-q", "memex/review", cwd=ready)
    (ready / "notes.txt").write_text("the user's own work\n")
    git("add", "notes.txt", cwd=ready)
    git("commit", "-qm", "own work", cwd=ready)
    tip = git("rev-parse", "HEAD", cwd=ready).stdout
    r = run_cli("submit", a)
    assert r.code == 2 and "memex/review has moved since" in r.err and "nothing was changed" in r.err, r.err
    assert git("rev-parse", "HEAD", cwd=ready).stdout == tip and git("status", "--porcelain", cwd=ready).stdout == ""


def test_later_ids_never_join_an_interrupted_submits_branch(ready: Path, isolated_env: Path) -> None:
    a, b = add("journal memory one: the cron runs at 02:00"), add("journal memory two: backups go to s3")
    r = run_cli_process("submit", a, "--branch", "memex/review", env={"GIT_MEMEX_CRASH_AT": "submit.after_journal"})
    assert r.code == 137
    r = run_cli("submit", b, "--json")  # b, without --branch: the interrupted plan is finished, b is not joined to it
    assert r.code == 0, r.err
    doc = r.json()
    assert doc["resumed"] and doc["branch"] == "memex/review" and [s["id"] for s in doc["submitted"]] == [a]
    assert doc["not_submitted"] == [b] and f"git memex submit {b}" in r.err
    assert changed_in(ready, "memex/review") == [f"{MEM}/{a}.md"]
    assert outbox(isolated_env) == [b]
    r = run_cli("submit", b, "--json")
    assert r.code == 0 and r.json()["branch"] == "main" and not r.json()["resumed"], r.err
    assert changed_in(ready, "main") == [f"{MEM}/{b}.md"]


def test_a_commit_made_before_the_kill_is_finished_and_named_wherever_the_checkout_is(
        ready: Path, isolated_env: Path) -> None:
    a = add("after commit memory: the cdn caches for an hour")
    assert run_cli_process("submit", a, env={"GIT_MEMEX_CRASH_AT": "submit.after_commit"}).code == 137
    made = git("rev-parse", "main", cwd=ready).stdout.strip()
    git("switch", "-q", "-c", "other", cwd=ready)
    r = run_cli("submit", a, "--json")
    assert r.code == 0, r.err
    doc = r.json()
    assert doc["resumed"] and doc["branch"] == "main" and doc["commit"] == made and not doc["committed"]
    assert git("rev-parse", "other", cwd=ready).stdout.strip() == made  # nothing new anywhere
    assert outbox(isolated_env) == [] and journals(isolated_env) == []


# ------------------------------------------------------------------ the first commit
def test_submit_makes_the_first_commit_of_a_repository_without_commits(
        tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "fresh"
    git("init", "-q", "-b", "main", str(work))
    monkeypatch.chdir(work)
    assert run_cli("init", "--yes").code == 0
    a = add("first memory of a new repository")
    r = run_cli("submit", a, "--json")
    assert r.code == 0, r.err
    assert r.json()["committed"] and r.json()["branch"] == "main"
    assert git("rev-list", "--count", "HEAD", cwd=work).stdout.strip() == "1"
    assert changed_in(work, "HEAD") == [f"{MEM}/{a}.md"]
    assert f"{MEM}/{a}.md" not in git("status", "--porcelain", cwd=work).stdout  # committed and in the index
    assert outbox(isolated_env) == [] and journals(isolated_env) == []
    r = run_cli("submit", a)  # a rerun is told it is there, never "different content"
    assert r.code == 0 and "already in the repository" in r.out, r.err


def test_an_orphan_branch_gets_its_first_commit_and_branch_says_why_not(ready: Path, isolated_env: Path) -> None:
    git("switch", "-q", "--orphan", "fresh", cwd=ready)
    a = add("orphan memory: the docs site builds from this branch")
    r = run_cli("submit", a, "--branch", "memex/review")
    assert r.code == 2 and "the current branch fresh has no commits yet" in r.err, r.err
    assert "this repository has no commits" not in r.err and outbox(isolated_env) == [a]
    r = run_cli("submit", a, "--json")
    assert r.code == 0 and r.json()["branch"] == "fresh", r.err
    assert changed_in(ready, "fresh") == [f"{MEM}/{a}.md"]
    assert git("rev-list", "--count", "fresh", cwd=ready).stdout.strip() == "1"


def test_a_commit_made_is_never_reported_as_nothing_changed(ready: Path, isolated_env: Path, tmp_path: Path) -> None:
    """Another git holds the index lock when submit commits (the four-at-once attack left a committed
    file staged-deleted and untracked, then said exit 2 "nothing was changed"): the commit stands,
    submit exits 0 and says how to line the index up; its file stays in the work tree."""
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    a = add("the nightly export writes to the reports bucket")
    proc = start(["submit", a, "--json"], ready, GIT_MEMEX_PAUSE_AT="submit.after_files",
                 GIT_MEMEX_PAUSE_DIR=str(pauses))
    end = time.monotonic() + 60
    while not (pauses / "submit.after_files.reached").exists():
        assert proc.poll() is None and time.monotonic() < end, "never reached submit.after_files"
        time.sleep(0.02)
    lock = ready / ".git" / "index.lock"
    lock.write_text("")  # another git process, holding the index
    (pauses / "submit.after_files.go").touch()
    out, err = proc.communicate(timeout=120)
    lock.unlink()
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert doc["committed"] and changed_in(ready, "HEAD") == [f"{MEM}/{a}.md"] == [doc["submitted"][0]["path"]]
    assert "the commit is made" in err and f"git reset -q -- {MEM}/{a}.md" in err, err
    assert (ready / MEM / f"{a}.md").exists() and outbox(isolated_env) == [] and journals(isolated_env) == []
    git("reset", "-q", "--", f"{MEM}/{a}.md", cwd=ready)  # what it says to run
    assert git("status", "--porcelain", cwd=ready).stdout == ""

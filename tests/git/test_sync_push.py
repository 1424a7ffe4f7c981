"""`git memex push [--yes]`: print, or run, the push for submitted work; real git, a real bare remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, run_cli

MEM = ".ai/open-memex"


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A clone of a bare remote whose main holds the project and git-memex's set-up commit."""
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote))
    seed = tmp_path / "seed"
    git("clone", "-q", str(remote), str(seed))
    (seed / "README.md").write_text("demo\n")
    git("add", "README.md", cwd=seed)
    git("commit", "-q", "-m", "init", cwd=seed)
    monkeypatch.chdir(seed)
    assert run_cli("init", "--yes", "--no-hooks").code == 0
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "memex init", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    work = tmp_path / "work"
    git("clone", "-q", str(remote), str(work))
    monkeypatch.chdir(work)
    assert run_cli("init", "--yes", "--no-hooks").code == 0
    assert git("status", "--porcelain", cwd=work).stdout == ""  # init changed nothing committed
    return work, remote


def _submit(text: str, *extra: str) -> str:
    mid = run_cli("add", text, "--json").json()["id"]
    r = run_cli("submit", mid, *extra)
    assert r.code == 0, r.err
    return mid


def _remote_branch(remote: Path, branch: str) -> str:
    return git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=remote, check=False).stdout.strip()


def test_push_prints_then_runs_the_push_of_submitted_work(clone):
    work, remote = clone
    r = run_cli("push")
    assert r.code == 0 and "nothing to push" in r.out, r.out + r.err
    mid = _submit("Release builds run make dist first", "--branch", "memex/review")
    assert "nothing submitted to push" in run_cli("push").out or "nothing to push" in run_cli("push").out
    r = run_cli("push", "--branch", "memex/review", "--json")  # submit left the checkout on main
    assert r.code == 0, r.err
    res = r.json()
    assert res["state"] == "printed" and res["pushed"] is False
    assert res["branch"] == "memex/review" and res["remote"] == "origin" and res["upstream"] is None
    assert res["command"] == "git push -u --force-with-lease=refs/heads/memex/review: origin refs/heads/memex/review:refs/heads/memex/review"
    assert res["memory_files"] == [f"{MEM}/{mid}.md"] and res["other_files"] == [] and len(res["commits"]) == 1
    assert res["pr_command"] == "gh pr create --base main --head memex/review"
    assert _remote_branch(remote, "memex/review") == ""  # printing pushes nothing
    text = run_cli("push", "--branch", "memex/review")
    assert "git push -u --force-with-lease=refs/heads/memex/review: origin refs/heads/memex/review:refs/heads/memex/review" in text.out and "gh pr create --base main" in text.out
    assert "git memex push --branch memex/review --yes" in text.out

    r = run_cli("push", "--branch", "memex/review", "--yes")
    assert r.code == 0, r.err
    assert "pushed 1 commit with 1 memory file to origin/memex/review" in r.out
    head = git("rev-parse", "memex/review", cwd=work).stdout.strip()
    assert _remote_branch(remote, "memex/review") == head
    assert git("rev-parse", "--abbrev-ref", "memex/review@{upstream}", cwd=work).stdout.strip() == "origin/memex/review"
    assert "nothing to push" in run_cli("push", "--branch", "memex/review").out
    assert _remote_branch(remote, "main") == git("rev-parse", "main", cwd=work).stdout.strip()  # main untouched

    # a second submit on the same branch, checked out now: the upstream is known, so a plain push
    git("switch", "-q", "memex/review", cwd=work)
    _submit("The staging database is reset every Monday")
    res = run_cli("push", "--json").json()
    assert res["command"] == "git push origin refs/heads/memex/review:refs/heads/memex/review" and res["upstream"] == "memex/review"
    assert run_cli("push", "-y").code == 0
    assert _remote_branch(remote, "memex/review") == git("rev-parse", "HEAD", cwd=work).stdout.strip()


def test_push_yes_refuses_commits_that_change_more_than_memories(clone):
    work, remote = clone
    _submit("CI caches the pip wheels", "--branch", "memex/review")
    git("switch", "-q", "memex/review", cwd=work)
    (work / "app.py").write_text("print('unreviewed')\n")
    git("add", "app.py", cwd=work)
    git("commit", "-q", "-m", "code", cwd=work)
    r = run_cli("push", "--yes")
    assert r.code == 2 and r.out == ""
    assert "app.py" in r.err and "nothing was pushed" in r.err and len(r.err.strip().splitlines()) == 1
    assert "Traceback" not in r.err
    assert _remote_branch(remote, "memex/review") == ""
    shown = run_cli("push")
    assert shown.code == 0 and "git push -u --force-with-lease=refs/heads/memex/review: origin refs/heads/memex/review:refs/heads/memex/review" in shown.out and "app.py" in shown.out


def test_push_with_nothing_submitted_pushes_nothing(clone):
    work, remote = clone
    (work / "app.py").write_text("x = 1\n")
    git("add", "app.py", cwd=work)
    git("commit", "-q", "-m", "code only", cwd=work)
    for argv in (("push",), ("push", "--yes")):
        r = run_cli(*argv)
        assert r.code == 0 and "nothing submitted to push" in r.out, r.out + r.err
    assert git("rev-parse", "origin/main", cwd=work).stdout != git("rev-parse", "HEAD", cwd=work).stdout
    assert _remote_branch(remote, "main") == git("rev-parse", "origin/main", cwd=work).stdout.strip()


def test_push_failures_are_one_sentence_and_exit_2(clone, tmp_path: Path):
    work, remote = clone
    _submit("Deploys need the VPN", "--branch", "memex/review")
    git("switch", "-q", "memex/review", cwd=work)
    git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=work)
    r = run_cli("push", "--yes")
    assert r.code == 2 and "failed" in r.err and "nothing was pushed" in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    git("checkout", "-q", "--detach", cwd=work)
    r = run_cli("push")
    assert r.code == 2 and "detached" in r.err and len(r.err.strip().splitlines()) == 1
    git("checkout", "-q", "memex/review", cwd=work)
    git("remote", "remove", "origin", cwd=work)
    r = run_cli("push")
    assert r.code == 2 and "no remote" in r.err, r.err


def test_push_outside_a_repository_is_a_usage_error(nogit: Path):
    r = run_cli("push")
    assert r.code == 1 and "git" in r.err and "Traceback" not in r.err


def test_push_names_the_pull_request_without_origin_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A clone of an empty remote has no refs/remotes/origin/HEAD; the base is the branch init ran on."""
    remote = tmp_path / "empty.git"
    git("init", "-q", "--bare", "-b", "main", str(remote))
    work = tmp_path / "work"
    git("clone", "-q", str(remote), str(work))
    monkeypatch.chdir(work)
    (work / "README.md").write_text("demo\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "init", cwd=work)
    assert run_cli("init", "--yes", "--no-hooks").code == 0
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "memex init", cwd=work)
    git("push", "-q", "-u", "origin", "main", cwd=work)
    assert git("symbolic-ref", "-q", "refs/remotes/origin/HEAD", cwd=work, check=False).returncode != 0
    _submit("Release builds run make dist first", "--branch", "memex/review")
    r = run_cli("push", "--branch", "memex/review", "--json")
    assert r.code == 0, r.err
    assert r.json()["pr_command"] == "gh pr create --base main --head memex/review"


def test_submit_says_the_right_next_step_for_its_branch(clone, tmp_path: Path):
    work, remote = clone
    git("switch", "-q", "-c", "memex/review", cwd=work)
    git("push", "-q", "-u", "origin", "memex/review", cwd=work)  # the upstream is set already
    mid = run_cli("add", "Release builds run make dist first", "--json").json()["id"]
    r = run_cli("submit", mid, "--json")
    assert r.code == 0, r.err
    assert r.json()["push_command"] == "git push origin refs/heads/memex/review:refs/heads/memex/review", r.out
    git("remote", "remove", "origin", cwd=work)  # no remote at all: nothing to push to
    mid = run_cli("add", "Deploys need the VPN", "--json").json()["id"]
    r = run_cli("submit", mid)
    assert r.code == 0, r.err
    assert "To share it" not in r.out and "git remote add origin URL`, then `git push -u" in r.out, r.out


def test_a_memory_folder_with_a_non_ascii_name_is_submitted_work(clone):
    """git quotes `mémoire/…` in `--name-only` output unless core.quotePath is off; push reads
    paths through the one history parser (`-z`), so the submitted file is a memory file, not "a
    file outside the memory folder"."""
    folder = "mémoire"
    work, remote = clone
    assert run_cli("config", "set", "memex.memoryDir", folder).code == 0
    assert run_cli("init", "--yes", "--no-hooks").code == 0
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "move the memories", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    mid = _submit("Staging mirrors production nightly", "--branch", "memex/review")
    res = run_cli("push", "--branch", "memex/review", "--json").json()
    assert res["memory_files"] == [f"{folder}/{mid}.md"] and res["other_files"] == []
    r = run_cli("push", "--branch", "memex/review", "--yes")
    assert r.code == 0, r.err
    assert _remote_branch(remote, "memex/review") == git("rev-parse", "refs/heads/memex/review", cwd=work).stdout.strip()

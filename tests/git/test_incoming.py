"""A secret pushed with --no-verify is named when it arrives: `git memex pull`, and the
post-merge and post-checkout hooks git runs for `git pull --ff-only` and a checkout. Real
clones of a real bare remote, real hooks installed by `git memex init`."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, run_cli

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a fake GitHub token of the real shape


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(mine, theirs): two clones of one remote, both set up by `git memex init`."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    git("clone", "-q", str(bare), str(mine))
    (mine / "README.md").write_text("x\n")
    git("add", "README.md", cwd=mine)
    git("commit", "-qm", "init", cwd=mine)
    assert run_cli("init", "--yes", cwd=mine).code == 0
    git("add", "-A", cwd=mine)
    git("commit", "-qm", "memex init", cwd=mine)
    git("push", "-q", "-u", "origin", "main", cwd=mine)
    git("clone", "-q", str(bare), str(theirs))
    assert run_cli("init", "--yes", cwd=theirs).code == 0
    assert run_cli("list", cwd=mine).code == 0  # the index exists
    monkeypatch.chdir(mine)
    return mine, theirs


def push_a_secret(theirs: Path) -> str:
    r = run_cli("add", "the deploy bot logs in to GitHub", "--json", cwd=theirs)
    assert r.code == 0, r.err
    mid = r.json()["id"]
    assert run_cli("submit", mid, cwd=theirs).code == 0
    path = theirs / ".ai" / "open-memex" / f"{mid}.md"
    path.write_text(path.read_text("utf-8").replace("logs in to GitHub", f"logs in with {TOKEN}"), "utf-8")
    git("add", "-A", cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "the bot's token", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)
    return mid


def test_memex_pull_names_an_incoming_secret_and_exits_3(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    mid = push_a_secret(theirs)
    r = run_cli("pull", cwd=mine)
    assert r.code == 3, (r.code, r.err)
    assert f".ai/open-memex/{mid}.md" in r.err and "github" in r.err.lower()
    assert TOKEN not in r.err + r.out and TOKEN[4:20] not in r.err + r.out
    assert (mine / ".ai" / "open-memex" / f"{mid}.md").exists()  # the fast-forward is done


def test_git_pull_ff_only_reports_an_incoming_secret_through_the_post_merge_hook(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    mid = push_a_secret(theirs)
    p = git("pull", "-q", "--ff-only", cwd=mine)
    assert f".ai/open-memex/{mid}.md" in p.stderr and "the merge brought" in p.stderr
    assert TOKEN not in p.stderr + p.stdout


def test_a_checkout_reports_an_incoming_secret_through_the_post_checkout_hook(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    mid = push_a_secret(theirs)
    git("fetch", "-q", "origin", cwd=mine)
    p = git("checkout", "-q", "-b", "review", "origin/main", cwd=mine)
    assert f".ai/open-memex/{mid}.md" in p.stderr and "the checkout brought" in p.stderr
    assert TOKEN not in p.stderr + p.stdout

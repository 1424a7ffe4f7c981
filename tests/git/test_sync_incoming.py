"""A secret pushed with --no-verify is named when it arrives: `git memex pull`, and the
post-merge and post-checkout hooks git runs for `git pull --ff-only` and a checkout. Real
clones of a real bare remote, real hooks installed by `git memex init`."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, run_cli, two_clones

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a fake GitHub token of the real shape


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(mine, theirs): two clones of one remote, both set up by `git memex init`."""
    mine, theirs = two_clones(tmp_path)
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


POISON = [("revision", "9" * 5000, "an integer of 5000 digits"), ("title", "!!float x", "float"),
          ("tags", "!!int zz", "int")]


def push_poison(theirs: Path) -> list[str]:
    """Issue 20.10: three memory files, each with one value no YAML constructor builds, pushed
    by a teammate who skipped the hooks."""
    from git_memex.core.model import new_id

    rels = []
    for key, value, _ in POISON:
        mid = new_id()
        fm = {"id": mid, "schema_version": "2", "revision": "1", "scope": "project", "visibility": "internal",
              "type": "fact", "role": "knowledge", "importance": "normal", "status": "active",
              "review_state": "published", "source": "cli", "created_at": "'2026-01-01T00:00:00Z'",
              "updated_at": "'2026-01-01T00:00:00Z'", "tags": "[a]", key: value}
        rel = f".ai/open-memex/{mid}.md"
        (theirs / rel).write_text("---\n" + "".join(f"{k}: {v}\n" for k, v in fm.items())
                                  + f"---\n\npoisoned by {key}\n", encoding="utf-8")
        rels.append(rel)
    git("add", "-A", cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "poisoned memories", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)
    return rels


def _names_each_with_its_reason(err: str, rels: list[str]) -> None:
    assert "internal error" not in err and "Traceback" not in err, err
    lines = err.splitlines()
    for rel, (_, _, why) in zip(rels, POISON, strict=True):
        assert any(rel in line and why in line for line in lines), (rel, err)
    assert "set_int_max_str_digits" not in err  # Python's advice to a programmer, not to this user
    assert "left out" in err and "git rm" in err and "git memex doctor" in err


def test_a_pulled_poisoned_value_is_named_with_its_reason_and_breaks_nothing(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    assert run_cli("add", "the deploy is blue green", cwd=mine).code == 0
    rels = push_poison(theirs)
    pull = git("pull", "--ff-only", "-q", cwd=mine)  # the post-merge hook `init` installed
    _names_each_with_its_reason(pull.stderr, rels)
    for args in (("list",), ("search", "blue green"), ("context",), ("reindex",), ("reindex", "--full"),
                 ("add", "--scope", "personal", "mine still saves"), ("doctor",)):
        r = run_cli(*args, cwd=mine)
        assert r.code == (1 if args == ("doctor",) else 0), (args, r.code, r.err)
        assert "internal error" not in r.err and "Traceback" not in r.err, (args, r.err)
    assert "blue green" in run_cli("search", "blue green", cwd=mine).out
    full = run_cli("reindex", "--full", cwd=mine).out
    assert all(rel.rsplit("/", 1)[1] in full for rel in rels) and "quarantined" in full
    doctor = run_cli("doctor", cwd=mine).out
    assert all(rel.rsplit("/", 1)[1] in doctor for rel in rels)
    # a checkout that brings them again (post-checkout) says the same
    git("checkout", "-q", "HEAD~1", cwd=mine)
    back = git("checkout", "-q", "main", cwd=mine)
    _names_each_with_its_reason(back.stderr, rels)


def test_memex_pull_names_a_poisoned_file_with_its_reason(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    rels = push_poison(theirs)
    r = run_cli("pull", cwd=mine)
    assert r.code == 0, (r.code, r.err)
    _names_each_with_its_reason(r.err, rels)
    assert [u["path"] for u in run_cli("pull", "--json", cwd=mine).json().get("unreadable", [])] == []  # up to date

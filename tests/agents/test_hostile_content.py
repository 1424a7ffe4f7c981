"""Issue 20, hole 14: hostile content never stalls or spoofs (real CLI, real git)."""

from __future__ import annotations

from pathlib import Path

from git_memex.agents.globs import glob_matches

from conftest import git, run_cli


def test_a_glob_of_many_stars_does_not_stall_context(ready: Path):
    glob = "*" * 22 + "x"
    r = run_cli("add", "--paths", glob + ",src/" + "*a" * 20 + "b", "the star glob memory")
    assert r.code == 0, r.err
    long = ready / ("a" * 80 + ".py")
    long.write_text("print(1)\n")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "a long name", cwd=ready)
    long.write_text("print(2)\n")  # a changed file is what `context` matches globs against
    (ready / "src").mkdir()
    (ready / "src" / ("a" * 80)).write_text("x\n")
    r = run_cli("context", "--query", "star glob")  # run_cli's 120 s timeout is the hang budget
    assert r.code == 0, r.err


def test_star_runs_keep_their_meaning():
    assert glob_matches(["***x"], ["abcx", "a/bx"]) == ["abcx", "a/bx"]
    assert glob_matches(["src/" + "*a" * 20 + "b"], ["src/" + "a" * 60]) == []
    assert glob_matches(["src/" + "*a" * 20 + "b"], ["src/" + "a" * 60 + "b"]) == ["src/" + "a" * 60 + "b"]

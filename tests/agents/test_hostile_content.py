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


def test_twenty_thousand_tags_are_refused_at_once_in_one_sentence(ready: Path):
    tags = ",".join(f"t{i}" for i in range(20_000))
    r = run_cli("add", "--scope", "personal", "--tags", tags, "many tags")
    assert r.code == 1, r.err
    assert "at most 1000" in r.err and "internal error" not in r.err and len(r.err.strip().splitlines()) == 1


def test_a_deeply_nested_bundle_is_refused_in_one_sentence(ready: Path, tmp_path: Path):
    bundle = tmp_path / "deep.json"
    bundle.write_text('{"format": "git-memex-bundle", "memories": [{"body": "x", "nest": '
                      + "[" * 100_000 + "]" * 100_000 + "}]}")
    r = run_cli("import", str(bundle))
    assert r.code in (1, 2), r.err
    assert "nested too deeply" in r.err and "internal error" not in r.err


def test_terminal_controls_and_bidi_overrides_are_never_printed_raw(ready: Path):
    evil = "evil \x1b[31mred \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ back\x08 \u202etxt.exe \u2066iso\u2069"
    r = run_cli("add", "--scope", "personal", "--tags", "evil", evil)
    assert r.code == 0, r.err
    for args in (("list",), ("search", "evil"), ("context", "--query", "evil"), ("list", "--json")):
        r = run_cli(*args)
        assert r.code == 0, (args, r.err)
        shown = r.out + r.err
        assert "evil" in shown, args
        for ch in "\x1b\x08\u202e\u2066\u2069":
            assert ch not in shown, (args, repr(ch))
    assert run_cli("list", "--json").json()["total"] == 1  # the escapes are JSON escapes: still valid JSON

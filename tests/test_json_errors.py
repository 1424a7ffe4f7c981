"""Every `--json` run prints one JSON document on stdout, an error included (SPEC §9; issue 32,
item 11): the sentence stays on stderr and the exit code is unchanged. The subcommands are read
from the parser itself, so a new one that takes `--json` fails `test_every_json_command_is_covered`
until it has a failing input here."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from conftest import run_cli

NO_ID = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
OUTSIDE = "outside"
"""Run in a folder outside any repository with GIT_MEMEX_HOME a file: the data root cannot be used
(exit 2), and there is no repository index to fall back on."""
REPO = "repo"
"""Run in a repository set up by `git memex init`."""
BAD_OPTION = ["--no-such-option"]
"""For a command that reads and has no other way to fail: not an unusable data root, a broken git
config, no git; the usage error is its failure."""

# command words -> (arguments after them, where it runs)
FAILING: dict[tuple[str, ...], tuple[list[str], str]] = {
    ("init",): (["--client", "vscode"], OUTSIDE),
    ("where",): (BAD_OPTION, REPO),
    ("add",): ([" "], REPO),
    ("search",): (["deploy"], OUTSIDE),
    ("list",): ([], OUTSIDE),
    ("show",): ([NO_ID], REPO),
    ("supersede",): ([NO_ID, "new text for it"], REPO),
    ("status",): ([NO_ID, "deprecated"], REPO),
    ("forget",): ([NO_ID], REPO),
    ("reindex",): ([], OUTSIDE),
    ("doctor",): ([], OUTSIDE),
    ("config", "list"): (BAD_OPTION, REPO),
    ("capture",): (["--stop"], REPO),
    ("context",): ([], OUTSIDE),
    ("propose",): ([NO_ID], REPO),
    ("submit",): ([NO_ID], REPO),
    ("promote",): ([NO_ID], REPO),
    ("instruction", "approve"): ([NO_ID], REPO),
    ("instruction", "revoke"): ([NO_ID], REPO),
    ("instruction", "list"): ([], OUTSIDE),
    ("resolve",): ([NO_ID], REPO),
    ("sync-status",): ([], OUTSIDE),
    ("pr-status",): (["--org", "nosuch"], REPO),
    ("pull",): ([], OUTSIDE),
    ("push",): ([], OUTSIDE),
    ("distill",): ([], OUTSIDE),
    ("migrate",): (BAD_OPTION, REPO),
    ("log",): ([NO_ID], REPO),
    ("export",): (["-o", "{missing}/bundle.json"], REPO),
    ("import",): (["{missing}/bundle.json"], REPO),
    ("audit",): ([], OUTSIDE),
    ("scopes",): (["--adopt", "nosuch-000000000000"], REPO),
    ("inventory",): (["--out", "{missing}/inventory.json"], REPO),
    ("org", "add"): (["acme", "{missing}/org.git"], REPO),
    ("org", "list"): (BAD_OPTION, REPO),
    ("org", "remove"): (["nosuch"], REPO),
    ("org", "pull"): (["nosuch"], REPO),
    ("remote", "add"): (["team", "http://127.0.0.1:9", "--token-file", "{missing}/token"], REPO),
    ("remote", "list"): (BAD_OPTION, REPO),
    ("remote", "pull"): (["nosuch"], REPO),
    ("remote", "remove"): (["nosuch"], REPO),
    ("remote", "review"): (["nosuch", NO_ID, "--approve"], REPO),
    ("compatible",): ([NO_ID, "01YYYYYYYYYYYYYYYYYYYYYYYY"], REPO),
}


def json_commands() -> list[tuple[str, ...]]:
    """Every subcommand (and sub-subcommand) whose parser takes --json."""
    from git_memex.main import build_parser

    found: list[tuple[str, ...]] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))
        if path and any("--json" in a.option_strings for a in parser._actions):
            found.append(path)

    walk(build_parser(), ())
    return found


def one_document(out: str) -> dict:
    doc = json.loads(out)  # exactly one document: json.loads refuses anything after it
    assert isinstance(doc, dict)
    return doc


def test_every_json_command_is_covered() -> None:
    assert sorted(json_commands()) == sorted(FAILING), "give each --json command a failing input here"


@pytest.mark.parametrize("words", sorted(FAILING), ids=" ".join)
def test_a_failing_json_run_prints_one_json_document(words: tuple[str, ...], ready: Path, tmp_path: Path) -> None:
    args, where = FAILING[words]
    args = [a.replace("{missing}", str(tmp_path / "missing")) for a in args]
    env, cwd = None, ready
    if where == OUTSIDE:
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("x")
        env, cwd = {"GIT_MEMEX_HOME": str(blocker)}, tmp_path / "outside"
        cwd.mkdir(exist_ok=True)
    plain = run_cli(*words, *args, env=env, cwd=cwd)
    r = run_cli(*words, *args, "--json", env=env, cwd=cwd)
    assert r.code != 0, (words, r.out, r.err)
    assert r.code == plain.code and plain.out == "", (words, plain.out, plain.err, r.err)
    doc = one_document(r.out)
    said = [line.removeprefix("git-memex: ") for line in r.err.splitlines() if line.startswith("git-memex: ")]
    assert said and "Traceback" not in r.err, (words, r.err)
    assert doc == {"error": said[-1], "code": r.code}, (words, doc, r.err)
    assert plain.err == r.err


@pytest.mark.parametrize("words", sorted(FAILING), ids=" ".join)
def test_a_usage_error_of_a_json_run_is_one_json_document(words: tuple[str, ...], ready: Path) -> None:
    r = run_cli(*words, *FAILING[words][0], "--json", "--no-such-option")
    assert r.code == 1, (words, r.err)
    doc = one_document(r.out)
    assert doc == {"error": r.err.strip().removeprefix("git-memex: "), "code": 1}
    assert "--no-such-option" in doc["error"] and f"`git memex {' '.join(words)} --help`" in doc["error"]


def test_without_json_an_error_prints_nothing_on_stdout(ready: Path) -> None:
    r = run_cli("show", NO_ID)
    assert r.code == 1 and r.out == "" and r.err.startswith("git-memex: no memory with id")
    r = run_cli("show", NO_ID, "--json")
    assert one_document(r.out) == {"error": r.err.strip().removeprefix("git-memex: "), "code": 1}


def test_inventory_json_into_a_file_still_prints_one_document(ready: Path, tmp_path: Path) -> None:
    out = tmp_path / "inventory.json"
    r = run_cli("inventory", "--json", "--out", str(out))
    assert r.code == 0, r.err
    assert one_document(r.out) == {"out": str(out), "total": 0}
    assert json.loads(out.read_text())["total"] == 0


def _process(*args: str, stdin: str, cwd: Path) -> tuple[int, str, str]:
    """The real command in a new process, its stdin empty ("") or closed ("closed", as `<&-` leaves it)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "git_memex", *args]
    if stdin == "closed":
        cmd = ["sh", "-c", 'exec "$@" <&-', "sh", *cmd]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL if stdin == "" else None, capture_output=True, text=True,
                       cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("stdin", ["", "closed"])
@pytest.mark.parametrize("args", [("merge-driver", "--json"), ("merge-driver", "--json", "a", "b", "c"),
                                  ("capture", "--json", "-"), ("capture", "--json"),
                                  ("capture", "--json", "--hook", "claude")], ids=" ".join)
def test_merge_driver_and_capture_json_with_empty_or_closed_stdin(ready: Path, args: tuple[str, ...],
                                                                  stdin: str) -> None:
    """Attack finding 11: `merge-driver --json` printed a sentence and no document, `capture --json -`
    with stdin closed an internal error, `capture --json --hook claude` nothing at all. Each prints
    one JSON document and exits with a documented code: a document of its result (exit 0) where
    there is one, else the usage error's one sentence (exit 1)."""
    code, out, err = _process(*args, stdin=stdin, cwd=ready)
    assert "Traceback" not in err and "internal error" not in err, err
    doc = one_document(out)
    if code == 0:
        assert args[:2] == ("capture", "--json") and stdin == "" and doc["saved"] == [] and err == ""
    else:
        assert code == 1 and doc["code"] == 1
        (line,) = err.strip().splitlines()
        assert line.endswith(doc["error"])

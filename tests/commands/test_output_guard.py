"""The one output guard (`core.output`) escapes every invisible or control character, whatever
path a text takes to stdout or stderr: a zero-width space, a bidi override, a tag character, a
private-use character, U+2028/U+2029 and BOM print as ``\\uXXXX`` (past U+FFFF the UTF-16
surrogate pair) in `inventory`, `log`, `show`'s warnings and link lines, the supersede-chain
warning of `doctor` and `audit`, a memory-folder file name in every command that names it (and
the pre-commit refusal of a real `git commit`), and every error that repeats an argument.
`--json` stays JSON with the exact values; a ZWNJ/ZWJ inside script text or an emoji sequence
stays as it is. Each through a real `git memex` process in a real repository."""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest

from git_memex.core import frontmatter
from git_memex.core.model import create

from conftest import git, run_cli, run_cli_process

HOSTILE = "\u200b\u202e\U000e0041\ue000\U000f0000\u2028\u2029\ufeff"
"""Zero-width space, RLO, a tag character, private use (BMP and plane 15), line and paragraph
separators, BOM: none of them printed raw by the guard before its set was widened."""
ESCAPED = "\\u200b\\u202e\\udb40\\udc41\\ue000\\udb80\\udc00\\u2028\\u2029\\ufeff"
MEM = Path(".ai") / "open-memex"


def hidden(text: str) -> list[str]:
    """The characters of `text` a reader cannot see or a terminal acts on (what the guard escapes),
    joiners included."""
    return [ch for ch in text if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp")]


def shows_escaped(r: object, *escapes: str) -> None:
    out = f"{r.out}\n{r.err}"  # type: ignore[attr-defined]
    assert not hidden(out), (hidden(out), out)
    for e in escapes:
        assert e in out, (e, out)


def hand_file(work: Path, fm: dict[str, object], body: str = "the cache lives in /var/cache/app") -> str:
    """A published project memory written by hand with `fm` on top and committed with --no-verify
    (as a teammate can): its id."""
    m = create(body, scope="project", review_state="published")
    m.fm.update(fm)
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    git("add", "-A", cwd=work)
    git("commit", "-q", "--no-verify", "-m", "by hand", cwd=work)
    return m.id


def test_inventory_escapes_a_body_added_normally(ready: Path) -> None:
    r = run_cli("add", f"the proxy listens on 80{HOSTILE}80 today", "--json")
    assert r.code == 0, r.err
    inv = run_cli_process("inventory")
    assert inv.code == 0, inv.err
    assert "proxy listens" in inv.out, inv.out
    shows_escaped(inv, "80\\u200b\\u202e\\udb40\\udc41\\ue000\\udb80\\udc00")


def test_log_escapes_a_hostile_git_identity_and_review_note(ready: Path) -> None:
    email = "ev\u200bil\u202eo@example.com"
    git("config", "user.email", email, cwd=ready)
    git("config", "user.name", "Ev\u200bil\U000e0041", cwd=ready)
    mid = run_cli("add", "the deploy runs nightly at two", "--json").json()["id"]
    ident = {f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER")
             for k, v in (("NAME", "Ev\u200bil\U000e0041"), ("EMAIL", email))}
    assert run_cli("submit", mid, env=ident).code == 0
    rejected = run_cli("promote", mid, "--reject", "--note", "stale\u200b\U000e0041 now", env=ident)
    assert rejected.code == 0, rejected.err
    log = run_cli_process("log", mid)
    assert log.code == 0, log.err
    assert "review" in log.out and "created" in log.out, log.out
    shows_escaped(log, "ev\\u200bil\\u202eo@example.com", "stale\\u200b\\udb40\\udc41 now")


def test_show_escapes_its_warnings_and_link_lines_for_a_hand_committed_file(ready: Path) -> None:
    mid = hand_file(ready, {"type": f"fa{HOSTILE}ct", "source": f"cl{HOSTILE}i",
                            "related": [f"01ARZ3NDEKTSV4RRFFQ69G5FAV{HOSTILE}"], "canonical_ref": f"docs/x{HOSTILE}.md"})
    r = run_cli_process("show", mid)
    assert r.code == 0, r.err
    assert "knowledge" in r.err and "import" in r.err, r.err
    assert "not in this clone" in r.out and "missing" in r.out, r.out
    shows_escaped(r, f'type "fa{ESCAPED}ct"', f'source "cl{ESCAPED}i"', f"01ARZ3NDEKTSV4RRFFQ69G5FAV{ESCAPED}: not in",
                  f"canonical_ref docs/x{ESCAPED}.md: missing")


@pytest.mark.parametrize("command", ["doctor", "audit"])
def test_the_supersede_chain_warning_escapes_the_named_id(ready: Path, command: str) -> None:
    hand_file(ready, {"supersedes": f"01ARZ3NDEKTSV4RRFFQ69G5FAV{HOSTILE}"})
    r = run_cli_process(command)
    assert "which is not here" in r.out + r.err, (r.out, r.err)
    shows_escaped(r, f"01ARZ3NDEKTSV4RRFFQ69G5FAV{ESCAPED}, which is not here")


BAD_NAME = "bad\x1b[31m\u200b\u202e\U000e0041\ue000\u2028Z.md"
BAD_SHOWN = "bad\\u001b[31m\\u200b\\u202e\\udb40\\udc41\\ue000\\u2028Z.md"


def test_a_hostile_file_name_is_escaped_wherever_it_is_named(ready: Path) -> None:
    (ready / MEM).mkdir(parents=True, exist_ok=True)
    (ready / MEM / BAD_NAME).write_text("---\nid: x\n---\nhello\n", encoding="utf-8")
    git("add", "-A", cwd=ready)
    for args in (("sync-status",), ("doctor",), ("scan",), ("scan", "--staged"), ("audit",), ("reindex",)):
        r = run_cli_process(*args)
        assert BAD_SHOWN in r.out + r.err, (args, r.out, r.err)
        shows_escaped(r)
    commit = git("commit", "-q", "-m", "a file by that name", cwd=ready, check=False)
    assert commit.returncode != 0, commit.stderr  # the pre-commit hook refuses it, naming it escaped
    assert BAD_SHOWN in commit.stderr and not hidden(commit.stderr), commit.stderr


@pytest.mark.parametrize("args", [
    ("list", "--tag", f"x{HOSTILE}"), ("scan", f"/nowhere/x{HOSTILE}"), ("import", f"/nowhere/x{HOSTILE}.json"),
    ("export", "-o", f"/nowhere/x{HOSTILE}/b.json"), ("pull", f"x{HOSTILE}"), ("push", f"x{HOSTILE}"),
    ("scopes", f"x{HOSTILE}"), ("schema", f"x{HOSTILE}"), ("distill", "--to", f"x{HOSTILE}"),
])
def test_an_error_repeating_an_argument_escapes_it(ready: Path, args: tuple[str, ...]) -> None:
    r = run_cli_process(*args)
    assert r.code in (1, 2) and r.err.startswith("git-memex: "), (r.code, r.out, r.err)
    assert "Traceback" not in r.err
    shows_escaped(r, f"x{ESCAPED}")


def test_json_output_is_escaped_and_parses_to_the_exact_text(ready: Path) -> None:
    body = "the build cache \U000e0041\U000e0042 tagged \ue000 glyph \U000f0000 here"
    assert run_cli("add", body).code == 0
    r = run_cli_process("search", "build cache", "--json")
    assert r.code == 0, r.err
    assert not hidden(r.out), hidden(r.out)
    assert "\\udb40\\udc41\\udb40\\udc42 tagged \\ue000 glyph \\udb80\\udc00" in r.out, r.out
    hits = json.loads(r.out)["hits"]
    assert hits and hits[0]["snippet"] == body, hits


PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want": ZWNJ between two letters
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
DEVANAGARI = "\u0915\u094d\u200d\u0937"  # a conjunct: ZWJ after the virama


def test_joiners_stay_inside_script_text_and_emoji_and_are_escaped_elsewhere(ready: Path) -> None:
    body = f"notes {PERSIAN} and {FAMILY} and {DEVANAGARI}, but ab\u200dcd and x\u200cy and \u200d{PERSIAN}"
    mid = run_cli("add", body, "--json").json()["id"]
    for args in (("show", mid), ("search", "notes"), ("inventory",)):
        r = run_cli_process(*args)
        assert r.code == 0, (args, r.err)
        assert PERSIAN in r.out and FAMILY in r.out and DEVANAGARI in r.out, (args, r.out)
        assert "ab\\u200dcd" in r.out and "x\\u200cy" in r.out and f"\\u200d{PERSIAN}" in r.out, (args, r.out)
    assert run_cli_process("show", mid, "--json").json()["body"] == body


def test_ascii_text_never_loads_unicodedata() -> None:
    """The hot path (hooks, the prompt hook): ASCII output is checked by one regex, as before."""
    probe = ("import sys, io\n"
             "from git_memex.core.output import GuardedStream, neutralise\n"
             "s = GuardedStream(io.StringIO())\n"
             "s.write('plain ascii \\x1b[31m line\\n'); neutralise('more ascii')\n"
             "print('unicodedata' in sys.modules)\n")
    import subprocess

    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False", r.stdout


def test_no_guarded_character_is_a_word_character() -> None:
    """The guard's regex skips word characters (`\\w`) of a non-ASCII text without looking them
    up: that is safe only while no character of the guarded categories is one. Over every code
    point of this Python's Unicode database; and each guarded character is escaped alone."""
    import re

    from git_memex.core.output import HIDDEN, neutralise

    word = re.compile(r"\w")
    guarded = [chr(i) for i in range(sys.maxunicode + 1) if unicodedata.category(chr(i)) in HIDDEN]
    assert len(guarded) > 100_000  # private use alone is ~137,000
    assert not [ch for ch in guarded if word.match(ch)]
    assert all(neutralise(f"a{ch}b") != f"a{ch}b" for ch in guarded if ch not in "\n\t")


def test_the_session_block_an_agent_reads_escapes_invisible_characters(ready: Path) -> None:
    """The block's lines are built by `agents.render.squeeze` with the guard's function: what the
    agent reads (`context --json`'s text, the hooks' output) holds the escapes, not the characters
    (a tag character is text a person cannot see and a model reads), joiners in script text kept."""
    body = f"the proxy listens on port 80\u200b80 \U000e0041\U000e0042 and {PERSIAN}"
    assert run_cli("add", body).code == 0
    r = run_cli_process("context", "--query", "proxy listens port", "--json")
    assert r.code == 0, r.err
    text = json.loads(r.out)["text"]
    assert "80\\u200b80 \\udb40\\udc41\\udb40\\udc42" in text and PERSIAN in text, text
    assert not hidden(text.replace(PERSIAN, "")), hidden(text)

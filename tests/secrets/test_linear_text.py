"""Redaction stays linear on whole texts, not only pattern by pattern (issue 31, F1 and F2).

`test_linear.py` sweeps each pattern alone; here the whole detector (`redact`, `find_secrets`)
runs on texts full of findings. One non-ASCII character used to make it quadratic: the UTF-8
copy of a text RE2 reads was kept for the last text searched only, the families search pieces of
the text between two searches of the whole (a label, a value), and each search of the whole
encoded it again (`rx._subject`). No clock is asserted: each case grows like its own run at a
quarter of the size, in the same process (`conftest.grows_linearly`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from git_memex.secrets.redact import find_secrets, redact, scan_text

from conftest import grows_linearly

N = 65536  # the largest body a write accepts (64 KiB): before the fix, "key=" runs took 23 s here


def _fill(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _env(n: int, ch: str) -> str:
    lines = [f"SVC{i}_API_TOKEN=Zq{i}Xm8Lp3Rt7Vn2Kw9 # {ch}\n" for i in range(n // 30 + 1)]
    return "".join(lines)[:n]


# Shapes of text a memory gets (long runs of a key, an env dump, passwords one per line, labels
# in another script), each with non-ASCII characters: one at the end, or in every repetition.
SHAPES: dict[str, Callable[[int, str], str]] = {
    "key= run, one char at the end": lambda n, ch: _fill("key=", n) + ch,
    "password=… lines, one char at the end": lambda n, ch: _fill("password=Zx8qW3eRpZ9\n", n) + ch,
    "password=… lines, the char in each": lambda n, ch: _fill(f"password=Zx8{ch}qW3eRpZ9\n", n),
    "env dump": _env,
    "пароль: run": lambda n, ch: _fill("пароль: ", n) + ch,
    "пароль: value lines": lambda n, ch: _fill(f"пароль: Qw7mZ92a{ch}\n", n),
}
CHARS = {"e-acute": "é", "cyrillic": "ж", "emoji": "\U0001f600"}


# The second attack round's families (tests/secrets/test_attack_findings.py): tables read line
# by line in Python (a header as wide as the text above short rows), escaped JSON, URL runs the
# loose form reads to their last "@" and the strict form again, <private> spans glued to tokens,
# short passwords echoed.
ATTACK_SHAPES: dict[str, Callable[[int], str]] = {
    "wide secret header, short rows": lambda n: "| " + "password | " * (n // 40) + "\n|"
    + "---|" * (n // 40) + "\n" + _fill("| db | Vq7kLm2pZx9w |\n", n // 2),
    "table rows with secrets": lambda n: _fill("| DB_PASSWORD | Vq7kLm2pZx9w |\n", n),
    "escaped JSON": lambda n: _fill('{\\"password\\": \\"Vq7kLm2pZx9w\\"} ', n),
    "one URL run": lambda n: _fill("redis://:p@ss/w0rd@h,", n),
    "URL run of ports": lambda n: _fill("http://h:3000/@a", n),
    "glued <private> spans": lambda n: _fill("ab<private>cd</private>ef ", n),
    "a short password echoed": lambda n: "password: Qw3rt9\n" + _fill("Qw3rt9 x", n),
    "look-alike words": lambda n: _fill("ɡhp_Q3mZk9Lp2Xw8Rt5Yv7Bn4Hc6Jd1Fg0Ks2Mn ᎪᏦIA ", n),
    "escaped JSON never closed": lambda n: _fill('{\\\\"password\\\\":\\\\"x\\"y', n),
    "escaped JSON with escapes": lambda n: _fill('{\\"password\\"=>\\"Vq7k\\\\/Lm\\u0026p\\"} ', n),
    "pipelines": lambda n: _fill("echo password | sha256sum\n", n),
    "a header without pipes, then rows": lambda n: "Name | password\n-|-\n" + _fill("db | Vq7kLm2pZx9w\n", n),
    "YAML lines with a tab": lambda n: _fill("  password: Vq7kLm2p\tZx9w horse\n", n),
    "one long line of keys": lambda n: _fill("password: Vq7kLm2pZx9w horse ", n),
    "bold and quoted cells": lambda n: _fill("| password (prod): | **`Vq7kLm2pZx9w` x ** | `a ` b |\n", n),
    "one row of unclosed bold": lambda n: "| password | " + _fill("**`a ", n),
    "<private> spans in symbols": lambda n: _fill("p@s#<private>w0</private>!x:", n),
    # shell words (`assignments._shell_word_end`): glued quoted parts, quotes never closed
    "glued shell words": lambda n: _fill('DB_PASSWORD=Password123"x"', n),
    "unclosed quotes after shell words": lambda n: _fill("DB_PASSWORD=Password123' ", n),
    ".env pairs on one line": lambda n: _fill("db_password=password1 ", n),
    "Dockerfile ENV lines": lambda n: _fill("ENV DB_PASSWORD Password123\n", n),
    "compose env map lines": lambda n: _fill("  POSTGRES_PASSWORD: Password123\n", n),
}


@pytest.mark.parametrize("shape", list(ATTACK_SHAPES))
def test_the_attack_families_are_linear(shape: str) -> None:
    make = ATTACK_SHAPES[shape]
    ok, small, big = grows_linearly(lambda n: redact(make(n)), N)
    assert ok, f"redact on {shape}: {big:.2f} s at {N}, {small:.2f} s at a quarter"


@pytest.mark.parametrize("ch", list(CHARS.values()), ids=list(CHARS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_detection_is_linear_on_non_ascii_text(shape: str, ch: str) -> None:
    make = SHAPES[shape]
    for name, fn in (("redact", redact), ("find_secrets", find_secrets)):
        ok, small, big = grows_linearly(lambda n, fn=fn: fn(make(n, ch)), N)
        assert ok, f"{name} on {shape} with {ch!r}: {big:.2f} s at {N}, {small:.2f} s at a quarter"


def test_the_subjects_kept_survive_pieces_searched_in_between() -> None:
    """The whole text stays encoded while pieces of it are searched between its searches: a
    search of the whole after many pieces costs no new encoding of it."""
    from git_memex.secrets import rx

    whole = _fill("key=é", 4096)
    pattern = rx.Rx("key=")
    assert pattern.search(whole) is not None
    for i in range(200):
        assert pattern.search(whole[i : i + 10] + "key=") is not None
    assert any(slot[0] is whole for slot in rx._subjects.values())


# --------------------------------------------------------------------------- F2: copies of many values

_ALPHABET = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def _passwords(k: int) -> str:
    """k lines ``password=…`` with k different values, each pasted again in a comment."""
    import random

    rnd = random.Random(31)
    out = []
    for _ in range(k):
        value = "".join(rnd.choice(_ALPHABET) for _ in range(6)) + "9!Qz"
        out.append(f"password={value}\n# again: {value}\n")
    return "".join(out)


def test_copies_of_many_found_values_are_masked_in_linear_time() -> None:
    """Every copy of every found value is masked (`redact._echoes`), and 10,000 values cost
    about 4 times 2,500: the one RE2 alternation of all values grew faster (10,000: 17 s)."""
    out = redact(_passwords(200))
    assert "9!Qz" not in out.text and len(out.masked) == 400
    ok, small, big = grows_linearly(lambda k: redact(_passwords(k)), 10000)
    assert ok, f"{big:.2f} s for 10,000 values, {small:.2f} s for 2,500"


@pytest.mark.parametrize("seed", range(40))
def test_copies_finds_what_the_alternation_finds(seed: int) -> None:
    """`_copies` (many values) and the RE2 alternation longest first (a few) find the same spans,
    on texts made of the values' pieces: overlapping values, one inside another, runs."""
    import random

    import re2

    from git_memex.secrets.redact import _copies
    from git_memex.secrets.rx import Rx

    rnd = random.Random(seed)
    base = "".join(rnd.choice("abAB01") for _ in range(24))
    values = {base[i : i + rnd.randint(1, 12)] for i in (rnd.randrange(20) for _ in range(rnd.randint(1, 8)))}
    text = "".join(rnd.choice([*values, base[:5], "x", "ab", "A"]) for _ in range(60))
    rx = Rx("|".join(re2.escape(v) for v in sorted(values, key=len, reverse=True)), raw=True)
    assert list(_copies(text, values)) == [m.span() for m in rx.finditer(text)]


def test_the_pre_commit_hook_is_linear_on_non_ascii_text(ready: Path) -> None:
    """A memory of ``key=`` runs ending in "é", committed by a real `git commit` under the hook
    `init` installed: the CPU of git and the hook (waited-for children) grows like the commit of
    a quarter of it. Before the fix the hook took ~20 s on the 60,000 characters."""
    from git_memex.core import frontmatter, model

    from conftest import git

    folder = ready / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)

    def commit(n: int) -> None:
        m = model.create(_fill("key=", n) + "é", scope="project", review_state="proposed")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), "utf-8")
        git("add", "-A", cwd=ready)
        done = git("commit", "-q", "-m", f"{n} characters", cwd=ready, check=False)
        assert done.returncode == 0, done.stderr

    ok, small, big = grows_linearly(commit, 60000, children=True)
    assert ok, f"{big:.2f} s of CPU for 60,000 characters, {small:.2f} s for a quarter"


# --------------------------------------------------------------------------- repeated markers
# Found by an attack on branch int2: a 500 KB memory of 16,000 `-----BEGIN RSA PRIVATE KEY-----`
# lines (committed with --no-verify, or arriving by pull) took `list` 105 s, the session-start
# `context` ~50 s, `scan` of 900 KB over 60 s: the "truncated private key" found at the first line
# runs to the end of the text, and was then searched for as one literal as long as the text
# (`redact._echoes`), which RE2 does in the text's length times the literal's.
MARKER_SHAPES: dict[str, Callable[[int], str]] = {
    "RSA private key headers": lambda n: _fill("-----BEGIN RSA PRIVATE KEY-----\n", n),
    "headers of other key kinds": lambda n: _fill("-----BEGIN EC PRIVATE KEY-----\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
                                                  "-----BEGIN PRIVATE KEY-----\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n", n),
    "headers after prose": lambda n: "the deploy key:\n" + _fill("-----BEGIN DSA PRIVATE KEY-----\nMIIEow\n", n),
    "password= lines": lambda n: _fill("password=Vq7kLm2pZx9w\n", n),
    "AKIA tokens": lambda n: _fill("AKIAQ3MZK9LP2XW8RT5Y\n", n),
}
MARKER_N = 256_000  # before the fix, the RSA headers took 11 s here and 0.8 s at a quarter


@pytest.mark.parametrize("shape", list(MARKER_SHAPES))
def test_masking_is_linear_on_repeated_markers(shape: str) -> None:
    make = MARKER_SHAPES[shape]
    for name, fn in (("redact", redact), ("scan_text", scan_text)):
        ok, small, big = grows_linearly(lambda n, fn=fn: fn(make(n)), MARKER_N)
        assert ok, f"{name} on {shape}: {big:.2f} s at {MARKER_N}, {small:.2f} s at a quarter"


def test_a_long_found_value_is_masked_where_found_and_short_copies_still_are() -> None:
    """A value over `_ECHO_MAX` is not looked for elsewhere (its own rule finds a key block at
    each place); the text is masked as before: the key from its header, and a password's copy."""
    from git_memex.secrets.redact import _ECHO_MAX

    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7q9Zx\n" * (_ECHO_MAX // 20)
    text = "password=Vq7kLm2pZx9w\nagain Vq7kLm2pZx9w\n" + key
    out = redact(text)
    assert out.text.startswith("password=xxxxxxxxxxxx\nagain xxxxxxxxxxxx\nxxxxx"), out.text[:80]
    assert "MIIEow" not in out.text and "BEGIN" not in out.text and len(out.text) == len(text)

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

import pytest

from git_memex.secrets.redact import find_secrets, redact

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

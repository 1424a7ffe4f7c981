"""Regular expressions a team keeps in git config: checked before use, run on bounded text.

`memex.redactPattern` (masked like a built-in secret, refused by the pre-commit scan),
`memex.capturePattern` and `memex.capturePersonalPattern` (keyword-capture triggers) are
multi-valued git config keys holding Python regular expressions (docs/team-patterns.md).
Python's `re` backtracks, so a careless pattern can take exponential time on one line and hang
every write and every commit. Three guards:

1. :func:`problem` (cheap, every use): the pattern compiles, is at most 500 characters, cannot
   match an empty text (it would claim every line) and has no unbounded quantifier inside
   another (`(a+)+`, `(\\w*)*`, `(?:x|y+)+`): the shape of exponential backtracking.
   Possessive quantifiers and atomic groups do not backtrack and are allowed.
2. :func:`too_slow` (`git memex config set` only): the pattern is run on stress texts (runs of
   one character, as long as a window) under a 1 s time limit, which catches the polynomial
   blow-ups (`.*.*.*=`) the shape test lets through.
3. :func:`windows` (every use): a pattern only ever sees one line at a time, and a line longer
   than `WINDOW` characters in overlapping windows, so its cost is bounded by the window, not by
   the size of a memory.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_SOURCE = 500
WINDOW = 1024  # characters a pattern sees at once (a line, or a window of a longer one)
OVERLAP = 256  # shared by consecutive windows: a match up to this long is never cut
TIME_LIMIT = 1.0  # seconds `config set` lets a pattern spend on its stress texts

_REPORTED: set[tuple[str, str]] = set()


@functools.lru_cache(maxsize=256)
def problem(source: str) -> str | None:
    """Why `source` cannot be used as a team pattern (one clause), or None when it can."""
    if not isinstance(source, str) or not source.strip():
        return "it is empty"
    if len(source) > MAX_SOURCE:
        return f"it is longer than {MAX_SOURCE} characters"
    try:
        rx = re.compile(source)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        return f"it is not a valid regular expression ({_error_text(exc)})"
    if rx.search("") is not None:
        return "it matches an empty text, so it would match every line"
    try:
        if _nested_repeat(_parse(source)):
            return ("it repeats a group that holds a quantifier of variable count (such as (a+)+), "
                    "which can take exponential time; use a possessive quantifier (a++) or an "
                    "atomic group (?>...)")
    except (re.error, RecursionError, OverflowError, ValueError, TypeError, AttributeError):
        pass  # the internal parser changed: the shape test is a guard, compile() is the check
    return None


def _error_text(exc: BaseException) -> str:
    msg = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
    pos = getattr(exc, "pos", None)
    return f"{msg} at position {pos}" if pos is not None else msg


def _parse(source: str) -> object:
    import importlib

    return importlib.import_module("re._parser").parse(source)  # CPython's own regex parser


def _constants() -> Any:
    import importlib

    return importlib.import_module("re._constants")


def _repeat_ops() -> tuple[set[object], set[object], object]:
    c = _constants()

    backtracking = {c.MAX_REPEAT, c.MIN_REPEAT}
    possessive = {c.POSSESSIVE_REPEAT, c.ATOMIC_GROUP}
    return backtracking, possessive, c.MAXREPEAT


def _nested_repeat(tree: object, inside: bool = False) -> bool:
    """True when an unbounded backtracking repeat sits inside another repeat that can loop."""
    backtracking, possessive, unbounded = _repeat_ops()
    for op, arg in tree:  # type: ignore[attr-defined]
        if op in possessive:
            continue  # no backtracking into it
        if op in backtracking:
            lo, hi, sub = arg
            loops = hi == unbounded or hi > 1
            if inside and lo != hi:
                return True  # a variable count inside a loop: many ways to split one text
            if _nested_repeat(sub, inside or loops):
                return True
            continue
        for child in _children(op, arg):
            if _nested_repeat(child, inside):
                return True
    return False


def _children(op: object, arg: object) -> Iterator[object]:
    c = _constants()

    if op == c.SUBPATTERN:
        yield arg[-1]  # type: ignore[index]
    elif op == c.BRANCH:
        yield from arg[1]  # type: ignore[index]
    elif op in (c.ASSERT, c.ASSERT_NOT):
        yield arg[1]  # type: ignore[index]
    elif op == c.GROUPREF_EXISTS:
        yield arg[1]  # type: ignore[index]
        if arg[2] is not None:  # type: ignore[index]
            yield arg[2]  # type: ignore[index]


TOO_SLOW = "it takes more than 1 s on a line of 1,024 repeated characters (catastrophic backtracking)"
"""Why a pattern that fails its stress test (`too_slow`) is refused."""


def timed_problem(source: str) -> str | None:
    """`problem`, and then the stress test (`too_slow`): what `git memex config set` and the
    remote server's start ask of a pattern."""
    return problem(source) or (TOO_SLOW if too_slow(source) else None)


def too_slow(source: str) -> bool:
    """Whether the pattern needs more than `TIME_LIMIT` on its stress texts.

    Measured with a timer signal (CPython's regex engine checks for signals while it runs), so
    only in the main thread of a POSIX process; elsewhere the shape test and the windows are the
    guards."""
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return False
    rx = re.compile(source)

    class _Expired(Exception):
        pass

    def expire(_signum: int, _frame: object) -> None:
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    try:
        for text in _stress_texts(source):
            for _m in rx.finditer(text):
                pass
        return False
    except _Expired:
        return True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _stress_texts(source: str) -> Iterator[str]:
    chars = set("aA0 _-=:./x") | {c for c in source if c.isprintable() and not c.isspace()}
    for c in sorted(chars):
        yield c * WINDOW
        yield c * (WINDOW - 1) + "\x00"


@functools.lru_cache(maxsize=256)
def compiled(source: str) -> re.Pattern[str] | None:
    """The compiled pattern, or None when :func:`problem` refuses it."""
    if not isinstance(source, str) or problem(source) is not None:
        return None
    return re.compile(source)


def windows(text: str) -> Iterator[tuple[int, str]]:
    """(offset, piece) for each line of `text`, long lines cut into overlapping windows."""
    pos = 0
    n = len(text)
    while pos < n:
        end = text.find("\n", pos)
        end = n if end < 0 else end
        line_end = end
        start = pos
        while True:
            stop = min(start + WINDOW, line_end)
            yield start, text[start:stop]
            if stop >= line_end:
                break
            start = stop - OVERLAP
        pos = line_end + 1


def report_once(key: str, source: str, why: str) -> None:
    """One stderr line for a configured pattern that is ignored, once per process."""
    if (key, source) in _REPORTED:
        return
    _REPORTED.add((key, source))
    print(f"git-memex: warning: memex.{key} {source!r} is ignored: {why}; remove it with "
          f"`git memex config unset memex.{key} {_shell_quote(source)}`", file=sys.stderr)


def _shell_quote(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


def usable(key: str, sources: tuple[str, ...]) -> tuple[str, ...]:
    """The configured patterns that may be used; each refused one reported once."""
    out = []
    for s in sources:
        why = problem(s)
        if why is None:
            out.append(s)
        else:
            report_once(key, s, why)
    return tuple(out)

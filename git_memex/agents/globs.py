"""``paths:`` globs of a memory matched against repository paths (gitignore-like, no I/O).

Invariant: matching is linear in the path's length times the pattern's length, whatever the
pattern holds (a glob of 22 ``*`` took minutes as a backtracking regex): a glob is compiled to
a small NFA of tokens and run as a set of states, never handed to ``re`` whole. Runs of ``*``
are merged first. ``re`` only ever sees one ``[...]`` class, matched against one character.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# token kinds: a literal character, one non-slash character, a [...] class (one character),
# a run of non-slash characters,
# a run of any characters, and a branch (consumes nothing; its epsilon moves are the choices)
_LIT, _ONE, _CLS, _STAR, _ANY, _BRANCH = range(6)
MAX_GLOB_CHARS = 1024
"""A longer glob matches nothing (no path in a repository needs more)."""


class Glob:
    """One compiled glob; ``fullmatch(path)`` says whether it matches the whole posix path."""

    __slots__ = ("_kinds", "_args", "_skips", "_n")

    def __init__(self, tokens: list[tuple[int, object, tuple[int, ...]]]) -> None:
        self._kinds = [t[0] for t in tokens]
        self._args = [t[1] for t in tokens]
        self._skips = [t[2] for t in tokens]  # epsilon moves: states reachable without a character
        self._n = len(tokens)

    def _closure(self, states: set[int]) -> set[int]:
        todo = list(states)
        while todo:
            s = todo.pop()
            if s < self._n:
                for t in self._skips[s]:
                    if t not in states:
                        states.add(t)
                        todo.append(t)
        return states

    def fullmatch(self, path: str) -> bool:
        kinds, args, n = self._kinds, self._args, self._n
        states = self._closure({0})
        for ch in path:
            nxt: set[int] = set()
            for s in states:
                if s >= n:
                    continue
                k = kinds[s]
                if k == _ANY:
                    nxt.add(s)
                elif k == _BRANCH:
                    continue
                elif k == _STAR:
                    if ch != "/":
                        nxt.add(s)
                elif k == _LIT:
                    if ch == args[s]:
                        nxt.add(s + 1)
                elif k == _ONE:
                    if ch != "/":
                        nxt.add(s + 1)
                elif args[s].fullmatch(ch):  # type: ignore[attr-defined]
                    nxt.add(s + 1)
            if not nxt:
                return False
            states = self._closure(nxt)
        return n in states


_glob_cache: dict[str, Glob | None] = {}


def _compile(p: str, anchored: bool) -> Glob | None:
    toks: list[tuple[int, object, tuple[int, ...]]] = []

    def add(kind: int, arg: object = None, skips: tuple[int, ...] = ()) -> None:
        toks.append((kind, arg, skips))

    def opt_any_then_slash() -> None:  # (?:.*/)?
        i = len(toks)
        add(_BRANCH, None, (i + 1, i + 3))  # the group, or nothing
        add(_ANY, None, (i + 2,))
        add(_LIT, "/")

    if not anchored:
        opt_any_then_slash()
    i, n = 0, len(p)
    while i < n:
        if p[i] == "*":
            j = i
            while j < n and p[j] == "*":
                j += 1
            run = j - i  # a run of stars is one `*` or one `**`
            if run >= 2 and p.startswith("/", j):
                opt_any_then_slash()  # `**/`
                i = j + 1
            elif run >= 2 and i > 0 and p[i - 1] == "/" and j == n:
                # `/**` at the end: the folder itself or anything under it; the `/` is already a token
                k = len(toks) - 1
                toks[k] = (toks[k][0], toks[k][1], (k + 2,))
                add(_ANY, None, (k + 2,))
                i = j
            elif run >= 2:
                add(_ANY, None, (len(toks) + 1,))
                i = j
            else:
                add(_STAR, None, (len(toks) + 1,))
                i = j
        elif p[i] == "?":
            add(_ONE)
            i += 1
        elif p[i] == "[" and (j := p.find("]", i + 2)) > 0:
            cls = p[i + 1 : j]
            if cls.startswith("!"):
                cls = "^" + cls[1:]
            try:
                add(_CLS, re.compile("[" + cls.replace("\\", "\\\\") + "]"))
            except re.error:
                return None
            i = j + 1
        else:
            add(_LIT, p[i])
            i += 1
    # (?:/.*)?: a pattern naming a folder matches everything under it
    k = len(toks)
    add(_LIT, "/", (k + 2,))
    add(_ANY, None, (k + 2,))
    return Glob(toks)


def glob_regex(pattern: str) -> Glob | None:
    """A memory's ``paths`` glob as a matcher over repo-relative posix paths (None: matches nothing).

    gitignore-like: ``**`` crosses folders, ``*`` and ``?`` do not; a pattern without a slash
    (``*.sql``) matches at any depth; a pattern naming a folder (``src/auth``, ``src/auth/``,
    ``src/auth/**``) also matches the folder itself and everything under it.
    """
    if pattern in _glob_cache:
        return _glob_cache[pattern]
    p = pattern.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    anchored = "/" in p.rstrip("/")
    p = p.strip("/")
    g = _compile(p, anchored) if p and len(p) <= MAX_GLOB_CHARS else None
    if len(_glob_cache) > 10_000:
        _glob_cache.clear()
    _glob_cache[pattern] = g
    return g


def glob_matches(patterns: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths (repo-relative) that any of the globs matches."""
    rxs = [rx for rx in (glob_regex(g) for g in patterns) if rx is not None]
    if not rxs:
        return []
    return [p for p in paths if any(rx.fullmatch(p) for rx in rxs)]

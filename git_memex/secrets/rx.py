"""Regular expressions that cannot backtrack: every pattern that scans memory text runs on RE2.

RE2 (the `google-re2` package) matches in time linear in the text for any pattern: no
backtracking, so no input can make a search slow (a pattern written for Python's `re` with
nested quantifiers took minutes on 40 characters, docs/security.md). RE2 has no look-around and no
back-references; what they did here is said another way:

- ``before``: a one-character class the character before a match must be in (or the match starts
  the text): ``before="[^A-Za-z0-9_]"`` is Python's ``(?<![A-Za-z0-9_])``. The character is matched
  by RE2 and left out of the match (group ``_0`` is the match); a search from ``pos`` reads the
  character at ``pos - 1``, as a look-behind would.
- ``after``: what must follow a match (or the end of the text): ``after="[^A-Za-z0-9]"`` is
  ``(?![A-Za-z0-9])``. Matched and left out of the match; the next search starts at the match's end.
- A group whose name ends in ``__N`` is one spelling of the group named before the ``__``: a
  pattern may hold ``vq__1``, ``vq__2``, and ``m.group("vq")`` is the one that took part (RE2
  allows each name once). A back-reference ``(["'])…(?P=q)`` becomes one alternative per quote.
- Any other look-around is a check in Python on the match (documented where it is made).

Patterns are written in the syntax both engines share; :func:`to_re2` turns Python's Unicode
classes into RE2's (``\\w`` is ``[\\pL\\pN_]``, ``\\s`` Python's set of spaces, ``\\Z`` is ``\\z``),
and :attr:`Rx.python` gives the same pattern for Python's ``re`` with look-arounds, which the tests
use to show the two find the same matches. ``\\b`` and ``\\d`` are ASCII in RE2.

Invariants: an :class:`Rx` compiles on first use (a hook pays only for the patterns its text
needs); matches carry offsets in characters of the ``str`` searched, like ``re``; RE2 reads UTF-8,
so each text is encoded once and its offsets converted through one table (`_subject`, kept for
the last few texts by identity), which keeps a search from any position linear too
(google-re2's own ``search(text, pos)`` re-encodes the whole text each call).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator, Mapping, Sequence
from itertools import accumulate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Python's `\w` and `\s`, as RE2 class items, in the form RE2 compiles cheaply. RE2 builds a
# program per UTF-8 range of a class, and a counted repeat multiplies it: Unicode letters and
# numbers (`\pL\pN_`) took ~140 ms to compile in `[\w.-]{0,63}`, Python's Unicode spaces ~12 ms
# in `[^\s"']{1,256}`, and a hook pays every pattern its text needs (docs/security.md). So:
# `\w` is ASCII letters, digits and "_", the Latin-1 letters, and every character from U+0100 on
# but General Punctuation (U+2000-U+206F) and CJK Symbols and Punctuation (U+3000-U+303F): the
# letters of every script, and the few symbols above U+0100 (arrows, math) taken for letters too.
# `\s` is ASCII (tab to CR, the separators 0x1c-0x1f, space): detection reads the NFKC copy
# (`redact._detection_copy`), where NBSP, U+2000-U+200A, U+202F, U+205F and U+3000 are already
# spaces; only NEL, U+1680 and U+2028/9 are not taken for spaces.
_W = (r"0-9A-Za-z_\x{AA}\x{B5}\x{BA}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1FFF}\x{2070}-\x{2FFF}"
      r"\x{3040}-\x{10FFFF}")
_S = r"\t-\r\x1c-\x20"
_REPLACE_IN_CLASS = {"w": _W, "s": _S}
_REPLACE_OUTSIDE = {"w": f"[{_W}]", "W": f"[^{_W}]", "s": f"[{_S}]", "S": f"[^{_S}]", "Z": r"\z"}
# Whole classes RE2 cannot spell item by item: \w without digits or without "_".
_WHOLE_CLASSES = {r"[^\W\d]": "[" + _W.replace("0-9", "") + "]", r"[^\W_]": "[" + _W.replace("_", "") + "]"}
_FORBIDDEN = ("(?=", "(?!", "(?<=", "(?<!", "(?P=")
_LEADING_FLAGS = r"\(\?([aiLmsux]+)\)"  # (read on pattern sources, for `Rx.python`)


class PatternError(ValueError):
    """A pattern this module cannot run on RE2 (a look-around or back-reference left in it)."""


def to_re2(source: str) -> str:
    """`source` (the syntax RE2 and Python share, with Python's `\\w \\W \\s \\S \\Z`) for RE2."""
    for bad in _FORBIDDEN:
        if bad in source:
            raise PatternError(f"{bad} has no RE2 form: {source[:80]!r}")
    for whole, spelled in _WHOLE_CLASSES.items():
        source = source.replace(whole, spelled)
    out: list[str] = []
    i, n, in_class = 0, len(source), False
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            e = source[i + 1]
            if in_class and e in _REPLACE_IN_CLASS:
                out.append(_REPLACE_IN_CLASS[e])
            elif in_class and e in "WSD":
                raise PatternError(f"\\{e} inside a class has no RE2 form: {source[:80]!r}")
            elif not in_class and e in _REPLACE_OUTSIDE:
                out.append(_REPLACE_OUTSIDE[e])
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            if source.startswith("[^", i):
                out.append("[^")
                i += 2
                if source.startswith("]", i):  # "[^]…]": a literal "]" first
                    out.append("]")
                    i += 1
                continue
            out.append("[")
            if source.startswith("]", i + 1):
                out.append("]")
                i += 1
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _flag_prefix(flags: int) -> str:
    import re

    letters = "".join(f for bit, f in ((re.I, "i"), (re.M, "m"), (re.S, "s")) if flags & bit)
    return f"(?{letters})" if letters else ""


# --------------------------------------------------------------------------- the subject text

_STARTS = bytes(0 if 0x80 <= b < 0xC0 else 1 for b in range(256))  # 1 for a character's first byte
_SLOTS = 8  # subjects kept (`_subject`)
# id(text) -> [text, UTF-8 bytes, table or None, credit]; the text is held, so its id stays its own
_subjects: dict[int, list[Any]] = {}
_floor = 0  # GreedyDual's inflation value: the credit of the last subject let go


def _subject(text: str) -> tuple[bytes, Sequence[int] | None]:
    """`text` as UTF-8, and (unless it is ASCII) the table ``chars[b]``: the number of
    characters before byte ``b``. A lone surrogate (valid in a str, not in UTF-8) reads as ``?``.

    Kept for the last few texts asked, by identity: a scan runs every pattern on one text, and
    between two searches of it a family runs patterns on pieces of it (a label, a value, a line).
    Keeping only the last text let each piece push the whole one out, and the next search of the
    whole text encoded it again: one pass over the text per match (issue 31, F1). Which text goes
    when a new one comes is GreedyDual's choice (N. Young, 1994) with a text's length as the cost
    of encoding it again: each text holds a credit, ``floor + len``, renewed when it is asked
    again; the lowest credit goes, and the floor rises to it. So a long text asked between many
    short ones stays until as many characters of other texts have come since, and what is
    encoded in all is within ``_SLOTS`` times the least any choice of ``_SLOTS`` kept texts
    could encode, for any order of texts: a scan that asks its whole text between pieces of it
    encodes the whole text once, not once per match."""
    global _floor
    key = id(text)
    slot = _subjects.get(key)
    if slot is not None and slot[0] is text:
        slot[3] = _floor + len(text)
        return slot[1], slot[2]
    data = text.encode("utf-8", "replace")
    chars = None if len(data) == len(text) else array("q", accumulate(data.translate(_STARTS), initial=0))
    if slot is None and len(_subjects) >= _SLOTS:
        key_out = min(_subjects, key=lambda k: _subjects[k][3])
        _floor = _subjects.pop(key_out)[3]
    _subjects[key] = [text, data, chars, _floor + len(text)]
    return data, chars


_UNANCHORED, _START, _BOTH = 0, 1, 2
_ANCHORS: list[Any] = []  # RE2's anchor values, by the three above (filled on the first compile)


# --------------------------------------------------------------------------- matches


class Match:
    """One match, in the manner of ``re.Match``: ``group``, ``start``, ``end``, ``span``,
    ``groupdict``, by name, alias name (``vq`` for ``vq__1``…) or number. Group 0 is the
    match without its ``before``/``after`` context."""

    __slots__ = ("_rx", "_spans", "string")

    def __init__(self, rx: Rx, string: str, spans: list[tuple[int, int]]) -> None:
        self._rx = rx
        self.string = string
        self._spans = spans

    def _index(self, group: int | str) -> int:
        rx = self._rx
        if isinstance(group, int):
            if group:
                return group + rx._offset
            indices = rx._zero
        else:
            try:
                indices = rx._aliases[group]
            except KeyError:
                raise IndexError(f"no such group: {group!r}") from None
        for i in indices:
            if self._spans[i][0] >= 0:
                return i
        return indices[0]

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        return self._spans[self._index(group)][0]

    def end(self, group: int | str = 0) -> int:
        return self._spans[self._index(group)][1]

    def group(self, *groups: int | str) -> Any:
        if len(groups) > 1:
            return tuple(self.group(g) for g in groups)
        s, e = self._spans[self._index(groups[0] if groups else 0)]
        return None if s < 0 else self.string[s:e]

    def __getitem__(self, group: int | str) -> str | None:
        value: str | None = self.group(group)
        return value

    def groupdict(self) -> dict[str, str | None]:
        return {name: self.group(name) for name in self._rx._public}

    def groups(self) -> tuple[str | None, ...]:
        return tuple(self.group(i) for i in range(1, self._rx.groups + 1))


# --------------------------------------------------------------------------- patterns


class Rx:
    """A pattern run by RE2, compiled on first use. See the module docstring for ``before``,
    ``after`` and alias groups; ``raw=True`` takes ``pattern`` as RE2 syntax as it is."""

    __slots__ = ("_after", "_aliases", "_before", "_compiled", "_flags", "_offset", "_public",
                 "_regex", "_shifted", "_zero", "pattern", "raw")

    def __init__(self, pattern: str, flags: int = 0, *, before: str | None = None,
                 after: str | None = None, raw: bool = False) -> None:
        self.pattern = pattern
        self._flags = flags
        self._before = before
        self._after = after
        self.raw = raw
        self._compiled = False

    # ---- compilation
    def _source(self, *, shifted: bool) -> str:
        core = self.pattern if self.raw else to_re2(self.pattern)
        core = _flag_prefix(self._flags) + core
        if self._before is None and self._after is None:
            return core
        before = "" if self._before is None else (
            to_re2(self._before) if shifted else f"(?:^|{to_re2(self._before)})")
        after = "" if self._after is None else rf"(?:{to_re2(self._after)}|\z)"
        return f"{before}(?P<_0>{core}){after}"

    def _compile(self) -> None:
        import re2

        if not _ANCHORS:
            _ANCHORS.extend((re2._Anchor.UNANCHORED, re2._Anchor.ANCHOR_START, re2._Anchor.ANCHOR_BOTH))
        options = re2.Options()
        options.log_errors = False
        options.max_mem = 64 << 20  # the large Unicode classes need more than the default 8 MiB DFA
        try:
            self._regex = re2.compile(self._source(shifted=False), options)._regexp
        except re2.error as exc:
            raise PatternError(f"{exc}: {self.pattern[:80]!r}") from None
        self._shifted = None  # compiled on the first search from a text's second character (`_from_inside`)
        names = {name.decode(): index for name, index in self._regex.NamedCapturingGroups()}
        aliases: dict[str, list[int]] = {}
        for name, index in sorted(names.items(), key=lambda kv: kv[1]):
            aliases.setdefault(name.split("__", 1)[0], []).append(index)
            aliases.setdefault(name, []).append(index)
        self._aliases = {k: tuple(v) for k, v in aliases.items()}
        # group 0: the wrapper's `_0` (then the pattern's own groups are numbered from 2), or the
        # pattern's `_0__N` spellings (then it has no numbered groups of its own), or RE2's 0
        self._zero = self._aliases.pop("_0", (0,))
        self._offset = 1 if "_0" in names else 0
        self._public = tuple(k for k in aliases if "__" not in k and not k.startswith("_"))
        self._compiled = True

    def _from_inside(self) -> Any:
        """The pattern that reads its ``before`` character from inside the text (no ``^``)."""
        import re2

        options = re2.Options()
        options.log_errors = False
        options.max_mem = 64 << 20
        self._shifted = re2.compile(self._source(shifted=True), options)._regexp
        return self._shifted

    def compile(self) -> Rx:
        """Compile now, both forms (the tests compile every pattern; a use compiles what it needs)."""
        if not self._compiled:
            self._compile()
        if self._before is not None and self._shifted is None:
            self._from_inside()
        return self

    @property
    def re2_source(self) -> str:
        return self._source(shifted=False)

    @property
    def python(self) -> str:
        """The same pattern for Python's ``re``, with look-arounds (for the tests)."""
        core = self.pattern
        import re

        flags = re.match(_LEADING_FLAGS, core)
        if flags:  # Python takes global flags only at the very start: scoped here
            core = f"(?{flags.group(1)}:{core[flags.end():]})"
        if _flag_prefix(self._flags):
            core = f"{_flag_prefix(self._flags)[:-1]}:{core})"
        if self._before is None and self._after is None:
            return core
        before = "" if self._before is None else f"(?:^|(?<={self._before}))"
        after = "" if self._after is None else rf"(?=(?:{self._after})|\Z)"
        return f"{before}(?P<_0>{core}){after}"

    @property
    def groups(self) -> int:
        """The number of the pattern's own groups (not the wrapper's nor the `_0__N` ones)."""
        self.compile()
        zero = self._offset or (len(self._zero) if self._zero != (0,) else 0)
        return int(self._regex.NumberOfCapturingGroups()) - zero

    @property
    def groupindex(self) -> Mapping[str, int]:
        self.compile()
        return {k: v[0] - self._offset for k, v in self._aliases.items() if "__" not in k}

    # ---- matching
    def _run(self, anchor: int, text: str, pos: int) -> Match | None:
        if not self._compiled:
            self._compile()
        data, chars = _subject(text)
        if pos <= 0:
            regex, start = self._regex, 0
        elif self._before is not None:
            start = min(pos, len(text)) - 1
            # From inside the text the pattern itself reads its `before` character: RE2's `^`
            # matches only where the text begins (it reads the whole text as context; the flags
            # apply inside group `_0` only), never at `start` > 0. So only a search from the
            # second character needs the form without `^`, compiled then (`_from_inside`).
            regex = self._regex if start > 0 else (self._shifted or self._from_inside())
        else:
            regex, start = self._regex, min(pos, len(text))
        if chars is not None:
            start = bisect.bisect_right(chars, start) - 1
        if anchor == _BOTH and self._after is not None:
            anchor = _START  # the "after" context ends at \z, never past it
        spans = regex.Match(_ANCHORS[anchor], data, start, len(data))
        if spans[0][0] < 0:
            return None
        if chars is not None:
            spans = [(chars[s], chars[e]) if s >= 0 else (-1, -1) for s, e in spans]
        return Match(self, text, spans)

    def search(self, text: str, pos: int = 0) -> Match | None:
        return self._run(_UNANCHORED, text, pos)

    def match(self, text: str, pos: int = 0) -> Match | None:
        """A match that starts at ``pos`` (its ``before`` context, if any, just before it)."""
        m = self._run(_START, text, pos)
        return m if m is not None and m.start() == pos else None

    def fullmatch(self, text: str) -> Match | None:
        m = self._run(_BOTH, text, 0)
        return m if m is not None and m.end() == len(text) else None

    def finditer(self, text: str) -> Iterator[Match]:
        """Non-overlapping matches, left to right; each search starts where the last match
        ended (its ``after`` context is read again), one position on after an empty match."""
        pos, n = 0, len(text)
        while pos <= n:
            m = self.search(text, pos)
            if m is None:
                return
            yield m
            s, e = m.span()
            pos = e if e > s else e + 1

    def findall(self, text: str) -> list[Any]:
        groups = self.groups
        out: list[Any] = []
        for m in self.finditer(text):
            out.append(m.group() if groups == 0 else m.group(1) if groups == 1 else m.groups())
        return out

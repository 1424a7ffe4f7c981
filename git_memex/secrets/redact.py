"""Redaction of memory text on every write path (decision D14, docs/decisions.md).

Two steps, in this order:

1. ``<private>…</private>`` spans become ``[REDACTED]``: the author opted out explicitly, so the
   span is gone before any detector (or index) sees it.
2. Secrets are masked in place, never refused: every character of the secret value becomes
   ``x`` but a documented, non-secret prefix of a known token format (``ghp_``, ``AKIA``,
   ``sk_live_``; a `formats.Format`'s ``keep``), so the note still says *which* kind of credential it was
   about while no part of the credential is left. A password or generic value keeps nothing.
   Line breaks inside a masked span (PEM blocks) are kept so that line numbers and line-based
   git merges still work.

Detection = a table of vendor token formats (`formats`, each row with its source) + a hand-picked set of detect-secrets plugins for the rest + a conservative
high-entropy heuristic for ``name = value`` assignments. detect-secrets' own entropy plugins are not
used: they flag English prose. detect-secrets (and through it ``requests``: ~100 ms together) is imported
only when a line could match one of its plugins, so a plain note never pays for it.

Already-masked values (``ghp_xxxx…``, ``huntxxx``) are never reported again, and :func:`redact`
iterates to a fixpoint, so ``redact(redact(t).text) == redact(t)`` with nothing reported the
second time.

The detectors live one family per module, tried by :func:`find_secrets` in this order:
`tokens` (private-key blocks), `formats` (vendor token formats), the team's own patterns
(`memex.redactPattern`, docs/team-patterns.md), `dsplugins` (detect-secrets' format plugins),
`web` (URL, command-line and header credentials), `assignments` (secret-named keys),
`dsplugins` again (its name-driven plugins), `entropy`. `masking` holds what they share,
`dscache` the detect-secrets pattern cache. Each module imports nothing heavy at start-up.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from git_memex.core.record import record
from git_memex.secrets.assignments import _assignment_candidates
from git_memex.secrets.dsplugins import _ds_candidates
from git_memex.secrets.entropy import _high_entropy_candidates, find_high_entropy_secret
from git_memex.secrets.formats import find as _format_candidates
from git_memex.secrets.masking import _MIN_SECRET_LEN, REDACTED, _is_masked, _lazy, mask
from git_memex.secrets.rx import Rx
from git_memex.secrets.tokens import _pem_candidates
from git_memex.secrets.web import _web_candidates

__all__ = [
    "Finding",
    "Redaction",
    "find_high_entropy_secret",
    "find_secrets",
    "mask",
    "redact",
    "scan_text",
    "strip_private",
]


@record(frozen=True)
class Finding:
    """One secret in a text; ``start``/``end`` delimit the value that gets masked, and its first
    ``keep`` characters are the documented, non-secret prefix of a known format (``ghp_``) that
    the mask leaves visible: 0 for a password or any value not found by its format."""

    rule: str
    start: int
    end: int
    line: int
    keep: int = 0


@record(frozen=True)
class Redaction:
    """Result of :func:`redact`: the safe text and what was done to it."""

    text: str
    masked: tuple[str, ...]
    private_spans: int
    values: tuple[tuple[str, str], ...] = ()
    """(value, rule) of each secret masked, as written (its kept prefix aside): what
    `mask_copies` looks for in a memory's other fields."""


# --------------------------------------------------------------------------- <private>

_PRIVATE_TAG = _lazy(r"<\s*(/)?\s*private(?:\s[^<>]*)?>", re.IGNORECASE)


# A `<private>` span that cuts a token (a tag with a letter, a digit or a password's symbol
# `_PW_SYMBOLS` right on both sides of it) takes the rest of the token with it: the characters of a
# token's alphabet (letters, digits, ``_-+~`` and those symbols; ``=:`` too after the span)
# written right against that tag, a sentence's punctuation at its end aside. ``/`` and ``.`` end
# the token (a path's separator, a file's extension: ``foo/<private>host</private>/bar``,
# ``README<private>-internal</private>.md`` keep ``foo/``, ``/bar``, ``README`` and ``.md``), and
# so do spaces, quotes, ``:`` and ``=`` before the span (``key=<private>…</private>`` and
# ``password: <private>…</private>`` keep their labels).
_PW_SYMBOLS = "#@!*&%$^"
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_TOKEN_CHAR = frozenset(_ALNUM + "_-+~" + _PW_SYMBOLS)
_TAIL_CHAR = _TOKEN_CHAR | frozenset("=:")
_CUT_CHAR = frozenset(_ALNUM + _PW_SYMBOLS)
_CUT_AFTER = _CUT_CHAR | frozenset("=:")
_SENTENCE_END = ".,:;!?"


def _cuts_token(text: str, before: int, after: int, closing: bool) -> bool:
    """A tag between ``text[before]`` and ``text[after]`` splits a token: both are letters,
    digits or a password's symbols (after a closing tag ``=:`` too)."""
    return (
        0 <= before < len(text) and after < len(text)
        and text[before] in _CUT_CHAR and text[after] in (_CUT_AFTER if closing else _CUT_CHAR)
    )


def _version_head(text: str, start: int, inner: int) -> bool:
    """``v<private>1</private>.2.3``: a lone ``v`` before a span that starts with a digit is a
    version's mark, not a token's head."""
    return (
        start >= 1 and text[start - 1] in "vV" and (start < 2 or text[start - 2] not in _TOKEN_CHAR)
        and inner < len(text) and text[inner].isdigit()
    )


def _address_or_port(text: str, after: int) -> bool:
    """What follows a closing tag is an address's domain (``@corp.example``) or a port
    (``:8443``), not a token's tail."""
    if text.startswith("@", after):
        return True
    if not text.startswith(":", after):
        return False
    end = after + 1
    while end < len(text) and text[end].isdigit():
        end += 1
    return end > after + 1 and (end == len(text) or text[end] not in _TAIL_CHAR)


def strip_private(text: str) -> tuple[str, int]:
    """Replace each outermost ``<private>`` span with ``[REDACTED]``; return text and count.

    Tags nest (so an inner ``</private>`` cannot leak the rest of an outer span), an unclosed
    tag redacts to the end of the text (the author meant the rest to be private), and a stray
    closing tag is left alone. A span that cuts a token (`_cuts_token`) covers the whole token:
    the token's characters glued to the opening tag (`_TOKEN_CHAR`, never ``/`` nor ``.``) and to
    the closing one (those and ``=:``, a sentence's punctuation at the end aside) go into the
    ``[REDACTED]`` too (``ghp_ab<private>cd</private>ef…`` leaves no ``ghp_ab`` nor
    ``ef…`` behind; docs/security.md, "<private> spans").
    """
    out: list[str] = []
    pos = 0
    depth = 0
    spans = 0
    for m in _PRIVATE_TAG.finditer(text):
        closing = m.group(1) is not None
        if not closing:
            if depth == 0:
                start = m.start()
                if _cuts_token(text, start - 1, m.end(), closing=False) and not _version_head(text, start, m.end()):
                    while start > pos and text[start - 1] in _TOKEN_CHAR:
                        start -= 1  # the head of a token the span cuts
                out.append(text[pos:start])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                out.append(REDACTED)
                spans += 1
                pos = m.end()
                if _cuts_token(text, m.start() - 1, pos, closing=True) and not _address_or_port(text, pos):
                    while pos < len(text) and text[pos] in _TAIL_CHAR:
                        pos += 1  # the tail of a token the span cuts (it stops at "<": no tag is skipped)
                    while pos > m.end() and text[pos - 1] in _SENTENCE_END:
                        pos -= 1  # a sentence's punctuation, not the token's
    if depth > 0:
        out.append(REDACTED)
        spans += 1
    else:
        out.append(text[pos:])
    return "".join(out), spans


def _user_candidates(text: str, patterns: Sequence[str]) -> Iterator[tuple[str, int, int]]:
    """Matches of the team's patterns (`memex.redactPattern`), one line (or bounded window of a
    long line) at a time; a pattern `userregex.problem` refuses is skipped (docs/team-patterns.md)."""
    if not patterns:
        return
    from git_memex.core.userregex import compiled, windows

    for source in patterns:
        try:
            regex = compiled(source)
        except TypeError:
            continue  # not a string: a bad user pattern must not break every write
        if regex is None:
            continue
        seen: set[tuple[int, int]] = set()
        for offset, piece in windows(text):
            for m in regex.finditer(piece):
                span = (offset + m.start(), offset + m.end())
                if span not in seen:
                    seen.add(span)
                    yield source, span[0], span[1]


# Removed from the copy detection reads, by Unicode category, not by a list: every format
# character (Cf: zero-width characters, bidi controls, soft hyphen, word joiner, BOM, tag
# characters), the tag block's unassigned rest, and the fillers that are letters or symbols drawn
# as nothing (Hangul fillers, the blank braille pattern); and a combining mark (Mn, Me: variation
# selectors U+FE00-FE0F and U+E0100-E01EF, U+0301, U+0307…) that follows an ASCII character, where
# it only decorates a token ("ghp_a\u0301bc…" reads as a token to a human and must to us). Marks on
# other scripts' letters stay: they spell words ("पासवर्ड", "รหัสผ่าน").
# Control characters (Cc: C0 but tab, line feed and carriage return, DEL, C1) are drawn as nothing
# too, or as a box; inside a token they hid it ("ghp_Q3mZ…\x7fkX9…" was stored whole, issue 31 F5).
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc"})
_ASCII_CONTROLS = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])  # Cc but \t \n \r
_MARK_CATEGORIES = frozenset({"Mn", "Me"})
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\u180b\u180c\u180d\u180f")


def _invisible(c: str, after_ascii: bool, category: Callable[[str], str]) -> bool:
    """Whether `c` (not ASCII) is left out of the detection copy (`_detection_copy`)."""
    if c in _FILLERS or 0xE0000 <= ord(c) <= 0xE0FFF:
        return True
    cat = category(c)
    return cat in _INVISIBLE_CATEGORIES or (after_ascii and cat in _MARK_CATEGORIES)


# Letters of other scripts drawn like Latin ones ("pаssword" with a Cyrillic "а", "ɡhp_…" with
# U+0261, Cherokee "Ꮐ"): Unicode's confusables (`lookalikes`, UTS #39: 504 letters and digits of
# Latin extensions and IPA, Greek, Cyrillic, Armenian, Cherokee, Lisu, Coptic, Canadian
# syllabics…; full-width and mathematical letters are NFKC's), and a few Cyrillic and Greek
# letters that table maps elsewhere or not at all ("ӏ" as l, "κ", "τ"). Folded only inside a
# word that also holds a Latin letter, so Russian "пароль" or Greek "κωδικός" stay what they
# are, while a label or a prefix spelt with a look-alike reads as the Latin one it imitates.
_HAND_CONFUSABLES = dict(
    zip(
        "аеорсухіјѕԁԝһӏԛАВЕКМНОРСТХІЈЅԜҮαοριυνκτΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aeopcyxijsdwhlqABEKMHOPCTXIJSWYaopiuvktABEZHIKMNOPTYX",
        strict=True,
    )
)


@functools.cache
def _confusables() -> dict[str, str]:
    """The look-alike table, built on the first text that is not ASCII (no import before)."""
    from git_memex.secrets import lookalikes

    return {**dict(zip(lookalikes.SOURCE, lookalikes.TARGET, strict=True)), **_HAND_CONFUSABLES}

_WORD = _lazy(r"\w+")


def _fold_confusables(copy: str) -> str:
    """`copy` with each look-alike letter of a mixed-script word replaced by its Latin letter,
    one character for one (so the offsets of the detection copy still hold)."""
    table = _confusables()
    if table.keys().isdisjoint(copy):
        return copy
    out: list[str] = []
    pos = 0
    for m in _WORD.finditer(copy):
        word = m.group()
        if table.keys().isdisjoint(word) or not any("a" <= c.lower() <= "z" for c in word):
            continue
        out.append(copy[pos : m.start()])
        out.append("".join(table.get(c, c) for c in word))
        pos = m.end()
    out.append(copy[pos:])
    return "".join(out)


def _detection_copy(text: str) -> tuple[str, list[int] | None]:
    """The text detection reads: NFKC-normalised (full-width letters, NBSP and U+3000 become
    ASCII), invisible characters removed by category (`_invisible`; control characters but tab,
    line feed and carriage return too), look-alike letters of a mixed-script word folded to
    Latin (`_fold_confusables`); and, when that changed anything, the offset in
    ``text`` of each of its characters (plus one past the end). ASCII text is its own copy.

    Normalised one character at a time, so every character of the copy comes from exactly one
    character of ``text`` and a finding maps back to the original span, which is what gets
    masked: the stored text keeps its own characters, only the secret's become ``x``.
    """
    if text.isascii():
        data = text.encode("ascii")
        if len(data.translate(None, _ASCII_CONTROLS)) == len(data):
            return text, None
    import unicodedata

    out: list[str] = []
    where: list[int] = []
    after_ascii = False  # the last character kept is ASCII
    for i, c in enumerate(text):
        if c.isascii():
            if c < " " and c not in "\t\n\r" or c == "\x7f":
                continue  # a control character (`_ASCII_CONTROLS`)
            out.append(c)
            where.append(i)
            after_ascii = True
            continue
        if _invisible(c, after_ascii, unicodedata.category):
            continue
        n = unicodedata.normalize("NFKC", c)
        out.append(n)
        where.extend([i] * len(n))
        after_ascii = n.isascii()
    copy = _fold_confusables("".join(out))
    if copy == text:
        return text, None
    where.append(len(text))
    return copy, where


def find_secrets(text: str, extra_patterns: Sequence[str] = ()) -> list[Finding]:
    """All secrets in ``text``: non-overlapping, sorted by position, already-masked ones skipped.

    Families are tried from the most specific to the most heuristic; a later family never claims
    a span that overlaps one already claimed, so ``api_key = "sk-…"`` reports ``openai-key``.
    ``extra_patterns`` are user regexes; their rule id is the regex source. Detection reads
    `_detection_copy`; spans are those of ``text``.
    """
    copy, where = _detection_copy(text)
    found = _find_in(copy, extra_patterns)
    if where is None or not found:
        return found
    spans: list[tuple[str, int, int, int]] = []
    for f in found:
        start, end = where[f.start], where[f.end - 1] + 1
        # the prefix stays visible only when the text spells it as the copy does (no invisible
        # character or look-alike letter inside it); else nothing of the value stays
        keep = f.keep if text[start : start + f.keep] == copy[f.start : f.start + f.keep] else 0
        if not _is_masked(text[start:end], keep):
            spans.append((f.rule, start, end, keep))
    return _with_lines(text, spans)


def _with_lines(text: str, spans: Sequence[tuple[str, int, int, int]]) -> list[Finding]:
    """Findings for sorted `spans`, each with its line number, counted in one pass over `text`
    (a count from the start for each finding was quadratic on a text full of them)."""
    out: list[Finding] = []
    line, pos = 1, 0
    for rule, start, end, keep in spans:
        line += text.count("\n", pos, start)
        pos = start
        out.append(Finding(rule, start, end, line, keep))
    return out


def _find_in(text: str, extra_patterns: Sequence[str]) -> list[Finding]:
    families: list[Iterator[tuple[str, int, int]] | Iterator[tuple[str, int, int, int]]] = [
        _pem_candidates(text),
        _format_candidates(text),  # vendor token formats (secrets/formats.py): (rule, start, end, keep)
        _user_candidates(text, extra_patterns),
        _ds_candidates(text, generic=False),
        _web_candidates(text),
        _assignment_candidates(text),
        _ds_candidates(text, generic=True),
        _high_entropy_candidates(text),
    ]
    # Claimed spans, disjoint and kept sorted, so a new one is checked against its two
    # neighbours only (a scan of every claimed span was quadratic on a text full of findings).
    starts: list[int] = []
    taken: list[tuple[int, int, str, int]] = []
    for family in families:
        for rule, start, end, *kept in family:
            keep = kept[0] if kept else 0
            if end - start < _MIN_SECRET_LEN or _is_masked(text[start:end], keep):
                continue
            i = bisect.bisect_right(starts, start)
            if (i > 0 and taken[i - 1][1] > start) or (i < len(taken) and taken[i][0] < end):
                continue
            starts.insert(i, start)
            taken.insert(i, (start, end, rule, keep))
    for rule, start, end, keep in _echoes(text, taken):
        i = bisect.bisect_right(starts, start)
        if (i > 0 and taken[i - 1][1] > start) or (i < len(taken) and taken[i][0] < end):
            continue
        starts.insert(i, start)
        taken.insert(i, (start, end, rule, keep))
    return _with_lines(text, [(rule, s, e, keep) for s, e, rule, keep in taken])


_ECHO_MIN = 8  # a found value this long is masked wherever else it occurs in the text
_ECHO_SHORT = 6  # 6-7 characters: only a copy that stands as a whole word (`_echo_short`)
_ECHO_ALTERNATION = 64  # up to this many values: one RE2 alternation; more: `_copies` (linear)
# and up to this many characters in all: a longer alternation of literals outgrows RE2's DFA memory
# and its search falls back to one that costs the text's length times the pattern's (a literal of
# 16,384 characters: 0.64 s in 128 KB of text, 2.7 s in 512 KB; 4,096: 0.01 s in either)
_ECHO_ALTERNATION_CHARS = 4096
# A found value longer than this is not looked for elsewhere: a copy search is for a value a
# person repeats (a token, a password, a line), and the values this long are a block that its own
# rule finds at each place (a private key from its BEGIN line, a truncated one running to the end
# of the text). Searching for such a value as a literal made masking quadratic: a file of 16,000
# `-----BEGIN RSA PRIVATE KEY-----` lines took `list` 105 s (an attack on branch int2).
_ECHO_MAX = 1024


_WORD_NUMBER = _lazy(r"[A-Za-z]+[-_.]?[0-9]+|[0-9]+[-_.]?[A-Za-z]+|[vV]?[0-9]+(?:\.[0-9A-Za-z]+)+")


def _echo_short(value: str) -> bool:
    """A found value of 6-7 characters (a short password) worth looking for elsewhere when it
    looks generated: a digit with both cases (``Qw3rt9``) or with a symbol (``Xk9#mq2``,
    ``t0p-s3c``). Never letters or digits only (``hunter``, ``123456``), a word and a number
    (``python3``, ``node-18``, ``Python3``) or a version (``v1.2.3``): words and numbers prose
    repeats."""
    if any(c.isspace() for c in value) or not any(c.isdigit() for c in value) or _WORD_NUMBER.fullmatch(value):
        return False
    letters = [c for c in value if c.isalpha()]
    symbol = any(not c.isalnum() for c in value)
    return bool(letters) and (symbol or (any(c.isupper() for c in letters) and any(c.islower() for c in letters)))


def _whole_word(text: str, start: int, end: int) -> bool:
    """No letter or digit touches ``text[start:end]`` on either side."""
    return not (start > 0 and text[start - 1].isalnum()) and not (end < len(text) and text[end].isalnum())


def _echoes(text: str, taken: Sequence[tuple[int, int, str, int]]) -> Iterator[tuple[str, int, int, int]]:
    """Every other place of each found value of 8 characters or more, under the rule that found
    it: a token assigned once and pasted again into a command, a password repeated in a comment,
    ``token = 'X' | 'X'``. Most families find a value by what surrounds it, which its copies do
    not have. A copy inside a longer word is masked too (the longer word may be the secret with
    a suffix), so a value of letters only is not copied when it could be a word (lower case, or
    under 16 letters): the password "postgres" of ``postgres://postgres:postgres@`` leaves the
    scheme and a service of that name alone. A value of 6-7 characters (a short password) is
    copied only when it holds letters and a digit or a symbol (`_echo_short`) and only where the
    copy stands as a whole word (`_whole_word`: "Qw3rt9" again, not inside "xQw3rt9y"). Copies
    are found left to right, the longest value
    where several start at one place, none overlapping. Linear in the text and the values: a few
    values are one RE2 alternation, longest first; beyond `_ECHO_ALTERNATION` that program
    outgrew RE2's DFA memory and its search grew with the number of values (10,000 passwords:
    17 s, issue 31 F2), so many values are found by `_copies` instead."""
    values: dict[str, tuple[str, int]] = {}
    for start, end, rule, keep in taken:
        value = text[start:end]
        if _echo_worthy(value):
            values.setdefault(text[start:end], (rule, keep))
    yield from _find_copies(text, values)


def _echo_worthy(value: str) -> bool:
    """A found value whose other places are masked too (`_echoes`): never one over `_ECHO_MAX`."""
    n = len(value)
    if n > _ECHO_MAX:
        return False
    if n >= _ECHO_MIN:
        return not (value.isalpha() and (value.islower() or n < 16))
    return n >= _ECHO_SHORT and _echo_short(value)


def _find_copies(text: str, values: dict[str, tuple[str, int]]) -> Iterator[tuple[str, int, int, int]]:
    """Every place of each of `values` in `text` (a short one only as a whole word), as
    (rule, start, end, keep): `_echoes`' search."""
    if values:
        yield from _CopyFinder(values).find(text)


class _CopyFinder:
    """The search of `_find_copies`, built once for a set of values and run over any number of
    texts: a few values are one RE2 alternation, longest first; beyond `_ECHO_ALTERNATION`, the
    automaton of `_copies`, or beyond `_ECHO_ALTERNATION_CHARS` characters in all. Building it
    costs time linear in the values' characters, so a caller with many texts (`admission.admit`:
    every frontmatter string) builds it once. Each `find` is linear in its text."""

    def __init__(self, values: dict[str, tuple[str, int]]) -> None:
        self.values = values
        self.rx: Rx | None = None
        self.automaton: _Automaton | None = None
        if len(values) > _ECHO_ALTERNATION or sum(map(len, values)) > _ECHO_ALTERNATION_CHARS:
            self.automaton = _automaton(values)
        elif values:
            import re2

            ordered = sorted(values, key=len, reverse=True)
            self.rx = Rx("|".join(re2.escape(v) for v in ordered), raw=True)

    def find(self, text: str) -> Iterator[tuple[str, int, int, int]]:
        values = self.values
        if self.automaton is not None:
            for s, e in _scan(self.automaton, text):
                if e - s < _ECHO_MIN and not _whole_word(text, s, e):
                    continue
                rule, keep = values[text[s:e]]
                yield rule, s, e, keep
        elif self.rx is not None:
            for m in self.rx.finditer(text):
                if m.end() - m.start() < _ECHO_MIN and not _whole_word(text, m.start(), m.end()):
                    continue
                rule, keep = values[m.group()]
                yield rule, m.start(), m.end(), keep


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def mask_copies(text: str, values: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """`text` with every copy of the secret values found elsewhere masked (value -> rule), and
    the rules of the copies masked: `CopyMask` built for one text."""
    return CopyMask(values).mask(text)


def _looks_generated(value: str) -> bool:
    """A found value worth masking in a memory's other fields (`CopyMask`): a letter and a digit,
    or a symbol; never letters only nor a word and a number. A letters-only value under a
    password key is masked where it was found, but it is often a product's or a service's name
    (``PostgresSuperuser``, ``TerraformCloud``) that paths and tags repeat (``roles/…sql``):
    copying it there would mask them too (issue 31, the attack's fourth round)."""
    if value.isalpha() or _WORD_NUMBER.fullmatch(value):
        return False
    letter = any(c.isalpha() for c in value)
    return (letter and any(c.isdigit() for c in value)) or any(not c.isalnum() and not c.isspace() for c in value)


class CopyMask:
    """Masks every copy of the secret values found elsewhere (value -> rule) in the texts it is
    given: a password found in a memory's body and repeated in its aliases, paths or tags
    (`secrets.admission.admit`). The values worth it are those `_echoes` copies within one text
    (`_echo_worthy`); the search ignores ASCII case, as tags are stored in lower case. The search
    is built once, here (linear in the values' characters), and each `mask` is linear in its
    text, so masking F fields against V values costs O(F + V), not O(F x V)."""

    def __init__(self, values: dict[str, str]) -> None:
        wanted: dict[str, tuple[str, int]] = {}
        for value, rule in values.items():
            # a value found with words after it (a `key=value now` line is masked to its end): each
            # generated-looking word of it is a copy worth finding too
            for piece in (value, *(value.split() if any(c.isspace() for c in value) else ())):
                if _echo_worthy(piece) and _looks_generated(piece) and not _is_masked(piece):
                    wanted.setdefault(piece.translate(_ASCII_LOWER), (rule, 0))
        self.finder = _CopyFinder(wanted) if wanted else None

    def mask(self, text: str) -> tuple[str, tuple[str, ...]]:
        """`text` with the copies masked, and the rules of the copies masked."""
        if self.finder is None or not text:
            return text, ()
        low = text.translate(_ASCII_LOWER)  # one character for one: the offsets hold
        found = [Finding(rule, s, e, 0, keep) for rule, s, e, keep in self.finder.find(low)]
        if not found:
            return text, ()
        return _apply(text, found), tuple(f.rule for f in found)


_Automaton = tuple[list[dict[str, int]], list[int], list[int]]  # goto, fail, longest


def _copies(text: str, values: Iterable[str]) -> Iterator[tuple[int, int]]:
    """The spans of `values` in `text`, as a leftmost-first alternation of them longest first
    finds them: left to right, at each place the longest value that starts there, the next
    search after its end (`_automaton`, `_scan`)."""
    yield from _scan(_automaton(values), text)


def _automaton(values: Iterable[str]) -> _Automaton:
    """An Aho-Corasick automaton of the reversed values: run over the reversed text (`_scan`) it
    gives, at each place, the longest value that starts there in one step, so the cost is
    linear in the text plus the values' characters, however many values there are."""
    goto: list[dict[str, int]] = [{}]
    depth = [0]
    ends = [False]
    for value in values:
        node = 0
        for c in reversed(value):
            nxt = goto[node].get(c)
            if nxt is None:
                nxt = len(goto)
                goto[node][c] = nxt
                goto.append({})
                depth.append(depth[node] + 1)
                ends.append(False)
            node = nxt
        ends[node] = True
    fail = [0] * len(goto)
    longest = [0] * len(goto)  # the longest value that is a suffix of the node's string
    queue = list(goto[0].values())
    for node in queue:  # breadth first: a node's fail link is shallower, so already set
        longest[node] = depth[node] if ends[node] else longest[fail[node]]
        for c, child in goto[node].items():
            f = fail[node]
            while f and c not in goto[f]:
                f = fail[f]
            fail[child] = goto[f].get(c, 0)
            queue.append(child)
    return goto, fail, longest


def _scan(automaton: _Automaton, text: str) -> Iterator[tuple[int, int]]:
    """The spans `_copies` describes, by `automaton` (`_automaton`), linear in `text`."""
    goto, fail, longest = automaton
    best = [0] * len(text)  # best[i]: the longest value that starts at i
    node = 0
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        while node and c not in goto[node]:
            node = fail[node]
        node = goto[node].get(c, 0)
        best[i] = longest[node]
    i, n = 0, len(text)
    while i < n:
        if best[i]:
            yield i, i + best[i]
            i += best[i]
        else:
            i += 1


def _apply(text: str, findings: Sequence[Finding]) -> str:
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        out.append(mask(text[f.start : f.end], f.keep))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


# What the detectors read in place of a ``[REDACTED]`` (a `<private>` span replaced): a token of
# its length, so a value that goes on after the span (``password: Ab3<private>x</private>.Qw9…``,
# ``postgres://admin:Sup3r<private>S</private>.99x@db``) is still read as one value.
_HOLE = "Rz9Rz9Rz9R"  # as long as REDACTED


def _find_around_holes(text: str, extra_patterns: Sequence[str]) -> list[Finding]:
    """`find_secrets` on `text` with each ``[REDACTED]`` read as a token of its length (`_HOLE`):
    a finding that reaches into one takes the whole of it, a finding inside one is dropped (it
    is the stand-in itself). Offsets hold: the stand-in is as long as ``[REDACTED]``."""
    if REDACTED not in text:
        return find_secrets(text, extra_patterns)
    holes: list[tuple[int, int]] = []
    at = text.find(REDACTED)
    while at >= 0:
        holes.append((at, at + len(REDACTED)))
        at = text.find(REDACTED, at + len(REDACTED))
    out: list[Finding] = []
    for f in find_secrets(text.replace(REDACTED, _HOLE), extra_patterns):
        start, end = f.start, f.end
        inside = False
        for hs, he in holes:  # few holes: one per <private> span
            if hs <= start and end <= he:
                inside = True
                break
            if start < he and hs < end:
                start, end = min(start, hs), max(end, he)
        if inside:
            continue
        out.append(f if (start, end) == (f.start, f.end) else Finding(f.rule, start, end, f.line, 0))
    out.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in out:  # a hole taken by two findings: one span, no overlap for `_apply`
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.rule, last.start, f.end, last.line, 0)
            continue
        merged.append(f)
    return merged


def redact(text: str, extra_patterns: Sequence[str] = ()) -> Redaction:
    """Strip ``<private>`` spans, then mask every secret in place (never refuse the write).

    Masking repeats until nothing is found, so the result is a fixpoint: redacting it again
    changes nothing and reports nothing. Each round masks at least one more character, so the
    loop ends.
    """
    stripped, spans = strip_private(text)
    found: list[Finding] = []
    values: list[tuple[str, str]] = []
    current = stripped
    for _ in range(64):
        round_findings = _find_around_holes(current, extra_patterns)
        if not round_findings:
            break
        values.extend((current[f.start + f.keep : f.end], f.rule) for f in round_findings)
        current = _apply(current, round_findings)
        found.extend(round_findings)
    found.sort(key=lambda f: (f.start, f.end))
    return Redaction(current, tuple(f.rule for f in found), spans, tuple(values))


def scan_text(text: str, extra_patterns: Sequence[str] = ()) -> list[Finding]:
    """Findings in text as stored (for ``scan`` and the pre-commit hook); no ``<private>`` pass.

    Values already masked by :func:`redact` are never reported, so stored memories scan clean.
    """
    return find_secrets(text, extra_patterns)

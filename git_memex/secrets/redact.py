"""Redaction of memory text on every write path (decision D14, docs/decisions.md).

Two steps, in this order:

1. ``<private>…</private>`` spans become ``[REDACTED]``: the author opted out explicitly, so the
   span is gone before any detector (or index) sees it.
2. Secrets are masked in place, never refused: the first 4 characters of the secret value are
   kept, every other character becomes ``x``, so the note still says *which* credential it was
   about while the credential itself is unusable. Line breaks inside a masked span (PEM blocks)
   are kept so that line numbers and line-based git merges still work.

Detection = our own patterns for modern token formats (detect-secrets misses several of them in
markdown) + a hand-picked set of detect-secrets plugins for the rest + a conservative
high-entropy heuristic for ``name = value`` assignments. detect-secrets' own entropy plugins are not
used: they flag English prose. detect-secrets (and through it ``requests``: ~100 ms together) is imported
only when a line could match one of its plugins, so a plain note never pays for it.

Already-masked values (``ghp_xxxx…``, ``huntxxx``) are never reported again, and :func:`redact`
iterates to a fixpoint, so ``redact(redact(t).text) == redact(t)`` with nothing reported the
second time.

The detectors live one family per module, tried by :func:`find_secrets` in this order:
`tokens` (private-key blocks, vendor token formats), the team's own patterns
(`memex.redactPattern`, docs/team-patterns.md), `dsplugins` (detect-secrets' format plugins),
`web` (URL, command-line and header credentials), `assignments` (secret-named keys),
`dsplugins` again (its name-driven plugins), `entropy`. `masking` holds what they share,
`dscache` the detect-secrets pattern cache. Each module imports nothing heavy at start-up.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence

from git_memex.core.record import record
from git_memex.secrets.assignments import _assignment_candidates
from git_memex.secrets.dsplugins import _ds_candidates
from git_memex.secrets.entropy import _high_entropy_candidates, find_high_entropy_secret
from git_memex.secrets.formats import find as _format_candidates
from git_memex.secrets.masking import KEEP, REDACTED, _is_masked, _lazy, mask
from git_memex.secrets.tokens import _pem_candidates, _provider_candidates
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

_MIN_SECRET_LEN = KEEP + 1  # shorter values cannot be masked at all, so are not reported


@record(frozen=True)
class Finding:
    """One secret in a text; ``start``/``end`` delimit the value that gets masked."""

    rule: str
    start: int
    end: int
    line: int
    keep: int = KEEP  # leading characters of the value left visible by the mask


@record(frozen=True)
class Redaction:
    """Result of :func:`redact`: the safe text and what was done to it."""

    text: str
    masked: tuple[str, ...]
    private_spans: int


# --------------------------------------------------------------------------- <private>

_PRIVATE_TAG = _lazy(r"<\s*(/)?\s*private(?:\s[^<>]*)?>", re.IGNORECASE)


def strip_private(text: str) -> tuple[str, int]:
    """Replace each outermost ``<private>`` span with ``[REDACTED]``; return text and count.

    Tags nest (so an inner ``</private>`` cannot leak the rest of an outer span), an unclosed
    tag redacts to the end of the text (the author meant the rest to be private), and a stray
    closing tag is left alone.
    """
    out: list[str] = []
    pos = 0
    depth = 0
    spans = 0
    for m in _PRIVATE_TAG.finditer(text):
        closing = m.group(1) is not None
        if not closing:
            if depth == 0:
                out.append(text[pos : m.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                out.append(REDACTED)
                spans += 1
                pos = m.end()
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


# Removed from the copy detection reads: zero-width characters, bidi controls, soft hyphen, word
# joiner, BOM. They are invisible, so "ghp_\u200bAbc…" reads as a token to a human and must to us.
_INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u3164\ufeff\uffa0"
)


# Cyrillic and Greek letters drawn like Latin ones ("pаssword" with a Cyrillic "а"). Folded only
# inside a word that also holds a Latin letter, so Russian "пароль" or Greek "κωδικός" stay what
# they are, while a label spelt with a look-alike reads as the Latin label it imitates.
_CONFUSABLES = dict(
    zip(
        "аеорсухіјѕԁԝһӏԛАВЕКМНОРСТХІЈЅԜҮαοριυνκτΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aeopcyxijsdwhlqABEKMHOPCTXIJSWYaopiuvktABEZHIKMNOPTYX",
        strict=True,
    )
)
_WORD = _lazy(r"\w+")


def _fold_confusables(copy: str) -> str:
    """`copy` with each look-alike letter of a mixed-script word replaced by its Latin letter,
    one character for one (so the offsets of the detection copy still hold)."""
    if _CONFUSABLES.keys().isdisjoint(copy):
        return copy
    out: list[str] = []
    pos = 0
    for m in _WORD.finditer(copy):
        word = m.group()
        if _CONFUSABLES.keys().isdisjoint(word) or not any("a" <= c.lower() <= "z" for c in word):
            continue
        out.append(copy[pos : m.start()])
        out.append("".join(_CONFUSABLES.get(c, c) for c in word))
        pos = m.end()
    out.append(copy[pos:])
    return "".join(out)


def _detection_copy(text: str) -> tuple[str, list[int] | None]:
    """The text detection reads: NFKC-normalised (full-width letters, NBSP and U+3000 become
    ASCII), invisible characters removed, look-alike letters of a mixed-script word folded to
    Latin (`_fold_confusables`); and, when that changed anything, the offset in
    ``text`` of each of its characters (plus one past the end). ASCII text is its own copy.

    Normalised one character at a time, so every character of the copy comes from exactly one
    character of ``text`` and a finding maps back to the original span, which is what gets
    masked: the stored text keeps its own characters, only the secret's become ``x``.
    """
    if text.isascii():
        return text, None
    import unicodedata

    out: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        if c in _INVISIBLE:
            continue
        n = c if c.isascii() else unicodedata.normalize("NFKC", c)
        out.append(n)
        where.extend([i] * len(n))
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
        if not _is_masked(text[start:end]):
            spans.append((f.rule, start, end, f.keep))
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
        _provider_candidates(text),
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
            if end - start < _MIN_SECRET_LEN or _is_masked(text[start:end]):
                continue
            i = bisect.bisect_right(starts, start)
            if (i > 0 and taken[i - 1][1] > start) or (i < len(taken) and taken[i][0] < end):
                continue
            starts.insert(i, start)
            taken.insert(i, (start, end, rule, kept[0] if kept else KEEP))
    return _with_lines(text, [(rule, s, e, keep) for s, e, rule, keep in taken])


def _apply(text: str, findings: Sequence[Finding]) -> str:
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        out.append(mask(text[f.start : f.end], f.keep))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def redact(text: str, extra_patterns: Sequence[str] = ()) -> Redaction:
    """Strip ``<private>`` spans, then mask every secret in place (never refuse the write).

    Masking repeats until nothing is found, so the result is a fixpoint: redacting it again
    changes nothing and reports nothing. Each round masks at least one more character, so the
    loop ends.
    """
    stripped, spans = strip_private(text)
    found: list[Finding] = []
    current = stripped
    for _ in range(64):
        round_findings = find_secrets(current, extra_patterns)
        if not round_findings:
            break
        current = _apply(current, round_findings)
        found.extend(round_findings)
    found.sort(key=lambda f: (f.start, f.end))
    return Redaction(current, tuple(f.rule for f in found), spans)


def scan_text(text: str, extra_patterns: Sequence[str] = ()) -> list[Finding]:
    """Findings in text as stored (for ``scan`` and the pre-commit hook); no ``<private>`` pass.

    Values already masked by :func:`redact` are never reported, so stored memories scan clean.
    """
    return find_secrets(text, extra_patterns)

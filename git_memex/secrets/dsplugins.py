"""Detector family 5: a hand-picked set of detect-secrets plugins, behind a cheap pre-filter."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from git_memex.secrets.assignments import _WORDY, _name_kind, _plausible_value
from git_memex.secrets.dscache import cache_place, read_cache, write_cache
from git_memex.secrets.masking import _lazy
from git_memex.secrets.rx import PatternError, Rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A cheap superset test for the plugins below: only lines that match it are handed to them, and
# detect-secrets is imported only once some line does (importing it costs ~100 ms).
# KeywordDetector's deny-list words; its quotes-required forms (the only ones used) need a quote.
_KEYWORD_HINT = _lazy(
    r"(?i:pass(?:wd|word)|(?:db|database|key)_?pass|pwd|secret|contrase"
    r"|(?:api|auth|service|account|db|database|priv|private|client)_?key)"
)
_DS_HINT = _lazy(
    # IBM Cloud IAM, IBM COS HMAC, SoftLayer, Cloudant: a keyword assigned a long value, or a URL
    r"(?i:key|pwd|pw|pass|token)[\"'\]]{0,2} *(?:=|:|:=|=>|::)? *[\"']?[\w-]{24}"
    r"|(?i:cloudant\.com|api\.softlayer\.com)"
    # basic auth: the plugin's own pattern; its classes stop at ':', '/' and '@', so one pass
    # (the old `://[^\s]*:[^\s]*@` rescanned the line from every colon: ~40 s on 20k chars)
    r"|://[^:/?#\[\]@!$&'()*+,;=\s]+:[^:/?#\[\]@!$&'()*+,;=\s]+@"
)


@functools.lru_cache(maxsize=512)  # find_secrets asks twice per line (format and keyword plugins)
def _ds_hint(line: str) -> bool:
    """Could any chosen detect-secrets plugin match ``line``? (Never False when one would.)"""
    if _DS_HINT.search(line):
        return True
    return any(q in line for q in "\"'`") and _KEYWORD_HINT.search(line) is not None


_DS_REGEX_PLUGINS = (
    ("basic_auth", "BasicAuthDetector"),
    ("cloudant", "CloudantDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("softlayer", "SoftlayerDetector"),
)
# Not used, on purpose: the entropy plugins (flag prose), IPPublicDetector (not a secret), and the
# plugins whose formats `secrets/formats.py` holds with their documented lengths, boundaries and
# checks (AWS, GitHub, GitLab, npm, OpenAI, Slack, Stripe, JWT, private keys, Artifactory, Azure
# storage keys, Discord, Mailchimp, PyPI, SendGrid, Square, Telegram, Twilio): their looser
# patterns only ever added what the table rejects ("GR1348941" + digits, an Artifactory "AKC…" of
# the wrong length).

_ds_cache: list[tuple[str, DsRegex, int | None]] | None = None


class DsRegex:
    """One detect-secrets pattern, run by RE2 in the form `re2_form` gives it; ``pattern`` and
    ``flags`` are the library's. A pattern `re2_form` cannot rewrite (a later library version)
    runs on Python's ``re`` one line at a time, in windows of at most `userregex.WINDOW`
    characters, as team patterns do: its cost is bounded by the window, not by the text."""

    __slots__ = ("_closing", "_fallback", "_rx", "flags", "pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags = pattern, flags
        form = re2_form(pattern)
        self._rx: Rx | None = None
        self._fallback: re.Pattern[str] | None = None
        self._closing: tuple[tuple[int, str], ...] = ()
        if form is not None:
            source, before, after, self._closing = form
            rx = Rx(source, flags, before=before, after=after)
            try:
                self._rx = rx.compile()
            except PatternError:
                self._rx = None
        if self._rx is None:
            self._fallback = re.compile(pattern, flags)

    @property
    def groups(self) -> int:
        if self._rx is not None:
            return self._rx.groups  # a closing group stands where the library's "(\\N)" group stood
        assert self._fallback is not None
        return self._fallback.groups

    def finditer(self, line: str) -> Iterator[Any]:
        if self._rx is not None:
            for m in self._rx.finditer(line):
                if all(m.group(opening) == m.group(name) for opening, name in self._closing):
                    yield m
            return
        from git_memex.core.userregex import windows

        assert self._fallback is not None
        seen: set[tuple[int, int]] = set()
        for offset, piece in windows(line):
            for w in self._fallback.finditer(piece):
                if (offset + w.start(), offset + w.end()) not in seen:
                    seen.add((offset + w.start(), offset + w.end()))
                    yield _Shifted(w, offset)


class _Shifted:
    """A match of a window, with offsets in the whole line."""

    __slots__ = ("_m", "_offset")

    def __init__(self, m: re.Match[str], offset: int) -> None:
        self._m, self._offset = m, offset

    def group(self, g: int | str = 0) -> str | None:
        return self._m.group(g)

    def span(self, g: int | str = 0) -> tuple[int, int]:
        s, e = self._m.span(g)
        return (s + self._offset, e + self._offset) if s >= 0 else (s, e)

    def start(self, g: int | str = 0) -> int:
        return self.span(g)[0]

    def end(self, g: int | str = 0) -> int:
        return self.span(g)[1]


# The library's look-arounds and back-references, said the RE2 way (`re2_form`).
_LEADING_BOUNDARY = "(?:(?<=\\W)|(?<=^))"  # preceded by a non-word character, or first
_TRAILING_BOUNDARY = "(?!\\w)"  # not followed by a word character
# "(?=[^\v'\"]*)(?=\w+)" before a value: the first look-ahead always holds, the second asks the
# value to start with a word character (a value of one character is that character).
_WORD_FIRST = ("((?=[^\\v\\'\\\"]*)(?=\\w+)[^\\v\\'\\\"]*[^\\v,\\'\\\"`])",
               "(\\w[^\\v\\'\\\"]*[^\\v,\\'\\\"`]|\\w)")
# (These read the library's pattern sources, never memory text: Python's re, used in place.)
_BACKREF = r"\(\\(\d)\)"
_LONG_REPEAT = r"\{(\d+),(\d{4,})\}"
_FIXED_RUN_TAIL = r"\((\[[^\]\[]+\])\{(\d+)\}\(\?!\1\)\)\(\?:\"\|\\'\|\)\Z"


def re2_form(source: str) -> tuple[str, str | None, str | None, tuple[tuple[int, str], ...]] | None:
    """(pattern, before, after, closing groups) for `rx.Rx`, or None when `source` holds a
    construct this does not know. A back-reference ``(\\N)`` to an opening quote becomes a group
    ``_cN`` that may be any quote, and `DsRegex.finditer` keeps a match only when it is the
    same quote; a repeat over RE2's limit of 1,000 loses its upper bound."""
    before = after = None
    if source.startswith(_LEADING_BOUNDARY):
        source, before = source[len(_LEADING_BOUNDARY) :], r"[^\w]"
    if source.endswith(_TRAILING_BOUNDARY):
        source, after = source[: -len(_TRAILING_BOUNDARY)], r"[^\w]"
    source = source.replace(*_WORD_FIRST)
    # "([X]{n}(?![X]))(?:\"|\'|)" at the end (IBM's keys): the value not followed by another X;
    # the quote after it is optional, so the character read after the value may stand for it
    tail = re.search(_FIXED_RUN_TAIL, source)
    if tail is not None:
        source = (source[: tail.start()] + f"({tail.group(1)}{{{tail.group(2)}}})"
                  + rf"(?:[^{tail.group(1)[1:-1]}]|\z)")
    closing: list[tuple[int, str]] = []

    def closing_group(m: re.Match[str]) -> str:
        closing.append((int(m.group(1)), f"_c{len(closing)}"))
        return f"(?P<_c{len(closing) - 1}>[\\'\"`])"

    source = re.sub(_BACKREF, closing_group, source)
    source = re.sub(_LONG_REPEAT, lambda m: "{" + m.group(1) + ",}" if int(m.group(2)) > 1000 else m.group(0), source)
    if any(bad in source for bad in ("(?=", "(?!", "(?<", "(?P=")) or re.search(r"\\\d", source):
        return None
    return source, before, after, tuple(closing)


def _ds_patterns() -> list[tuple[str, DsRegex, int | None]]:
    """(rule id, regex, value group) for the chosen plugins.

    Importing detect-secrets costs ~100 ms (its keyword plugin: median of 5
    `python -X importtime` runs) (its plugin base imports `requests`, for the network
    verification we never use), paid by a hook or a search whenever a line could match. The
    plugins' patterns are therefore kept in the data root (`cache/detect-secrets-patterns.json`),
    keyed by the installed plugin files' sizes and times: any upgrade rebuilds it from the
    library, and an unreadable cache, or one holding a pattern that does not compile, means the
    library is imported as before."""
    global _ds_cache
    if _ds_cache is None:
        key, cache = cache_place([m for m, _c in _DS_REGEX_PLUGINS])
        specs = read_cache(cache, key) if cache is not None else None
        built = _built(specs) if specs is not None else None
        if built is None:
            specs = _ds_specs_from_library()
            if cache is not None:
                write_cache(cache, key, specs)
            built = _built(specs)
            if built is None:
                raise PatternError("a detect-secrets pattern compiles neither on RE2 nor on re")
        _ds_cache = built
    return _ds_cache


def _built(specs: list[tuple[str, str, int, int | None]]) -> list[tuple[str, DsRegex, int | None]] | None:
    try:
        return [(rule, DsRegex(source, flags), group) for rule, source, flags, group in specs]
    except (re.error, PatternError, ValueError, OverflowError, RecursionError):
        return None


def _bounded(source: str) -> str:
    """KeywordDetector's `(password|…)\\w*` rescans the rest of a long word from every keyword in
    it (quadratic: a line of 20k characters of `passwordpassword…` took ~3 s). A key name has no
    more than 64 word characters after its keyword, so the run is bounded there."""
    return source.replace(")\\w*", ")\\w{0,64}")


def _ds_specs_from_library() -> list[tuple[str, str, int, int | None]]:
    import importlib

    specs: list[tuple[str, str, int, int | None]] = []
    for module, cls_name in _DS_REGEX_PLUGINS:
        cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls_name)
        for regex in cls.denylist:
            specs.append((f"detect-secrets:{cls_name}", _bounded(regex.pattern), regex.flags, None))
    from detect_secrets.plugins import keyword

    # Only its quotes-required forms: the unquoted config forms are what our own assignment
    # rule does with more guards ("if password == confirm_password:" is code, not a secret).
    for regex, group in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items():
        specs.append(("detect-secrets:KeywordDetector", _bounded(regex.pattern), regex.flags, group))
    return specs



_DS_GENERIC = ("KeywordDetector", "BasicAuthDetector")
_DS_TRIM = " \t\r\n=:\"'"


def _glued(body: str, outside: int, inside: int) -> bool:
    """True when the characters at ``outside`` and ``inside`` are both letters or both digits."""
    if not 0 <= outside < len(body) or not 0 <= inside < len(body):
        return False
    a, b = body[outside], body[inside]
    return (a.isalpha() and b.isalpha()) or (a.isdigit() and b.isdigit())


_KEYWORD_NAME = _lazy(r"[^\W\d][\w.-]*", re.UNICODE)


def _ds_candidates(
    text: str, generic: bool | None = None, use_hint: bool = True
) -> Iterator[tuple[str, int, int]]:
    """Findings of the chosen detect-secrets plugins, line by line (their regexes assume lines).

    ``generic`` selects the name-driven plugins (KeywordDetector, BasicAuthDetector: True) or the
    format-specific ones (False); None gives both. ``use_hint=False`` skips the cheap pre-filter;
    the tests use it to prove the filter loses nothing.
    """
    lines = text.splitlines(keepends=True)
    offset = 0
    for line in lines:
        base = offset
        offset += len(line)
        body = line.rstrip("\r\n")
        if use_hint and not _ds_hint(body):
            continue
        for rule, regex, group in _ds_patterns():
            if generic is not None and generic != rule.endswith(_DS_GENERIC):
                continue
            for m in regex.finditer(body):
                if group is not None:  # KeywordDetector: only with our name/value guards
                    word_start = m.start()
                    while word_start > 0 and (
                        body[word_start - 1].isalnum() or body[word_start - 1] == "_"
                    ):
                        word_start -= 1
                    if word_start > 0 and body[word_start - 1] == ":":
                        continue  # "AWS::MSK::BatchScramSecret": a type name, not a key name
                    start, end = m.span(group)
                    value = body[start:end]
                    head = body[m.start() : start] if m.start() < start else body[end : m.end()]
                    kind = next(
                        (k for n in _KEYWORD_NAME.findall(head) if (k := _name_kind(n))), None
                    )
                    if kind is None or not _plausible_value(value, kind):
                        continue
                elif regex.groups:
                    idx = next((i for i in range(1, regex.groups + 1) if m.group(i)), None)
                    if idx is None:
                        continue
                    start, end = m.span(idx)
                    value = body[start:end]
                    if rule.endswith("BasicAuthDetector"):
                        if not _plausible_value(value, "password"):
                            continue  # same placeholder rules as our url-credentials
                    elif _WORDY.fullmatch(value) and ("-" in value or "_" in value):
                        continue  # a kebab/snake slug after "key", not a credential
                else:
                    start, end = m.span()
                    raw = body[start:end]
                    if raw.startswith("AccountKey="):
                        start += len("AccountKey=")
                    lead = len(raw) - len(raw.lstrip(_DS_TRIM))
                    start = max(start, m.start() + lead)
                    end = m.start() + len(raw.rstrip(_DS_TRIM))
                    # Their patterns have no word boundaries: refuse hits inside longer tokens.
                    if _glued(body, start - 1, start) or _glued(body, end, end - 1):
                        continue
                value = body[start:end]
                if value.isalpha() and value.isupper():
                    continue  # an acronym run such as "APACHEKAFKA", not a credential
                yield rule, base + start, base + end


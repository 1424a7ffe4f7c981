"""The one output guard for terminal text: what the CLI prints can never drive the terminal or hide.

Invariant: every character written to the guarded stdout or stderr that a terminal would act on
or that a reader cannot see is written as its ``\\uXXXX`` escape instead: every character of
Unicode categories Cc, Cf, Co, Cs, Zl and Zp but newline and tab. That is the C0 controls, DEL
and the C1 controls (ESC/CSI/OSC sequences such as OSC 8 links, carriage return, backspace); the
format characters (bidi embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069 that
reorder what is shown, zero-width U+200B, word joiner U+2060, BOM U+FEFF, soft hyphen, the tag
characters U+E0000-U+E007F that a person cannot see and a model reads); private use (U+E000,
U+F0000); surrogates; the line and paragraph separators U+2028 and U+2029. A character past
U+FFFF is written as its UTF-16 surrogate pair, two escapes (``\\udb40\\udc41`` for U+E0041),
the spelling JSON uses: so `--json` output, which goes through the same guard, stays JSON with
the same values when parsed. One exception keeps scripts and emoji whole: the zero-width
non-joiner and joiner (U+200C, U+200D) between two visible non-ASCII characters (a Persian
word's ZWNJ between two letters, an Indic conjunct's ZWJ after a virama, the emoji family
U+1F468 U+200D U+1F469 U+200D U+1F467) are written as they are; anywhere else (inside an
ASCII word, at the edge of a write, next to another invisible character) they are escaped.
`neutralise` is the one definition of this character set: being the guard of stdout and stderr,
it covers every line a command prints (no command escapes a text itself); the agents' one-line
labels (`agents.render.squeeze`), which do not pass through it, and a differing value as audit
shows it (`review.contradictions.shown_value`) call it or `shown_at`.
Bytes written to ``.buffer`` (the MCP server's JSON-RPC, binary output) are not touched.
The memory files themselves keep what was written; only the display is neutralised.

Cost: ASCII text (every hook's usual output) is checked by `str.isascii` and one regex, as before
the wider set; `unicodedata` is imported and asked only for the non-ASCII characters of a text
that has some, and not for its letters and digits (`_WIDE`). No table is built at start-up.
`python -m bench.output_guard` measures each kind of text against the narrow guard.

Second invariant: a memory file name whose id is secret-shaped (`ghp_….md`: the id rule lets a
token through, and a teammate can commit one with --no-verify) is written masked
(`core.files.secret_id`, `mask_id`). The reader quarantines such a file, so the index, search,
show and agents never hold it; this is the net for every line that names the file by its path
(doctor, audit, scan, pull, the hooks). A ULID name never reaches the detector.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""The characters escaped in an ASCII text, the fast path (its ASCII part matters there: C0 but
newline and tab, and DEL)."""
_WIDE = re.compile(r"[^\w\t\n\x20-\x7e]+")
"""The candidates in a non-ASCII text: runs of every character but printable ASCII, tab, newline
and the word characters (`\\w`: letters and digits of every script, `str.isalnum`, which no
character of the guarded categories is; tests/commands/test_output_guard.py checks that over
every code point), so the letters of a CJK, Cyrillic or Persian text are skipped by the regex."""
HIDDEN = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))
"""The Unicode categories the guard writes escaped (module docstring)."""
_JOINERS = "\u200c\u200d"


def spell(ch: str) -> str:
    """`ch` as its escape: ``\\uXXXX``, past U+FFFF the UTF-16 surrogate pair as two (as JSON)."""
    n = ord(ch)
    if n > 0xFFFF:
        n -= 0x10000
        return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"
    return f"\\u{n:04x}"


def _escape(m: re.Match[str]) -> str:
    return spell(m.group())


def _drawn(ch: str) -> bool:
    """Whether `ch` is a visible non-ASCII character (a joiner next to it on both sides stays)."""
    import unicodedata

    return ch > "\x7f" and not ch.isspace() and unicodedata.category(ch) not in HIDDEN


def shown_at(text: str, i: int) -> str:
    """How the guard writes `text[i]`: the character itself, or its escape (`spell`). A ZWNJ or
    ZWJ stays only between two visible non-ASCII characters of `text`."""
    ch = text[i]
    if " " <= ch < "\x7f" or ch in "\n\t":
        return ch
    if ch > "\x7f":
        import unicodedata

        if unicodedata.category(ch) not in HIDDEN:
            return ch
        if ch in _JOINERS and 0 < i < len(text) - 1 and _drawn(text[i - 1]) and _drawn(text[i + 1]):
            return ch
    return spell(ch)


def _wide(m: re.Match[str]) -> str:
    import unicodedata

    run = m.group()
    if HIDDEN.isdisjoint(map(unicodedata.category, run)):
        return run
    start = m.start()
    return "".join([shown_at(m.string, start + k) for k in range(len(run))])


def _neutralise_wide(text: str) -> str:
    """`neutralise` of a text that is not all ASCII: the categories of its non-ASCII and control
    characters are read in one pass (C-level), and only a text holding a guarded one is rewritten."""
    runs = _WIDE.findall(text)
    if not runs:
        return text
    import unicodedata

    if HIDDEN.isdisjoint(map(unicodedata.category, "".join(runs))):
        return text
    return _WIDE.sub(_wide, text)


_MD_NAME = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{7,63}(?=\.md\b)")


def _masked_name(m: re.Match[str]) -> str:
    from git_memex.core.files import mask_id, secret_id

    name = m.group()
    return mask_id(name) if secret_id(name) else name


def mask_file_names(text: str) -> str:
    """`text` with every memory file name whose id is secret-shaped masked (`x` for the secret)."""
    return _MD_NAME.sub(_masked_name, text) if ".md" in text else text


def neutralise(text: str) -> str:
    """`text` as the guard writes it: every character of the guarded set (module docstring)
    spelled as its visible escape. Linear; ASCII text without controls comes back as is."""
    if text.isascii():
        return _UNSAFE.sub(_escape, text)
    return _neutralise_wide(text)


class GuardedStream:
    """A text stream that neutralises what is written and passes everything else through."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.wrote = False
        """Whether anything was written: `main` prints a `--json` run's error as a JSON document
        only when the command printed none."""

    def write(self, text: str) -> int:
        if text:
            self.wrote = True
        text = mask_file_names(text)
        if text.isascii():  # the hot path: one scan as before the wider set
            self._stream.write(_UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text)
        else:
            self._stream.write(_neutralise_wide(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdio() -> None:
    """Guard sys.stdout and sys.stderr (once) for the rest of the process."""
    if not isinstance(sys.stdout, GuardedStream):
        sys.stdout = GuardedStream(sys.stdout)
    if not isinstance(sys.stderr, GuardedStream):
        sys.stderr = GuardedStream(sys.stderr)

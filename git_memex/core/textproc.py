"""Pure text functions the FTS5 index and search are built on (standard library only): the
tokenizers of both scripts, similarity, the content hash and the token estimate. Turning a query
into an FTS5 expression is `search.query`'s job.

The index (one table per database)::

    CREATE VIRTUAL TABLE memories_fts USING fts5(..., tokenize=<index.schema.FTS_TOKENIZE>)

`unicode61` treats a run of Han characters as one token, so CJK text gets a column of its own
(`cjk`) holding every character and every overlapping bigram of each run; queries search it
with bigrams, which finds a 2-character Chinese word anywhere in a sentence (SQLite 3.40's
trigram tokenizer cannot). Latin query words become prefix terms over all columns. Every term
is a double-quoted FTS5 string, so no user text can produce an FTS5 syntax error.

Import cost matters (hooks and `capture` are short-lived processes): this module imports only
`re` (already loaded by argparse/pathlib/yaml), no `dataclasses`/`typing`, and `hashlib` lazily.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# Han (unified, ext A, ext B-H, compatibility), the iteration/closing marks 々〆〇, Hiragana,
# Katakana (+ phonetic extensions, half-width), Hangul (jamo, compatibility jamo, syllables).
# Only letters: kana punctuation such as ・ and the spacing (han)dakuten are left out because
# unicode61 treats them as separators, and a bigram containing one would not match itself.
_CJK_CLASS = (
    "\u1100-\u11ff"
    "\u3005-\u3007"
    "\u3041-\u3096"
    "\u309d-\u309f"
    "\u30a1-\u30fa"
    "\u30fc-\u30ff"
    "\u3131-\u318e"
    "\u31f0-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\ua960-\ua97c"
    "\uac00-\ud7a3"
    "\ud7b0-\ud7c6"
    "\ud7cb-\ud7fb"
    "\uf900-\ufaff"
    "\uff66-\uff9f"
    "\uffa1-\uffdc"
    "\U00020000-\U0002fa1f"
    "\U00030000-\U000323af"
)


class _Runs:
    """`[CJK letters]+`, compiled the first time it reads a text that is not ASCII: an ASCII
    text holds no CJK run, and compiling the class's ranges costs a process ~2 ms (most queries,
    prompts and memories are ASCII). The methods of `re.Pattern` that git-memex uses."""

    __slots__ = ("_rx",)
    pattern = f"[{_CJK_CLASS}]+"

    def __init__(self) -> None:
        self._rx: re.Pattern[str] | None = None

    def _compiled(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.pattern)
        return self._rx

    def search(self, s: str) -> re.Match[str] | None:
        return None if s.isascii() else self._compiled().search(s)

    def match(self, s: str) -> re.Match[str] | None:
        return None if s.isascii() else self._compiled().match(s)

    def fullmatch(self, s: str) -> re.Match[str] | None:
        return None if s.isascii() else self._compiled().fullmatch(s)

    def findall(self, s: str) -> list[str]:
        return [] if s.isascii() else self._compiled().findall(s)

    def sub(self, repl: str | Callable[[re.Match[str]], str], s: str) -> str:
        return s if s.isascii() else self._compiled().sub(repl, s)


CJK_RE = _Runs()
"""One match per run of consecutive CJK characters."""

# unicode61 token characters are letters and numbers; everything else (underscore included)
# separates tokens. Python's [^\W_] is the same class, close enough to agree on real text.
WORD_RE = re.compile(r"[^\W_]+")

NEAR_DUP_THRESHOLD = 0.8
"""Jaccard similarity at or above which two memory bodies count as near-duplicates."""
TURN_ECHO_THRESHOLD = 0.28
"""Jaccard similarity at or above which an agent's memory_add counts as a rewording of what the
keyword capture saved from the user's own message moments before (the protocol's turn echo)."""
TURN_ECHO_WINDOW_S = 600
"""How recent that capture must be."""

# English function words: they match nearly everything and drown the content words in BM25.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can cannot could did do does doing done down during each
    few for from further had has have having he her here hers herself him himself his how i
    if in into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own please same shall she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up us very was we were what when where which while who whom whose why will
    with without would you your yours yourself yourselves may might also s t d ll m re ve
    don doesn didn isn wasn aren weren won wouldn shouldn couldn hasn haven hadn
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# Chinese question/function bigrams (为什么 yields 为什 + 什么; 怎么样 yields 怎么 + 么样).
_CJK_STOP_TEXT = "怎么 什么 如何 为什 为何 哪里 哪儿 哪些 哪个 是否 请问 怎样 么样"
CJK_STOP_BIGRAMS = frozenset(_CJK_STOP_TEXT.split())


def has_cjk(s: str) -> bool:
    """True when `s` holds any Han, Kana or Hangul character."""
    return CJK_RE.search(s) is not None


_LATIN_WORD_RE = re.compile(r"[A-Za-z]{2,}")
_KANA_HANGUL: list[re.Pattern[str]] = []  # compiled by the first `language_of` of a CJK text (~1 ms)


def language_of(s: str) -> str | None:
    """The `language` a memory is written with (docs/format.md, `language`): `zh` (Han, with at most one Latin
    word per two characters: code names in a Chinese sentence), `ja` or `ko` when Kana or Hangul
    is there, `en` (Latin words, no CJK), `mixed` (both), or None (neither: digits, other scripts).
    Written on every write (`core.model.create`); the tokenizers themselves choose per script
    run, so a mixed memory gets both lanes whatever the field says (docs/format.md)."""
    cjk = sum(len(run) for run in CJK_RE.findall(s))
    latin = len(_LATIN_WORD_RE.findall(s))
    if not cjk:
        return "en" if latin else None
    if latin * 2 > cjk:
        return "mixed"
    if not _KANA_HANGUL:
        _KANA_HANGUL.extend((re.compile(r"[\u3040-\u30ff]"), re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")))
    kana, hangul = _KANA_HANGUL
    if kana.search(s):
        return "ja"
    if hangul.search(s):
        return "ko"
    return "zh"


def latin_text(s: str) -> str:
    """Text for the `body` column: spaces around CJK runs, so `TL确认` still yields token `tl`."""
    return CJK_RE.sub(lambda m: f" {m.group(0)} ", s)


def grams(run: str) -> list[str]:
    """Overlapping bigrams of one run; a 1-character run is its own term."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_index_text(s: str) -> str:
    """Text for the `cjk` column: per run, its characters then its overlapping bigrams.

    `中文记忆` -> `中 文 记 忆 中文 文记 记忆`. Within a run the bigrams are consecutive tokens,
    which is what lets a longer word be searched as the phrase of its bigrams.
    """
    out: list[str] = []
    for run in CJK_RE.findall(s):
        out.extend(run)
        if len(run) > 1:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return " ".join(out)


def dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def raw_latin_tokens(s: str) -> list[str]:
    """Lower-cased word tokens of the non-CJK text, in order, duplicates kept."""
    return [t.lower() for t in WORD_RE.findall(CJK_RE.sub(" ", s))]


def latin_split(s: str) -> tuple[list[str], list[str]]:
    """(content terms, all terms), both deduped in order."""
    raw = dedupe(raw_latin_tokens(s))
    kept = [t for t in raw if len(t) > 1 and t not in STOPWORDS]
    return kept, raw


def latin_terms(s: str) -> list[str]:
    """Lower-cased word tokens minus stopwords and 1-letter tokens, deduped in order.

    If filtering would leave nothing, the unfiltered tokens are returned: `what is it` must
    still search for something.
    """
    kept, raw = latin_split(s)
    return kept or raw


def cjk_split(s: str) -> tuple[list[str], list[str]]:
    """(content bigrams, all bigrams), both deduped in order."""
    raw = dedupe([g for run in CJK_RE.findall(s) for g in grams(run)])
    kept = [g for g in raw if g not in CJK_STOP_BIGRAMS]
    return kept, raw


def cjk_terms(s: str) -> list[str]:
    """Per CJK run its overlapping bigrams (a 1-character run gives the character), deduped.

    Question bigrams such as 怎么/什么 are dropped unless nothing else would remain.
    """
    kept, raw = cjk_split(s)
    return kept or raw


def similarity_tokens(s: str) -> frozenset[str]:
    """Lower-cased Latin tokens plus CJK unigrams and bigrams: the unit of near-duplicate tests."""
    tokens = set(raw_latin_tokens(s))
    for run in CJK_RE.findall(s):
        tokens.update(run)
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(tokens)


def jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over similarity tokens; 0.0 when either side has none."""
    ta, tb = similarity_tokens(a), similarity_tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


_TERMINAL_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves (ESC [ 31 m)
    r"|(?:\x1b[\]P^_X]|[\x9d\x90\x9e\x9f\x98])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, PM, APC, SOS strings
    r"|\x1b[ -/]*[0-~]"  # any other escape sequence (ESC ( B, ESC c)
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_INVISIBLE_RE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def without_controls(s: str) -> str:
    """`s` as a person reads it on a terminal: ANSI/ECMA-48 escape sequences (colours, cursor
    moves, OSC titles and hyperlinks) removed whole, invisible format characters (zero-width,
    bidi, soft hyphen) removed, every other control (NUL, BEL, DEL, C1, line separators) turned
    into a space, so `\\x1b[31mretries\\x1b[0m` is the word `retries` and not `31mretries` (the
    prompt hook)."""
    return _CONTROL_RE.sub(" ", _INVISIBLE_RE.sub("", _TERMINAL_RE.sub("", s)))


def normalize_ws(s: str) -> str:
    """Collapse every run of whitespace (Unicode included) to one space and strip the ends."""
    return " ".join(s.split())


def content_hash(body: str) -> str:
    """sha256 hex of the whitespace-normalised body: re-wrapping text keeps the same hash."""
    from git_memex.core.digest import sha256_hex

    return sha256_hex(normalize_ws(body).encode("utf-8"))


_PIECE_RE = re.compile(r"[A-Za-z]+|\d+|\s+|[^\W\d_]+|.", re.S)


def estimate_tokens(s: str) -> int:
    """LLM tokens of `s`, as the larger of two BPE tokenizers (o200k_base, cl100k_base) counts
    them, 0.93-1.23x per line and 5.6% over for a whole block on the held-out lines (docs/agents.md, "Session
    context").

    One linear pass over the pieces a BPE pre-tokenizer sees: an ASCII word of up to six letters
    is one token, a longer one one more per five letters past four; digits go in threes; each
    punctuation mark is one token (they rarely merge in identifiers, paths and ids); a CJK
    character is 1.25 (cl100k splits many into two bytes' worth); other letters (Cyrillic,
    accented) two characters a token; emoji and other symbols two. Spaces ride on the next word;
    each line break is one. Never 0 for non-empty text, so budgets always charge something."""
    if not s:
        return 0
    n = 0.0
    for m in _PIECE_RE.finditer(s):
        p = m.group()
        c = p[0]
        if c.isascii():
            if c.isalpha():
                n += 1 if len(p) <= 6 else 1 + (len(p) - 4) / 5
            elif c.isdigit():
                n += (len(p) + 2) // 3
            elif c.isspace():
                n += p.count("\n")
            else:
                n += 1
        elif CJK_RE.match(c):
            n += 1.25 * len(p)
        elif c.isalpha():
            n += max(1.0, len(p) / 2)
        elif c.isspace():
            n += p.count("\n")
        else:
            n += 1.0 if ord(c) < 0x2000 else 2.0
    whole = int(n)
    return max(1, whole + (n > whole))

"""Pure text functions the FTS5 index and search are built on (standard library only).

The index (one table per database)::

    CREATE VIRTUAL TABLE memories_fts USING fts5(body, tags, type, cjk, aliases,
        tokenize='porter unicode61 remove_diacritics 2')

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

from git_memex.search import synonyms

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
CJK_RE: re.Pattern[str] = re.compile(f"[{_CJK_CLASS}]+")
"""One match per run of consecutive CJK characters."""

# unicode61 token characters are letters and numbers; everything else (underscore included)
# separates tokens. Python's [^\W_] is the same class, close enough to agree on real text.
_WORD_RE = re.compile(r"[^\W_]+")

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
_KANA_RE = re.compile(r"[\u3040-\u30ff]")
_HANGUL_RE = re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")


def language_of(s: str) -> str | None:
    """The `language` a memory is written with (V2-DESIGN §3): `zh` (Han, with at most one Latin
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
    if _KANA_RE.search(s):
        return "ja"
    if _HANGUL_RE.search(s):
        return "ko"
    return "zh"


def latin_text(s: str) -> str:
    """Text for the `body` column: spaces around CJK runs, so `TL确认` still yields token `tl`."""
    return CJK_RE.sub(lambda m: f" {m.group(0)} ", s)


def _grams(run: str) -> list[str]:
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


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _raw_latin_tokens(s: str) -> list[str]:
    """Lower-cased word tokens of the non-CJK text, in order, duplicates kept."""
    return [t.lower() for t in _WORD_RE.findall(CJK_RE.sub(" ", s))]


def _latin_split(s: str) -> tuple[list[str], list[str]]:
    """(content terms, all terms), both deduped in order."""
    raw = _dedupe(_raw_latin_tokens(s))
    kept = [t for t in raw if len(t) > 1 and t not in STOPWORDS]
    return kept, raw


def latin_terms(s: str) -> list[str]:
    """Lower-cased word tokens minus stopwords and 1-letter tokens, deduped in order.

    If filtering would leave nothing, the unfiltered tokens are returned: `what is it` must
    still search for something.
    """
    kept, raw = _latin_split(s)
    return kept or raw


def _cjk_split(s: str) -> tuple[list[str], list[str]]:
    """(content bigrams, all bigrams), both deduped in order."""
    raw = _dedupe([g for run in CJK_RE.findall(s) for g in _grams(run)])
    kept = [g for g in raw if g not in CJK_STOP_BIGRAMS]
    return kept, raw


def cjk_terms(s: str) -> list[str]:
    """Per CJK run its overlapping bigrams (a 1-character run gives the character), deduped.

    Question bigrams such as 怎么/什么 are dropped unless nothing else would remain.
    """
    kept, raw = _cjk_split(s)
    return kept or raw


def _quote(term: str) -> str:
    """An FTS5 string literal. NUL is removed: SQLite reads the expression as a C string, so a
    NUL inside quotes would end it early ("unterminated string")."""
    return '"' + term.replace("\x00", "").replace('"', '""') + '"'


def _latin_expr(term: str, *, prefix: bool) -> str:
    return _quote(term) + ("*" if prefix else "")


def _cjk_phrase(word: str) -> str:
    """A CJK word of any length as an FTS5 phrase over the bigram column.

    `数据库` -> `"数据 据库"`: the index writes a run's bigrams as consecutive tokens, so the
    phrase matches exactly where the three characters stand together, and not a text that has
    数据 and 据库 in different places. 2 characters -> one bigram; 1 character -> the unigram.
    """
    parts = [" ".join(_grams(run)) for run in CJK_RE.findall(word)]
    return " OR ".join(_quote(p) for p in parts if p)


# Expansion terms shorter than this are matched exactly: `"pr"*` would match prod, project...
_MIN_EXPANSION_PREFIX = 4


class Query:
    """A parsed search query: Latin terms, CJK bigrams and synonym expansions.

    Immutable value object with dataclass-style equality, hash and repr. It is written by hand
    rather than with @dataclass(frozen=True) because importing `dataclasses` costs ~6 ms (core/record.py)
    (it pulls in `inspect`), which short-lived hook processes should not pay.
    """

    __slots__ = ("latin", "cjk", "expanded", "phrases")
    __match_args__ = ("latin", "cjk", "expanded", "phrases")

    latin: tuple[str, ...]
    cjk: tuple[str, ...]
    expanded: tuple[str, ...]
    phrases: tuple[str, ...]

    def __init__(
        self,
        latin: tuple[str, ...] = (),
        cjk: tuple[str, ...] = (),
        expanded: tuple[str, ...] = (),
        phrases: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "latin", tuple(latin))
        object.__setattr__(self, "cjk", tuple(cjk))
        object.__setattr__(self, "expanded", tuple(expanded))
        object.__setattr__(self, "phrases", tuple(phrases))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of frozen Query")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of frozen Query")

    def _key(self) -> tuple[tuple[str, ...], ...]:
        return (self.latin, self.cjk, self.expanded, self.phrases)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        extra = f", phrases={self.phrases!r}" if self.phrases else ""
        return f"Query(latin={self.latin!r}, cjk={self.cjk!r}, expanded={self.expanded!r}{extra})"

    def fts(self, *, with_expansion: bool = True, with_phrases: bool = False) -> str | None:
        """The FTS5 MATCH expression, or None when there is nothing to search for.

        Shapes: `"a"* OR "b"*` (Latin only, all columns); `{cjk}:("中文" OR "文记")` (CJK only);
        `("a"*) OR {cjk}:("中文")` (both). Expansions join their side: Latin ones as prefix
        terms (exact below 4 characters), CJK ones as the phrase of their bigrams.
        """
        latin = [_latin_expr(t, prefix=True) for t in self.latin]
        cjk = [_quote(t) for t in self.cjk]
        if with_expansion and with_phrases:
            for phrase in self.phrases:  # exact word sequences (search reranks with them instead)
                if has_cjk(phrase):
                    cjk.append(_quote(phrase))
                else:
                    latin.append(_quote(phrase))
        if with_expansion:
            for word in self.expanded:
                if has_cjk(word):
                    phrase = _cjk_phrase(word)
                    if phrase:
                        cjk.append(phrase)
                else:
                    last = word.rsplit(" ", 1)[-1]
                    latin.append(_latin_expr(word, prefix=len(last) >= _MIN_EXPANSION_PREFIX))
        latin, cjk = _dedupe(latin), _dedupe(cjk)
        cjk_part = "{cjk}:(" + " OR ".join(cjk) + ")" if cjk else ""
        if latin and cjk:
            return "(" + " OR ".join(latin) + ") OR " + cjk_part
        if latin:
            return " OR ".join(latin)
        return cjk_part or None


def _budget(n_latin: int, n_cjk: int, max_terms: int) -> tuple[int, int]:
    """Split `max_terms` between the two sides; a side that needs less lends the rest."""
    if n_latin + n_cjk <= max_terms:
        return n_latin, n_cjk
    half = max_terms - max_terms // 2  # Latin gets the odd one
    if n_latin <= half:
        return n_latin, max_terms - n_latin
    if n_cjk <= max_terms - half:
        return max_terms - n_cjk, n_cjk
    return half, max_terms - half


# A query token with one of these between its words is a path, file name or identifier
# (`tests/test_tokens.py`, `LOCK_TIMEOUT`, `user@host`): its words are literal, not prose.
# Possessive `++`: a joiner run is never re-scanned, so a run of 100k `/` costs one pass.
_IDENT_JOINERS = re.compile(r"[^\W_][/._\\:@]++[^\W_]|[^\W_]_|_[^\W_]")


def literal_words(q: str) -> frozenset[str]:
    """Lower-cased words that occur in the query only inside paths and identifiers."""
    ident: set[str] = set()
    prose: set[str] = set()
    for chunk in CJK_RE.sub(" ", q).split():
        words = [w.lower() for w in _WORD_RE.findall(chunk)]
        (ident if _IDENT_JOINERS.search(chunk) else prose).update(words)
    return frozenset(ident - prose)


def _expansions(q: str, latin: list[str]) -> list[str]:
    """Synonyms of the query's words and phrases that the query does not already cover.

    Words seen only inside paths and identifiers are not expanded: `test_tokens.py` is a
    file name, and searching it for "secret" and "credential" finds noise.
    """
    found: list[str] = []
    tokens = _raw_latin_tokens(q)
    literal = literal_words(q)
    longest = synonyms.max_phrase_words()
    for term in latin:
        if term not in literal:
            found.extend(synonyms.expand(term))
    for n in range(2, longest + 1):
        for i in range(len(tokens) - n + 1):
            gram = tokens[i : i + n]
            if not literal.intersection(gram):
                found.extend(synonyms.expand(" ".join(gram)))
    runs = CJK_RE.findall(q)
    for run in runs:
        for word in synonyms.cjk_entries_in(run):
            found.extend(synonyms.expand(word))
    out: list[str] = []
    for word in _dedupe(found):
        if has_cjk(word):
            if any(word in run for run in runs):
                continue
        elif word in latin:
            continue
        out.append(word)
    return out


# Word joiners inside one query token: `us-east`, `7.8.5`, `requirements.txt`, `src/app.py`.
# Linear on any input: a match may start only where a word starts (the lookbehind), and the
# possessive `++` never gives letters back. Without both, a 30k-letter word cost ~11 s: the
# engine retried the rest of the word from each of its letters (quadratic).
_COMPOUND_RE = re.compile(r"(?<![^\W_])[^\W_]++(?:[-._/:@+#][^\W_]++)+")
MAX_PHRASES = 12


def _phrases(q: str) -> list[str]:
    """Exact word sequences worth a bonus when a memory holds them as written (a proximity
    signal BM25 lacks): compound tokens (`us-east` -> "us east", `7.8.5` -> "7 8 5"), pairs of
    adjacent content words ("support group"), and 3-character CJK windows (the phrase of their
    two bigrams, "旧版 版本"). Generic, query-independent rules; at most MAX_PHRASES."""
    out: list[str] = []
    latin = CJK_RE.sub(" ", q)
    for m in _COMPOUND_RE.finditer(latin):
        words = [w.lower() for w in _WORD_RE.findall(m.group(0))][:6]
        if len(words) >= 2:
            out.append(" ".join(words))
    tokens = _raw_latin_tokens(q)
    in_compound = {w for p in out for w in p.split()}
    for a, b in zip(tokens, tokens[1:], strict=False):
        content = len(a) > 1 and len(b) > 1 and a not in STOPWORDS and b not in STOPWORDS
        if content and a != b and not (a in in_compound and b in in_compound):
            out.append(f"{a} {b}")
    for run in CJK_RE.findall(q):
        for i in range(len(run) - 2):
            grams = (run[i : i + 2], run[i + 1 : i + 3])
            if grams[0] in CJK_STOP_BIGRAMS or grams[1] in CJK_STOP_BIGRAMS:
                continue
            out.append(" ".join(grams))
    return _dedupe(out)[:MAX_PHRASES]


def parse_query(q: str, *, max_terms: int = 24, expand: bool = True) -> Query:
    """Free text -> Query. OR semantics: every kept term may match on its own.

    Stopwords are dropped per side; a side made only of stopwords is dropped when the other
    side has content (`how to 部署` searches 部署 only), else kept unfiltered so the query is
    never empty. At most `max_terms` original terms and `max_terms` expansions are kept.
    """
    if max_terms < 1:
        raise ValueError("max_terms must be at least 1")
    latin_kept, latin_raw = _latin_split(q)
    cjk_kept, cjk_raw = _cjk_split(q)
    if latin_kept or cjk_kept:
        latin, cjk = latin_kept, cjk_kept
    else:
        latin, cjk = latin_raw, cjk_raw
    n_latin, n_cjk = _budget(len(latin), len(cjk), max_terms)
    latin, cjk = latin[:n_latin], cjk[:n_cjk]
    expanded = _expansions(q, latin)[:max_terms] if expand else []
    phrases = _phrases(q) if expand else []
    return Query(tuple(latin), tuple(cjk), tuple(expanded), tuple(phrases))


def similarity_tokens(s: str) -> frozenset[str]:
    """Lower-cased Latin tokens plus CJK unigrams and bigrams: the unit of near-duplicate tests."""
    tokens = set(_raw_latin_tokens(s))
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
    them, within about ±15% per line and a little over for a whole block (docs/agents.md).

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

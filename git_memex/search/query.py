"""A search query, parsed: `parse_query` turns free text into a `Query` (Latin terms, CJK
bigrams, synonym expansions, exact phrases), and `Query.fts` into an FTS5 MATCH expression.

Every term is a double-quoted FTS5 string (`quote`), so no user text can produce an FTS5 syntax
error. The tokenizers it splits text with are `core.textproc`'s, the same the index is written
with. Import cost matters (the context hook searches): `re`, `core.textproc` and `search.synonyms`
only, no `dataclasses`/`typing`.
"""

from __future__ import annotations

import re

from git_memex.core.textproc import (
    CJK_RE,
    CJK_STOP_BIGRAMS,
    STOPWORDS,
    WORD_RE,
    cjk_split,
    dedupe,
    grams,
    has_cjk,
    latin_split,
    raw_latin_tokens,
)
from git_memex.search import synonyms


def quote(term: str) -> str:
    """An FTS5 string literal. NUL is removed: SQLite reads the expression as a C string, so a
    NUL inside quotes would end it early ("unterminated string")."""
    return '"' + term.replace("\x00", "").replace('"', '""') + '"'


def _latin_expr(term: str, *, prefix: bool) -> str:
    return quote(term) + ("*" if prefix else "")


def cjk_phrase(word: str) -> str:
    """A CJK word of any length as an FTS5 phrase over the bigram column.

    `数据库` -> `"数据 据库"`: the index writes a run's bigrams as consecutive tokens, so the
    phrase matches exactly where the three characters stand together, and not a text that has
    数据 and 据库 in different places. 2 characters -> one bigram; 1 character -> the unigram.
    """
    parts = [" ".join(grams(run)) for run in CJK_RE.findall(word)]
    return " OR ".join(quote(p) for p in parts if p)


# Expansion terms shorter than this are matched exactly: `"pr"*` would match prod, project...
MIN_EXPANSION_PREFIX = 4


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
        cjk = [quote(t) for t in self.cjk]
        if with_expansion and with_phrases:
            for phrase in self.phrases:  # exact word sequences (search reranks with them instead)
                if has_cjk(phrase):
                    cjk.append(quote(phrase))
                else:
                    latin.append(quote(phrase))
        if with_expansion:
            for word in self.expanded:
                if has_cjk(word):
                    phrase = cjk_phrase(word)
                    if phrase:
                        cjk.append(phrase)
                else:
                    last = word.rsplit(" ", 1)[-1]
                    latin.append(_latin_expr(word, prefix=len(last) >= MIN_EXPANSION_PREFIX))
        latin, cjk = dedupe(latin), dedupe(cjk)
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
        words = [w.lower() for w in WORD_RE.findall(chunk)]
        (ident if _IDENT_JOINERS.search(chunk) else prose).update(words)
    return frozenset(ident - prose)


def expansions(q: str, latin: list[str]) -> list[str]:
    """Synonyms of the query's words and phrases that the query does not already cover.

    Words seen only inside paths and identifiers are not expanded: `test_tokens.py` is a
    file name, and searching it for "secret" and "credential" finds noise.
    """
    found: list[str] = []
    tokens = raw_latin_tokens(q)
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
    for word in dedupe(found):
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


def phrases(q: str) -> list[str]:
    """Exact word sequences worth a bonus when a memory holds them as written (a proximity
    signal BM25 lacks): compound tokens (`us-east` -> "us east", `7.8.5` -> "7 8 5"), pairs of
    adjacent content words ("support group"), and 3-character CJK windows (the phrase of their
    two bigrams, "旧版 版本"). Generic, query-independent rules; at most MAX_PHRASES."""
    out: list[str] = []
    latin = CJK_RE.sub(" ", q)
    for m in _COMPOUND_RE.finditer(latin):
        words = [w.lower() for w in WORD_RE.findall(m.group(0))][:6]
        if len(words) >= 2:
            out.append(" ".join(words))
    tokens = raw_latin_tokens(q)
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
    return dedupe(out)[:MAX_PHRASES]


def parse_query(q: str, *, max_terms: int = 24, expand: bool = True) -> Query:
    """Free text -> Query. OR semantics: every kept term may match on its own.

    Stopwords are dropped per side; a side made only of stopwords is dropped when the other
    side has content (`how to 部署` searches 部署 only), else kept unfiltered so the query is
    never empty. At most `max_terms` original terms and `max_terms` expansions are kept.
    """
    if max_terms < 1:
        raise ValueError("max_terms must be at least 1")
    latin_kept, latin_raw = latin_split(q)
    cjk_kept, cjk_raw = cjk_split(q)
    if latin_kept or cjk_kept:
        latin, cjk = latin_kept, cjk_kept
    else:
        latin, cjk = latin_raw, cjk_raw
    n_latin, n_cjk = _budget(len(latin), len(cjk), max_terms)
    latin, cjk = latin[:n_latin], cjk[:n_cjk]
    expanded = expansions(q, latin)[:max_terms] if expand else []
    exact = phrases(q) if expand else []
    return Query(tuple(latin), tuple(cjk), tuple(expanded), tuple(exact))

"""Contradictions: two active memories about one subject that disagree (docs/curating.md).

The protocol's fifth principle: core never silently resolves a semantic conflict. Both memories
stay active; what disagrees is surfaced (`audit`, `sync-status`, `doctor`, and each search, list,
MCP hit and session block that shows both) with the one precedence prefers named and shown first
(`core.precedence.prefer`), and a person decides: supersede one, or mark the pair as not
contradictory (`review.compatible`). Whether two texts disagree is `review.disagreement.compare`.

Cost: the finder over a store (`find`) compares only pairs that share their rarest subject words
(a prefix filter, as `upkeep.audit.near_duplicate_pairs`), at most `MAX_CANDIDATES` for each
memory: linear in the store's size. Among the memories one answer shows (`among`: search hits, a
list page, the session block) every pair is checked, no index read; the person's marks are read
only when a pair is found.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping, Sequence

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import MemexError
from git_memex.index.stores import Stores, opened

JOIN_THRESHOLD = 0.3
"""Pairs whose `signature`s have a Jaccard similarity below this are never compared..."""
MAX_APART = 12
"""...nor pairs whose signatures have more than this many pieces in one only: two texts that
disagree differ in a value, a negation or a choice, a name, and a few words..."""
MAX_APART_WORDS = 8
"""...nor more than this many plain words in one only (`disagreement.plain_word`)."""
MAX_ONE_SIDE = 7
"""...and texts that say it in other words: at most this many plain words in each that the other lacks."""
MAX_CANDIDATES = 16
"""At most this many candidates are compared with each memory (those sharing the most probes)."""
PROBES = 8
"""A memory's rarest signature words the finder looks up: two texts that disagree differ in a few
words (a value, a negation, a name, up to MAX_EXTRA more), so they share some of their rarest."""
POSTINGS = 128
"""Of each probe word, only the last this many memories holding it are looked at (a word that
common names a template, not a subject): what keeps the finder linear."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from git_memex.review.disagreement import Difference, Tok, Verdict


# ------------------------------------------------------------------ a store's pairs
@record
class Contradiction:
    a: str  # the id the precedence prefers, else the smaller id
    b: str
    differences: list[Difference]
    preferred: str | None
    why: str
    tiers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.differences[0].kind

    def to_json(self) -> dict[str, Any]:
        first = self.differences[0]
        return {
            "a": self.a, "b": self.b, "kind": first.kind, "values": [first.a, first.b],
            "differences": [{"kind": d.kind, "values": [d.a, d.b]} for d in self.differences],
            "preferred": self.preferred, "why": self.why, "tiers": self.tiers,
        }


def pair(ra: Mapping[str, Any], rb: Mapping[str, Any], verdict: Verdict) -> Contradiction:
    """The contradiction between two memories (rows or hit dicts with id, location, type, source,
    review_state), the one precedence prefers first."""
    from git_memex.core.precedence import prefer, tier
    from git_memex.review.disagreement import Difference, Verdict

    first, why = prefer(ra, rb)
    if first is rb or (first is None and str(ra["id"]) > str(rb["id"])):
        ra, rb = rb, ra
        verdict = Verdict([Difference(d.kind, d.b, d.a) for d in verdict.differences], verdict.shared)
    return Contradiction(str(ra["id"]), str(rb["id"]), verdict.differences,
                         str(ra["id"]) if first is not None else None, why,
                         {str(ra["id"]): tier(ra), str(rb["id"]): tier(rb)})


def signature(text: str) -> frozenset[str]:
    """A cheap stand-in for a text's words (its whitespace-separated pieces lowercased, and each
    CJK character; a config name's parts too: WEBHOOK_RETRY_LIMIT=3 holds webhook, retry, limit),
    for choosing which pairs `compare` looks at. No regex: ~20 µs a memory."""
    words = frozenset(p.strip(_EDGES) for p in text.lower().split()) - {""}
    parts = frozenset(q for w in words if "_" in w or "=" in w or "/" in w or "-" in w
                      for q in w.replace("_", " ").replace("=", " ").replace("/", " ").replace("-", " ").split())
    words |= parts
    return words if text.isascii() else words | frozenset(c for c in text if c >= "\u2e80")


def plain(text: str, sig: frozenset[str], known: dict[str, str | None]) -> tuple[frozenset[str], frozenset[str]]:
    """(the plain words of a signature, stemmed: `disagreement.plain_word`; those of them written
    capitalised or as @handles in `text`, which may be names), `known` remembering each piece."""
    from git_memex.review.disagreement import plain_word

    def norm(p: str) -> str | None:
        if p not in known:
            known[p] = plain_word(p)
        return known[p]

    words = frozenset(w for p in sig if (w := norm(p)) is not None)
    names = frozenset(w for p in text.split() if p[:1].isupper() or p[:1] == "@"
                      if (w := norm(p.lower())) is not None)
    return words, names


_EDGES = ".,;:!?()[]{}\"'`"


def near(pa: tuple[frozenset[str], frozenset[str]], pb: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Could two texts, written alike or in other words, be about one subject? At most
    MAX_ONE_SIDE plain words (`plain`) in each that the other lacks: `disagreement.loose` allows
    two content words on each side, and plain words also hold the verbs it leaves out."""
    (wa, _na), (wb, _nb) = pa, pb
    return len(wa - wb) <= MAX_ONE_SIDE and len(wb - wa) <= MAX_ONE_SIDE


def close(a: frozenset[str], b: frozenset[str]) -> bool:
    """Could these two be about one subject? Their signatures' Jaccard similarity is at least
    JOIN_THRESHOLD and at most MAX_APART pieces are in one only (on the labelled set every
    contradictory pair is at 0.44 or more, with at most 9 apart)."""
    inter = len(a & b)
    apart = len(a) + len(b) - 2 * inter
    return inter > 0 and apart <= MAX_APART and inter >= JOIN_THRESHOLD * (inter + apart)


def words_close(pa: tuple[frozenset[str], frozenset[str]], pb: tuple[frozenset[str], frozenset[str]]) -> bool:
    """And by their `plain` words: at most MAX_APART_WORDS in one only, and not both with plain
    words the other lacks that are not names (another subject, as `disagreement` would find).
    On the labelled set every contradictory pair has at most 4 plain words apart."""
    (wa, na), (wb, nb) = pa, pb
    if len(wa ^ wb) > MAX_APART_WORDS:
        return False
    return not ((wa - wb - na) and (wb - wa - nb))


REPORT_LIMIT = 100
"""At most this many pairs are listed by `audit --json` and `sync-status --json` (`bounded`),
the ones precedence decides first; `contradictions_left_out` says how many more there are."""
ANSWER_LIMIT = 10
"""At most this many pairs in one answer's `disagreements` (search, list, the session block)..."""
CONTRADICTS_LIMIT = 5
"""...and at most this many ids in one hit's `contradicts` (`contradicts_left_out` counts the rest)."""


def bounded(pairs: Sequence[Any]) -> tuple[list[Any], int]:
    """The first REPORT_LIMIT pairs (`pairs` as `contradictions` orders them) and how many are left out."""
    return list(pairs[:REPORT_LIMIT]), max(0, len(pairs) - REPORT_LIMIT)


def find(rows: Iterable[Any], stats: dict[str, int] | None = None) -> list[Contradiction]:
    """Every pair of the rows (active memories: id, body, location, type, source, review_state,
    supersedes, superseded_by) that `compare` says disagree. An id seen twice counts once (the
    first row wins). Candidates share one of their PROBES rarest signature words (two texts that
    differ in a few words share their rarest others), from the last POSTINGS memories holding
    it, at most MAX_CANDIDATES for each memory, and pass `close`; only they are tokenized and
    compared. Linear in the number of rows: at most PROBES × POSTINGS look-ups a memory.

    Those bounds can leave pairs unseen: a memory whose probe words more than POSTINGS earlier
    memories hold, or with more than MAX_CANDIDATES candidates, is compared with only some of
    them. `stats["unchecked"]` counts such memories (said by audit, sync-status and doctor)."""
    from git_memex.review.disagreement import analysed_once

    with analysed_once():  # each memory analysed once, however many pairs it is in
        return _find(rows, stats)


def _find(rows: Iterable[Any], stats: dict[str, int] | None) -> list[Contradiction]:
    import heapq

    from git_memex.review.disagreement import MAX_TOKENS, compare_tokens, cross_words, tokens

    items: list[tuple[Any, frozenset[str]]] = []
    seen: set[str] = set()
    for r in rows:
        if r["id"] in seen or not r["body"]:
            continue
        seen.add(r["id"])
        items.append((r, signature(r["body"])))
    known: dict[str, str | None] = {}
    plains: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
    standings: dict[int, Any] = {}

    def stood(i: int) -> Any:
        """Row i with its review standing, which precedence may read from its file (a reviewed
        claim without the index's column): looked up once a memory, not once a pair it is in."""
        if i not in standings:
            from git_memex.core.precedence import standing

            row = items[i][0]
            has = "standing" in row.keys()  # noqa: SIM118 (a sqlite3.Row: `in` tests its values)
            standings[i] = row if has else {**dict(row), "standing": standing(row)}
        return standings[i]

    def plain_of(i: int) -> tuple[frozenset[str], frozenset[str]]:
        if i not in plains:
            plains[i] = plain(items[i][0]["body"] or "", items[i][1], known)
        return plains[i]

    def probe_words(i: int) -> frozenset[str]:
        """Its plain words (filler, values and choices left out) and CJK characters: what two
        texts about one subject share however they are written."""
        sig = items[i][1]
        words = plain_of(i)[0] | frozenset(w for w in sig if len(w) == 1 and w >= "\u2e80")
        words |= cross_words(items[i][0]["body"] or "", frozenset(p.strip(_EDGES) for p in sig))
        return words or sig

    keys = [probe_words(i) for i in range(len(items))]
    df: dict[str, int] = {}
    for ks in keys:
        for w in ks:
            df[w] = df.get(w, 0) + 1
    postings: dict[str, list[int]] = {}
    toks: dict[int, list[Tok] | None] = {}

    def tokens_of(i: int) -> list[Tok] | None:
        if i not in toks:
            got = tokens(items[i][0]["body"] or "")
            toks[i] = got if got and len(got) <= MAX_TOKENS else None
        return toks[i]

    out: list[Contradiction] = []
    unchecked = 0
    for i, (r, _sig) in enumerate(items):
        # the rarest words another memory holds too (a word only this one holds finds no partner)
        probes = heapq.nsmallest(PROBES, keys[i], key=lambda w: (df[w] < 2, df[w], w))
        counts: dict[int, int] = {}
        cut = False
        for w in probes:
            held = postings.get(w, ())
            cut = cut or len(held) > POSTINGS
            for j in held[-POSTINGS:]:
                counts[j] = counts.get(j, 0) + 1
        cut = cut or len(counts) > MAX_CANDIDATES
        unchecked += cut
        best = counts if len(counts) <= MAX_CANDIDATES else heapq.nlargest(MAX_CANDIDATES, counts, key=counts.__getitem__)
        for j in best:
            rj, sj = items[j]
            if not near(plain_of(i), plain_of(j)) or _linked(r, rj):
                continue
            ta, tb = tokens_of(j), tokens_of(i)
            if ta is None or tb is None:
                continue
            v = compare_tokens(ta, tb)
            if v is not None:
                out.append(pair(stood(j), stood(i), v))
        for w in probes:
            postings.setdefault(w, []).append(i)
    out.sort(key=lambda c: (c.preferred is None, c.a, c.b))
    if stats is not None:
        stats["unchecked"] = stats.get("unchecked", 0) + unchecked
    return out


def _linked(ra: Mapping[str, Any], rb: Mapping[str, Any]) -> bool:
    """One supersedes the other (the chain is the record of the change, not a disagreement)."""
    def get(r: Mapping[str, Any], k: str) -> Any:
        try:
            return r[k]
        except (KeyError, IndexError):
            return None

    return ra["id"] == rb["id"] or get(ra, "supersedes") == rb["id"] or get(rb, "supersedes") == ra["id"] \
        or get(ra, "superseded_by") == rb["id"] or get(rb, "superseded_by") == ra["id"]


ROW_COLUMNS = ("m.id, m.body, m.location, m.type, m.source, m.review_state, m.supersedes, m.superseded_by, "
               "m.content_hash, m.updated_ts, m.path")


def unresolved(ctx: Context, rows: Iterable[Any], stats: dict[str, int] | None = None,
               quiet: list[dict[str, Any]] | None = None) -> list[Contradiction]:
    """`find` over `rows`, less the pairs a person marked as not contradictory (`review.compatible`);
    those go to `quiet` as their records (audit counts them: nothing is silenced unseen)."""
    rows = list(rows)
    found = find(rows, stats)
    if not found:
        return []
    from git_memex.review import compatible

    by_id: dict[str, Any] = {}
    for r in rows:
        by_id.setdefault(str(r["id"]), r)
    marks = compatible.marks(ctx)
    out = []
    masks: dict[str, dict[str, str] | None] = {}
    for c in found:
        rec = compatible.covering(marks, by_id[c.a], by_id[c.b]) if marks else None
        if rec is not None:
            if quiet is not None:
                quiet.append(rec)
            continue
        if (m := _masked(ctx, c, by_id, masks)) is not None:
            out.append(m)
    return out


VALUE_CHARS = 120
"""A differing value as shown (`shown_value`) is at most this many characters: a value is a few
words of one memory, and a pasted blob must not make every line that names the pair a page long."""


def shown_value(value: str) -> str:
    """A differing value as every surface shows it (audit, sync-status, doctor, search, list, MCP,
    the session block): each invisible or control character spelled as the output guard spells it
    (`core.output.shown_at`: Unicode Cc, Cf, Co, Cs, Zl, Zp, a zero-width space inside
    "80\\u200b80", a bidi override, ESC, a tag character as its surrogate pair of escapes), and the
    whole cut to at most VALUE_CHARS characters with an ellipsis, never inside an escape."""
    from git_memex.core.output import shown_at

    head = value[:VALUE_CHARS + 1]  # one more: a joiner at the cut sees its right neighbour
    pieces = [shown_at(head, i) for i in range(min(len(value), VALUE_CHARS))]
    if len(value) <= VALUE_CHARS and sum(map(len, pieces)) <= VALUE_CHARS:
        return "".join(pieces)
    out: list[str] = []
    used = 0
    for piece in pieces:
        if used + len(piece) > VALUE_CHARS - 1:
            break
        out.append(piece)
        used += len(piece)
    return "".join(out).rstrip() + "…"


def _masked(ctx: Context, c: Contradiction, by_id: Mapping[str, Mapping[str, Any]],
            masks: dict[str, dict[str, str] | None] | None = None) -> Contradiction | None:
    """`c` with its differing values as the bodies may be shown (`shown_value`): secrets masked (a file that came
    in by another road may hold one; only found pairs pay for the check). Each word of a value
    that masking changed in its body is replaced by the masked word; where the words of a body
    cannot be matched up, the value is "(masked)". A difference in a masked value is no
    difference (two secrets, each masked, say nothing a person can compare, and the masks would
    show part of them side by side): it is left out, and a pair with no other is None. `masks`, when
    given, keeps each body's masking across the pairs of one run (a memory in 16 pairs is masked
    once)."""
    from git_memex.review.disagreement import Difference
    from git_memex.secrets.redact import redact

    def shown(body: str) -> dict[str, str] | None:
        if masks is not None and body in masks:
            return masks[body]
        safe = redact(body, ctx.redact_patterns).text
        ow, mw = body.split(), safe.split()
        got = {} if safe == body else (
            {o: m for o, m in zip(ow, mw, strict=True) if o != m} if len(ow) == len(mw) else None)
        if masks is not None:
            masks[body] = got
        return got

    ma, mb = shown(by_id[c.a]["body"] or ""), shown(by_id[c.b]["body"] or "")
    if ma == {} and mb == {}:
        return Contradiction(c.a, c.b, [Difference(d.kind, shown_value(d.a), shown_value(d.b)) for d in c.differences],
                             c.preferred, c.why, c.tiers)

    def word(w: str, changed: dict[str, str]) -> str:
        if w in changed:
            return changed[w]
        for o, m in changed.items():
            at = o.find(w)
            if at >= 0 or w.find(o) >= 0:  # the value's word is part of a masked one, or holds it
                return m[at:at + len(w)] if at >= 0 and len(o) == len(m) else "(masked)"
        return w

    def value(text: str, changed: dict[str, str] | None) -> str:
        if changed is None:
            return "(masked)"
        return " ".join(word(w, changed) for w in text.split())

    diffs = [Difference(d.kind, shown_value(va), shown_value(vb)) for d in c.differences
             if (va := value(d.a, ma)) == d.a and (vb := value(d.b, mb)) == d.b]
    if not diffs:
        return None
    return Contradiction(c.a, c.b, diffs, c.preferred, c.why, c.tiers)


KEY_COLUMNS = ("m.id, m.content_hash, m.location, m.type, m.source, m.review_state, m.supersedes, "
               "m.superseded_by, m.updated_ts, m.path")
CACHE_FORMAT = "git-memex-contradictions/2"
"""The cache file's format; the key also holds a hash of the finder's code (`_finder_id`)."""


def contradictions(ctx: Context, *, stores: Stores | None = None,
                   stats: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Every pair of active memories this context reads (personal, the project's, subscribed org
    and remote memories; from the index) that disagree, less the pairs a person marked as not
    contradictory: {"a", "b", "kind", "values", "differences", "preferred", "why", "tiers"}, `a`
    the one precedence prefers (docs/curating.md). Surfaced, never resolved.

    The pairs are cached in the data root under a key of every active memory's id, content hash
    and the fields precedence reads (and the team's secret patterns): `sync-status` and `doctor`
    run again over an unchanged store read one small query and the cache; any change anywhere
    recomputes the whole store (the finder is linear in it). The person's marks are applied
    after the cache, so marking or unmarking a pair shows at once. `stats` gets the finder's
    `unchecked` count (`find`)."""
    from git_memex.index.schema import NOT_EXPIRED

    cond = "m.status = 'active' AND " + NOT_EXPIRED
    with opened(ctx, stores) as st:
        keys = st.rows(cond, columns=KEY_COLUMNS, order_by="m.id")
        key = _state_key(ctx, keys)
        got = _cached(ctx, key)
        if got is None:
            rows = st.rows(cond, columns=ROW_COLUMNS, order_by="m.id")
            by_id: dict[str, Any] = {}
            for r in rows:
                by_id.setdefault(str(r["id"]), r)
            mine: dict[str, int] = {}
            masks: dict[str, dict[str, str] | None] = {}
            pairs = [m.to_json() for c in find(rows, mine) if (m := _masked(ctx, c, by_id, masks)) is not None]
            unchecked = mine.get("unchecked", 0)
            _store(ctx, key, pairs, unchecked)
        else:
            pairs, unchecked = got
    if stats is not None:
        stats["unchecked"] = unchecked
    if not pairs:
        return []
    from git_memex.review import compatible

    marks = compatible.marks(ctx)
    if not marks:
        return pairs
    first: dict[str, Any] = {}
    for r in keys:
        first.setdefault(str(r["id"]), r)
    return [c for c in pairs if not (c["a"] in first and c["b"] in first
                                     and compatible.covers(marks, first[c["a"]], first[c["b"]]))]


def _finder_id() -> str:
    """The finder's own code (this module and `disagreement`, as installed): a cache made by
    another version of it is not read."""
    from pathlib import Path

    from git_memex.core.digest import sha256_hex
    from git_memex.review import disagreement

    try:
        code = Path(disagreement.__file__ or "").read_bytes() + Path(__file__).read_bytes()
    except OSError:
        return CACHE_FORMAT
    return sha256_hex(code)


def _state_key(ctx: Context, keys: Sequence[Any]) -> str:
    from git_memex.core.digest import sha256_hex

    text = json.dumps([CACHE_FORMAT, _finder_id(), list(ctx.redact_patterns), [tuple(r) for r in keys]], default=str)
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def _cache_path(ctx: Context) -> Any:
    from git_memex.core.digest import sha256_hex

    place = str(ctx.repo.work_tree if ctx.repo is not None else ctx.cwd)
    return ctx.data_root / "cache" / f"contradictions-{sha256_hex(place.encode('utf-8', 'surrogatepass'))[:16]}.json"


def _cached(ctx: Context, key: str) -> tuple[list[dict[str, Any]], int] | None:
    try:
        doc = json.loads(_cache_path(ctx).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(doc, dict) and doc.get("key") == key and isinstance(doc.get("pairs"), list) and isinstance(
            doc.get("unchecked", 0), int):
        return doc["pairs"], int(doc.get("unchecked", 0))
    return None


def _store(ctx: Context, key: str, pairs: list[dict[str, Any]], unchecked: int) -> None:
    """Write the cache; a cache that cannot be written is no error (the next run computes again)."""
    from git_memex.agents.approval_record import write

    with contextlib.suppress(OSError, MemexError):
        write(_cache_path(ctx), json.dumps({"key": key, "pairs": pairs, "unchecked": unchecked},
                                           ensure_ascii=False).encode("utf-8"))


def among(ctx: Context, items: Sequence[Mapping[str, Any]]) -> list[Contradiction]:
    """The contradictions among memories shown together (search hits, a list page, the session
    block's items: mappings with id, body, location, type, source, review_state, content_hash):
    no index read. Cheap first: a pair must pass `close` on signatures before either text is
    tokenized, and the person's marks are read only when a pair is found."""
    if len(items) < 2:
        return []
    from git_memex.review.disagreement import analysed_once

    with analysed_once():  # each memory analysed once, however many pairs it is in
        found = _among(items)
    if not found:
        return []
    from git_memex.review import compatible

    marks = compatible.marks(ctx)
    by_id = {str(it["id"]): it for it in items}
    masks: dict[str, dict[str, str] | None] = {}
    return [m for c in found if not compatible.covers(marks, by_id[c.a], by_id[c.b])
            if (m := _masked(ctx, c, by_id, masks)) is not None]


def _among(items: Sequence[Mapping[str, Any]]) -> list[Contradiction]:
    from git_memex.review.disagreement import MAX_TOKENS, compare_tokens, cross_words, tokens

    sigs = [signature(it["body"] or "") for it in items]
    meets = [sig | cross_words(it["body"] or "", sig) for it, sig in zip(items, sigs, strict=True)]
    known: dict[str, str | None] = {}
    plains: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    def plain_of(i: int) -> tuple[frozenset[str], frozenset[str]]:
        if i not in plains:
            plains[i] = plain(items[i]["body"] or "", sigs[i], known)
        return plains[i]

    toks: dict[int, list[Tok] | None] = {}

    def tokens_of(i: int) -> list[Tok] | None:
        if i not in toks:
            got = tokens(items[i]["body"] or "")
            toks[i] = got if got and len(got) <= MAX_TOKENS else None
        return toks[i]

    found: list[Contradiction] = []
    compared = [0] * len(items)
    for x in range(len(items)):
        for y in range(x + 1, len(items)):
            if compared[x] >= MAX_CANDIDATES:
                break  # linear: at most MAX_CANDIDATES texts compared with each (a list page of 200 included)
            if compared[y] >= MAX_CANDIDATES or meets[x].isdisjoint(meets[y]) or not near(plain_of(x), plain_of(y)) \
                    or _linked(items[x], items[y]):
                continue
            compared[x] += 1
            compared[y] += 1
            ta, tb = tokens_of(x), tokens_of(y)
            if ta is None or tb is None:
                continue
            v = compare_tokens(ta, tb)
            if v is not None:
                found.append(pair(items[x], items[y], v))
    return found


def sentence(c: Mapping[str, Any], *, commands: bool = True) -> str:
    """One contradiction (`Contradiction.to_json`) in one sentence: who disagrees about what,
    which one precedence prefers and why, and (with `commands`) the person's two ways out."""
    va, vb = c["values"]
    head = f'{c["a"]} and {c["b"]} disagree ({c["kind"]}: "{va}" vs "{vb}")'
    if c.get("preferred"):
        head += f"; precedence prefers {c['preferred']}: {c['why']}"
    else:
        head += f"; {c['why']}"
    if commands:
        head += (f"; a person decides: supersede one (`git memex supersede ID \"TEXT\"`), or mark them not "
                 f"contradictory (`git memex compatible {c['a']} {c['b']}`)")
    return head


def summary(pairs: Sequence[Mapping[str, Any]], unchecked: int = 0, total: int | None = None) -> str:
    """`sync-status`'s and `doctor`'s one line about the contradictions found (pairs or
    `unchecked` non-empty): every pair counted (`total`, when `pairs` is a bounded list)."""
    n = len(pairs) if total is None else total
    tail = f"; {unchecked_sentence(unchecked)}" if unchecked else ""
    if not n:
        return unchecked_sentence(unchecked)
    first = sentence(pairs[0], commands=False)
    more = f" (and {n - 1} more pair{'s' if n > 2 else ''})" if n > 1 else ""
    return (f"{n} pair{'s' if n > 1 else ''} of memories disagree, a person decides: {first}{more}; "
            f"`git memex audit` lists them with the ways out{tail}")


def unchecked_sentence(n: int) -> str:
    """What the finder's bounds left unseen (`find`), in words."""
    return (f"{n} memor{'y shares' if n == 1 else 'ies share'} their words with more than {POSTINGS} others or "
            f"has more than {MAX_CANDIDATES} close ones, and {'was' if n == 1 else 'were'} compared with only "
            "some of them: pairs among them may be missing (docs/search.md)")


# ------------------------------------------------------------------ memories shown together
def shown_item(mid: str, body: str, location: str, type_: str | None, source: str | None,
               review_state: str | None, content_hash: str | None = None, path: str | None = None) -> dict[str, Any]:
    """The fields `among` and `core.precedence` read, from a search hit or an index row (`path`:
    where `precedence.standing` reads the review history that proves a reviewed claim)."""
    return {"id": mid, "body": body, "location": location, "type": type_, "source": source,
            "review_state": review_state, "content_hash": content_hash, "path": path}


def annotate(ctx: Context, entries: list[dict[str, Any]], items: Sequence[Mapping[str, Any]], *,
             reorder: bool = True) -> list[Contradiction]:
    """Mark the JSON `entries` of one answer (search hits, a list page, in the order shown; each
    with its `id`) from `items` (`shown_item` of each): every entry gets `tier` (its precedence
    tier) and `contradicts` (the ids shown with it that disagree with it, [] when none); with
    `reorder`, where a pair disagrees and the one precedence prefers comes later, it is moved up to
    just before the other. Nothing is removed. Returns the pairs found."""
    from git_memex.core.precedence import tier

    by_id = {str(it["id"]): it for it in items}
    for e in entries:
        it = by_id.get(str(e["id"]))
        e["tier"] = tier(it if it is not None else e)
        e["contradicts"] = []
    found = among(ctx, items)
    if not found:
        return []
    at = {str(e["id"]): e for e in entries}
    for c in found:
        for mine, other in ((c.a, c.b), (c.b, c.a)):
            got = at.get(mine)
            if got is None:
                continue
            if len(got["contradicts"]) < CONTRADICTS_LIMIT:
                got["contradicts"].append(other)
            else:
                got["contradicts_left_out"] = got.get("contradicts_left_out", 0) + 1
    if reorder:
        preferred_first(entries, found)
    return found


def preferred_first(entries: list[Any], pairs: Sequence[Contradiction], key: Any = None) -> None:
    """Reorder `entries` in place so that of each pair the one precedence prefers comes before
    the other (moved up to just before it); the rest keep their order. `key` gives an entry's id
    (default: `entry["id"]`). The preference is a strict order (tier, then review state), so this
    settles in at most one pass per pair."""
    get = key or (lambda e: e["id"])
    for _ in range(len(pairs) + 1):
        moved = False
        for c in pairs:
            if c.preferred is None:
                continue
            other = c.b if c.preferred == c.a else c.a
            pos = {get(e): i for i, e in enumerate(entries)}
            if c.preferred in pos and other in pos and pos[c.preferred] > pos[other]:
                entries.insert(pos[other], entries.pop(pos[c.preferred]))
                moved = True
        if not moved:
            return


def disagreement_json(c: Contradiction) -> dict[str, Any]:
    """One pair as an answer lists it: the ids, the one precedence prefers first."""
    d = c.to_json()
    return {"ids": [c.a, c.b], "kind": d["kind"], "values": d["values"], "preferred": c.preferred, "why": c.why}

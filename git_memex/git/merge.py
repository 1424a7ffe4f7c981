"""Pure 3-way merge of memory files: field-level frontmatter merge plus a line merge of the body.

Used by the git merge driver (one short-lived process per conflicted file, so this module
imports only the standard library, `frontmatter` and `model`; YAML is loaded lazily by
`frontmatter`) and by `git memex resolve`, which re-runs it on the index stages 1/2/3.

Rules (docs/decisions.md, merge rules): identity fields must agree; list fields are 3-way set merges; review_history
is a union in time order; updated_at and revision take the maximum; review_state goes to the
state furthest along unless one side rejected; lifecycle fields, other scalars and unknown keys
merge 3-way. Whatever both sides changed differently is a conflict, written with markers so
that nothing is lost. Input that is not a memory file gets a plain line merge and is never
reported clean.

`prefer="ours"|"theirs"` (`git memex resolve --ours|--theirs`) settles each conflict, and only
the conflicts, by that side: a conflicting field takes that side's value (a key the side lacks is
left out; when any lifecycle key conflicts, all of `status`, `supersedes` and `superseded_by`
come from that side, so the chain stays one side's), a conflicting body hunk that side's lines.
Everything the rules merge cleanly is kept from both sides, as `git merge-file --ours` does for
lines. Such a result is clean, and `taken` names the fields that side decided.
"""

from __future__ import annotations

import re

from git_memex.core.frontmatter import FrontmatterError, ordered_keys, parse, serialize
from git_memex.core.model import REVIEW_STATES, parse_time
from git_memex.core.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

IDENTITY_KEYS = ("id", "schema_version", "scope")
SET_KEYS = ("tags", "paths", "related", "aliases")
LIFECYCLE_KEYS = ("status", "supersedes", "superseded_by")
# How far along draft→proposed→approved→published each state is; "rejected" is off that path
# on purpose, so a rejection never loses to "further along".
_REVIEW_RANK = {s: i for i, s in enumerate(s for s in REVIEW_STATES if s != "rejected")}

MARKER_SIZE = 7
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


@record(frozen=True)
class FieldConflict:
    """One frontmatter key (or "body") that both sides changed in ways no rule can combine."""

    field: str
    base: Any
    ours: Any
    theirs: Any
    kind: str  # "field" | "lifecycle" | "review" | "body" | "identity"


@record(frozen=True)
class MergeResult:
    """What to write to %A, and whether git may treat it as resolved."""

    text: str
    clean: bool
    conflicts: tuple[FieldConflict, ...]
    auto_merged: tuple[str, ...]
    fallback: bool
    note: str = ""  # why the fallback was taken (one sentence), empty otherwise
    taken: tuple[str, ...] = ()  # with `prefer`: the conflicting fields (and "body") that side decided


class _Missing:
    """A key absent from one version; distinct from an explicit `null`."""

    _inst: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


# --------------------------------------------------------------------------- value equality


def _canon(v: Any) -> Any:
    """A hashable form where 1, 1.0 and True differ and NaN equals itself: equality as written."""
    if v is MISSING:
        return ("missing",)
    if isinstance(v, dict):
        return ("d", tuple((k, _canon(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("l", tuple(_canon(x) for x in v))
    return (type(v).__name__, repr(v))


def _same(a: Any, b: Any) -> bool:
    return _canon(a) == _canon(b)


def _fm_same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Top-level key order does not matter: the canonical writer decides it."""
    return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------- line merge


def split_lines(text: str) -> list[str]:
    """Split on "\\n" only, keeping the endings (str.splitlines also splits on \\x0c, \\u2028...)."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


# Myers costs O((N+M)·D) time and O(D²) memory: past this many steps (well under a second of
# pure Python) the fallback is difflib's SequenceMatcher. That one is quadratic on repeated
# lines without autojunk (20,000 equal lines: about a minute), so above _EXACT_DIFF_LINES
# lines its popular-line heuristic is allowed.
_MYERS_BUDGET = 1_000_000
_EXACT_DIFF_LINES = 2000


def _myers(a: list[str], b: list[str]) -> list[tuple[int, int, int]] | None:
    """Matching blocks of a shortest edit script (Myers 1986, as git's xdiff): a true LCS.

    difflib's longest-block-first heuristic can pair a line with a far-away copy of itself
    and turn a mergeable edit into a conflict; this is what git users expect instead.
    Returns None when the inputs are too different to finish within the budget.
    """
    n, m = len(a), len(b)
    max_d = n + m
    off = max_d + 1
    v = [0] * (2 * max_d + 3)
    trace: list[list[int]] = []
    work = 0
    for d in range(max_d + 1):
        trace.append(v[off - d - 1 : off + d + 2])  # V before step d, for k in -d-1..d+1
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            work += 1 + x - v[off + k]
            v[off + k] = x
            if x >= n and y >= m:
                return _myers_blocks(trace, n, m)
        if work > _MYERS_BUDGET:
            return None
    return None  # pragma: no cover - unreachable: d = n + m always finishes


def _myers_blocks(trace: list[list[int]], n: int, m: int) -> list[tuple[int, int, int]]:
    """Walk the saved V arrays back from (n, m), collecting the diagonal runs (i, j, length)."""
    x, y = n, m
    runs: list[tuple[int, int, int]] = []
    for d in range(len(trace) - 1, 0, -1):
        v = trace[d]  # V[k] is v[k + d + 1]
        k = x - y
        if k == -d or (k != d and v[k - 1 + d + 1] < v[k + 1 + d + 1]):
            px = v[k + 1 + d + 1]  # came down from diagonal k + 1
            py = px - (k + 1)
            sx, sy = px, py + 1
        else:
            px = v[k - 1 + d + 1]  # came right from diagonal k - 1
            py = px - (k - 1)
            sx, sy = px + 1, py
        if x > sx:
            runs.append((sx, sy, x - sx))
        x, y = px, py
    if x > 0:  # d = 0: the common run from (0, 0)
        runs.append((0, 0, x))
    runs.reverse()
    return runs


def _matching_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """Matching (i, j, n) blocks of a and b, ending with the (len(a), len(b), 0) sentinel.

    The common prefix and suffix are matched directly, like git's xdiff does, so the usual
    merge (a few edited lines in a file) costs almost nothing whatever the file's size.
    """
    la, lb = len(a), len(b)
    pre = 0
    while pre < la and pre < lb and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < la - pre and suf < lb - pre and a[la - 1 - suf] == b[lb - 1 - suf]:
        suf += 1
    blocks: list[tuple[int, int, int]] = [(0, 0, pre)] if pre else []
    ma, mb = a[pre : la - suf], b[pre : lb - suf]
    if ma and mb:
        mid = _myers(ma, mb)
        if mid is None:  # too different for an exact diff within budget
            from difflib import SequenceMatcher

            sm = SequenceMatcher(None, ma, mb, autojunk=max(len(ma), len(mb)) > _EXACT_DIFF_LINES)
            mid = [(i, j, n) for i, j, n in sm.get_matching_blocks() if n]
        blocks += [(i + pre, j + pre, n) for i, j, n in mid]
    if suf:
        blocks.append((la - suf, lb - suf, suf))
    blocks.append((la, lb, 0))
    return blocks


def _sync_regions(
    base: list[str], ours: list[str], theirs: list[str]
) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches of base that both sides kept unchanged (the merge3 / diff3 algorithm)."""
    am = _matching_blocks(base, ours)
    bm = _matching_blocks(base, theirs)
    ia = ib = 0
    out: list[tuple[int, int, int, int, int, int]] = []
    while ia < len(am) and ib < len(bm):
        abase, amatch, alen = am[ia]
        bbase, bmatch, blen = bm[ib]
        lo = max(abase, bbase)
        hi = min(abase + alen, bbase + blen)
        if lo < hi:
            asub = amatch + (lo - abase)
            bsub = bmatch + (lo - bbase)
            out.append((lo, hi, asub, asub + hi - lo, bsub, bsub + hi - lo))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    out.append((len(base), len(base), len(ours), len(ours), len(theirs), len(theirs)))
    return out


def _ensure_nl(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def render_conflict(
    base: list[str] | None,
    ours: list[str],
    theirs: list[str],
    *,
    labels: tuple[str, str, str] = ("ours", "base", "theirs"),
    marker_size: int = MARKER_SIZE,
) -> list[str]:
    """One diff3-style hunk; `base=None` leaves the base section out (add/add)."""
    n = marker_size
    out = [f"{'<' * n} {labels[0]}\n", *_ensure_nl(ours)]
    if base is not None:
        out += [f"{'|' * n} {labels[1]}\n", *_ensure_nl(base)]
    out += [f"{'=' * n}\n", *_ensure_nl(theirs), f"{'>' * n} {labels[2]}\n"]
    return out


def merge3_lines(
    base: list[str],
    ours: list[str],
    theirs: list[str],
    *,
    show_base: bool = True,
    labels: tuple[str, str, str] = ("ours", "base", "theirs"),
    marker_size: int = MARKER_SIZE,
    prefer: str | None = None,
) -> tuple[list[str], bool]:
    """diff3-style merge of three line lists (endings kept); returns (lines, clean). With
    `prefer` ("ours"/"theirs") a conflicting hunk is that side's lines, and `clean` still says
    whether any hunk conflicted."""
    if ours == theirs:
        return list(ours), True
    if base == ours:
        return list(theirs), True
    if base == theirs:
        return list(ours), True
    out: list[str] = []
    clean = True
    iz = ia = ib = 0
    for zmatch, zend, amatch, aend, bmatch, bend in _sync_regions(base, ours, theirs):
        a_part, b_part, z_part = ours[ia:amatch], theirs[ib:bmatch], base[iz:zmatch]
        if a_part or b_part or z_part:
            if a_part == b_part:
                out += a_part
            elif a_part == z_part:
                out += b_part
            elif b_part == z_part:
                out += a_part
            else:
                clean = False
                if prefer is not None:
                    out += a_part if prefer == "ours" else b_part
                else:
                    out += render_conflict(
                        z_part if show_base else None,
                        a_part,
                        b_part,
                        labels=labels,
                        marker_size=marker_size,
                    )
        out += base[zmatch:zend]
        iz, ia, ib = zend, aend, bend
    return out, clean


def merge2_lines(ours: list[str], theirs: list[str], prefer: str | None = None) -> tuple[list[str], bool]:
    """Add/add: no base, so lines both sides have are agreed and every difference is a conflict
    (with `prefer`, that side's lines)."""
    if ours == theirs:
        return list(ours), True
    out: list[str] = []
    i = j = 0
    for bi, bj, n in _matching_blocks(ours, theirs):
        if i < bi or j < bj:
            if prefer is not None:
                out += ours[i:bi] if prefer == "ours" else theirs[j:bj]
            else:
                out += render_conflict(None, ours[i:bi], theirs[j:bj])
        out += ours[bi : bi + n]
        i, j = bi + n, bj + n
    return out, False


def _merge_lines(
    base: list[str] | None, ours: list[str], theirs: list[str], prefer: str | None = None
) -> tuple[list[str], bool]:
    if base is None:
        return merge2_lines(ours, theirs, prefer)
    return merge3_lines(base, ours, theirs, prefer=prefer)


def _merge_plain(base: str | None, ours: str, theirs: str, prefer: str | None = None) -> tuple[str, bool]:
    lines, clean = _merge_lines(
        None if base is None else split_lines(base), split_lines(ours), split_lines(theirs), prefer
    )
    return "".join(lines), clean


# --------------------------------------------------------------------------- field rules


def _as_list(v: Any) -> list[Any] | None:
    """The items of a list field; MISSING/null count as empty; anything else is not a list."""
    if v is MISSING or v is None:
        return []
    return v if isinstance(v, list) else None


def _set_merge(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Removed on one side stays removed, added on either side is added; ours' order first."""
    bk = {_canon(x) for x in base}
    ok = {_canon(x) for x in ours}
    tk = {_canon(x) for x in theirs}
    out: list[Any] = []
    seen: set[Any] = set()
    for x in [*ours, *theirs]:
        k = _canon(x)
        if k in seen:
            continue
        if k in bk and not (k in ok and k in tk):
            continue  # in base, and one side removed it
        seen.add(k)
        out.append(x)
    return out


def _time(v: Any) -> float | None:
    try:
        return parse_time(v)
    except (ValueError, OverflowError, TypeError):
        return None


def _history_key(entry: Any) -> tuple[bool, float, str]:
    """By time; entries without a readable `at` last; ties in a fixed order so sides commute."""
    t = _time(entry.get("at")) if isinstance(entry, dict) else None
    return (t is None, t or 0.0, repr(_canon(entry)))


def _history_union(ours: list[Any], theirs: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out: list[Any] = []
    for e in [*ours, *theirs]:
        k = _canon(e)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return sorted(out, key=_history_key)


_NO = object()  # "this rule cannot combine the two values"


def _combine(key: str, base: Any, ours: Any, theirs: Any) -> tuple[Any, str]:
    """Both sides changed `key` differently: (merged value, "") or (_NO, conflict kind)."""
    if key in SET_KEYS:
        b, o, t = _as_list(base), _as_list(ours), _as_list(theirs)
        if b is not None and o is not None and t is not None:
            return _set_merge(b, o, t), ""
        return _NO, "field"
    if key == "review_history":
        o, t = _as_list(ours), _as_list(theirs)
        if o is not None and t is not None:
            return _history_union(o, t), ""
        return _NO, "field"
    if key == "updated_at":
        to, tt = _time(ours), _time(theirs)
        if isinstance(ours, str) and isinstance(theirs, str) and to is not None and tt is not None:
            return (theirs if tt > to else ours), ""
        return _NO, "field"
    if key == "revision":
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (ours, theirs)):
            return max(ours, theirs), ""
        return _NO, "field"
    if key == "review_state":
        if not (isinstance(ours, str) and isinstance(theirs, str)):
            return _NO, "review"
        if "rejected" in (ours, theirs) or ours not in _REVIEW_RANK or theirs not in _REVIEW_RANK:
            return _NO, "review"
        return (theirs if _REVIEW_RANK[theirs] > _REVIEW_RANK[ours] else ours), ""
    if key in LIFECYCLE_KEYS:
        return _NO, "lifecycle"
    return _NO, "field"


def _merge_fm(
    base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, Any], list[FieldConflict], list[str], list[str]]:
    """Returns (merged keys, conflicts, auto-merged keys, key order for output)."""
    order: list[str] = list(ours)
    order += [k for k in theirs if k not in ours]
    order += [k for k in base if k not in ours and k not in theirs]
    merged: dict[str, Any] = {}
    conflicts: list[FieldConflict] = []
    auto: list[str] = []
    for key in order:
        b, o, t = base.get(key, MISSING), ours.get(key, MISSING), theirs.get(key, MISSING)
        if key in IDENTITY_KEYS and not _same(o, t):
            conflicts.append(FieldConflict(key, b, o, t, "identity"))
            continue
        if _same(o, t) or _same(b, t):
            value = o
        elif _same(b, o):
            value = t
        else:
            value, kind = _combine(key, b, o, t)
            if value is _NO:
                conflicts.append(FieldConflict(key, b, o, t, kind))
                continue
            auto.append(key)
        if value is not MISSING:
            merged[key] = value
    return merged, conflicts, auto, order


# --------------------------------------------------------------------------- output


def _dump_key(key: str, value: Any) -> str:
    """The exact canonical lines for one key, taken from the canonical writer itself."""
    text = serialize({key: value}, "")
    assert text.startswith("---\n") and text.endswith("---\n\n")
    return text[4:-5]


def _render(
    merged: dict[str, Any],
    conflicts: list[FieldConflict],
    order: list[str],
    body_lines: list[str],
    show_base: bool,
) -> str:
    """The file with conflict markers around each conflicted key and body hunk."""
    by_key = {c.field: c for c in conflicts if c.field != "body"}
    placement = {k: None for k in order if k in merged or k in by_key}
    parts = ["---\n"]
    for key in ordered_keys(placement):
        c = by_key.get(key)
        if c is None:
            parts.append(_dump_key(key, merged[key]))
            continue
        # A side without the key shows as an empty section, as in any diff3 hunk.
        b, o, t = (
            [] if v is MISSING else split_lines(_dump_key(key, v))
            for v in (c.base, c.ours, c.theirs)
        )
        parts.extend(render_conflict(b if show_base else None, o, t))
    parts.append("---\n\n")
    parts.extend(body_lines)
    return "".join(parts)


def _body_lines(body: str) -> list[str]:
    return split_lines(body + "\n") if body else []


def _newline_style(text: str) -> str:
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _restyle(text: str, like: str) -> str:
    """Write the result with the line endings and BOM that "ours" used."""
    if _newline_style(like) == "\r\n":
        text = text.replace("\n", "\r\n")
    if like.startswith("\ufeff") and not text.startswith("\ufeff"):
        text = "\ufeff" + text
    return text


def _parse(text: str) -> tuple[dict[str, Any], str]:
    if _SURROGATE_RE.search(text):
        raise FrontmatterError("file is not valid UTF-8")
    return parse(text)


# --------------------------------------------------------------------------- entry point


def _fallback(base: str | None, ours: str, theirs: str, note: str, prefer: str | None = None) -> MergeResult:
    try:
        text, clean = _merge_plain(base, ours, theirs, prefer)
    except Exception:  # pragma: no cover - last resort: keep ours, still report a conflict
        text, clean, prefer = ours, False, None
    if prefer is not None:  # a side was asked for: the plain merge with that side's hunks is the answer
        return MergeResult(text=text, clean=True, conflicts=(), auto_merged=(), fallback=True, note=note,
                           taken=() if clean else ("body",))
    return MergeResult(
        text=text, clean=False, conflicts=(), auto_merged=(), fallback=True, note=note
    )


def merge_texts(base: str | None, ours: str, theirs: str, prefer: str | None = None) -> MergeResult:
    """3-way merge of memory file texts (`base=None` for add/add). Never raises.

    Invalid UTF-8 is expected as lone surrogates (bytes decoded with "surrogateescape") and,
    like anything that is not a readable memory file, gets a plain line merge reported as a
    conflict, so a human looks at it. With `prefer` ("ours"/"theirs") every conflict is settled
    by that side and the result is clean (module docstring).
    """
    if prefer not in (None, "ours", "theirs"):
        raise ValueError(f"prefer must be 'ours' or 'theirs', not {prefer!r}")
    try:
        try:
            pb = _parse(base) if base is not None else ({}, "")
            po, pt = _parse(ours), _parse(theirs)
        except FrontmatterError as exc:
            return _fallback(base, ours, theirs, str(exc), prefer)
        return _merge_parsed(base, ours, theirs, pb, po, pt, prefer)
    except Exception as exc:  # a bug must not lose the user's merge
        return _fallback(base, ours, theirs, f"internal error ({type(exc).__name__}: {exc})", prefer)


def _merge_parsed(
    base: str | None,
    ours: str,
    theirs: str,
    pb: tuple[dict[str, Any], str],
    po: tuple[dict[str, Any], str],
    pt: tuple[dict[str, Any], str],
    prefer: str | None = None,
) -> MergeResult:
    def done(text: str) -> MergeResult:
        return MergeResult(text=text, clean=True, conflicts=(), auto_merged=(), fallback=False)

    # One side changed nothing that matters: take the other side as written.
    if ours == theirs:
        return done(ours)
    if _fm_same(po[0], pt[0]) and po[1] == pt[1]:
        return done(ours)
    if base is not None and _fm_same(pb[0], po[0]) and pb[1] == po[1]:
        return done(theirs)
    if base is not None and _fm_same(pb[0], pt[0]) and pb[1] == pt[1]:
        return done(ours)

    merged, conflicts, auto, order = _merge_fm(pb[0], po[0], pt[0])
    bb, bo, bt = pb[1], po[1], pt[1]
    show_base = base is not None
    body_lines, body_clean = _merge_lines(
        _body_lines(bb) if show_base else None, _body_lines(bo), _body_lines(bt), prefer
    )
    if not body_clean:
        conflicts.append(FieldConflict("body", bb if show_base else None, bo, bt, "body"))
    elif bo != bt and bb not in (bo, bt):
        auto.append("body")
    if prefer is not None and conflicts:
        side = po[0] if prefer == "ours" else pt[0]
        taken = [c.field for c in conflicts]
        keys = [c.field for c in conflicts if c.field != "body"]
        if any(c.kind == "lifecycle" for c in conflicts):  # one side's chain, never half of each
            keys += [k for k in LIFECYCLE_KEYS if k not in keys]
        for key in keys:
            if key in side:
                merged[key] = side[key]
            else:
                merged.pop(key, None)
        return MergeResult(
            text=_restyle(serialize(merged, "".join(body_lines)), ours),
            clean=True,
            conflicts=(),
            auto_merged=tuple(auto),
            fallback=False,
            taken=tuple(taken),
        )
    if conflicts:
        text = _render(merged, conflicts, order, body_lines, show_base)
    else:
        text = serialize(merged, "".join(body_lines))
    return MergeResult(
        text=_restyle(text, ours),
        clean=not conflicts,
        conflicts=tuple(conflicts),
        auto_merged=tuple(auto),
        fallback=False,
    )

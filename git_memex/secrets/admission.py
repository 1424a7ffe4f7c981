"""The masking step of the one admission barrier: every string of a memory, masked, on every path.

Invariants:

- `admit` masks the body and EVERY string in the frontmatter (title, tags, paths, aliases,
  canonical_ref, summary, created_by, any unknown key), at any depth of lists and mappings,
  including mapping keys' values; only the protocol's structural keys (`STRUCTURAL`: ids, enums,
  timestamps, counters, whose validated values cannot hold a credential) are skipped. It reports
  the rule of each secret it masked, so a secret in a tag is reported like one in the body.
  Mapping keys are strings like any other and are masked too (a YAML or JSON key can itself be a
  token); two keys that mask to the same text stay apart (``~2``), so no value is dropped.
- The body goes through `redact.redact` (``<private>`` spans removed, then secrets masked); every
  other string is masked only (a ``<private>`` tag in a tag is masked like a secret is: its span
  is replaced by ``[REDACTED]``). Masking is in place and is a fixpoint, so admitting an admitted
  memory changes nothing and reports nothing.
- `core.files.file_text` (the bytes every write path puts on disk) calls `admit` without the
  team's patterns as a backstop; write paths call it first with `Context.redact_patterns` so the
  team's patterns apply and the report reaches the user. `mask_value` is the same masking for
  output that was not written by us (export, inventory, resolve, JSON listings).
- The detector runs once per string and pattern set in a process: a string it found clean, or
  the masked text it made (a fixpoint: masking it again changes and reports nothing), is
  remembered (`_CLEAN`, keyed by the exact text and the team's patterns), so the write path's
  own `admit` and `file_text`'s backstop scan each string once between them. Only text the
  detector itself produced or passed is remembered, never a guess; a text that differs by one
  character is scanned again, and the memo never outlives the process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from git_memex.secrets.fields import map_strings
from git_memex.secrets.rx import Rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.model import Memory
    from git_memex.secrets.redact import CopyMask, Redaction

# Frontmatter keys whose values the protocol types strictly (ids, enums, times, numbers). The
# reader checks enums, times and numbers exactly (`core.model.check_fields`), so those are never
# free text. The string-typed ones the reader cannot pin down (ids, `repo_id`, `via`,
# `language`) are kept unscanned only in their canonical shape (SHAPES); any other value is
# scanned and masked like free text: a hand-edited `supersedes: sk_live_…` is not an id.
STRUCTURAL = frozenset(
    {
        "id", "schema_version", "revision", "scope", "visibility", "type", "role", "importance",
        "instruction_state", "trust_level", "status", "review_state", "source", "confidence",
        "via", "created_at", "updated_at", "supersedes", "superseded_by", "repo_id", "language",
        "expires_at", "last_used_at", "use_count", "valid_from", "valid_until",
    }
)


_ULID = Rx(r"[0-9A-HJKMNP-TV-Z]{26}")
SHAPES: dict[str, Rx] = {
    "id": _ULID, "supersedes": _ULID, "superseded_by": _ULID,
    "repo_id": Rx(r"(?:git-origin|path)-sha256:[0-9a-f]{64}"),
    "via": Rx(r"(?:cli|mcp|import|hook|keyword|claude|codex)(?::[a-z0-9-]{1,32})?"),
    "language": Rx(r"[a-z]{2,5}"),
}
"""The canonical shape of each string-typed structural key: a value in it is kept unscanned."""


def structural_ok(key: str, value: Any) -> bool:
    """True when `key`'s value may skip the scan: a structural key whose value, if a string, is in
    its canonical shape: one of its enum's values for an enum key (`core.model.ENUMS`), an
    RFC 3339 time for a time key, the pattern in SHAPES for the others. A hand-edited
    `importance: ghp_…` is not an enum value: it is scanned and masked like free text."""
    if key not in STRUCTURAL:
        return False
    if not isinstance(value, str):
        return True
    from git_memex.core.model import ENUMS, RFC3339_RE, TIME_KEYS

    if key in ENUMS:
        return value in ENUMS[key]
    if key in TIME_KEYS or key in _OTHER_TIMES:
        return len(value) <= 64 and RFC3339_RE.match(value) is not None
    shape = SHAPES.get(key)
    return shape is None or shape.fullmatch(value) is not None


_OTHER_TIMES = frozenset({"last_used_at", "valid_from", "valid_until"})


def mask_text(text: str, patterns: Sequence[str] = ()) -> str:
    """`text` (a message that may quote a value read from a file or given by the user) with every
    secret in it masked: what every validation message and quarantine reason goes through."""
    return str(_mask_str(text, patterns, []))


_CLEAN: dict[tuple[str, ...], set[str]] = {}
"""Strings the detector found clean in this process (admitting them changes and reports
nothing), by the team's patterns they were scanned with: what it passed, and the masked text it
made (`redact` masks to a fixpoint). Emptied past CLEAN_MEMO_CHARS."""
_CLEAN_CHARS = [0]
CLEAN_MEMO_CHARS = 32 << 20
"""Characters the memo holds at most (an import of 10,000 memories remembers ~5 MB)."""
_FIXPOINT_ROUNDS = 64
"""`redact` masks round after round until one finds nothing, at most this many rounds: a
redaction with fewer findings than that ended on a round that found nothing."""


def _key(patterns: Sequence[str]) -> tuple[str, ...] | None:
    try:
        key = tuple(patterns)
        hash(key)
    except TypeError:  # a bad team pattern (not a string): no memo, the detector decides every time
        return None
    return key


def known_clean(value: str, patterns: Sequence[str] = ()) -> bool:
    """True when this process already found `value` clean with exactly these patterns."""
    key = _key(patterns)
    held = _CLEAN.get(key) if key is not None else None
    return held is not None and value in held


def _remember(value: str, patterns: Sequence[str]) -> None:
    key = _key(patterns)
    if key is None:
        return
    if _CLEAN_CHARS[0] + len(value) > CLEAN_MEMO_CHARS:
        _CLEAN.clear()
        _CLEAN_CHARS[0] = 0
    held = _CLEAN.setdefault(key, set())
    if value not in held:
        held.add(value)
        _CLEAN_CHARS[0] += len(value)


def _redacted(value: str, patterns: Sequence[str]) -> Redaction:
    """`redact.redact`, its result remembered as clean when it is a fixpoint."""
    from git_memex.secrets.redact import redact

    red = redact(value, patterns)
    if len(red.masked) < _FIXPOINT_ROUNDS:
        _remember(red.text, patterns)
    return red


def _mask_str(value: str, patterns: Sequence[str], found: list[str], seen: dict[str, str] | None = None) -> str:
    from git_memex.secrets.redact import find_secrets

    if value.isascii() and len(value) < 5:
        return value  # too short to hold a maskable secret
    if known_clean(value, patterns):
        return value
    if "<private" not in value.lower() and not find_secrets(value, patterns):
        _remember(value, patterns)
        return value
    red = _redacted(value, patterns)
    found.extend(red.masked)
    if seen is not None:
        seen.update(red.values)
    if red.private_spans:
        found.extend(["private"] * red.private_spans)
    return red.text


def _structural(skip: frozenset[str]) -> Callable[[str, Any], bool] | None:
    """`fields.map_strings`' `keep` for the keys in `skip`: their values kept while `structural_ok`."""
    return (lambda k, v: k in skip and structural_ok(k, v)) if skip else None


def _walk(value: Any, patterns: Sequence[str], found: list[str], seen: dict[str, str] | None = None) -> Any:
    return map_strings(value, lambda s: _mask_str(s, patterns, found, seen))


def _walk_mapping(
    value: dict[Any, Any], patterns: Sequence[str], found: list[str], skip: frozenset[str],
    seen: dict[str, str] | None = None,
) -> dict[Any, Any]:
    """`value`'s keys and values masked; the values of the keys in `skip` are kept."""
    out: dict[Any, Any] = map_strings(value, lambda s: _mask_str(s, patterns, found, seen), _structural(skip))
    return out


def _copies_walk(value: Any, seen: CopyMask, found: list[str], skip: frozenset[str] = frozenset()) -> Any:
    """`value` with every copy of the secrets `seen` holds masked (`redact.CopyMask`, built once
    by the caller for all the strings), at any depth, mapping keys too; the values of structural
    keys in their canonical shape are kept."""

    def copies(text: str) -> str:
        masked, rules = seen.mask(text)
        found.extend(rules)
        return masked

    return map_strings(value, copies, _structural(skip))


def mask_value(value: Any, patterns: Sequence[str] = ()) -> tuple[Any, list[str]]:
    """`value` with every string in it (at any depth) masked, and the rules of what was masked."""
    found: list[str] = []
    return _walk(value, patterns, found), found


def mask_fields(fm: dict[str, Any], patterns: Sequence[str] = ()) -> tuple[dict[str, Any], list[str]]:
    """A copy of frontmatter `fm` with every non-structural string masked, and what was masked.

    A string is also read beside its key, at any depth (`_keyed`): a value no string shows alone
    is a secret after a secret-named key (``password: Hunter2024x``, the key spelled with YAML
    escapes in a file committed past the hook), as the whole-file pass of `admit` reads it."""
    found: list[str] = []
    return _keyed(_walk_mapping(fm, patterns, found, skip=STRUCTURAL), patterns, found), found


def _keyed(fm: dict[str, Any], patterns: Sequence[str], found: list[str]) -> dict[str, Any]:
    """`fm` with each string read beside its key (`keys.map_beside_keys`: under a key that is not
    the protocol's own) masked where the detector, reading ``name: string`` for its key, else the
    key of the mapping it is in, masks part of it. One detector pass a string."""
    from git_memex.secrets.keys import map_beside_keys
    from git_memex.secrets.redact import redact

    def beside(names: tuple[str, ...], v: str, _top: str) -> str:
        for name in names:
            lead = f"{name}: "
            red = redact(lead + v, patterns)
            if red.text != lead + v and red.text.startswith(lead) and red.text[len(lead):] != v:
                found.extend(red.masked)
                return red.text[len(lead):]
        return v

    return map_beside_keys(fm, beside)


def secret_field(fm: dict[str, Any], body: str, patterns: Sequence[str] = ()) -> tuple[str, str] | None:
    """(field, rule) of the first thing the admission barrier would mask in a memory, or None.

    The same decision as `admit` below (every non-structural string at any depth,
    mapping keys too, the body through `redact`), asked one frontmatter key at a time so the
    answer can name the field. A key that is itself a secret is named "a frontmatter key"."""
    from git_memex.secrets.redact import redact

    for key, value in fm.items():
        _, found = mask_fields({key: value}, patterns)
        if found:
            name = key if isinstance(key, str) and not mask_value(key, patterns)[1] else "a frontmatter key"
            return (str(name), found[0])
    if body:
        red = redact(body, patterns)
        if red.masked:
            return ("text", red.masked[0])
        if red.private_spans:
            return ("text", "private")
    return None


def refusal(name: str, raw: bytes, m: Memory, patterns: Sequence[str] = ()) -> str | None:
    """Why a memory file that came from elsewhere (a pulled change, a file put by hand in a relay's
    folder) may not be kept as it is, or None. Such a file is refused, never masked, so what is
    kept is what was sent: the commit checks of its bytes (`secrets.scan.check_bytes`: secrets,
    conflict markers), then whatever `admit` would mask, field by field (`secret_field`: a secret
    the scan of the text does not name, a `<private>` span). The answer reads after a subject:
    "holds a secret (aws-access-key, line 4)"."""
    from git_memex.secrets.scan import check_bytes

    found = check_bytes(name, raw, in_repo=False, patterns=patterns)
    if found:
        f = found[0]
        return f"holds a secret ({f.rule}, line {f.line})" if f.secret else f"fails a check ({f.rule}, line {f.line})"
    masked = secret_field(m.fm, m.body, patterns)
    if masked is None:
        return None
    field, rule = masked
    if rule == "private":
        return f"holds a span marked private in its {field} field, which is never served"
    return f"holds a secret ({rule}) in its {field} field"


def admit(
    m: Memory, patterns: Sequence[str] = (), *, body: bool = True, values: Sequence[tuple[str, str]] = ()
) -> tuple[str, ...]:
    """Mask every string of `m` in place (body too unless ``body=False``, for a body the caller
    already redacted, whose `Redaction.values` it passes as ``values``); return the rules of the
    secrets masked, body first.

    A secret found in one field is masked in every field where it is repeated: the values found
    in the body and in each string of the frontmatter are looked for again in all of them
    (`redact.mask_copies`), so ``password: V`` in the body and ``V`` as an alias, in a path or a
    tag leave no ``V`` behind."""
    found: list[str] = []
    seen: dict[str, str] = dict(values)
    if body and m.body and not known_clean(m.body, patterns):
        red = _redacted(m.body, patterns)
        if red.text != m.body:
            m.body = red.text
            found.extend(red.masked)
            seen.update(red.values)
    in_fields: list[str] = []
    fm = _walk_mapping(m.fm, patterns, in_fields, skip=STRUCTURAL, seen=seen)
    if seen:
        from git_memex.secrets.redact import CopyMask

        copies = CopyMask(seen)  # built once for every field (issue 31: once per string was O(F x V))
        fm = _copies_walk(fm, copies, in_fields, skip=STRUCTURAL)
        if m.body:
            text, rules = copies.mask(m.body)
            if rules:
                m.body = text
                found.extend(rules)
    if in_fields:
        if isinstance(fm.get("tags"), list) and fm["tags"] != m.fm.get("tags"):
            from git_memex.core.model import normalize_tags

            fm["tags"] = normalize_tags(fm["tags"])  # a tag kept as given for its secret, now masked
        m.fm.clear()
        m.fm.update(fm)
        found.extend(in_fields)
    return tuple(found)


def tag_holds_secret(tag: str) -> bool:
    """Whether a tag holds a secret as given (before `core.model.normalize_tags` lower-cases and
    dashes it, which would hide ``AKIA…`` or ``password Xq7k…`` from the detector): the write
    paths hand it to `model.create`, so such a tag reaches `admit` as given, to be masked."""
    from git_memex.secrets.redact import redact

    return bool(redact(tag).masked)

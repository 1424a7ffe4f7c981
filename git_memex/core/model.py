"""The memory record: enums of protocol v0.2, validation on write, lenient v1 reading."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path

from git_memex.core.record import field, record
from git_memex.errors import USAGE, MemexError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypedDict, Unpack

    class Chosen(TypedDict, total=False):
        """What the writer chooses about a new memory: `create`'s keywords, which `ops.add`
        forwards as they came (`**chosen: Unpack[Chosen]`). Defaults are `create`'s."""

        scope: str
        type: str
        tags: list[str] | None
        importance: str
        role: str
        source: str
        visibility: str | None
        confidence: str | None
        via: str
        paths: list[str] | None

_CHOSEN = frozenset(("scope", "type", "tags", "importance", "role", "source", "visibility", "confidence", "via",
                     "paths"))
"""`Chosen`'s keys at run time (where `typing` is not imported), for `create`'s refusal of any other;
tests/core/test_model.py checks the two agree."""

SCHEMA_VERSION = 2

SCOPES = ("personal", "project", "org")
RESERVED_SCOPES = ("team", "public")
VISIBILITIES = ("private", "internal", "shared")
TYPES = (
    "preference",
    "fact",
    "decision",
    "lesson",
    "warning",
    "workflow",
    "architecture",
    "constraint",
    "todo",
    "knowledge",
    "observation",
    "howto",
    "gotcha",
    "reference",
)
ROLES = ("knowledge", "instruction")
IMPORTANCES = ("low", "normal", "high")
INSTRUCTION_STATES = ("draft", "approved", "revoked")
TRUST_LEVELS = ("untrusted", "reviewed", "trusted")
STATUSES = ("active", "superseded", "deprecated", "retracted", "archived")
REVIEW_STATES = ("draft", "proposed", "approved", "rejected", "published")
SOURCES = ("user", "tool", "keyword", "inference", "import", "cli")
CONFIDENCES = ("high", "medium", "low")

ENUMS: dict[str, tuple[str, ...]] = {
    "scope": SCOPES,
    "visibility": VISIBILITIES,
    "type": TYPES,
    "role": ROLES,
    "importance": IMPORTANCES,
    "instruction_state": INSTRUCTION_STATES,
    "trust_level": TRUST_LEVELS,
    "status": STATUSES,
    "review_state": REVIEW_STATES,
    "source": SOURCES,
    "confidence": CONFIDENCES,
}
LIST_KEYS = ("tags", "paths", "related", "aliases")
TIME_KEYS = ("created_at", "updated_at", "expires_at")

ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
# Ids we read: ULIDs, and the shorter ids of v1/reference-tool files. Never a path.
SAFE_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$")
RFC3339_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$", re.ASCII)

# v1 → v2 type names the reference tool used (docs/decisions.md, migration).
V1_TYPE_MAP = {
    "note": "knowledge",
    "error-solution": "lesson",
    "instruction": "knowledge",
    "convention": "constraint",
    "tip": "howto",
    "bug": "gotcha",
    "pattern": "knowledge",
}


class ValidationError(MemexError, ValueError):
    """A memory does not satisfy the protocol; the message is one sentence (exit 1, usage)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_last_id: tuple[int, int] = (0, 0)


def new_id() -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, Crockford base32, monotonic per process.

    Written here rather than imported: python-ulid's import costs ~33 ms (median of 9 `python -X importtime`
    runs; it loads importlib.metadata), paid by every `add` and capture hook. Tests check our ids against it.
    """
    import os

    global _last_id
    ms = time.time_ns() // 1_000_000
    rnd = int.from_bytes(os.urandom(10), "big")
    last_ms, last_rnd = _last_id
    if ms <= last_ms:  # same millisecond (or a clock step back): keep the order, add one
        ms, rnd = last_ms, (last_rnd + 1) & ((1 << 80) - 1)
    _last_id = (ms, rnd)
    value = (ms << 80) | rnd
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_ms_to_rfc3339(ms: int | float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_RELATIVE_RE = re.compile(r"^\s*(\d{1,6})\s*([hdw])\s*$", re.ASCII)  # ASCII digits only: "１d" is not 1 day


def expiry(when: str, *, at: float | None = None) -> str:
    """`add --expires WHEN` as the RFC 3339 `expires_at` it sets: `30d`, `12h`, `2w` from now, a
    date (`2027-01-31`: the end of that day, UTC) or an RFC 3339 time. Raises ValueError with the
    sentence to show for a bad format or a time that is not in the future."""
    t = time.time() if at is None else at
    if not when.isascii():  # full-width or Arabic-Indic digits, look-alike letters: never read as a time
        raise ValueError(f"--expires {when!r} holds characters other than ASCII; write the digits as 0-9, "
                         "such as 30d, 12h, 2w, 2027-01-31 or 2027-01-31T18:00:00Z")
    m = _RELATIVE_RE.match(when)
    if m:
        secs = int(m.group(1)) * {"h": 3600, "d": 86400, "w": 7 * 86400}[m.group(2)]
        ts = t + secs
    else:
        text = when.strip()
        try:
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                ts = datetime.fromisoformat(text + "T23:59:59+00:00").timestamp()
            else:
                d = datetime.fromisoformat(text.replace("Z", "+00:00"))
                if d.tzinfo is None:
                    raise ValueError("no time zone")
                ts = d.timestamp()
        except (ValueError, OverflowError):
            raise ValueError(f"--expires {when!r} is not a time; give 30d, 12h, 2w, a date such as 2027-01-31, "
                             "or an RFC 3339 time with its zone (2027-01-31T18:00:00Z)") from None
    if ts <= t:
        raise ValueError(f"--expires {when!r} is in the past; give a time after now")
    if ts * 1000 > MAX_EPOCH_MS:
        raise ValueError(f"--expires {when!r} is after 9999-12-31; give an earlier time")
    return epoch_ms_to_rfc3339(ts * 1000)


def is_agent_road(via: object) -> bool:
    """`via` of a write an agent made: `mcp`, or `mcp:<host>` (the MCP client that made it)."""
    return isinstance(via, str) and (via == "mcp" or via.startswith("mcp:"))


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and bool(SAFE_ID_RE.match(value))


def parse_time(value: object) -> float | None:
    """Seconds since the epoch for an RFC 3339 string (or v1 epoch ms); None if absent/bad."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value / 1000 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


# ---------------------------------------------------------------- field types (v2 schema)
# Every known key has one type and bounds; a file whose value breaks them is quarantined with
# the sentence `check_fields` raises, so one hostile value pulled from a teammate never reaches
# the code that trusts these types (and never stops the files around it).
MAX_INT = 2**53
"""Largest integer any frontmatter number may hold (also what JSON readers keep exactly)."""
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the last time RFC 3339 can spell
MAX_LIST_ITEMS = 1000
MAX_TEXT_CHARS = 4096
_STR_KEYS = frozenset({
    *ENUMS, "created_by", "promoted_by", "approved_by", "via", "supersedes", "superseded_by",
    "repo_id", "language", "canonical_ref", "scope_key", "project_name", "proposed_by",
    "review_note", "scope_kind", "derived_from", "alias", "target", "source_detail",
})
STR_KEYS = _STR_KEYS
"""Keys whose value is a string (or null), at most MAX_TEXT_CHARS long."""
_INT_KEYS = frozenset({"schema_version", "revision"})
_STR_LIST_KEYS = frozenset({*LIST_KEYS})


class FieldError(ValueError):
    """A known frontmatter key holds a value of the wrong type or out of bounds (one sentence)."""


def _short(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**20:
        return f"(a {v.bit_length()}-bit number)"
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def future_version(v: int) -> str:
    return (f"schema_version {v} is newer than this git-memex reads ({SCHEMA_VERSION}); run a newer "
            "git-memex")


def check_fields(fm: dict[str, Any]) -> None:
    """Raise FieldError unless every known key has its v2 type and bounds.

    Strings for enum, id, person and name keys; non-negative integers below MAX_INT for
    `schema_version` and `revision`; RFC 3339 strings (or v1 epoch milliseconds up to year 9999)
    for times; lists of strings (at most MAX_LIST_ITEMS) for tags, paths, related and aliases (a
    v1 comma-separated string is read too); a list of mappings for `review_history`. Numbers
    anywhere are bounded and finite (`core.frontmatter` checks that part for every key).
    """
    for key, v in fm.items():
        if v is None:
            continue
        if key in _STR_KEYS:
            if not isinstance(v, str):
                raise FieldError(f"{key} {_short(v)} is not a string")
            if len(v) > MAX_TEXT_CHARS:
                raise FieldError(f"{key} is longer than {MAX_TEXT_CHARS} characters")
            if key == "scope" and v.strip().lower() in RESERVED_SCOPES:
                # refused by the writer, the schema and the pre-commit hook: the reader agrees
                raise FieldError(f"scope {v.strip()!r} is reserved by the protocol (use project, personal or org)")
        elif key in _INT_KEYS:
            if not (type(v) is int and 0 <= v < MAX_INT):
                raise FieldError(f"{key} {_short(v)} is not a whole number between 0 and 2^53")
            if key == "schema_version" and v > SCHEMA_VERSION:
                raise FieldError(future_version(v))
        elif key in TIME_KEYS:
            if isinstance(v, str):
                if len(v) > 64:
                    raise FieldError(f"{key} is not a time (longer than 64 characters)")
                if key == "expires_at" and (not RFC3339_RE.match(v) or parse_time(v) is None):
                    # it decides what is retrieved: a time that cannot be read would never expire
                    raise FieldError(f"expires_at {_short(v)} is not an RFC 3339 time such as 2027-01-31T00:00:00Z")
            elif not (_is_number(v) and 0 <= v <= MAX_EPOCH_MS):
                raise FieldError(f"{key} {_short(v)} is not an RFC 3339 time")
        elif key in _STR_LIST_KEYS:
            if isinstance(v, str):
                continue
            if not isinstance(v, list):
                raise FieldError(f"{key} {_short(v)} is not a list of strings")
            if len(v) > MAX_LIST_ITEMS:
                raise FieldError(f"{key} has {len(v)} items; at most {MAX_LIST_ITEMS} are allowed")
            for item in v:
                if not isinstance(item, str):
                    raise FieldError(f"{key} item {_short(item)} is not a string (quote it)")
        elif key == "review_history":
            if not isinstance(v, list) or not all(isinstance(h, dict) for h in v):
                raise FieldError("review_history is not a list of mappings")
            if len(v) > MAX_LIST_ITEMS:
                raise FieldError(f"review_history has more than {MAX_LIST_ITEMS} entries")


@record
class Memory:
    """One memory: its frontmatter (all keys, known and unknown) and body."""

    fm: dict[str, Any]
    body: str
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.fm.get("id", ""))

    def get(self, key: str, default: Any = None) -> Any:
        v = self.fm.get(key)
        return default if v is None else v

    @property
    def scope(self) -> str:
        return str(self.get("scope", "project"))

    @property
    def type(self) -> str:
        return str(self.get("type", "fact"))

    @property
    def status(self) -> str:
        return str(self.get("status", "active"))

    @property
    def review_state(self) -> str | None:
        v = self.fm.get("review_state")
        return None if v is None else str(v)

    @property
    def tags(self) -> list[str]:
        return _str_list(self.fm.get("tags"))

    @property
    def paths(self) -> list[str]:
        return _str_list(self.fm.get("paths"))


# ------------------------------------------------------------------ what a review state is worth
REVIEW_ORDER = {"published": 3, "approved": 3, "proposed": 2, "draft": 1, "rejected": 0}
"""A review standing's level (docs/search.md, "Reviewed knowledge first"): reviewed, in review,
unreviewed, rejected. Search orders hits holding the same words by it (`search.scoring`), and one
fact shown once keeps the copy of the highest (`core.precedence.one_fact_once`)."""
REVIEWED_STATES = ("approved", "published")
"""The review states that say people reviewed a memory: a claim worth something only where
`standing` finds it recorded."""


def review_recorded(fm: dict[str, Any], state: str) -> bool:
    """Whether the review history records the step to `state`: its last entry about the review state
    (one without ``field``, which marks an `instruction approve`/`revoke`) goes `to` it and names who
    took it. What `promote`, `pr-status --apply` and `propose --local-approve` write with each step;
    a hand edit of ``review_state`` alone writes none."""
    hist = fm.get("review_history")
    if not isinstance(hist, list):
        return False
    for h in reversed(hist):
        if not isinstance(h, dict) or h.get("field") not in (None, "review_state"):
            continue
        return h.get("to") == state and bool(str(h.get("by") or "").strip())
    return False


def standing(location: str, fm: dict[str, Any]) -> str | None:
    """The review state a memory has by where it is and what proves it (docs/search.md, "Reviewed
    knowledge first"), which ranking and every label use; the file's own ``review_state`` is only a
    claim, kept as written:

    * personal: None (no one reviews a person's own memories);
    * the outbox and the private folder (this machine, not yet submitted): ``draft``, whatever the
      file says;
    * the repository and an org repository: the claim, except that ``approved`` and ``published``
      count only when the review history records the step (`review_recorded`); an unrecorded claim
      stands as ``proposed`` (in the repository, so submitted; not shown to have been reviewed);
    * a remote server's memory: the state the server gave it (the server is the reviewer of record,
      docs/remote.md).

    No ``review_state`` at all (an org file of the seed's layout) is None, which ranks as a draft
    and labels nothing, as before; a value that is not a review state (the index masks such enum
    values) stands as ``draft``."""
    claim = fm.get("review_state")
    if location == "personal":
        return None
    if location in ("outbox", "private"):
        return "draft"
    if claim is None:
        return None
    state = claim if claim in REVIEW_STATES else "draft"
    if location.startswith("remote:"):
        return state
    if state in REVIEWED_STATES and not review_recorded(fm, state):
        return "proposed"
    return state


def claim_beyond(location: str, claim: Any, stands: str | None) -> str | None:
    """The file's own ``review_state`` where it claims more than the memory's `standing` (an outbox
    draft, or a hand-edited repository file, saying published); None where the claim is what it is
    (or less: a repository file is never shown as claiming ``draft``)."""
    ladder = ("draft", "proposed", "approved", "published")
    if location == "personal" or claim not in ladder or claim == stands:
        return None
    return str(claim) if ladder.index(claim) > (ladder.index(stands) if stands in ladder else 0) else None


def _str_list(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, list):
        return [str(x) for x in v if x is not None and not isinstance(x, (dict, list))]
    return [str(v)]


def normalize_tags(tags: list[str] | str | None, as_given: Callable[[str], bool] | None = None) -> list[str]:
    """Lower-case, dash-joined, each once, in order (linear); ValidationError past MAX_LIST_ITEMS.

    A tag that normalising changes and for which `as_given` says yes is kept as given: the write
    paths pass `secrets.admission.tag_holds_secret` (a secret is found by its case and its
    spaces, ``AKIA…``, ``AIza…``, ``password Xq7k…``, which the lower-cased, dashed tag no longer
    has), so the admission barrier masks and reports it (`secrets.admission.admit`; issue 31).
    Core imports no detector: the test is handed in (tests/test_layers.py)."""
    raw = _str_list(tags)
    if len(raw) > MAX_LIST_ITEMS:
        raise ValidationError(f"{len(raw)} tags given; at most {MAX_LIST_ITEMS} are allowed")
    out: list[str] = []
    seen: set[str] = set()
    for t in raw:
        plain = "-".join(t.lower().split())
        if plain != t and plain and as_given is not None and as_given(t):
            plain = t.strip()
        t = plain
        if t and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def create(
    body: str,
    *,
    review_state: str | None = None,
    created_by: str | None = None,
    repo_id: str | None = None,
    language: str | None = None,
    extra: dict[str, Any] | None = None,
    tags_as_given: Callable[[str], bool] | None = None,
    **chosen: Unpack[Chosen],
) -> Memory:
    """A new memory with every protocol key set, validated; `language` detected from the body
    when not given (`textproc.language_of`). The writer's choices (`Chosen`) default to a
    project fact by the CLI; the keywords after them are the write path's own."""
    unknown = chosen.keys() - _CHOSEN
    if unknown:  # what a keyword-only signature would refuse, kept
        raise TypeError(f"create() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    scope = chosen.get("scope", "project")
    type = chosen.get("type", "fact")
    role = chosen.get("role", "knowledge")
    source = chosen.get("source", "cli")
    via = chosen.get("via", "cli")
    visibility = chosen.get("visibility")
    ts = now()
    if language is None:
        from git_memex.core.textproc import language_of

        language = language_of(body)
    if visibility is None:
        visibility = "private" if scope == "personal" else "internal"
    if review_state is None and scope != "personal":
        review_state = "draft"
    fm: dict[str, Any] = {
        "id": new_id(),
        "schema_version": SCHEMA_VERSION,
        "revision": 1,
        "scope": scope,
        "visibility": visibility,
        "type": type,
        "role": role,
        "importance": chosen.get("importance", "normal"),
        "instruction_state": "draft" if role == "instruction" else None,
        # An agent's own memory (MCP, or inferred) starts untrusted: only a person raises trust
        # (`git memex instruction approve`); what a person typed or said starts reviewed.
        "trust_level": "untrusted" if source == "inference" or is_agent_road(via) else "reviewed",
        "status": "active",
        "review_state": review_state,
        "source": source,
        "confidence": chosen.get("confidence") or ("low" if source == "inference" else "medium"),
        "created_by": created_by,
        "via": via,
        "created_at": ts,
        "updated_at": ts,
        "supersedes": None,
        "superseded_by": None,
        "repo_id": repo_id if scope != "personal" else None,
        "language": language,
        "tags": normalize_tags(chosen.get("tags"), tags_as_given),
        "paths": list(chosen.get("paths") or []),
        "related": [],
    }
    if extra:
        fm.update(extra)
    m = Memory(fm=fm, body=body)
    validate(m)
    return m


def validate(m: Memory) -> None:
    """Strict checks before any write; raises ValidationError with one sentence."""
    fm = m.fm
    if not is_valid_id(fm.get("id")):
        raise ValidationError(f"memory id {fm.get('id')!r} is not a valid id")
    version = fm.get("schema_version")  # absent or 1: a v1 file, read leniently (normalize)
    if version not in (None, 1, SCHEMA_VERSION) or isinstance(version, bool):
        if type(version) is int and version > SCHEMA_VERSION:
            raise ValidationError(future_version(version))
        raise ValidationError(f"schema_version {version!r} is not valid; this git-memex writes {SCHEMA_VERSION}")
    scope = fm.get("scope")
    if scope in RESERVED_SCOPES:
        raise ValidationError(f"scope {scope!r} is reserved by the protocol; use one of: {', '.join(SCOPES)}")
    for key, allowed in ENUMS.items():
        v = fm.get(key)
        if v is None:
            if key in ("scope", "type", "status"):
                raise ValidationError(f"{key} is required; use one of: {', '.join(allowed)}")
            continue
        if v not in allowed:
            raise ValidationError(f"{key} {v!r} is not valid; use one of: {', '.join(allowed)}")
    if fm.get("role") == "instruction" and fm.get("instruction_state") is None:
        fm["instruction_state"] = "draft"
    for key in TIME_KEYS:
        v = fm.get(key)
        if v is not None and not (isinstance(v, str) and RFC3339_RE.match(v)):
            raise ValidationError(f"{key} {v!r} is not an RFC 3339 time such as 2026-09-26T12:00:00Z")
    for key in LIST_KEYS:
        v = fm.get(key)
        if v is not None and not isinstance(v, list):
            raise ValidationError(f"{key} must be a list")
    for key in ("supersedes", "superseded_by"):
        v = fm.get(key)
        if v is not None and not is_valid_id(v):
            raise ValidationError(f"{key} {v!r} is not a memory id")
    if not m.body.strip():
        raise ValidationError("memory text is empty")


def is_v1(fm: dict[str, Any]) -> bool:
    return fm.get("schema_version") in (None, 1) and (
        "scope_kind" in fm
        or "priority" in fm
        or isinstance(fm.get("created_at"), (int, float))
        or fm.get("scope_key") == "user"
        or fm.get("scope") == "user"
    )


def _importance_from_priority(p: Any) -> str:
    try:
        n = int(p)
    except (TypeError, ValueError):
        return "normal"
    return "low" if n <= 3 else "high" if n >= 8 else "normal"


def normalize(fm: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Lenient reading: map v1 and reference-tool frontmatter onto v2; return (fm, changes).

    Unknown keys are kept. The input dict is not modified.
    """
    out = dict(fm)
    changes: list[str] = []
    scope = out.get("scope") or out.get("scope_kind")
    if scope == "user" or (scope is None and out.get("scope_key") == "user"):
        out["scope"] = "personal"
        if out.get("scope_key") == "user":
            out["scope_key"] = "personal"
        if out.get("visibility") is None:
            out["visibility"] = "private"
        changes.append("scope user → personal")
    elif scope is not None and out.get("scope") is None:
        out["scope"] = scope
    if "scope_kind" in out:
        out.pop("scope_kind")
        changes.append("scope_kind folded into scope")
    if out.get("scope") == "project" and out.get("visibility") is None:
        out["visibility"] = "internal"
    t = out.get("type")
    if t == "instruction":
        out["type"] = "knowledge"
        out["role"] = "instruction"
        out.setdefault("instruction_state", "draft")
        changes.append('type "instruction" → knowledge + role instruction')
    elif isinstance(t, str) and t not in TYPES:
        mapped = V1_TYPE_MAP.get(t, "knowledge")
        out["type"] = mapped
        changes.append(f'type "{t}" → {mapped}')
    if out.get("role") is None:
        out["role"] = "knowledge"
    if "priority" in out:
        p = out.pop("priority")
        if out.get("importance") is None:
            out["importance"] = _importance_from_priority(p)
        changes.append(f"priority {p} → importance {out['importance']}")
    for key in TIME_KEYS:
        v = out.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = epoch_ms_to_rfc3339(v)  # v1 wrote epoch milliseconds
            changes.append(f"{key} epoch → RFC 3339")
    if out.get("status") is None:
        out["status"] = "active"
    if out.get("schema_version") != SCHEMA_VERSION:
        changes.append(f"schema_version {out.get('schema_version')} → {SCHEMA_VERSION}")
        out["schema_version"] = SCHEMA_VERSION
    src = out.get("source")
    if src is not None and src not in SOURCES:
        out["source"] = "import"
        changes.append(f'source "{src}" → import')
    if out.get("tags") is not None and not isinstance(out.get("tags"), list):
        out["tags"] = _str_list(out.get("tags"))
    return out, changes


def from_parsed(fm: dict[str, Any], body: str, path: Path | None = None) -> Memory:
    """A Memory from a file's parsed frontmatter, normalised for reading (not for writing back)."""
    if fm.get("source") == "":  # the reference tool writes `source: ""` for "not said"
        fm = {k: v for k, v in fm.items() if k != "source"}
    norm, changes = normalize(fm) if is_v1(fm) or fm.get("type") not in TYPES else (fm, [])
    m = Memory(fm=norm, body=body, path=path)
    if changes:
        m.warnings.extend(changes)
    return m


def stamp_reference(fm: dict[str, Any], keys: dict[str, str]) -> None:
    """Fill in the reference tool's `scope_key` / `project_name` where a project file lacks them
    (a value already there is kept: it is how that tool knows the file)."""
    if fm.get("scope") in (None, "project"):
        for key, value in keys.items():
            if not fm.get(key):
                fm[key] = value


def touch(m: Memory) -> None:
    """Mark a rewrite: updated_at now, revision + 1."""
    m.fm["updated_at"] = now()
    rev = m.fm.get("revision")
    m.fm["revision"] = (rev + 1) if isinstance(rev, int) and not isinstance(rev, bool) else 2


def age_days(m: Memory, at: float | None = None) -> float:
    t = parse_time(m.fm.get("updated_at")) or parse_time(m.fm.get("created_at"))
    if t is None:
        return 3650.0
    return max(0.0, ((at or time.time()) - t) / 86400)

"""Parse and serialise one memory file: `---` YAML frontmatter, blank line, markdown body.

The written form is canonical (stable key order, one key per line, block lists) so
that line-based git merges of two edits rarely touch the same line, and so that
reading and rewriting a file we wrote changes nothing. Unknown keys are kept.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Known keys in the order of the protocol (docs/decisions.md, frontmatter key order), then the keys the
# TypeScript reference tool adds. Anything else follows in the order it was read.
KEY_ORDER: tuple[str, ...] = (
    "id",
    "schema_version",
    "revision",
    "scope",
    "visibility",
    "type",
    "role",
    "importance",
    "instruction_state",
    "trust_level",
    "status",
    "review_state",
    "source",
    "confidence",
    "created_by",
    "promoted_by",
    "approved_by",
    "via",
    "created_at",
    "updated_at",
    "supersedes",
    "superseded_by",
    "expires_at",
    "repo_id",
    "language",
    "tags",
    "paths",
    "related",
    "canonical_ref",
    # reference-tool keys
    "scope_key",
    "project_name",
    "aliases",
    "alias",
    "target",
    "derived_from",
    "proposed_by",
    "review_note",
    "review_history",
)
_RANK = {k: i for i, k in enumerate(KEY_ORDER)}

MAX_FILE_BYTES = 1024 * 1024
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024
"""Largest body a write path accepts (UTF-8 bytes). Readers accept any body in a 1 MiB file."""
MAX_DEPTH = 6
MAX_NUMBER = 2**63
"""Largest magnitude of a frontmatter integer; floats must be finite."""

_FENCE_RE = re.compile(r"\A---[ \t]*\n(.*?)^---[ \t]*$\n?", re.S | re.M)


class FrontmatterError(ValueError):
    """The file is not a memory file we can read; the message says why in one sentence."""


def _loader() -> type:
    """A safe YAML loader that keeps timestamps as the strings they were written as."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class MemexLoader(base):  # type: ignore[misc,valid-type]
            pass

        MemexLoader.yaml_implicit_resolvers = {
            ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for ch, resolvers in base.yaml_implicit_resolvers.items()
        }
        _LOADER = MemexLoader
    return _LOADER


_LOADER: type | None = None
_ALIAS_HINT = re.compile(r"(?:^|[\s\[{,:-])[&*][^\s,\]}]")


def _check_shape(value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise FrontmatterError("frontmatter is nested too deeply")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise FrontmatterError(f"frontmatter key {k!r} is not a string")
            _check_shape(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_shape(v, depth + 1)
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        pass
    elif isinstance(value, int):
        if not -MAX_NUMBER <= value <= MAX_NUMBER:
            raise FrontmatterError(f"frontmatter number of {value.bit_length()} bits is out of range (at most 2^63)")
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise FrontmatterError("frontmatter number is not finite (.nan and .inf are not allowed)")
    else:
        raise FrontmatterError(f"frontmatter value of type {type(value).__name__} is not supported")


def _refuse_aliases(text: str) -> None:
    """Anchors and aliases have no use in a memory file and are the door to YAML bombs."""
    if not _ALIAS_HINT.search(text):
        return
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise FrontmatterError("frontmatter uses YAML anchors or aliases, which are not allowed")
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"frontmatter is not valid YAML ({_first_line(exc)})") from None


def _constructor_reason(exc: Exception) -> str:
    """A YAML constructor's refusal in words for the person who reads it (Python's advice to call
    `sys.set_int_max_str_digits()` is for a programmer, not for someone fixing a memory file)."""
    line = _first_line(exc)
    import re

    digits = re.search(r"value has (\d+) digits", line)
    if digits:
        return f"an integer of {digits.group(1)} digits"
    return line[:120]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def split(text: str) -> tuple[str, str]:
    """Return (frontmatter YAML text, body) or raise FrontmatterError."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        raise FrontmatterError("file contains NUL bytes")
    m = _FENCE_RE.match(text)
    if not m:
        raise FrontmatterError("file does not start with a `---` frontmatter block")
    fm_text = m.group(1)
    body = text[m.end():]
    return fm_text, body.strip("\n")


def parse(text: str) -> tuple[dict[str, Any], str]:
    """Parse a memory file's text into (frontmatter dict, body)."""
    if len(text) > MAX_FILE_BYTES:
        raise FrontmatterError(f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    fm_text, body = split(text)
    if len(fm_text) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB")
    _refuse_aliases(fm_text)
    import yaml

    try:
        data = yaml.load(fm_text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"frontmatter is not valid YAML ({_first_line(exc)})") from None
    except RecursionError:
        raise FrontmatterError("frontmatter is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - PyYAML constructors raise KeyError, ValueError, AttributeError...
        # a constructor refusing its value: `!!float x`, `!!int zz`, an integer of 5,000 digits
        raise FrontmatterError(f"frontmatter holds a value YAML cannot build ({_constructor_reason(exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter is not a mapping of keys to values")
    _check_shape(data)
    return data, body


def parse_bytes(raw: bytes) -> tuple[dict[str, Any], str]:
    if len(raw) > MAX_FILE_BYTES:
        raise FrontmatterError(f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrontmatterError(f"file is not valid UTF-8 (byte {exc.start})") from None
    return parse(text)


def ordered_keys(fm: dict[str, Any]) -> list[str]:
    known = sorted((k for k in fm if k in _RANK), key=_RANK.__getitem__)
    unknown = [k for k in fm if k not in _RANK]
    return known + unknown


def _dump_value(key: str, value: Any) -> str:
    fast = _fast_dump(key, value)
    if fast is not None:
        return fast
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        {key: value},
        Dumper=dumper,
        default_flow_style=False,
        allow_unicode=True,
        sort_keys=False,
        width=1 << 30,
    )


# The fast writer covers the values git-memex itself writes (enum words, ids, timestamps, plain
# tags, small integers, null, flat lists of those) and gives PyYAML's bytes exactly, proven by a
# property test against yaml.dump; anything else goes to PyYAML. Writing a memory then needs no
# `yaml` import (~10 ms) and no dumper per key.
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Starts with a letter or underscore, so no YAML 1.1 int, float, timestamp, merge or value form can
# match; ':' only between other characters, so never ': ' or a trailing ':'.
_PLAIN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.@/+*-]*(?::[A-Za-z0-9_.@/+*-]+)*\Z")
# A ULID-like token: digits and letters only, at least one letter, not 0b…/0o…/0x….
_TOKEN_RE = re.compile(r"(?![0-9]*\Z)(?!0[bBoOxX])[0-9][0-9A-Za-z]*\Z")
# What PyYAML resolves as a timestamp and therefore single-quotes.
_STAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))?\Z")
# YAML 1.1 booleans and nulls (and y/n, to stay clear of every reading of them).
_RESERVED_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})


def _fast_scalar(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is not str or len(value) > 200:
        return None
    if value.lower() in _RESERVED_WORDS:
        return None
    if _PLAIN_RE.match(value) or _TOKEN_RE.match(value):
        return value
    if _STAMP_RE.match(value):
        return f"'{value}'"
    return None


def _fast_dump(key: str, value: Any) -> str | None:
    # Past 128 characters (the pure-Python dumper: ~127) PyYAML writes a key as `? key`.
    if len(key) > 120 or not _KEY_RE.match(key) or key.lower() in _RESERVED_WORDS:
        return None
    if type(value) is list:
        if not value:
            return f"{key}: []\n"
        items = [_fast_scalar(v) for v in value]
        if None in items:
            return None
        return f"{key}:\n" + "".join(f"- {v}\n" for v in items)
    scalar = _fast_scalar(value)
    return None if scalar is None else f"{key}: {scalar}\n"


def serialize(fm: dict[str, Any], body: str) -> str:
    """Canonical text of a memory file."""
    parts = ["---\n"]
    for key in ordered_keys(fm):
        parts.append(_dump_value(key, fm[key]))
    parts.append("---\n\n")
    body = body.strip("\n")
    if body:
        parts.append(body)
        parts.append("\n")
    return "".join(parts)

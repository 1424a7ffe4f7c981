"""The fast reader for the plain frontmatter every writer produces (`fast_frontmatter`).

The YAML library (`frontmatter.parse`, C loader) spends ~0.08 ms per file; memory files are
written in one plain shape (one `key: scalar` per line, block or flow lists of scalars), which
this reader handles in ~0.006 ms, about a twelfth (300 files of the bench's 10k corpus).

Invariant: `fast_frontmatter` accepts only text whose meaning under YAML 1.1 (PyYAML's
SafeLoader, timestamps kept as strings, as `core.frontmatter.parse` does) is certain, and returns
None for anything else, which then goes through the full reader (`core.files.parse_memory_bytes`).
So a file reads the same whichever reader took it; `core.files.parse_for_index` picks the reader
and `core.files.file_text` runs it on every file before it is written, so what a write path
accepts a full reindex reads back. Standard library only (`re`), importing nothing of ours: both
`core.files` and the index use it.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_YAML_BOOL = {
    "yes": True, "Yes": True, "YES": True, "true": True, "True": True, "TRUE": True,
    "on": True, "On": True, "ON": True,
    "no": False, "No": False, "NO": False, "false": False, "False": False, "FALSE": False,
    "off": False, "Off": False, "OFF": False,
}
_YAML_NULL = frozenset(("~", "null", "Null", "NULL"))
_SIMPLE_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_YAML_NUMBER = re.compile(  # PyYAML's implicit int and float resolvers (YAML 1.1)
    r"""(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    |[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |<<|=)""",
    re.X,
)
_PLAIN_BAD_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_BAD = frozenset(",[]{}")
_NO = object()


def _plain(s: str, flow: bool) -> Any:
    """A plain scalar's value, or _NO when its YAML meaning is not certain."""
    if not s or s[0] in _PLAIN_BAD_START or s.endswith(":") or ": " in s or " #" in s:
        return _NO
    if not s.isprintable() or (flow and not _FLOW_BAD.isdisjoint(s)):
        return _NO
    if s in _YAML_NULL:
        return None
    b = _YAML_BOOL.get(s)
    if b is not None:
        return b
    if _YAML_NUMBER.fullmatch(s):
        return int(s) if len(s) <= 18 and _SIMPLE_INT.fullmatch(s) else _NO  # the full reader bounds the rest
    return s


def _quoted(s: str) -> Any:
    """A quoted scalar's value when it is its inner text as written: one quote character each
    side, none inside (so no `''` escape and, in a flow list split at commas, no comma inside
    either: a part cut at one fails the test), no backslash in a double-quoted one, printable."""
    inner = s[1:-1]
    if len(s) < 2 or s[-1] != s[0] or s[0] in inner or not inner.isprintable():
        return _NO
    if s[0] == '"' and "\\" in inner:
        return _NO
    return inner


def _scalar(s: str) -> Any:
    s = s.rstrip(" ")
    if not s:
        return None
    c = s[0]
    if c in "'\"":
        return _quoted(s)
    if c == "[":
        if s[-1] != "]":
            return _NO
        inner = s[1:-1].strip(" ")
        if not inner:
            return []
        items = []
        for part in inner.split(","):
            part = part.strip(" ")
            # quoted items as JSON writes them (`["ci", "build"]`); a plain one as YAML reads it
            v = _quoted(part) if part[:1] in ("'", '"') else _plain(part, True)
            if v is _NO:
                return _NO
            items.append(v)
        return items
    return _plain(s, False)


_SCALARS: dict[str, Any] = {}  # raw value text -> value (str/int/bool/None only): values repeat a lot
_KEYS: set[str] = set()  # key names already checked


def fast_frontmatter(fm_text: str) -> dict[str, Any] | None:
    """The frontmatter mapping when fm_text is in the plain shape; None to use the YAML reader."""
    if "\t" in fm_text:
        return None
    out: dict[str, Any] = {}
    open_key: str | None = None  # a `key:` line with no value: block list items may follow
    indent = -1
    scalars = _SCALARS
    for line in fm_text.split("\n"):
        if not line:
            continue  # the text ends with a newline
        if open_key is not None:
            stripped = line.lstrip(" ")
            if stripped[:2] == "- ":
                lead = len(line) - len(stripped)
                if indent < 0:
                    indent = lead
                elif lead != indent:
                    return None
                text = stripped[2:].lstrip(" ")
                v = scalars.get(text, _NO)
                if v is _NO:
                    v = _scalar(text)
                    if v is _NO or isinstance(v, list):
                        return None
                    if len(scalars) > 50_000:
                        scalars.clear()
                    scalars[text] = v
                items = out[open_key]
                if items is None:
                    items = out[open_key] = []
                items.append(v)
                continue
            open_key = None
        key, sep, rest = line.partition(":")
        if not sep or (rest and rest[0] != " ") or key in out:
            return None
        if key not in _KEYS:
            if not _KEY_NAME.fullmatch(key) or key in _YAML_BOOL or key in _YAML_NULL:
                return None
            _KEYS.add(key)
        text = rest.strip(" ")
        if not text:
            out[key] = None
            open_key, indent = key, -1
            continue
        v = scalars.get(text, _NO)
        if v is _NO:
            v = _scalar(text)
            if v is _NO:
                return None
            if not isinstance(v, list):
                if len(scalars) > 50_000:
                    scalars.clear()
                scalars[text] = v
            else:
                out[key] = v
                continue
        out[key] = v
    return out

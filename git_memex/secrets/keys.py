"""The keys of a memory's frontmatter as the commit check and the masking read them beside their
values: which top-level keys are the protocol's own (`TYPED_KEYS`: a value under one is read as a
string alone), the one walk over the strings read beside a key (`map_beside_keys`), and the line
each top-level key is written on (`key_lines`, one pass).

Invariant: all are pure (no I/O); `secrets.scan` (the pre-commit hook and `git memex scan`) and
`secrets.admission` (the output paths' masking) take them from here, so the hook refuses exactly
the strings the output paths mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _typed_keys() -> frozenset[str]:
    from git_memex.core import model

    return (model.STR_KEYS | frozenset(model.LIST_KEYS) | frozenset(model.TIME_KEYS)
            | {"id", "schema_version", "revision", "title", "last_used_at", "use_count", "valid_from", "valid_until"})


TYPED_KEYS = _typed_keys()
"""The protocol's own top-level keys (`admission.STRUCTURAL` among them): a value under one is
read as a string alone, never beside its key (`map_beside_keys`): their names are
no secret's, and reading each beside its key would cost a detector pass a field."""


def map_beside_keys(fm: dict[Any, Any], fn: Callable[[tuple[str, ...], str, str], str]) -> dict[Any, Any]:
    """`fm` rebuilt with ``fn(names, string, top)`` applied to each string read beside a key: under
    a string key that is not one of the protocol's own at the top level (`TYPED_KEYS`), a string
    value or each string item of a list value, at any depth. `names`: its key stripped (`"password
    "` is a password's name to a reader), then the key of the mapping or list it is in
    (``password:`` then ``value: X``), each once; `top`: the top-level key it lies under. Linear:
    one call a string."""

    def walk(value: Any, top: str | None, parent: str | None) -> Any:
        if isinstance(value, list):
            return [walk(v, top, parent) for v in value]
        if not isinstance(value, dict):
            return value
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and not (top is None and k in TYPED_KEYS):
                names = tuple(dict.fromkeys(n.strip() for n in (k, parent) if n is not None))
                here = top or k
                if isinstance(v, str) and v:
                    v = fn(names, v, here)
                elif isinstance(v, list):
                    v = [fn(names, x, here) if isinstance(x, str) and x else x for x in v]
                if isinstance(v, (list, dict)):
                    v = walk(v, here, k)
            out[k] = v
        return out

    return walk(fm, None, None)


def key_lines(text: str) -> dict[str, int]:
    """The line of each top-level key of a file's text, written plain or quoted (its first); a
    key spelled otherwise (with escapes) is not there, and its findings name line 1. One pass."""
    lines: dict[str, int] = {}
    for i, line in enumerate(text.splitlines(), 1):
        if i > 1 and line in ("---", "..."):
            break  # the end of the frontmatter
        if not line or line[0] in " \t#-":
            continue
        if line[0] in "\"'":
            end = line.find(line[0] + ":", 1)
            key = line[1:end] if end > 0 else None
        else:
            key = line.split(":", 1)[0] if ":" in line else None
        if key is not None:
            lines.setdefault(key, i)
    return lines

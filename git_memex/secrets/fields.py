"""The one traversal of a memory's fields: every string of a frontmatter value, at any depth.

Invariant: `map_strings` visits every string (mapping keys too, each key before its value) and
nothing else, in order, in one pass; the masking of the admission barrier
(`secrets.admission`: `mask_value`, `mask_fields`, `admit`'s copies) and the commit check of
YAML escapes (`secrets.scan`, `strings_in`) both walk a memory with it, so they read the same
strings. It imports nothing of git-memex: both modules use it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def map_strings(value: Any, fn: Callable[[str], str], keep: Callable[[str, Any], bool] | None = None) -> Any:
    """`value` rebuilt with `fn` applied to every string in it, at any depth of lists, tuples and
    mappings, mapping keys too (a token can be a key: ``{"ghp_…": "read"}``), each key before its
    value. At this level (not below), a key for which ``keep(key, value)`` is true keeps its value
    as it is (the admission barrier's structural keys). Two keys that `fn` makes alike stay two
    keys: the later gets ``~2``…"""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(map_strings(v, fn) for v in value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if keep is not None and isinstance(k, str) and keep(k, v):
                out[k] = v
                continue
            key = fn(k) if isinstance(k, str) else k
            if key != k:
                masked, n = key, 2
                while key in out or key in value:
                    key, n = f"{masked}~{n}", n + 1
            out[key] = map_strings(v, fn)
        return out
    return value


def strings_in(value: Any) -> list[str]:
    """Every string inside `value`, in `map_strings`' order (a key before its value)."""
    found: list[str] = []

    def note(s: str) -> str:
        found.append(s)
        return s

    map_strings(value, note)
    return found

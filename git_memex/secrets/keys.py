"""The keys of a memory's frontmatter as the commit check and the masking read them beside their
values: which top-level keys are the protocol's own (`TYPED_KEYS`: a value under one is read as a
string alone), and the line each top-level key is written on (`key_lines`, one pass).

Invariant: both are pure (no I/O); `secrets.scan` (the pre-commit hook and `git memex scan`) and
`secrets.admission` (the output paths' masking) take them from here, so they read the same keys.
"""

from __future__ import annotations


def _typed_keys() -> frozenset[str]:
    from git_memex.core import model

    return (model.STR_KEYS | frozenset(model.LIST_KEYS) | frozenset(model.TIME_KEYS)
            | {"id", "schema_version", "revision", "title", "last_used_at", "use_count", "valid_from", "valid_until"})


TYPED_KEYS = _typed_keys()
"""The protocol's own top-level keys (`admission.STRUCTURAL` among them): a value under one is
read as a string alone, never beside its key (`scan._beside_keys`, `admission._keyed`): their names are
no secret's, and reading each beside its key would cost a detector pass a field."""


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

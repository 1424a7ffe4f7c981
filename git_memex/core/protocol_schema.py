"""The JSON Schema (draft 2020-12) of a schema_version 2 memory file's frontmatter, built from `core.model`.

`git memex schema` prints the copy shipped in the package (`git_memex/schemas/`); it is this
module's output, written by `python -m git_memex.core.protocol_schema --write`, and a test keeps
the two equal, so the published schema never drifts from the enums, types and bounds the
reader and the writer use (docs/format.md, "The JSON Schema").

The schema is what a v2 writer must write. Our reader is more lenient on purpose: it reads v1
files and maps an unknown `type` to `knowledge`; what it refuses (a reserved or unknown scope, an
enum value outside the lists, a number where a string belongs, a time that is not RFC 3339, a
schema_version from the future) the schema refuses too. Two checks are beyond JSON Schema and
stay with the reader: the `id` must equal the file name, and the body (after the frontmatter)
must not be empty.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from git_memex.core import model

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "memory-frontmatter-v2.schema.json"
SCHEMA_ID = "urn:openmemex:memory-frontmatter:schema_version:2"

_ID_PATTERN = model.SAFE_ID_RE.pattern
_TIME_PATTERN = model.RFC3339_RE.pattern
REQUIRED = ("id", "schema_version", "scope", "type", "status")
"""Keys every v2 file has: `validate` refuses a file without scope, type or status, the reader one
without id; schema_version 2 is what makes it a v2 file."""

_TEXT_NOTES = {
    "created_by": "Who wrote it (`local:<email or name>`).",
    "promoted_by": "Who promoted it (an org proposal).",
    "approved_by": "Who approved it in review.",
    "via": "The road it came by: cli, mcp, or the agent host (claude, codex…).",
    "repo_id": "The project's identity: git-origin-sha256:<hex> or path-sha256:<hex>.",
    "language": "The language of the text, when detected.",
    "canonical_ref": "The document the memory points at (a path or URL), never a copy of it.",
    "scope_key": "The reference tool's scope key (project__<name>__<hash>, or personal).",
    "project_name": "The reference tool's project name.",
    "proposed_by": "Who proposed it for review.",
    "review_note": "The reviewer's note (a rejection's reason).",
    "derived_from": "The id of the memory it was copied from (propose).",
    "alias": "With target: a vocabulary entry; alias is another name for target.",
    "target": "See alias.",
    "source_detail": "An agent's own word for where it came from, when it is not a source value; data only.",
    "scope_kind": "v1 only (folded into scope on reading).",
}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    kind = schema.get("type")
    return {**schema, "type": [kind, "null"]} if isinstance(kind, str) else schema


def build() -> dict[str, Any]:
    """The schema as a JSON-able dict; every list and bound comes from `core.model`."""
    props: dict[str, Any] = {
        "id": {"type": "string", "pattern": _ID_PATTERN,
               "description": "A ULID (26 Crockford base32 characters) when written here; v1 and reference-tool "
                              "ids are shorter. It must equal the file name without .md."},
        "schema_version": {"const": model.SCHEMA_VERSION,
                           "description": f"{model.SCHEMA_VERSION} for this schema; a file from a newer "
                                          "version is refused with 'run a newer git-memex'."},
        "revision": _nullable({"type": "integer", "minimum": 0, "maximum": model.MAX_INT - 1,
                               "description": "1 when written, one more on every rewrite."}),
    }
    required_enums = {"scope", "type", "status"}
    for key, allowed in model.ENUMS.items():
        schema: dict[str, Any] = {"enum": list(allowed)}
        if key == "scope":
            schema["description"] = ("personal, project or org; " + " and ".join(model.RESERVED_SCOPES)
                                     + " are reserved by the protocol and refused.")
        if key == "source":  # the reference tool writes "" for "not said"; we read it as absent
            schema = {"enum": [*allowed, ""]}
        props[key] = schema if key in required_enums else _nullable(schema)
    for key in model.TIME_KEYS:
        props[key] = _nullable({"type": "string", "pattern": _TIME_PATTERN,
                                "description": "An RFC 3339 time, e.g. 2026-09-26T12:00:00Z."})
    for key in ("supersedes", "superseded_by"):
        props[key] = _nullable({"type": "string", "pattern": _ID_PATTERN, "description": "A memory id."})
    for key in model.LIST_KEYS:
        props[key] = _nullable({"type": "array", "items": {"type": "string"}, "maxItems": model.MAX_LIST_ITEMS})
    props["review_history"] = _nullable({
        "type": "array", "maxItems": model.MAX_LIST_ITEMS,
        "items": {"type": "object", "properties": {
            "at": {"type": "string"}, "by": {"type": ["string", "null"]},
            "from": {"type": ["string", "null"]}, "to": {"type": ["string", "null"]},
            "note": {"type": ["string", "null"]}}},
        "description": "Every review step, oldest first."})
    for key in sorted(model.STR_KEYS):
        if key in props:
            continue
        text: dict[str, Any] = {"type": "string", "maxLength": model.MAX_TEXT_CHARS}
        if key in _TEXT_NOTES:
            text["description"] = _TEXT_NOTES[key]
        props[key] = _nullable(text)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "OpenMemex memory frontmatter, schema_version 2",
        "description": "The YAML frontmatter of one memory file (`<id>.md`), as JSON data. Unknown keys are "
                       "allowed and kept by every writer. Generated from git_memex/core/model.py.",
        "type": "object",
        "required": list(REQUIRED),
        "properties": props,
        "additionalProperties": True,
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def shipped() -> str:
    """The schema file shipped in the package, as text."""
    return SCHEMA_FILE.read_text(encoding="utf-8")


if __name__ == "__main__":  # python -m git_memex.core.protocol_schema --write
    if sys.argv[1:] == ["--write"]:
        SCHEMA_FILE.parent.mkdir(exist_ok=True)
        SCHEMA_FILE.write_text(render(), encoding="utf-8")
    else:
        sys.stdout.write(render())

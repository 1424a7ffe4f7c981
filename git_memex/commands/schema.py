"""`git memex schema`: print the JSON Schema of a schema_version 2 memory file's frontmatter."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema (draft 2020-12) of a memory file's frontmatter",
                       description="Print the JSON Schema (draft 2020-12) of the frontmatter of a schema_version 2 "
                       "memory file, as shipped in the package (docs/format.md, \"The JSON Schema\"). It is "
                       "one JSON document on stdout; validate a file's frontmatter, read as JSON data, against it.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from git_memex.core.protocol_schema import SCHEMA_FILE, shipped
    from git_memex.errors import FAILED, MemexError

    try:
        text = shipped()
    except OSError as exc:
        raise MemexError(f"the schema file {SCHEMA_FILE} cannot be read ({exc.strerror}); reinstall git-memex",
                         FAILED) from None
    sys.stdout.write(text)
    return 0

"""`git memex show ID`: one memory, frontmatter and body."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, warn


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="show one memory", description="Show one memory (id or unique id prefix).")
    p.add_argument("id")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.core import frontmatter
    from git_memex.ops import show

    res = show(context(), args.id)
    warn(res.pop("warnings", None) if not args.json else res.get("warnings"))
    if args.json:
        emit_json({k: res[k] for k in ("id", "path", "frontmatter", "body", "warnings")})
        return 0
    print(f"# {res['path']}")
    print(frontmatter.serialize(res["frontmatter"], res["body"]), end="")
    return 0

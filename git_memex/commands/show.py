"""`git memex show ID`: one memory, frontmatter and body.

The text form prints the file as it is (it is the file); `--json`, which tools and agents hand
on, masks secrets in the body and in every frontmatter string (`secrets.admission`), as
`memory_get` does."""

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

    ctx = context()
    res = show(ctx, args.id)
    warn(res.pop("warnings", None) if not args.json else res.get("warnings"))
    if args.json:
        from git_memex.secrets.admission import mask_fields
        from git_memex.secrets.redact import redact

        res["frontmatter"] = mask_fields(res["frontmatter"], ctx.redact_patterns)[0]
        res["body"] = redact(res["body"] or "", ctx.redact_patterns).text
        emit_json({k: res[k] for k in ("id", "path", "frontmatter", "body", "warnings")})
        return 0
    print(f"# {res['path']}")
    print(frontmatter.serialize(res["frontmatter"], res["body"]), end="")
    return 0

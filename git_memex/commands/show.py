"""`git memex show ID`: one memory, frontmatter and body.

The text form prints the file as it is (it is the file); `--json`, which tools and agents hand
on, masks secrets in the body and in every frontmatter string (`secrets.admission`), as
`memory_get` does."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, warn


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        from git_memex.ops import masked

        res = masked(ctx, res)
        emit_json({k: res[k] for k in ("id", "path", "frontmatter", "body", "warnings", "related", "canonical_ref")})
        return 0
    print(f"# {res['path']}")
    print(frontmatter.serialize(res["frontmatter"], res["body"]), end="")
    links = res["related"]
    ref = res["canonical_ref"]
    if links or ref:
        print("\n# links")
    for r in links:
        print(f"#   related {r['id']}: " + (f"{r['snippet']}" + (f" [{r['status']}]" if r["status"] != "active" else "")
                                          if r["found"] else "not in this clone"))
    if ref:
        state = {True: "exists", False: "missing", None: "not checked"}[ref["exists"]]
        where = "outside the work tree, not checked" if ref.get("outside") else (
            "a URL, not checked" if ref["kind"] == "url" else state)
        print(f"#   canonical_ref {ref['ref']}: {where}")
    return 0

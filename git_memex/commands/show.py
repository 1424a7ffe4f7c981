"""`git memex show ID`: one memory, frontmatter and body.

Both forms mask secrets in the body and in every frontmatter string (`secrets.admission`), as
`memory_get` does: a file a teammate committed with `--no-verify`, or whose frontmatter spells a
token with YAML escapes (``"\\u0067hp_…"``), is shown masked, and the text form then says in a
comment line that the file itself holds them and how to find and remove them (docs/security.md)."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, warn


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("show", help="show one memory", description="Show one memory (id or unique id prefix). A "
                       "copy held here wins over a remote server's copy of the same id; `--remote NAME` shows the "
                       "revision remote NAME's cache holds, the one `git memex remote review NAME ID` reviews. Invisible and "
                       "control characters (zero-width, bidi, tag, private-use, terminal escapes) print as "
                       "\\uXXXX escapes, in every command's output; a ZWNJ or ZWJ inside script text or an emoji "
                       "stays; --json parses to the exact text.")
    p.add_argument("id")
    p.add_argument("--remote", metavar="NAME", help="show the revision remote NAME's cache holds (docs/remote.md)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.core import frontmatter
    from git_memex.ops import masked, show

    ctx = context()
    if args.remote is not None:
        from git_memex.ops import show_remote

        res = show_remote(ctx, args.remote, args.id)
    else:
        res = show(ctx, args.id)
    raw = res
    res = masked(ctx, res)
    warn(res.pop("warnings", None) if not args.json else res.get("warnings"))
    if args.json:
        keys = ("id", "path", "frontmatter", "body", "warnings", "related", "canonical_ref", "remote", "revision",
                "review_state", "remote_revisions")
        emit_json({k: res[k] for k in keys if k in res})
        return 0
    print(f"# {res['path']}")
    if args.remote is not None:
        print(f"# remote {res['remote']}, revision {res['revision']}, {res['review_state'] or 'not reviewed'} there")
    if (res["frontmatter"], res["body"]) != (raw["frontmatter"], raw["body"]):  # masking changed something
        print("# masked here: this file holds secrets (`git memex scan` names them; docs/security.md says how to "
              "take one out of git's history)")
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

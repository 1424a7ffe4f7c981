"""`git memex export`: memories into one versioned bundle file (docs/bundle.md)."""

from __future__ import annotations

import argparse
import sys

from git_memex.commands._common import TYPE_HELP, add_json, context, emit_json, warn
from git_memex.core import model


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write memories into one bundle file (to move or seed them)",
                       description="Write memories into one versioned bundle file (JSON, docs/bundle.md) that "
                       "`git memex import` reads on another machine or in another project: personal memories, and "
                       "this project's repository memories and outbox drafts. Active and deprecated memories only "
                       "unless --all; private memories only with --include-private. Secrets are masked again on the "
                       "way out. Warns when personal memories are in the bundle, and never writes such a bundle "
                       "inside a git work tree. Without -o the bundle is printed on stdout.")
    p.add_argument("--scope", choices=("project", "personal", "both"), default="both",
                   help="which memories (default both)")
    p.add_argument("--type", choices=model.TYPES, default=None, metavar="TYPE", help="only memories of this type; " + TYPE_HELP)
    p.add_argument("--tag", default=None, help="only memories with this tag")
    p.add_argument("--all", action="store_true",
                   help="also superseded, retracted and archived memories (whole supersede chains)")
    p.add_argument("--include-private", action="store_true",
                   help="also this project's private memories (visibility: private)")
    p.add_argument("-o", "--out", metavar="FILE", default=None,
                   help="write the bundle here (readable by you only) instead of stdout")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.upkeep.bundle import bundle_text, export, guard_stdout, write_bundle

    res = export(context(), scope=args.scope, type=args.type, tag=args.tag, all=args.all,
                 include_private=args.include_private)
    if args.out is None:
        guard_stdout(res)
        warn(res.warnings)
        sys.stdout.write(bundle_text(res.bundle))  # the bundle is the one JSON document, --json or not
        return 0
    write_bundle(res, args.out)
    warn(res.warnings)
    if args.json:
        emit_json(res.to_json())
        return 0
    n = res.bundle["count"]
    parts = ", ".join(f"{v} {k}" for k, v in sorted(res.counts.items()))
    print(f"exported {n} memor{'y' if n == 1 else 'ies'} to {res.path}" + (f" ({parts})" if parts else ""))
    return 0

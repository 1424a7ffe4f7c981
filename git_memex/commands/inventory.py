"""`git memex inventory`: the state of the memory at a glance, as text, JSON or one HTML page."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "inventory", help="the state of the memory at a glance (text, JSON or a static HTML page)",
        description="Counts by scope, type, review state and status; the review pipeline; recent changes; "
        "stale memories; supersede chains; possible contradictions and near-duplicate pairs. "
        "--format html writes one self-contained page (no network) with a filter box. "
        "Personal and private memories are never written into a git work tree unless --allow-personal; "
        "a file holding them is made readable by you alone.")
    p.add_argument("--format", choices=("text", "json", "html"), default="text")
    p.add_argument("--scope", choices=("both", "project", "personal"), default="both")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="write to FILE (in one step) instead of standard output (- is standard output)")
    add_json(p)
    p.add_argument("--allow-personal", action="store_true",
                   help="allow personal and private memories in a file inside a git work tree")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.upkeep.inventory import collect, render, write_out

    fmt = args.format
    if args.json:
        if fmt not in ("text", "json"):
            from git_memex.errors import UsageError

            raise UsageError(f"--json and --format {fmt} ask for two formats; give one")
        fmt = "json"
    inv = collect(context(), scope=args.scope)
    written = write_out(inv, render(inv, fmt), args.out, allow_personal=args.allow_personal)
    if written is not None and args.json:  # the page went to the file; stdout still has one document
        from git_memex.commands._common import emit_json

        emit_json({"out": str(written), "total": inv["total"]})
    elif written is not None:
        print(f"wrote {written}: {inv['total']} memories")
    return 0

"""`git memex migrate [--dry-run]`: convert v1 memory folders and files to protocol v0.2."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("migrate", help="convert v1 memory files and folders to v2 (with a backup)",
                       description="Convert v1 memory files (scope user, epoch times, priority, type instruction) "
                       "and legacy folders (memories/user, .my-o-memory, .open-memex) to protocol v0.2. Originals "
                       "are copied to a backup folder first; a personal (v1 user) file found in the repository moves to the data "
                       "root's personal folder; --dry-run only shows the plan. The index is rebuilt.")
    p.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import reindex
    from git_memex.upkeep.migrate import apply, build_plan

    ctx = context()
    plan = build_plan(ctx)
    backup = None
    if not args.dry_run:
        backup = apply(ctx, plan)
        if backup is not None:
            reindex(ctx, full=True, trigger="migrate")
    if args.json:
        emit_json({**plan.to_json(), "dry_run": args.dry_run, "backup": str(backup) if backup else None})
        return 0
    verb = "would convert" if args.dry_run else "converted"
    for c in plan.conversions:
        print(f"{verb} {c.source}" + (f" → {c.target}" if c.target != c.source else ""))
        for ch in c.changes:
            print(f"    {ch}")
    for p in plan.problems:
        print(f"left alone: {p}")
    if not plan.conversions:
        print(f"nothing to migrate ({plan.scanned} file(s) checked)")
    elif backup:
        print(f"originals backed up in {backup}")
    return 0

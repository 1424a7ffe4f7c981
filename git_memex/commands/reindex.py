"""`git memex reindex [--full]`: bring the index in line with the markdown files."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reindex", help="update (or --full: rebuild) the index from the markdown files",
                       description="Update the index from the markdown files, reading only what changed; "
                       "--full throws the index away and rebuilds it.")
    p.add_argument("--full", action="store_true")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import reindex

    r = reindex(context(), full=args.full)
    s = r.stats
    if args.json:
        emit_json({"full": r.full, "added": s.added, "changed": s.changed, "removed": s.removed,
                   "unchanged": s.unchanged, "quarantined": [{"path": p, "reason": why} for p, why in r.quarantined],
                   "total": r.total, "repaired": r.repaired})
        return 0
    print(f"{'rebuilt' if r.full else 'updated'}: {s.added} added, {s.changed} changed, {s.removed} removed, "
          f"{r.total} indexed")
    for p, why in r.quarantined:
        print(f"quarantined: {p}: {why}")
    for line in r.repaired:
        print(f"repaired chain: {line}")
    return 0

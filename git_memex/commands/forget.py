"""`git memex forget ID [--soft]`: delete a memory, or retract it."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("forget", help="delete a memory (or --soft: retract it)",
                       description="Delete a memory's file and index entry, or with --soft mark it retracted "
                       "(kept for audit, never retrieved). A deleted file stays in git history if it was committed.")
    p.add_argument("id")
    p.add_argument("--soft", action="store_true", help="retract instead of deleting")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import forget

    res = forget(context(), args.id, soft=args.soft)
    if args.json:
        emit_json(res)
    elif res.get("deleted"):
        print(f"deleted {res['id']}")
    else:
        print(f"retracted {res['id']}" if res.get("changed") else f"{res['id']} was already retracted")
    return 0

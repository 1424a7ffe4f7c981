"""`git memex log ID`: the memory's git history and review history, oldest first."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("log", help="a memory's commits and review history together",
                       description="The memory's commits (following the supersede chain) merged with its "
                       "review_history, oldest first: who changed, promoted or rejected it, and when.")
    p.add_argument("id")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.log import log

    r = log(context(), args.id)
    if args.json:
        emit_json(r)
        return 0
    for e in r["events"]:
        ref = f" {e['commit']}" if e.get("commit") else ""
        print(f"{e['at']}  {e['kind']:7}{ref}  {e['id'][:10]}  {e.get('by') or '-'}: {e['what']}")
    if r.get("note"):
        print(f"note: {r['note']}")
    return 0

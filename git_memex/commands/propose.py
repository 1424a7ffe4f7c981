"""`git memex propose ID...`: copy personal memories into the project outbox as review drafts."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("propose", help="copy personal memories into the project outbox as drafts",
                       description="Copy personal memories into the project outbox as drafts with new ids "
                       "(derived_from points back; the personal original stays). All or nothing.")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--local-approve", action="store_true", help="solo mode: record yourself as approver")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.outbox import propose

    out = propose(context(), args.ids, local_approve=args.local_approve)
    if args.json:
        emit_json({"proposed": out})
        return 0
    for o in out:
        note = " (already proposed)" if o["existing"] else ""
        print(f"proposed {o['source']} → {o['id']} [{o['review_state']}]{note}")
    print("next: `git memex sync-status`, then `git memex submit ID...` to move them into the repository")
    return 0

"""`git memex promote ID`: move a repository memory up the review ladder, or reject it."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, print_staged


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("promote", help="proposed → approved → published; --reject / --resubmit",
                       description="Advance a repository memory one step (proposed → approved → published), reject "
                       "it with a note, or resubmit a rejected one. Every step is appended to review_history, by git's "
                       "identity, and the file is staged (a plain `git commit` takes it); a rejection never deletes "
                       "anything.")
    p.add_argument("id")
    p.add_argument("--reject", action="store_true")
    p.add_argument("--note", help="why (required with --reject)")
    p.add_argument("--resubmit", action="store_true", help="rejected → proposed")
    p.add_argument("--by", help="refused unless it names you: the reviewer recorded is always git's identity "
                   "(user.email)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.promote import promote

    r = promote(context(), args.id, reject=args.reject, note=args.note, resubmit=args.resubmit, by=args.by)
    if args.json:
        emit_json(r)
        return 0
    print(f"{r['id']}: {r['from']} → {r['to']} (by {r['by']})")
    print_staged(r)
    if r["to"] == "rejected":
        print("nothing was deleted: revise and `--resubmit`, close the PR, or keep it as a record")
    return 0

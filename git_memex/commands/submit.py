"""`git memex submit ID...`: outbox drafts → the repository, in one commit holding only them."""

from __future__ import annotations

import argparse
import sys

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("submit", help="move outbox drafts into the repository as proposed, in one commit",
                       description="Move the named outbox drafts into the memory folder as `proposed` (approved stays "
                       "approved) and make one commit holding only those files, on the current branch or on a new "
                       "branch --branch B. Your other staged and unstaged changes stay as they were. Secrets are "
                       "checked first. Prints the push and PR commands; never runs them.")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--branch", help="create this branch from HEAD (a numeric suffix is added on a clash) and commit there")
    p.add_argument("--base", help="the PR base branch to print (default: the branch you started on, or origin's default)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.submit import submit

    res = submit(context(), args.ids, branch=args.branch, base=args.base)
    for w in res.warnings:
        print(f"git-memex: {w}", file=sys.stderr)
    if args.json:
        emit_json(res.to_json())
        return 0
    for s in res.submitted:
        print(f"submitted {s['id']} [{s['review_state']}]")
    for mid in res.skipped_identical:
        print(f"already in the repository: {mid}")
    if res.committed:
        print(f"committed {(res.commit or '')[:10]} on {res.branch}")
    else:
        print(f"nothing new to commit on {res.branch}")
    if not res.submitted:
        return 0
    if res.push_command:
        print("To share it (not run for you; `git memex push --yes` runs the push):")
        print(f"  {res.push_command}")
        if res.pr_command:
            print(f"  {res.pr_command}")
    if res.note:
        print(f"note: {res.note}")
    return 0

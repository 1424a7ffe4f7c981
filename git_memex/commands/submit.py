"""`git memex submit ID...`: outbox drafts → the repository, in one commit holding only them."""

from __future__ import annotations

import argparse
import shlex
import sys

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("submit", help="move outbox drafts into the repository as proposed, in one commit",
                       description="Move the named outbox drafts into the memory folder as `proposed` (approved stays "
                       "approved) and make one commit holding only those files, on the current branch or on a new "
                       "branch --branch B. Your other staged and unstaged changes stay as they were; with --branch "
                       "your checkout stays on its branch too (HEAD, index and files untouched: the commit is made "
                       "on B alone). Secrets are checked first. One submit of a project runs at a time (a second one waits); "
                       "a rerun after an interrupted submit finishes exactly its plan, or refuses when the branch "
                       "moved or is checked out elsewhere (exit 2). Prints the push and PR commands; never runs them.")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--branch", metavar="B", help="create the new branch B from HEAD's commit (a numeric suffix is "
                   "added when B exists) and commit there, without switching to it; B is a plain new branch name: "
                   "ASCII, at most 200 bytes, no refs/ or heads/, no remote's name as its first part, not the default "
                   "branch (nor main, master, trunk, develop), no name a remote's branch or a tag has")
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
    if res.committed and res.checkout != res.branch:
        print(f"committed {(res.commit or '')[:10]} on the new branch {res.branch}; you are still on "
              f"{res.checkout}, your files and staged changes untouched")
    elif res.committed:
        print(f"committed {(res.commit or '')[:10]} on {res.branch}")
    elif res.resumed and res.commit:
        print(f"the interrupted submit's commit {res.commit[:10]} on {res.branch} holds them")
    else:
        print(f"nothing new to commit on {res.branch}")
    if not res.submitted:
        return 0
    if res.push_command:
        runs = (f"git memex push --branch {shlex.quote(res.branch)} --yes" if res.checkout != res.branch
                else "git memex push --yes")
        print(f"To share it (not run for you; `{runs}` runs the push):")
        print(f"  {res.push_command}")
        if res.pr_command:
            print(f"  {res.pr_command}")
    if res.note:
        print(f"note: {res.note}")
    return 0

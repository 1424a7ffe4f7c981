"""`git memex pr-status [--apply] [--org NAME [--branch B]]`: map a PR's review state onto review_state (via
`gh`), or, without a GitHub pull request, the merges git shows on the default branch."""

from __future__ import annotations

import argparse
import sys

from git_memex.commands._common import add_json, context, emit_json, print_staged
from git_memex.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("pr-status", help="map the branch's PR (GitHub via gh, or any merge git shows) onto review_state",
                       description="Read the current branch's PR with `gh pr view` and map it: merged → published, "
                       "approved → approved (approved_by = the reviewer), changes requested → a suggestion only. "
                       "Without gh, or when gh finds no pull request (GitLab, Gitea, a local merge), read git "
                       "alone: a memory whose file a merge commit brought to the default branch, as proposed, is "
                       "published with that merge commit's author as the reviewer; a fast-forward, squash or "
                       "self-merge is only reported. A human rejection is never overridden. Reports by default; "
                       "--apply performs the transitions and stages the files. With --org NAME: the PR of an org "
                       "proposal branch in the clone of org NAME (report only).")
    p.add_argument("--apply", action="store_true")
    p.add_argument("--org", metavar="NAME", help="follow the PR of a `propose --to org NAME` branch")
    p.add_argument("--branch", help="with --org: the proposal branch (default: the only one in the org clone)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.pr_status import pr_label, pr_status

    if args.org is None and args.branch is not None:
        raise UsageError("--branch goes with --org NAME; without it pr-status reads the current branch's PR")
    if args.org is not None:
        if args.apply:
            raise UsageError("--apply does not change an org proposal: its review state is the org repository's, "
                             "kept by its curators (docs/curating.md); nothing was changed")
        from git_memex.review.org_proposal import org_pr_status

        r = org_pr_status(context(), args.org, branch=args.branch)
    else:
        r = pr_status(context(), apply=args.apply)
    if args.json:
        emit_json(r)
        return 0
    pr = r["pr"]
    if r.get("note"):
        print(f"note: {r['note']}", file=sys.stderr)
    if r.get("source") == "git":
        print(f"merges into {r['branch']} ({r['ref']}), as git shows them:")
    else:
        where = f"org {r['org']} {r['branch']}: " if args.org else ""
        print(where + " ".join(x for x in (pr_label(pr["number"]), pr["state"], pr["review_decision"], pr["url"]) if x))
    for m in r["memories"]:
        print(f"  {m['id']}: {m['action']}")
    if not r["memories"]:
        print("  no memory in review" if r.get("source") == "git" else "  no memory files in this PR")
    for a in r["applied"]:
        print(f"applied {a['id']}: {a['from']} → {a['to']} (by {a['by']})")
    print_staged(r)
    if not args.org and not args.apply and any(m["target"] for m in r["memories"]):
        print("run `git memex pr-status --apply` to perform these transitions")
    return 0

"""`git memex pr-status [--apply]`: map the branch's PR review state onto review_state (via `gh`)."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pr-status", help="map the branch's GitHub PR state onto review_state",
                       description="Read the current branch's PR with `gh pr view` and map it: merged → published, "
                       "approved → approved (approved_by = the reviewer), changes requested → a suggestion only. A "
                       "human rejection is never overridden. Reports by default; --apply performs the transitions.")
    p.add_argument("--apply", action="store_true")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.pull_requests import pr_label, pr_status

    r = pr_status(context(), apply=args.apply)
    if args.json:
        emit_json(r)
        return 0
    pr = r["pr"]
    print(" ".join(x for x in (pr_label(pr["number"]), pr["state"], pr["review_decision"], pr["url"]) if x))
    for m in r["memories"]:
        print(f"  {m['id']}: {m['action']}")
    if not r["memories"]:
        print("  no memory files in this PR")
    for a in r["applied"]:
        print(f"applied {a['id']}: {a['from']} → {a['to']} (by {a['by']})")
    if not args.apply and any(m["target"] for m in r["memories"]):
        print("run `git memex pr-status --apply` to perform these transitions")
    return 0

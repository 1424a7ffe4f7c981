"""`git memex propose ID...`: copy personal memories into the project outbox as review drafts;
`propose ID --to org NAME`: copy a published project memory onto a branch of an org clone;
`propose ID --to remote NAME`: send a project memory to a remote server for review."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json
from git_memex.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("propose", help="copy personal memories into the project outbox as drafts; --to org NAME",
                       description="Copy personal memories into the project outbox as drafts with new ids "
                       "(derived_from points back; the personal original stays). All or nothing. With --to org "
                       "NAME: copy one published project memory, as scope org, onto a new branch of the clone of "
                       "org NAME in one commit holding only that file; prints the push and PR commands, never "
                       "runs them (docs/org.md). With --to remote NAME: send one project memory to the remote "
                       "server NAME as a proposal (review_state proposed; docs/remote.md).")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--local-approve", action="store_true", help="solo mode: record yourself as approver")
    p.add_argument("--to", nargs="+", metavar="SCOPE", default=None,
                   help="`org NAME`: promote a published project memory to a subscribed org; `remote NAME`: "
                   "send a project memory to a subscribed remote server ("
                   "`project`, the default, is the outbox copy above)")
    p.add_argument("--branch", help="with --to org: the branch to create in the org clone "
                   "(default memex/promote-ID)")
    add_json(p)
    p.set_defaults(func=run)


def _org_name(to: list[str] | None) -> str | None:
    if to is None or to == ["project"]:
        return None
    if len(to) == 2 and to[0] == "org":
        return to[1]
    raise UsageError("--to takes `org NAME`, `remote NAME` (or `project`, the default)")


def run(args: argparse.Namespace) -> int:
    if args.to is not None and len(args.to) == 2 and args.to[0] == "remote":
        return _run_remote(args, args.to[1])
    org = _org_name(args.to)
    if org is not None:
        return _run_org(args, org)
    if args.branch is not None:
        raise UsageError("--branch goes with --to org NAME; `submit --branch` names a project review branch")
    from git_memex.review.propose import propose

    out = propose(context(), args.ids, local_approve=args.local_approve)
    if args.json:
        emit_json({"proposed": out})
        return 0
    for o in out:
        note = " (already proposed)" if o["existing"] else ""
        print(f"proposed {o['source']} → {o['id']} [{o['review_state']}]{note}")
    print("next: `git memex sync-status`, then `git memex submit ID...` to move them into the repository")
    return 0


def _run_remote(args: argparse.Namespace, name: str) -> int:
    if args.local_approve:
        raise UsageError("--local-approve is for project drafts; a remote proposal is approved by the server's reviewer")
    if args.branch is not None:
        raise UsageError("--branch goes with --to org NAME; a remote proposal is no branch")
    if len(args.ids) != 1:
        raise UsageError("propose --to remote takes one memory id: each proposal is one file")
    from git_memex.remote.subscriptions import propose

    r = propose(context(), args.ids[0], name)
    if args.json:
        emit_json(r)
        return 0
    if r.get("merged_with"):
        m = r["merged_with"]
        changed = f" (merged: {', '.join(m['fields'])})" if m["fields"] else ""
        print(f"remote {r['remote']} held revision {m['revision']}, changed by someone else since yours: merged it "
              f"into {r['path']}{changed} and proposed the merge")
    print(f"proposed {r['id']} to remote {r['remote']} ({r['url']}): revision {r['revision']}, "
          f"{r['review_state']}; a reviewer of the server approves or rejects it, then "
          f"`git memex remote pull {r['remote']}` brings it back")
    return 0


def _run_org(args: argparse.Namespace, org: str) -> int:
    if args.local_approve:
        raise UsageError("--local-approve is for project drafts; an org proposal is approved in the org repository")
    if len(args.ids) != 1:
        raise UsageError("propose --to org takes one memory id: each org proposal is one file on its own branch")
    from git_memex.review.org_proposal import propose_to_org

    r = propose_to_org(context(), args.ids[0], org, branch=args.branch)
    if args.json:
        emit_json(r)
        return 0
    print(f"proposed {r['source']} to org {r['org']} as {r['id']}: commit {r['commit'][:10]} on branch "
          f"{r['branch']} of {r['clone']} (1 file, {r['path']})")
    if r["masked"]:
        print(f"masked: {', '.join(r['masked'])}")
    print("To share it (not run for you):")
    print(f"  {r['push_command']}")
    print(f"  {r['pr_command']}")
    print(f"then `git memex pr-status --org {r['org']} --branch {r['branch']}` follows the review")
    return 0

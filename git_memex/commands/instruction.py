"""`git memex instruction approve|revoke|list`: a person opens and closes the gate for rules."""

from __future__ import annotations

import argparse
import sys

from git_memex.commands._common import (
    add_json,
    context,
    emit_json,
    print_staged,
    short,
    warn,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("instruction", help="approve or revoke rules for agents; list them",
                       description="A rule (a role: instruction memory) reaches agents as an instruction only "
                       "after a person approves it here AND that approval is committed on the project's default "
                       "branch (a merged PR is the review). No MCP tool can do this: an agent never raises its "
                       "own trust.")
    verbs = p.add_subparsers(dest="verb", metavar="approve|revoke|list")
    verbs.required = True
    a = verbs.add_parser("approve", help="approve a submitted rule (a file edit to commit)",
                         description="Set instruction_state approved, trust_level, approved_by and a review_history "
                         "entry on a submitted rule (or one of your personal rules), write its approval record, and stage "
                         "both (a plain `git commit` takes them). The approver is git's identity. Refuses outbox "
                         "drafts: submit them first. In a team repository it warns when you approve your own "
                         "proposal.")
    a.add_argument("id")
    a.add_argument("--trust", choices=("reviewed", "trusted"), default="reviewed",
                   help="trust level to record (org rules need trusted; default reviewed)")
    a.add_argument("--note", help="why, kept in review_history")
    a.add_argument("--by", help="refused unless it names you: the approver recorded is always git's identity "
                   "(user.email)")
    add_json(a)
    a.set_defaults(func=run_approve)
    r = verbs.add_parser("revoke", help="revoke a rule: it stays as history, never again an instruction",
                         description="Set instruction_state revoked, record it in review_history, and name every approval of the rule in .approvals/ID.revoked.json; the file and the records are staged. No copy, cherry-pick or revert of an old approval serves it again; approve it again to serve it.")
    r.add_argument("id")
    r.add_argument("--note", help="why, kept in review_history")
    r.add_argument("--by", help="refused unless it names you: who revokes is always git's identity (user.email)")
    add_json(r)
    r.set_defaults(func=run_revoke)
    ls = verbs.add_parser("list", help="rules: pending, approved (served or why not), revoked",
                          description="Every rule grouped pending / approved / revoked; an approved rule says "
                          "whether agents get it now and, if not, why.")
    add_json(ls)
    ls.set_defaults(func=run_list)


def _done(r: dict) -> int:
    warn(r.get("warnings"))
    verb = "approved" if r["to"] == "approved" else "revoked"
    if not r["changed"]:
        print(f"{short(r['id'])}: already {verb}; nothing changed")
    else:
        print(f"{short(r['id'])}: instruction_state {r['from']} → {r['to']} (by {r['by']})")
    print_staged(r)
    print(f"next: {r['next']}", file=sys.stderr)
    return 0


def run_approve(args: argparse.Namespace) -> int:
    from git_memex.agents.instruction import approve

    r = approve(context(), args.id, trust=args.trust, note=args.note, by=args.by)
    if args.json:
        emit_json(r)
        return 0
    return _done(r)


def run_revoke(args: argparse.Namespace) -> int:
    from git_memex.agents.instruction import revoke

    r = revoke(context(), args.id, note=args.note, by=args.by)
    if args.json:
        emit_json(r)
        return 0
    return _done(r)


def run_list(args: argparse.Namespace) -> int:
    from git_memex.agents.instruction import list_rules

    groups = list_rules(context())
    if args.json:
        emit_json(groups)
        return 0
    if not any(groups.values()):
        print("no rules yet (add one with `git memex add TEXT --role instruction`)")
        return 0
    for name in ("pending", "approved", "revoked"):
        items = groups[name]
        if not items:
            continue
        print(f"{name}:")
        for it in items:
            loc = str(it["location"])
            shared = loc.startswith(("org:", "remote:"))  # where it lives, not what its file claims
            where = loc if shared else it["scope"]
            if name == "approved":
                state = "served" if it["served"] else f"not served: {it['why_not']}"
            else:
                review = it.get("remote_review_state")
                state = f"{review} on the server, {loc}" if review else loc
            text = it["text"] if len(it["text"]) <= 70 else it["text"][:69] + "…"
            print(f"  {short(it['id'])}  {where:<8} {text}  [{state}]")
    return 0

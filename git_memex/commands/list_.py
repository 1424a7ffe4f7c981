"""`git memex list`: memories newest first."""

from __future__ import annotations

import argparse

from git_memex.commands._common import (
    TYPE_HELP,
    add_json,
    context,
    emit_json,
    label,
    short,
)
from git_memex.commands.search import READ_SCOPES
from git_memex.core import model


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help="list memories, newest first", description="List memories, newest first.")
    p.add_argument("--scope", choices=READ_SCOPES, default="all",
                   help="all (default): project, personal and subscribed org memories; both: project and personal")
    p.add_argument("--type", choices=model.TYPES, default=None, metavar="TYPE", help=TYPE_HELP)
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--include", choices=("active", "all"), default="active",
                   help="active (default) hides superseded, retracted, archived and expired memories")
    p.add_argument("--confidence", choices=model.CONFIDENCES, default=None,
                   help="only memories of this confidence; low is the regret window: an agent's captures to clean up")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.commands.search import disagrees
    from git_memex.ops import list_memories

    res = list_memories(context(), scope=args.scope, type=args.type, limit=args.limit, include=args.include,
                        confidence=args.confidence)
    if args.json:
        emit_json(res)
        return 0
    rows = res["memories"]
    w = max((len(m.get("short_id") or short(m["id"])) for m in rows), default=10)
    if args.scope in ("both", "all") and rows:
        # two headings, newest first under each: what stays on this machine, what the team shares;
        # a third for subscribed org memories when there are any
        org = [m for m in rows if m.get("org")]
        remote = [m for m in rows if m.get("remote")]
        for title, group in (("Personal (this machine only)", [m for m in rows if m.get("scope") == "personal"]),
                             ("Project", [m for m in rows if m.get("scope") != "personal" and not m.get("org")
                                          and not m.get("remote")]),
                             *((("Org", org),) if org else ()), *((("Remote (read-only)", remote),) if remote else ())):
            print(f"{title}:" if group else f"{title}: none")
            for m in group:
                print(f"  {m.get('short_id') or short(m['id']):{w}}  {label(m):28}  {m['snippet']}")
                if m.get("contradicts"):
                    print(f"      {disagrees(m, rows, res.get('disagreements', []))}")
    else:
        for m in rows:
            print(f"{m.get('short_id') or short(m['id']):{w}}  {label(m):28}  {m['snippet']}")
            if m.get("contradicts"):
                print(f"    {disagrees(m, rows, res.get('disagreements', []))}")
    shown = len(rows)
    if res["total"] > shown:
        print(f"({shown} of {res['total']}; --limit shows more)")
    elif not shown:
        print("no memories yet; `git memex add TEXT` saves one")
    for f in res.get("freshness", []):
        if f.get("note"):
            print(f"note: {f['note']}")
    for o in res.get("remote_revisions", []):
        print(f"note: {o['note']}")
    return 0

"""`git memex doctor`: check files, chains, hooks, merge driver and index; exit 1 if anything fails."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("doctor", help="check files, chains, hooks, merge driver and index",
                       description="Check memory files (unreadable ones listed with the reason), supersede chains, "
                       "hooks, the merge driver, personal or private files inside the repository, secrets, index "
                       "drift, and each org subscription (its clone, origin, upstream and index, its unreadable or "
                       "secret-holding files, the orgs .ai/open-memex/orgs.gitconfig names that are not subscribed). "
                       "Exit 1 if any check fails.")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.upkeep.doctor import run as check

    rep = check(context())
    if args.json:
        emit_json(rep.to_json())
    else:
        for c in rep.checks:
            print(f"{c.level:4}  {c.name}" + (f": {c.detail}" if c.detail else ""))
    return 0 if rep.ok else 1

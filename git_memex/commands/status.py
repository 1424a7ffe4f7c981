"""`git memex status ID STATE`: lifecycle changes (active, deprecated, retracted, archived)."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, print_staged


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("status", help="change a memory's lifecycle status",
                       description="Change a memory's lifecycle status. retracted → active is refused; "
                       "superseded is reached only through `supersede`.")
    p.add_argument("id")
    p.add_argument("state", metavar="{active,deprecated,retracted,archived}")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import set_status

    res = set_status(context(), args.id, args.state)
    if args.json:
        emit_json(res)
    elif res["changed"]:
        print(f"{res['id']}: {res['from']} → {res['to']}")
        print_staged(res)
    else:
        print(f"{res['id']} is already {res['to']}")
    return 0

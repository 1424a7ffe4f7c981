"""`git memex pull`: fetch and fast-forward only, then reindex what changed. Never merges or pushes."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pull", help="fetch + fast-forward only, then reindex the memory files that changed",
                       description="Fetch the current branch's upstream with your own git (your credentials), "
                       "fast-forward only, then reindex exactly the memory files that changed. It never merges "
                       "and never pushes; a diverged branch is left as it was (exit 2).")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.git.sync import pull

    res = pull(context())
    if args.json:
        emit_json(res)
        return 0
    if res["state"] == "up-to-date":
        print("already up to date")
    else:
        n = len(res["changed"])
        print(f"fast-forward {res['old'][:7]} → {res['new'][:7]} ({n} memory file{'s' if n != 1 else ''} changed)")
    return 0

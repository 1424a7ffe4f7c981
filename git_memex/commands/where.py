"""`git memex where`: every place git-memex reads or writes for the current directory."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("where", help="print the data root, indexes, memory folder, scope key and repo id",
                       description="Print the data root, the indexes, the memory folders, the scope key and the repo id.")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import where

    info = where(context())
    if args.json:
        emit_json(info)
        return 0
    stores = info.pop("providers")
    width = max(len(k) for k in info)
    for k, v in info.items():
        print(f"{k.ljust(width)}  {v if v is not None else '-'}")
    for p in stores:  # one line per store: what it can do (docs/format.md)
        c = p["capabilities"]
        can = " ".join(k for k in ("read", "write", "delete", "history") if c[k]) or "nothing"
        print(f"{('store ' + p['name']).ljust(width)}  {can}; sync {c['sync']}  ({p['path']})")
    return 0

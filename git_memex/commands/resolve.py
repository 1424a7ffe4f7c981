"""`git memex resolve [ID|PATH]`: list conflicted memory files, or merge one field by field."""

from __future__ import annotations

import argparse
import json

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("resolve", help="list conflicted memory files, or 3-way merge one",
                       description="Without an argument, list conflicted memory files (from the index stages). With "
                       "one, merge stages 1/2/3 with the merge driver's engine: a clean result is written and staged; "
                       "otherwise base/ours/theirs are printed per field and nothing is written (exit 3).")
    p.add_argument("target", nargs="?", metavar="ID|PATH")
    add_json(p)
    p.set_defaults(func=run)


def _fmt(v: object) -> str:
    if isinstance(v, str):
        return v.replace("\n", "\\n")
    return json.dumps(v, ensure_ascii=False, default=str)


def run(args: argparse.Namespace) -> int:
    from git_memex.git.sync import list_conflicts, resolve

    ctx = context()
    if not args.target:
        items = list_conflicts(ctx)
        if args.json:
            emit_json({"conflicts": [c.__dict__ for c in items]})
        elif not items:
            print("no conflicted memory files")
        else:
            for c in items:
                print(f"conflicted: {c.id}  {c.path}")
        return 0
    out = resolve(ctx, args.target)
    if args.json:
        emit_json(out.__dict__)
        return 0 if out.clean else 3
    if out.clean:
        print(f"resolved {out.path}" + (f" (merged: {', '.join(out.auto_merged)})" if out.auto_merged else ""))
        return 0
    print(f"cannot resolve {out.path} automatically; a human must decide:")
    for conflict in out.conflicts:
        print(f"  {conflict['field']} ({conflict['kind']} conflict):")
        for side in ("base", "ours", "theirs"):
            print(f"    {side + ':':7} {_fmt(conflict[side])}")
    print("Nothing was written. Edit the file, then `git add` it.")
    return 3

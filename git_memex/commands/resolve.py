"""`git memex resolve [ID|PATH] [--ours|--theirs]`: list conflicted memory files, or merge one field by
field (taking one side for what conflicts)."""

from __future__ import annotations

import argparse
import json

from git_memex.commands._common import add_json, context, emit_json
from git_memex.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("resolve", help="list conflicted memory files, or 3-way merge one (--ours/--theirs: take a side)",
                       description="Without an argument, list conflicted memory files (from the index stages). With "
                       "one, merge stages 1/2/3 with the merge driver's engine: a clean result is written and staged; "
                       "otherwise base/ours/theirs are printed per field and nothing is written (exit 3). With --ours "
                       "or --theirs (the sides `git checkout --ours/--theirs` names), each conflicting field and "
                       "body hunk takes that side while everything else stays merged from both; the result is "
                       "written and staged, or, when it would fail the pre-commit check, nothing is written (exit 3).")
    p.add_argument("target", nargs="?", metavar="ID|PATH")
    side = p.add_mutually_exclusive_group()
    side.add_argument("--ours", dest="side", action="store_const", const="ours",
                      help="settle every conflict with our side (HEAD's), keep the merged rest")
    side.add_argument("--theirs", dest="side", action="store_const", const="theirs",
                      help="settle every conflict with their side (the branch merged in), keep the merged rest")
    add_json(p)
    p.set_defaults(func=run)


def _fmt(v: object) -> str:
    if isinstance(v, str):
        return v.replace("\n", "\\n")
    return json.dumps(v, ensure_ascii=False, default=str)


def run(args: argparse.Namespace) -> int:
    from git_memex.git.sync import list_conflicts, resolve

    ctx = context()
    if args.side and not args.target:
        raise UsageError(f"--{args.side} needs the ID or PATH of one conflicted memory file (`git memex resolve` lists "
                         "them); nothing was changed")
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
    out = resolve(ctx, args.target, side=args.side)
    if args.json:
        emit_json(out.__dict__)
        return 0 if out.clean else 3
    if out.deleted:
        print(f"resolved {out.path}: removed, as {out.side} deleted it")
        return 0
    if out.clean:
        took = f"; {out.side} for {', '.join(out.taken)}" if out.side and out.taken else ""
        print(f"resolved {out.path}" + (f" (merged: {', '.join(out.auto_merged)}{took})" if out.auto_merged
                                        else f" ({took[2:]})" if took else ""))
        return 0
    print(f"cannot resolve {out.path} automatically; a human must decide:")
    for conflict in out.conflicts:
        print(f"  {conflict['field']} ({conflict['kind']} conflict):")
        for side in ("base", "ours", "theirs"):
            print(f"    {side + ':':7} {_fmt(conflict[side])}")
    print("Nothing was written. Edit the file, then `git add` it; or take one side for every conflict with "
          f"`git memex resolve {out.path} --ours` (or `--theirs`).")
    return 3

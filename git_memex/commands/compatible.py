"""`git memex compatible A B [--note WHY] [--undo]`: a person says two memories do not contradict."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("compatible", help="mark two memories as not contradictory (a person's decision)",
                       description="Record that memories A and B, as their texts read now, do not contradict each "
                       "other, so `audit`, `sync-status`, `doctor`, search, list and the session block stop raising "
                       "the pair. Two repository memories: the record is .ai/open-memex/.compatible/A-B.json, staged "
                       "for your next commit, so it reaches the team through review; otherwise (a personal, draft, "
                       "private, org or remote memory) it stays in the data root. An edit of either text raises the "
                       "pair again. The other way out is to supersede the wrong one (`git memex supersede ID TEXT`). "
                       "No MCP tool does this: an agent never silences a disagreement.")
    p.add_argument("a", metavar="A", help="a memory id (or unique prefix)")
    p.add_argument("b", metavar="B", help="the other memory")
    p.add_argument("--note", default=None, metavar="WHY", help="why they do not contradict (kept in the record)")
    p.add_argument("--undo", action="store_true", help="remove the record: the pair is checked again")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review import compatible

    ctx = context()
    if args.undo:
        if args.note is not None:
            from git_memex.errors import USAGE, MemexError

            raise MemexError("--note goes with marking a pair, not with --undo", USAGE)
        res = compatible.unmark(ctx, args.a, args.b)
        if args.json:
            emit_json(res)
            return 0
        print(f"removed the record of {res['a']} and {res['b']}; they are checked for contradictions again")
        for path in res["removed"]:
            print(f"  removed {path}")
        for w in res.get("warnings", []):
            print(f"warning: {w}")
        return 0
    res = compatible.mark(ctx, args.a, args.b, note=args.note)
    if args.json:
        emit_json(res)
        return 0
    print(f"marked {res['a']} and {res['b']} as not contradictory, as their texts read now")
    if res["where"] == "repository":
        state = "staged; commit it so the team stops seeing the pair" if res.get("staged") else "not staged"
        print(f"  recorded in {res['path']} ({state})")
    else:
        print(f"  recorded on this machine in {res['path']} (one of them is not a committed repository memory)")
    if not res["flagged"]:
        print("  (they were not flagged as disagreeing; the record keeps it so)")
    if res.get("warning"):
        print(f"warning: {res['warning']}")
    return 0

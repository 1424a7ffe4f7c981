"""`git memex distill [--out FILE]`: AGENTS.md candidates from approved instruction memories."""

from __future__ import annotations

import argparse
from pathlib import Path

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("distill", help="propose AGENTS.md lines from approved high-confidence instructions",
                       description="Propose AGENTS.md lines from approved (or published), high-confidence "
                       "`role: instruction` repository memories, grouped by type, each with its id. Personal "
                       "memories are never candidates. Writes only where --out says.")
    p.add_argument("--out", help="write the candidates to this file (replacing it)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.core.files import atomic_write_text
    from git_memex.review.distill import distill

    r = distill(context())
    if args.out and r["count"]:
        atomic_write_text(Path(args.out), r["markdown"])
    if args.json:
        emit_json(r)
        return 0
    if not r["count"]:
        print("no candidates: none of the approved repository memories is a high-confidence instruction")
        return 0
    if args.out:
        print(f"wrote {r['count']} candidate line(s) to {args.out}; review them before adding to AGENTS.md")
    else:
        print(r["markdown"], end="")
    return 0

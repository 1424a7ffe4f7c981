"""`git memex supersede ID TEXT`: replace a memory, keeping the old one as history."""

from __future__ import annotations

import argparse

from git_memex.commands._common import TYPE_HELP, add_json, context, emit_json, read_text_arg
from git_memex.core import model


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("supersede", help="replace a memory with a new version",
                       description="Write a new memory that replaces ID. The old one becomes `superseded` and both "
                       "point at each other (supersedes / superseded_by).")
    p.add_argument("id")
    p.add_argument("text", help="the new text, or - for stdin")
    p.add_argument("--type", choices=model.TYPES, default=None, metavar="TYPE", help="a new type (default: the old one's); " + TYPE_HELP)
    p.add_argument("--tags", default=None, help="comma-separated tags replacing the old ones")
    p.add_argument("--role", choices=model.ROLES, default=None, help="knowledge or instruction (default: the old one's)")
    p.add_argument("--confidence", choices=model.CONFIDENCES, default=None,
                   help="how sure the statement is (default: the old one's)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import supersede

    text = read_text_arg(args.text)
    tags = None if args.tags is None else [t.strip() for t in args.tags.split(",") if t.strip()]
    res = supersede(context(), args.id, text, type=args.type, tags=tags, role=args.role,
                    confidence=args.confidence)
    if args.json:
        emit_json({"id": res["id"], "supersedes": res["supersedes"], "masked": res["masked"]})
        return 0
    print(f"saved {res['id']}, superseding {res['supersedes']}")
    return 0

"""`git memex add TEXT`: save a new memory (project drafts go to the outbox, never the repo)."""

from __future__ import annotations

import argparse
import sys

from git_memex.commands._common import TYPE_HELP, add_json, context, emit_json, read_text_arg, short
from git_memex.core import model


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("add", help="save a new memory",
                       description="Save a new memory. Project memories land in the outbox as drafts, "
                       "never in the repository; secrets are masked and <private> parts removed before writing.")
    p.add_argument("text", help="the memory text, or - to read it from stdin")
    p.add_argument("--scope", choices=("project", "personal"), default="project")
    p.add_argument("--type", choices=model.TYPES, default="fact", metavar="TYPE", help="default fact; " + TYPE_HELP)
    p.add_argument("--tags", default="", help="comma-separated tags")
    p.add_argument("--importance", choices=model.IMPORTANCES, default="normal")
    p.add_argument("--role", choices=model.ROLES, default="knowledge")
    p.add_argument("--source", choices=model.SOURCES, default="cli")
    p.add_argument("--visibility", choices=model.VISIBILITIES, default=None,
                   help="private keeps a project memory on this machine only")
    p.add_argument("--paths", default="", help="comma-separated repo-relative globs this memory is about")
    p.add_argument("--aliases", default="", help="comma-separated other words to find it by (at most 4)")
    p.add_argument("--alias", default=None, help="with --target: a vocabulary entry, ALIAS is another name for TARGET")
    p.add_argument("--target", default=None, help="see --alias")
    p.add_argument("--confidence", choices=model.CONFIDENCES, default=None,
                   help="how sure the statement is (default medium; distill takes only high)")
    p.add_argument("--related", action="append", default=[], metavar="ID",
                   help="a memory this one is linked to (id or unique prefix; repeat for more); `show` lists them")
    p.add_argument("--expires", metavar="WHEN", default=None,
                   help="when it stops being retrieved: 30d, 12h, 2w, a date (2027-01-31, the end of that day UTC) "
                   "or an RFC 3339 time; `forget --expired` deletes expired local files")
    p.add_argument("--canonical-ref", metavar="PATH", default=None,
                   help="the document this memory summarises: a path relative to the repository's top folder "
                   "(docs/adr/003.md, optionally #anchor; the file must exist) or an http(s) URL")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import add

    text = read_text_arg(args.text)
    ctx = context()
    res = add(
        ctx, text, scope=args.scope, type=args.type,
        tags=[t for t in args.tags.split(",") if t.strip()], importance=args.importance,
        role=args.role, source=args.source, visibility=args.visibility,
        paths=[p.strip() for p in args.paths.split(",") if p.strip()], confidence=args.confidence,
        aliases=[a.strip() for a in args.aliases.split(",") if a.strip()], alias=args.alias, target=args.target,
        related=args.related, expires=args.expires, canonical_ref=args.canonical_ref,
    )
    if args.json:
        emit_json(res.to_json())
        return 0
    if res.duplicate_of:
        print(f"already remembered as {res.duplicate_of}; nothing written")
        return 0
    where = {"outbox": "project draft in the outbox; `git memex submit` shares it",
             "private": "project, private: stays on this machine",
             "personal": "personal: stays on this machine"}.get(res.location or "", res.scope)
    print(f"saved {res.id} ({where})")
    if res.masked:
        print(f"masked {len(res.masked)} secret(s): {', '.join(res.masked)}", file=sys.stderr)
    if res.private_spans:
        print(f"removed {res.private_spans} <private> part(s)", file=sys.stderr)
    if res.near_duplicates:
        print("similar to: " + ", ".join(short(i) for i in res.near_duplicates), file=sys.stderr)
    return 0

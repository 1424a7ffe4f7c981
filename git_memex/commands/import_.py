"""`git memex import FILE`: memories from a bundle `git memex export` wrote (docs/bundle.md)."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, warn


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="read memories from a bundle file written by export",
                       description="Read memories from a bundle written by `git memex export` (FILE, or - for stdin). "
                       "The whole bundle is checked before anything is written; a truncated or foreign file, or one "
                       "holding a personal memory bound for a project, is refused with nothing written. Every memory "
                       "is validated and its secrets masked as on any write, and keeps its id: personal memories go "
                       "to your personal folder, project ones to this project's outbox (private ones stay private) "
                       "as drafts to submit. An id already here is skipped when identical and kept as it is when "
                       "it differs (a conflict). Approvals do not travel: an approved instruction arrives as a draft.")
    p.add_argument("file", metavar="FILE", help="the bundle file, or - for stdin")
    p.add_argument("--dry-run", action="store_true", help="report what would be imported; write nothing")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.upkeep.bundle import import_bundle

    res = import_bundle(context(), args.file, dry_run=args.dry_run)
    warn(res.warnings)
    if args.json:
        emit_json(res.to_json())
        return 0
    for c in res.conflicts:
        print(f"conflict {c['id']}: kept the one in the {c['location']} ({c['reason']})")
    print(res.summary)
    return 0

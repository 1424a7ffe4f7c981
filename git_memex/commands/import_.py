"""`git memex import FILE`: memories from a bundle `git memex export` wrote (docs/bundle.md)."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, warn


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("import", help="read memories from a bundle file written by export",
                       description="Read memories from a bundle written by `git memex export` (FILE, or - for stdin). "
                       "The whole bundle is checked before anything is written; a truncated or foreign file, or one "
                       "holding a personal memory bound for a project, is refused with nothing written. Every memory "
                       "is validated and its secrets masked as on any write, and keeps its id: personal memories go "
                       "to your personal folder, project ones to this project's outbox (private ones stay private) "
                       "as drafts to submit. An id already here is skipped when identical and kept as it is when "
                       "it differs (a conflict). Approvals do not travel: an approved instruction arrives as a draft. "
                       "With --from open-memex, reads the reference tool's data root instead (DIR, else "
                       "$OPEN_MEMEX_HOME, %APPDATA%/open-memex or ~/.local/share/open-memex): its personal memories, "
                       "and the outbox drafts of this project only (other projects' drafts are listed, to import "
                       "from their own clones); a file that cannot be taken is quarantined with its reason and "
                       "never stops the others.")
    p.add_argument("file", metavar="FILE", nargs="?",
                   help="the bundle file, or - for stdin; with --from open-memex, the reference tool's data root DIR")
    p.add_argument("--from", dest="source", metavar="TOOL", choices=("open-memex",),
                   help="import from another tool's data root instead of a bundle: open-memex (the TypeScript "
                   "reference tool; docs/bundle.md)")
    p.add_argument("--dry-run", action="store_true", help="report what would be imported; write nothing")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.upkeep.bundle import import_bundle

    if args.source == "open-memex":
        return _run_reference(args)
    if args.file is None:
        from git_memex.errors import UsageError

        raise UsageError("import needs the bundle FILE (or - for stdin), or --from open-memex [DIR]")
    res = import_bundle(context(), args.file, dry_run=args.dry_run)
    warn(res.warnings)
    if args.json:
        emit_json(res.to_json())
        return 0
    for c in res.conflicts:
        print(f"conflict {c['id']}: kept the one in the {c['location']} ({c['reason']})")
    print(res.summary)
    return 0


def _run_reference(args: argparse.Namespace) -> int:
    from git_memex.upkeep.openmemex import import_reference

    ref = import_reference(context(), args.file, dry_run=args.dry_run)
    warn(ref.ignored + ref.res.warnings)
    if args.json:
        emit_json(ref.to_json())
        return 0
    for q in ref.quarantined:
        print(f"quarantined {q['path']}: {q['reason']}")
    for c in ref.res.conflicts:
        print(f"conflict {c['id']}: kept the one in the {c['location']} ({c['reason']})")
    for line in ref.other_lines(args.file):
        print(line)
    print(ref.summary)
    return 0

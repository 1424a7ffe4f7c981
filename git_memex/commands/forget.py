"""`git memex forget ID [--soft]`: delete a memory, or retract it."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json, print_staged


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("forget", help="delete a memory (or --soft: retract it)",
                       description="Delete a memory's file and index entry, or with --soft mark it retracted "
                       "(kept for audit, never retrieved). A deleted file stays in git history if it was committed.")
    p.add_argument("id", nargs="?", help="the memory (id or unique prefix); not with --expired")
    p.add_argument("--soft", action="store_true", help="retract instead of deleting")
    p.add_argument("--expired", action="store_true",
                   help="delete every local memory (personal, outbox, private) whose expires_at has passed; "
                   "committed ones are listed, to remove with a commit")
    p.add_argument("--dry-run", action="store_true", help="with --expired: say what would be deleted")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.errors import UsageError

    if args.expired:
        if args.id or args.soft:
            raise UsageError("--expired deletes every expired local memory; give it no id and no --soft")
        return run_expired(args)
    if args.dry_run:
        raise UsageError("--dry-run goes with --expired")
    if not args.id:
        raise UsageError("give the id of the memory to forget (or --expired)")
    from git_memex.ops import forget

    res = forget(context(), args.id, soft=args.soft)
    if args.json:
        emit_json(res)
    elif res.get("deleted"):
        print(f"deleted {res['id']}")
    else:
        print(f"retracted {res['id']}" if res.get("changed") else f"{res['id']} was already retracted")
    if not args.json:
        print_staged(res)
    return 0


def run_expired(args: argparse.Namespace) -> int:
    from git_memex.ops import forget_expired

    res = forget_expired(context(), dry_run=args.dry_run)
    if args.json:
        emit_json(res)
        return 0
    verb = "would delete" if args.dry_run else "deleted"
    for d in res["deleted"]:
        print(f"{verb} {d['id']} (expired {d['expires_at']})")
    if not res["deleted"]:
        print("no expired local memories")
    if res["in_repository"]:
        print(f"{len(res['in_repository'])} expired memor{'y is' if len(res['in_repository']) == 1 else 'ies are'} "
              f"committed in the repository: `git memex forget ID` and a commit removes each "
              f"({', '.join(res['in_repository'][:5])}{' …' if len(res['in_repository']) > 5 else ''})")
    return 0

"""`git memex scopes [--adopt KEY] [--json]`: every project key in the data root (docs/project-keys.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scopes", help="list every project key in the data root with its drafts and private memories",
                       description="Drafts (the outbox) and private memories live in the data root under a project "
                       "key, pinned per clone by `init` (git config memex.projectKey). List every key with its "
                       "counts and the clone that uses it; --adopt KEY moves a key's files to this clone's key "
                       "(after a rename, a transfer or a new origin left them under an old one).")
    p.add_argument("--adopt", metavar="KEY", default=None,
                   help="move KEY's drafts and private memories to this clone's key")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.core import scopekeys

    ctx = context()
    if args.adopt is not None:
        res = scopekeys.adopt(ctx, args.adopt)
        from git_memex.index.stores import Stores

        with Stores(ctx) as st:
            st.refresh(trigger="scopes --adopt")
        if args.json:
            emit_json(res)
        else:
            print(f"carried {res['from']} over to {res['to']}: moved {res['moved']}, skipped "
                  f"{res['skipped_identical']} identical, {res['kept']} kept where they were "
                  "(same id, different content)")
        return 0
    if ctx.repo is not None:
        scopekeys.settle(ctx)
    rows = scopekeys.scopes(ctx)
    personal = scopekeys.count_personal(ctx)
    if args.json:
        emit_json({"current": ctx.project_key if ctx.repo is not None else None, "personal": personal,
                   "scopes": [s.as_dict() for s in rows]})
        return 0
    print(f"personal memories: {personal}")
    if not rows:
        print("no project keys in the data root yet")
        return 0
    width = max(len(s.key) for s in rows)
    print(f"  {'KEY'.ljust(width)}  DRAFTS  PRIVATE  CLONE")
    for s in rows:
        clone = s.clone or "(no known clone)"
        if s.clone and not s.clone_exists:
            clone += " (gone)" if not Path(s.clone).is_dir() else " (no longer uses it)"
        if s.origin:
            clone += f"  {s.origin}"
        mark = "*" if s.current else " "
        print(f"{mark} {s.key.ljust(width)}  {s.drafts:6}  {s.private:7}  {clone}")
    return 0

"""`git memex reindex [--full]`: bring the index in line with the markdown files."""

from __future__ import annotations

import argparse
import sys

from git_memex.commands._common import add_json, context, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("reindex", help="update (or --full: rebuild) the index from the markdown files",
                       description="Update the index from the markdown files, reading only what changed; "
                       "--full throws the index away and rebuilds it.")
    p.add_argument("--full", action="store_true")
    p.add_argument("--embeddings", action="store_true",
                   help="also embed the memories that have no vector yet (semantic lane; slow, shows progress)")
    p.add_argument("--quiet", action="store_true", help="no progress line and no output (background builds)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.ops import reindex

    ctx = context()
    if args.embeddings:
        return embeddings(ctx, args)
    r = reindex(ctx, full=args.full)
    s = r.stats
    for w in s.warnings:  # a file or folder left out (a name that is not UTF-8)
        print(f"warning: {w}", file=sys.stderr)
    if args.json:
        emit_json({"full": r.full, "added": s.added, "changed": s.changed, "removed": s.removed,
                   "unchanged": s.unchanged, "quarantined": [{"path": p, "reason": why} for p, why in r.quarantined],
                   "total": r.total, "repaired": r.repaired, **({"warnings": s.warnings} if s.warnings else {})})
        return 0
    print(f"{'rebuilt' if r.full else 'updated'}: {s.added} added, {s.changed} changed, {s.removed} removed, "
          f"{r.total} indexed")
    for p, why in r.quarantined:
        print(f"quarantined: {p}: {why}")
    for line in r.repaired:
        print(f"repaired chain: {line}")
    return 0


def embeddings(ctx: Context, args: argparse.Namespace) -> int:
    """`reindex --embeddings`: update the index, then embed what has no vector (never with --full)."""
    from git_memex.errors import MemexError, UsageError
    from git_memex.index.stores import Stores
    from git_memex.search import semantic

    if args.full:
        raise UsageError("--embeddings does not go with --full: run `git memex reindex --full` first, then --embeddings")
    prov = semantic.provider(ctx)
    if prov is None:
        raise MemexError("the semantic lane is off: pip install 'git-memex[semantic]' (or set memex.embeddingModel)", 1)
    show = not args.quiet and not args.json and sys.stderr.isatty()

    def progress(done: int, need: int) -> None:
        if show and need:
            width = 30
            fill = width * done // need
            sys.stderr.write(f"\rembedding [{'#' * fill}{'.' * (width - fill)}] {done}/{need}")
            sys.stderr.flush()

    with Stores(ctx) as st, semantic.build_lock(st.ctx) as mine:
        if not mine:
            if not args.quiet:
                print("another embedding build is running; nothing done")
            return 0
        st.refresh(trigger="reindex")
        done, total = semantic.build(st, prov, progress)
    if show:
        sys.stderr.write("\n")
    if args.json:
        emit_json({"embedded": done, "memories": total, "model": prov.name})
    elif not args.quiet:
        print(f"embedded {done} memories ({total} indexed, model {prov.name})")
    return 0

"""`git memex sync-status`: last sync, outbox, review states in the repository, uncommitted files."""

from __future__ import annotations

import argparse

from git_memex.agents.render import review_words
from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sync-status", help="last sync, outbox, repository review states, uncommitted files",
                       description="Show the last index sync (when, and what triggered it), the outbox drafts, "
                       "repository memories by review state, uncommitted memory files, possible contradictions, "
                       "and the next command to run.")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.review.sync_status import sync_status

    s = sync_status(context())
    if args.json:
        emit_json(s)
        return 0
    last = s["last_sync"]
    print(f"last sync: {last['at']} ({last['trigger'] or 'unknown trigger'})" if last else "last sync: never")
    auto = s.get("auto_pull")
    if auto:
        if auto.get("state") != "done":
            print(f"auto-pull: started {auto.get('started_at')}, not finished")
        elif auto.get("exit") == 0:
            res = auto.get("result") or {}
            what = "already up to date" if res.get("state") == "up-to-date" else \
                f"{len(res.get('changed') or [])} memory file(s) changed"
            print(f"auto-pull: {auto.get('finished_at')}: {what}")
        else:
            print(f"auto-pull: {auto.get('finished_at')}: failed ({auto.get('error')})")
    print(f"outbox: {len(s['outbox'])} draft(s)")
    for o in s["outbox"]:
        print(f"  {o['id']} [{review_words(o['review_state'], o.get('review_claim'))}] {o['snippet'][:80]}")
    if not s["git"]:
        print("repository: none (project memories stay local until you work in a git repository)")
    else:
        counts = ", ".join(f"{k} {len(v)}" for k, v in s["repo"].items() if v) or "none"
        print(f"repository: {counts}")
        for f in s["uncommitted"]:
            print(f"  uncommitted: {f}")
    if s["contradictions"] or s["contradictions_unchecked"]:
        from git_memex.review.contradictions import summary

        print(f"contradictions: {summary(s['contradictions'], s['contradictions_unchecked'], s['contradictions_count'])}")
    print(f"next: {s['next']}")
    return 0

"""`git memex pull`: fetch and fast-forward only, then reindex what changed. Never merges or pushes."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("pull", help="fetch + fast-forward only, then reindex the memory files that changed",
                       description="Fetch the current branch's upstream with your own git (your credentials), "
                       "fast-forward only, then reindex exactly the memory files that changed. It never merges "
                       "and never pushes; a diverged branch is left as it was (exit 2). When an incoming memory file "
                       "holds a secret or conflict markers, each is named on stderr (file, line, rule; never the "
                       "secret) and it exits 3 (the fast-forward is done).")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.git.sync import pull

    res = pull(context())
    problems = res.get("problems") or []
    if args.json:
        emit_json(res)
        return INCOMING_PROBLEM if problems else 0
    if res["state"] == "up-to-date":
        print("already up to date")
    else:
        n = len(res["changed"])
        print(f"fast-forward {res['old'][:7]} → {res['new'][:7]} ({n} memory file{'s' if n != 1 else ''} changed)")
    if res.get("unreadable"):
        from git_memex.git.sync import report_left_out

        report_left_out([(u["path"], u["reason"]) for u in res["unreadable"]], "the pull")
    if problems:
        from git_memex.git.sync import report_incoming
        from git_memex.secrets.scan import Finding

        report_incoming([Finding(p["path"], p["line"], p["rule"], p["secret"]) for p in problems], "the pull")
        return INCOMING_PROBLEM
    return 0


INCOMING_PROBLEM = 3
"""Exit code: the fast-forward is done and brought a secret or conflict markers (docs/git.md)."""

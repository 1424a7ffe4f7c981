"""`git memex remote add|list|pull|remove|review`: subscribe to git-memex remote servers, and review on one
(docs/remote.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from git_memex.commands._common import add_json, context, emit_json
from git_memex.errors import FAILED, UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("remote", help="subscribe to git-memex remote servers (add, list, pull, remove), review there",
                       description="A remote server (`git memex remote-server`) relays a team's memories over HTTP "
                       "to agents where git is not at hand. `add` records memex.remote.NAME.url and .tokenFile in "
                       "this repository's git config and pulls; `pull` copies what changed into a cache in the data "
                       "root, each file through the admission barrier, and indexes it: search, list, context and the "
                       "MCP tools then include those memories, labelled remote:NAME, read-only. A project memory "
                       "reaches the server with `git memex propose ID --to remote NAME`; a reviewer approves or "
                       "rejects a proposal with `git memex remote review NAME ID --approve|--reject`.")
    rsub = p.add_subparsers(dest="action", metavar="ACTION")
    pa = rsub.add_parser("add", help="subscribe to a remote server, check it answers, pull its memories")
    pa.add_argument("name", help="a short name: lowercase letters, digits and dashes")
    pa.add_argument("url", help="the server's URL, http://HOST:PORT")
    pa.add_argument("--token-file", required=True, metavar="FILE",
                    help="the file holding the token (mode 0600; read at each call, never copied)")
    pa.add_argument("--global", dest="global_", action="store_true",
                    help="record the subscription in ~/.gitconfig (every project) instead of this repository")
    add_json(pa)
    pl = rsub.add_parser("list", help="the subscribed remotes: URL, last pull, freshness, memory count")
    add_json(pl)
    pp = rsub.add_parser("pull", help="pull what changed on every subscribed remote (or NAME) into its cache")
    pp.add_argument("name", nargs="?", default=None)
    pp.add_argument("--retry", type=int, default=0, metavar="N",
                    help="try again up to N times when the server cannot be reached (default 0: no retry)")
    pp.add_argument("--full", action="store_true",
                    help="fetch every memory again, not only what changed since the last pull")
    pp.add_argument("--page-size", type=int, default=None, metavar="N",
                    help="memories asked for per page (1 to 1000, default 200); one pull reads up to 100 pages")
    add_json(pp)
    pr = rsub.add_parser("remove", help="unsubscribe and delete the cache and its index")
    pr.add_argument("name")
    add_json(pr)
    rv = rsub.add_parser("review", help="approve or reject a proposed memory on the server (a reviewer's token)",
                         description="A reviewer's decision on the server, about the revision this machine's cache "
                         "holds (the one `git memex show --remote NAME ID` shows): the server refuses it when it holds a "
                         "newer revision (pull and read it again) or the memory is not proposed. The server records "
                         "the token's name as the reviewer; the subscription's token file must hold a reviewer's "
                         "token. When a copy of ID is held here and says something else, nothing is sent unless "
                         "--read-remote says you read the server's revision. The cache is pulled afterwards.")
    rv.add_argument("name")
    rv.add_argument("id")
    decision = rv.add_mutually_exclusive_group(required=True)
    decision.add_argument("--approve", dest="decision", action="store_const", const="approve")
    decision.add_argument("--reject", dest="decision", action="store_const", const="reject")
    rv.add_argument("--note", help="why, kept with the reviewed revision (review_note); at most 4096 characters")
    rv.add_argument("--read-remote", action="store_true",
                    help="you read the server's revision (`git memex show --remote NAME ID`): needed when a copy of ID "
                    "held here, the one `git memex show ID` shows, says something else")
    add_json(rv)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.remote import subscriptions

    ctx = context()
    if args.action == "add":
        res = subscriptions.add(ctx, args.name, args.url, args.token_file, global_=args.global_)
        if args.json:
            emit_json(res)
            return 0
        _print_pulled(res)
        print(f"subscribed to remote {res['name']} ({res['url']}, recorded in {res['recorded']} git config): "
              f"{res['memories']} memor{'y' if res['memories'] == 1 else 'ies'} in {res['path']}")
        return 0
    if args.action == "list":
        rows = subscriptions.list_remotes(ctx)
        if args.json:
            emit_json({"remotes": rows})
        elif not rows:
            print("no remote is subscribed; `git memex remote add NAME URL --token-file F` subscribes to one")
        else:
            for r in rows:
                n = "never pulled" if r["memories"] is None else f"{r['memories']} memories"
                when = r["last_pull_at"] or "never"
                note = f"  ({r['freshness']['note']})" if r["freshness"]["note"] else ""
                print(f"{r['name']}  {r['url']}  {n}  last pull {when}{note}")
        return 0
    if args.action == "pull":
        if args.retry < 0:
            raise UsageError(f"--retry takes a count of 0 or more (got {args.retry})")
        if args.page_size is not None and not 1 <= args.page_size <= 1000:
            raise UsageError(f"--page-size takes a count from 1 to 1000 (got {args.page_size})")
        results, failed = subscriptions.pull(ctx, args.name, retry=args.retry, full=args.full,
                                             page_size=args.page_size)
        if args.json:
            emit_json({"remotes": results, "failed": failed})
        else:
            for r in results:
                _print_pulled(r)
                q = len(r["quarantined"])
                pages = f" in {r['pages']} pages" if r.get("pages", 1) > 1 else ""
                print(f"remote {r['name']}: {r['received']} received{pages}, {len(r['landed'])} landed, {q} "
                      f"quarantined; {r['memories']} memories cached")
        for f in failed:
            print(f"git-memex: {f['error']}", file=sys.stderr)
        return FAILED if failed else 0
    if args.action == "remove":
        res = subscriptions.remove(ctx, args.name)
        if args.json:
            emit_json(res)
        else:
            if res.get("kept_for"):
                kept = f"kept {res['path']}: the subscription in {', '.join(res['kept_for'])} still uses it"
            else:
                kept = "deleted " + res["path"] if res["cache_removed"] else "it had no cache"
            print(f"unsubscribed from remote {res['name']} ({' and '.join(res['removed_from'])} git config); {kept}")
        return 0
    if args.action == "review":
        res = subscriptions.review(ctx, args.name, args.id, args.decision, args.note, read_remote=args.read_remote)
        if args.json:
            emit_json(res)
            return 0
        for w in res["warnings"]:
            print(f"warning: {w}", file=sys.stderr)
        verb = "approved" if res["decision"] == "approve" else "rejected"
        print(f"remote {res['remote']}: {res['id']} revision {res['reviewed_revision']} "
              f"{verb}; the server holds it as revision {res['revision']}, {res['review_state']}"
              + (" (pulled)" if res["pulled"] else ""))
        return 0
    raise UsageError("remote needs an action: add, list, pull, remove or review (see `git memex remote --help`)")


def _print_pulled(res: dict[str, Any]) -> None:
    for q in res.get("quarantined", []):
        print(f"warning: remote {res['name']}: quarantined {q['id']}: it {q['reason']}; not written", file=sys.stderr)
    for w in res.get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)

"""`git memex org add|list|remove|pull`: subscribe to org memory repositories (docs/org.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from git_memex.commands._common import add_json, context, emit_json
from git_memex.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("org", help="subscribe to org memory repositories (add, list, remove, pull)",
                       description="An org memory repo holds what the company knows across projects, as v0.2 "
                       "files with scope org. `add` clones it into the data root and records memex.org.NAME.url "
                       "in git config (this repository's, or --global); search and list then include its "
                       "memories, labelled with the org name. `pull` fetches and fast-forwards only.")
    osub = p.add_subparsers(dest="action", metavar="ACTION")
    pa = osub.add_parser("add", help="clone an org memory repo into the data root, subscribe to it, index it")
    pa.add_argument("name", help="a short name: lowercase letters, digits and dashes")
    pa.add_argument("url", help="the org memory repository's URL (anything `git clone` takes)")
    pa.add_argument("--branch", default=None, help="the branch to follow (default: the remote's default branch)")
    pa.add_argument("--global", dest="global_", action="store_true",
                    help="record the subscription in ~/.gitconfig (every project) instead of this repository")
    pa.add_argument("--share", action="store_true",
                    help="also name it in the committed file .ai/open-memex/orgs.gitconfig, so that `git memex init` "
                    "in a fresh clone offers to subscribe (commit the file)")
    add_json(pa)
    pl = osub.add_parser("list", help="the subscribed org memory repos, their clones and memory counts")
    add_json(pl)
    pr = osub.add_parser("remove", help="unsubscribe, and delete the clone and its index unless another project uses it")
    pr.add_argument("name")
    pr.add_argument("--share", action="store_true", help="also drop it from the committed file .ai/open-memex/orgs.gitconfig")
    pr.add_argument("--force", action="store_true",
                    help="delete the clone even when it holds unpushed branches (an org proposal not yet pushed)")
    add_json(pr)
    pp = osub.add_parser("pull", help="fetch + fast-forward only every subscribed org clone (or NAME), then reindex")
    pp.add_argument("name", nargs="?", default=None)
    add_json(pp)
    p.set_defaults(func=run)


def _print_added(res: dict[str, Any]) -> None:
    for w in res.get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    n = res["memories"]
    print(f"subscribed to org {res['name']} ({res['url']}, recorded in {res['recorded']} git config): "
          f"{n} memor{'y' if n == 1 else 'ies'} indexed from {res['path']}")


def run(args: argparse.Namespace) -> int:
    from git_memex.git import org

    ctx = context()
    if args.action == "add":
        if args.share:
            return _add_shared(ctx, args)
        res = org.add(ctx, args.name, args.url, branch=args.branch, global_=args.global_)
        if args.json:
            emit_json(res)
        else:
            _print_added(res)
        return 0
    if args.action == "list":
        rows = org.list_orgs(ctx)
        if args.json:
            emit_json({"orgs": rows})
        elif not rows:
            print("no org memory repo is subscribed; `git memex org add NAME URL` subscribes to one")
        else:
            for r in rows:
                state = f"{r['memories']} memories" if r["state"] == "ok" else "clone missing"
                print(f"{r['name']}  {r['url']}  {state}  {r['path']}")
        return 0
    if args.action == "remove":
        if args.share:
            from git_memex.git import orgfile

            ctx.require_repo("org remove --share")
            before = orgfile.snapshot(ctx)
            shared = orgfile.unshare(ctx, args.name)
            try:
                res = org.remove(ctx, args.name, force=args.force)
            except BaseException:
                orgfile.restore(ctx, before)
                raise
            res["unshared"] = shared
        else:
            res = org.remove(ctx, args.name, force=args.force)
        if args.json:
            emit_json(res)
        else:
            if res.get("kept_for"):
                kept = f"kept {res['path']}: the subscription in {', '.join(res['kept_for'])} still uses it"
            else:
                kept = "deleted " + res["path"] if res["clone_removed"] else "its clone was already gone"
            print(f"unsubscribed from org {res['name']} ({' and '.join(res['removed_from'])} git config); {kept}")
            if res.get("deleted_unpushed"):
                print(f"deleted with it the unpushed branches: {', '.join(res['deleted_unpushed'])}")
            if res.get("unshared"):
                from git_memex.git import orgfile

                print(f"dropped it from {orgfile.rel_path(ctx)}; commit that file")
        return 0
    if args.action == "pull":
        results = org.pull(ctx, args.name)
        for r in results:
            for w in r.get("reindexed", {}).get("warnings", []):
                print(f"warning: {w}", file=sys.stderr)
        if args.json:
            emit_json({"orgs": results})
            return 0
        for r in results:
            if r["state"] == "up-to-date":
                print(f"org {r['name']}: already up to date")
            else:
                n = len(r["changed"])
                print(f"org {r['name']}: fast-forward {r['old'][:7]} → {r['new'][:7]} "
                      f"({n} memory file{'s' if n != 1 else ''} changed)")
        return 0
    raise UsageError("org needs an action: add, list, remove or pull (see `git memex org --help`)")


def _add_shared(ctx: Context, args: argparse.Namespace) -> int:
    """`org add … --share`: subscribe (or find it already subscribed to that URL), then name it in
    the committed file; when the file cannot be written the new subscription is taken back."""
    from git_memex.errors import USAGE, MemexError
    from git_memex.git import org, orgfile

    ctx.require_repo("org add --share")
    why = orgfile.url_problem(args.url)
    if why is not None:
        raise MemexError(f"the org repository URL {why}; nothing was changed", USAGE)
    url = args.url
    if "://" not in url and (ctx.cwd / url).exists():
        url = str((ctx.cwd / url).resolve())
    have = ctx.config.get(f"memex.org.{args.name}.url")
    if args.name in ctx.org_names() and have == url:
        before = orgfile.snapshot(ctx)
        orgfile.share(ctx, args.name, url, args.branch or ctx.config.get(f"memex.org.{args.name}.branch"))
        res: dict[str, Any] = {"name": args.name, "url": url, "already_subscribed": True,
                               "shared": orgfile.rel_path(ctx), "changed": orgfile.snapshot(ctx) != before}
        if args.json:
            emit_json(res)
        else:
            print(f"org {args.name} is already subscribed; named it in {res['shared']}; commit that file")
        return 0
    res = org.add(ctx, args.name, args.url, branch=args.branch, global_=args.global_)
    try:
        orgfile.share(ctx, args.name, res["url"], args.branch)
    except BaseException:
        org.undo_add(ctx, res)
        raise
    res["shared"] = orgfile.rel_path(ctx)
    if args.json:
        emit_json(res)
    else:
        _print_added(res)
        print(f"named it in {res['shared']}; commit that file so that `git memex init` offers it in other clones")
    return 0

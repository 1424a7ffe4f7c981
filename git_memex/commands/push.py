"""`git memex push [--yes]`: print (or run) the push for submitted work."""

from __future__ import annotations

import argparse
import shlex

from git_memex.commands._common import add_json, context, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("push", help="print (or, with --yes, run) the push for submitted work",
                       description="Show the `git push` that publishes what `git memex submit` committed on the "
                       "current branch (or on --branch B, which need not be checked out: `submit --branch B` "
                       "leaves you where you were): the commits its remote does not have yet, and the memory files "
                       "they carry. "
                       "With --yes, run it with your own git (your credentials), but only when those commits change "
                       "nothing outside the memory folder. Exit 2 when there is nothing it can push (detached HEAD, "
                       "no remote) or the push failed; nothing is pushed then.")
    p.add_argument("--yes", "-y", action="store_true", help="run the push instead of printing it")
    p.add_argument("--branch", metavar="B", help="push the local branch B instead of the current one")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.git.sync import push

    res = push(context(), run=args.yes, branch=args.branch)
    if args.json:
        emit_json(res)
        return 0
    n, files = len(res["commits"]), len(res["memory_files"])
    where = f"{res['remote']}/{res['upstream'] or res['branch']}"
    if res["state"] == "up-to-date":
        print(f"nothing to push: {res['remote']} already has every commit on {res['branch']}")
        return 0
    if res["state"] == "nothing-submitted":
        print(f"nothing submitted to push: the {n} commit{'s' if n != 1 else ''} on {res['branch']} that "
              f"{res['remote']} lacks change no memory file")
        return 0
    what = f"{n} commit{'s' if n != 1 else ''} with {files} memory file{'s' if files != 1 else ''}"
    if res["pushed"]:
        print(f"pushed {what} to {where}")
    else:
        again = "git memex push --yes" if not args.branch else f"git memex push --branch {shlex.quote(args.branch)} --yes"
        print(f"{what} to push to {where}; run it yourself, or `{again}`:")
        print(f"  {res['command']}")
        if res["other_files"]:
            k = len(res["other_files"])
            print(f"note: these commits also change {k} file{'s' if k != 1 else ''} outside the memory folder "
                  f"(such as {res['other_files'][0]}); --yes refuses to push them for you")
    if res["pr_command"]:
        print("Then open the pull request:" if not res["pushed"] else "Open the pull request:")
        print(f"  {res['pr_command']}")
    return 0

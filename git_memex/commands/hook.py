"""`git memex hook NAME [ARGS]`: the entry point the installed git hook shims call."""

from __future__ import annotations

import argparse

from git_memex.git.hook import HOOK_NAMES


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("hook", help="entry point for installed git hooks",
                       description="Run one git hook's work. Called by the shims `git memex init` installs; "
                       "post-* hooks never fail the git command.")
    p.add_argument("name", metavar="NAME", help=", ".join(HOOK_NAMES))
    p.add_argument("args", nargs=argparse.REMAINDER, help="the arguments git passed to the hook")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.git.hook import run as run_hook

    return run_hook(args.name, list(args.args))

"""`git memex config list|get|set`: settings kept in git config under `memex.*`."""

from __future__ import annotations

import argparse
import subprocess

from git_memex.commands._common import add_json, emit_json
from git_memex.errors import MemexError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="list, get or set memex.* settings (stored in git config)",
                       description="Settings live in git config under memex.* (the repository's value overrides "
                       "the global one). Keys and values are validated.")
    csub = p.add_subparsers(dest="action", metavar="ACTION")
    pl = csub.add_parser("list", help="every setting with its value and where it comes from")
    add_json(pl)
    pg = csub.add_parser("get", help="one setting's value")
    pg.add_argument("key")
    ps = csub.add_parser("set", help="set a setting")
    ps.add_argument("key")
    ps.add_argument("value")
    ps.add_argument("--global", dest="global_", action="store_true", help="write ~/.gitconfig instead of the repository")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.core.paths import SETTINGS, canonical_key, load_context, validate_setting

    ctx = load_context()
    if args.action in (None, "list"):
        rows = []
        for key, s in SETTINGS.items():
            raw = ctx.config.get(f"memex.{key.lower()}")
            rows.append({"key": f"memex.{key}", "value": ctx.setting(key), "default": s.default,
                         "set": raw is not None, "help": s.help})
        if getattr(args, "json", False):
            emit_json({"settings": rows})
        else:
            for r in rows:
                origin = "" if r["set"] else "  (default)"
                print(f"{r['key']}={r['value']}{origin}")
        return 0
    key = canonical_key(args.key)
    if args.action == "get":
        print(ctx.setting(key))
        return 0
    value = validate_setting(key, args.value)
    if not args.global_ and ctx.repo is None:
        raise MemexError("not inside a git repository; use --global to set it for every repository", 1)
    cmd = ["git", "config", "--global" if args.global_ else "--local", f"memex.{key}", value]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise MemexError(f"git config failed: {proc.stderr.strip() or proc.returncode}", 2)
    print(f"memex.{key}={value}")
    return 0

"""`git memex config list|get|set|unset`: settings kept in git config under `memex.*`.

Multi-valued keys (`memex.redactPattern`, `memex.capturePattern`, `memex.capturePersonalPattern`,
docs/team-patterns.md): `set` adds a value (never replaces the others), `get` prints one value a
line, `unset KEY VALUE` removes one value.
"""

from __future__ import annotations

import argparse
import subprocess
from typing import Any

from git_memex.commands._common import add_json, emit_json
from git_memex.errors import FAILED, USAGE, MemexError, UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("config", help="list, get, set or unset memex.* settings (stored in git config)",
                       description="Settings live in git config under memex.* (the repository's value overrides "
                       "the global one). Keys and values are validated; a regular expression (memex.redactPattern, "
                       "memex.capturePattern, memex.capturePersonalPattern) is also refused when it could "
                       "backtrack catastrophically. Those keys take several values: set adds one.")
    csub = p.add_subparsers(dest="action", metavar="ACTION")
    pl = csub.add_parser("list", help="every setting with its value and where it comes from")
    add_json(pl)
    pg = csub.add_parser("get", help="one setting's value (every value of a multi-valued one, a line each)")
    pg.add_argument("key")
    ps = csub.add_parser("set", help="set a setting (add a value to a multi-valued one)")
    ps.add_argument("key")
    ps.add_argument("value")
    ps.add_argument("--global", dest="global_", action="store_true", help="write ~/.gitconfig instead of the repository")
    pu = csub.add_parser("unset", help="remove a setting (or one value of a multi-valued one)")
    pu.add_argument("key")
    pu.add_argument("value", nargs="?", default=None, help="the value to remove (default: every value)")
    pu.add_argument("--global", dest="global_", action="store_true", help="change ~/.gitconfig instead of the repository")
    p.set_defaults(func=run)


def _git_config(*args: str) -> subprocess.CompletedProcess[str]:
    from git_memex.core.gitcmd import Fail, git_text

    r = git_text(["config", *args], timeout=30, literal=False,
                 fail=Fail("git config could not run (git is not installed or not on PATH)",
                           "git config could not run (it took more than 30 seconds)"))
    assert r is not None  # `fail` raises instead
    return r


def run(args: argparse.Namespace) -> int:
    from git_memex.core.context import load_context
    from git_memex.core.settings import SETTINGS, TEAM_KEYS, canonical_key, validate_setting

    ctx = load_context()
    if args.action in (None, "list"):
        rows: list[dict[str, Any]] = []
        for key, s in SETTINGS.items():
            raw = ctx.config.get(f"memex.{key.lower()}")
            row: dict[str, Any] = {"key": f"memex.{key}", "value": ctx.setting(key), "default": s.default,
                                   "set": raw is not None, "help": s.help}
            if s.multi:
                values = list(ctx.values(key))
                row["values"] = values
                row["value"] = "\n".join(values)
            rows.append(row)
        if getattr(args, "json", False):
            emit_json({"settings": rows})
        else:
            for shown in rows:
                if "values" in shown:
                    if not shown["values"]:
                        print(f"{shown['key']}=  (default: none)")
                    for v in shown["values"]:
                        print(f"{shown['key']}={v}")
                    continue
                origin = "" if shown["set"] else "  (default)"
                print(f"{shown['key']}={shown['value']}{origin}")
        return 0
    key = canonical_key(args.key)
    multi = SETTINGS[key].multi
    if args.action == "get":
        if multi:
            for v in ctx.values(key):
                print(v)
        else:
            print(ctx.setting(key))
        return 0
    if not args.global_ and ctx.repo is None:
        raise MemexError("not inside a git repository; use --global for every repository", USAGE)
    where = "--global" if args.global_ else "--local"
    name = f"memex.{key}"
    if key in TEAM_KEYS and not args.global_ and ctx.repo is not None:
        return _team_setting(ctx.repo.work_tree, key, args)
    if args.action == "unset":
        if args.value is None:
            r = _git_config(where, "--unset-all", name)
        else:
            r = _git_config(where, "--fixed-value", "--unset-all", name, args.value)
        if r.returncode == 5:  # git: no such key or value
            what = f"the value {args.value!r}" if args.value is not None else "a value"
            raise UsageError(f"{name} has no {what} in the {'global' if args.global_ else 'repository'} config")
        if r.returncode != 0:
            raise MemexError(f"git config failed: {r.stderr.strip() or r.returncode}", FAILED)
        print(f"unset {name}" + (f"={args.value}" if args.value is not None else ""))
        return 0
    value = validate_setting(key, args.value, timed=True)
    if multi:
        present = _git_config(where, "--fixed-value", "--get-all", name, value)
        if present.returncode == 0:
            print(f"{name}={value}  (already set)")
            return 0
        r = _git_config(where, "--add", name, value)
    else:
        r = _git_config(where, name, value)
    if r.returncode != 0:
        raise MemexError(f"git config failed: {r.stderr.strip() or r.returncode}", FAILED)
    print(f"{name}={value}")
    return 0


def _team_setting(work_tree: Any, key: str, args: argparse.Namespace) -> int:
    """A setting that decides where shared files live goes into the committed `TEAM_FILE`, so that
    every clone uses it (a copy in this clone's own config would override it, so it is removed)."""
    from git_memex.core.settings import (
        TEAM_FILE,
        read_team_file,
        validate_setting,
        write_team_setting,
    )

    name = f"memex.{key}"
    had_local = _git_config("--local", "--get-all", name).returncode == 0
    if args.action == "unset":
        if name.lower() not in read_team_file(work_tree) and not had_local:
            raise UsageError(f"{name} has no value in {TEAM_FILE} or the repository config")
        if name.lower() in read_team_file(work_tree):
            write_team_setting(work_tree, key, None)
    else:
        value = validate_setting(key, args.value, timed=True)
        write_team_setting(work_tree, key, value)
    if had_local:
        r = _git_config("--local", "--unset-all", name)
        if r.returncode not in (0, 5):
            raise MemexError(f"git config failed: {r.stderr.strip() or r.returncode}", FAILED)
    if args.action == "unset":
        print(f"unset {name} (in {TEAM_FILE}: commit it so that every clone uses the default folder)")
    else:
        print(f"{name}={value}  (in {TEAM_FILE}: commit it so that every clone uses this folder)")
    return 0

"""Command-line entry point: parse arguments, run one command, turn failures into one sentence.

Each subcommand lives in `git_memex.commands.<name>` with `register(subparsers)`; the
modules import their heavy dependencies inside `run` so that `--help` and short
commands stay fast. The merge driver skips argparse entirely: git runs it per file.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

from git_memex import __version__

# command name -> module name, in the order `--help` lists them
COMMANDS: dict[str, str] = {
    "init": "init",
    "where": "where",
    "add": "add",
    "search": "search",
    "list": "list_",
    "show": "show",
    "supersede": "supersede",
    "status": "status",
    "forget": "forget",
    "reindex": "reindex",
    "doctor": "doctor",
    "config": "config",
    "capture": "capture",
    "context": "context",
    "propose": "propose",
    "submit": "submit",
    "promote": "promote",
    "resolve": "resolve",
    "sync-status": "sync_status",
    "pr-status": "pr_status",
    "pull": "pull",
    "merge-driver": "merge_driver",
    "scan": "scan",
    "hook": "hook",
    "mcp": "mcp",
    "distill": "distill",
    "migrate": "migrate",
    "log": "log",
}


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one sentence and exit code 1 (SPEC §3)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(1, f"git-memex: {message}; see `git memex {self._sub_name()}--help`\n")

    def _sub_name(self) -> str:
        parts = self.prog.split()
        return (parts[-1] + " ") if len(parts) > 1 and parts[-1] not in ("git-memex", "memex") else ""


def available_commands() -> dict[str, str]:
    here = os.path.join(os.path.dirname(__file__), "commands")
    return {c: m for c, m in COMMANDS.items() if os.path.exists(os.path.join(here, m + ".py"))}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (for speed) just the one subcommand about to run."""
    parser = Parser(
        prog="git-memex",
        description="Git-native memory for AI coding agents: one markdown file per memory, "
        "personal memories kept on this machine, project knowledge shared through git with review.",
    )
    parser.add_argument("--version", action="version", version=f"git-memex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands = available_commands()
    if only is not None:
        commands = {only: commands[only]}
    for module in commands.values():
        mod = importlib.import_module(f"git_memex.commands.{module}")
        if hasattr(mod, "register"):
            mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["merge-driver"]:
        from git_memex.commands.merge_driver import main as merge_main

        return merge_main(args_list[1:])
    first = args_list[0] if args_list else None
    parser = build_parser(first if first in available_commands() else None)
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    from git_memex.errors import MemexError

    try:
        return int(args.func(args) or 0)
    except MemexError as exc:
        print(f"git-memex: {exc.message}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("git-memex: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one sentence, no traceback
        if os.environ.get("GIT_MEMEX_DEBUG"):
            raise
        print(
            f"git-memex: internal error ({type(exc).__name__}: {exc}); "
            "rerun with GIT_MEMEX_DEBUG=1 for details and report it",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

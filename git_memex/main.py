"""Command-line entry point: parse arguments, run one command, turn failures into one sentence.

Each subcommand lives in `git_memex.commands.<name>` with `register(subparsers)`; the
modules import their heavy dependencies inside `run` so that `--help` and short
commands stay fast. The merge driver skips argparse entirely: git runs it per file.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

from git_memex import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported at run time: the agent hooks start here on every prompt
    import argparse
    from collections.abc import Callable
    from typing import Any

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
    "instruction": "instruction",
    "resolve": "resolve",
    "sync-status": "sync_status",
    "pr-status": "pr_status",
    "pull": "pull",
    "push": "push",
    "merge-driver": "merge_driver",
    "scan": "scan",
    "hook": "hook",
    "mcp": "mcp",
    "distill": "distill",
    "migrate": "migrate",
    "log": "log",
    "export": "export",
    "import": "import_",
    "audit": "audit",
    "scopes": "scopes",
    "inventory": "inventory",
    "org": "org",
    "remote": "remote",
    "schema": "schema",
    "remote-server": "remote_server",
}


def parser_class() -> type[argparse.ArgumentParser]:
    """argparse that reports usage errors as one sentence and exit code 1 (docs/decisions.md, exit codes).

    Defined on first use: the hook fast path and the merge driver never import argparse."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            # the one path of every argument error: it quotes what was typed, before the output
            # guard is on, so it masks secrets and escapes terminal controls itself
            from git_memex.core.output import neutralise

            said = neutralise(masked_message(message))
            self.exit(1, f"git-memex: {said}; see `git memex {self._sub_name()}--help`\n")

        def _sub_name(self) -> str:
            parts = self.prog.split()
            return (parts[-1] + " ") if len(parts) > 1 and parts[-1] not in ("git-memex", "memex") else ""

    return Parser


def available_commands() -> dict[str, str]:
    here = os.path.join(os.path.dirname(__file__), "commands")
    return {c: m for c, m in COMMANDS.items() if os.path.exists(os.path.join(here, m + ".py"))}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (for speed) just the one subcommand about to run."""
    Parser = parser_class()  # noqa: N806 - a class
    parser = Parser(
        prog="git-memex",
        description="Git-native memory for AI coding agents: one markdown file per memory, "
        "personal memories kept on this machine, project knowledge shared through git with review.",
    )
    parser.add_argument("-v", "--version", action="version", version=f"git-memex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands = available_commands()
    if only is not None:
        commands = {only: commands[only]}
    for module in commands.values():
        mod = importlib.import_module(f"git_memex.commands.{module}")
        if hasattr(mod, "register"):
            mod.register(sub)
    return parser


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of `command`, or `parser` itself when there is none."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


# The agent hooks' exact command lines (as `clients.hook_commands` writes them) skip argparse:
# building the subcommand's parser and parsing costs ~10 ms here (median of 9, best 9 ms, in-process,
# the command module already imported), and these run on every prompt.
HOOKS: dict[tuple[str, ...], tuple[str, str, str]] = {
    (*pre, "--hook", client, *post): (module, entry, client)
    for client in ("claude", "codex")
    for pre, post, module, entry in (
        (("context",), (), "git_memex.commands.context", "run_hook"),
        (("capture",), (), "git_memex.commands.capture", "run_hook"),
        (("capture",), ("--stop",), "git_memex.commands.capture", "run_stop_hook"),
    )
}
_HOOK_ROLES = {"context": "session start", "capture": "prompt hook"}


def _damage() -> type[BaseException]:
    """IndexDamaged when the index was used in this process, else a class nothing raises."""
    mod = sys.modules.get("git_memex.index.database")
    return mod.IndexDamaged if mod is not None else _Never


class _Never(BaseException):
    pass


def _discard_damaged() -> None:
    """Delete each index a statement found damaged (one warning line each): the next open
    rebuilds it from the memory files."""
    mod = sys.modules.get("git_memex.index.database")
    if mod is None or not mod.DAMAGED:
        return
    mod.discard_damaged()


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["merge-driver"]:
        from git_memex.commands.merge_driver import main as merge_main

        return merge_main(args_list[1:])
    hook = HOOKS.get(tuple(args_list))
    if hook is None and args_list[:1] == ["hook"] and len(args_list) > 1:
        from git_memex.git.hook import HOOK_NAMES
        from git_memex.git.hook import run as run_git_hook

        if args_list[1] in HOOK_NAMES:  # git runs these on every commit, merge and checkout: no argparse
            from git_memex.core import caller

            caller.acting_for("git memex hook")
            name, rest = args_list[1], args_list[2:]
            from git_memex.core.output import guard_stdio

            guard_stdio()
            return _run(lambda: run_git_hook(name, rest))
    if hook is not None:
        from git_memex.core import caller

        module, entry, client = hook
        caller.acting_for("stop hook" if entry == "run_stop_hook" else _HOOK_ROLES[args_list[0]])
        run_entry = getattr(importlib.import_module(module), entry)  # a hook reports its own failures and exits 0

        def call() -> int:
            return int(run_entry(client=client))
    else:
        first = args_list[0] if args_list else None
        args: Any = None
        if first == "search":  # a plain `search WORD...` skips argparse (commands/search.py, `plain`)
            from git_memex.commands.search import plain

            args = plain(args_list)
        if args is None:
            parser = build_parser(first if first in available_commands() else None)
            args, extras = parser.parse_known_args(args_list)
            if extras:  # argparse would blame the top-level parser; the subcommand's help is the useful one
                _subparser(parser, getattr(args, "command", None)).error(
                    f"unrecognized arguments: {' '.join(extras)}")
            if not getattr(args, "func", None):
                parser.print_help()
                return 1

        from git_memex.core import caller

        caller.acting_for(f"git memex {args.command}")

        def call() -> int:
            return args.func(args)

    from git_memex.core.output import guard_stdio

    guard_stdio()  # no memory text reaches the terminal raw (core.output)
    return _run(call)


def _run(call: Callable[[], int], *, again: bool = True) -> int:
    """Run the command: a MemexError is its sentence and code, anything else one line, exit 2."""
    from git_memex.errors import MemexError

    try:
        try:
            return int(call() or 0)
        finally:
            _discard_damaged()
    except _damage() as exc:
        # A damaged page of the index (a cache): its file is discarded above; run the command
        # again on a fresh index, unless a memory file was already written (it is not redone).
        from git_memex.core.files import WRITTEN

        if WRITTEN or not again:
            print(f"git-memex: warning: {exc}; the memory files are saved, the next command rebuilds "
                  "the index", file=sys.stderr)
            return 0 if WRITTEN else FAILED_CODE
        return _run(call, again=False)
    except MemexError as exc:
        print(f"git-memex: {masked_message(exc.message)}", file=sys.stderr)
        return exc.code
    except FileNotFoundError as exc:
        if os.path.basename(str(exc.filename or "")) != "git":
            return _internal(exc)
        print("git-memex: this command needs the git program, and there is none on PATH; install git or put "
              "it on PATH", file=sys.stderr)
        return FAILED_CODE
    except KeyboardInterrupt:
        print("git-memex: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one sentence, no traceback
        return _internal(exc)


def _internal(exc: BaseException) -> int:
    if os.environ.get("GIT_MEMEX_DEBUG"):
        raise exc
    print(
        f"git-memex: internal error ({type(exc).__name__}: {masked_message(str(exc))}); "
        "rerun with GIT_MEMEX_DEBUG=1 for details and report it",
        file=sys.stderr,
    )
    return 2


FAILED_CODE = 2


def masked_message(text: str) -> str:
    """An error sentence as it leaves: it may quote what the user or a file gave (an id, a time,
    a path), which may be a secret (`--related sk_live_…`). The detector runs only on the error
    path, so a command that succeeds never loads it."""
    try:
        from git_memex.secrets.redact import redact

        return redact(text).text
    except Exception:  # noqa: BLE001 - never lose the sentence itself
        return text


if __name__ == "__main__":
    raise SystemExit(main())

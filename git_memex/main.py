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
    "compatible": "compatible",
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

            said = f"{neutralise(masked_message(message))}; see `git memex {self._sub_name()}--help`"
            json_error(said, 1)
            self.exit(1, f"git-memex: {said}\n")

        def _sub_name(self) -> str:
            """`instruction approve ` for that subcommand's parser (its prog is `git-memex instruction
            approve`); "" for the top-level one."""
            parts = [p for p in self.prog.split()[1:] if p not in ("git-memex", "memex")]
            return " ".join(parts) + " " if parts else ""

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


def _subparser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost parser `args` was parsed by (`instruction approve`'s for that command), or
    `parser` itself when there is none."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest or "", None)
            if isinstance(chosen, str) and chosen in action.choices:
                return _subparser(action.choices[chosen], args)
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


JSON_RUN = False
"""Whether this run asked for `--json`: then an error is also one JSON document on stdout
(`json_error`), so every `--json` run prints exactly one (docs/decisions.md, exit codes)."""


def json_error(sentence: str, code: int) -> None:
    """A `--json` run's error as its one JSON document on stdout, `{"error": SENTENCE, "code": N}`
    (the sentence as stderr has it, the exit code unchanged), unless the command printed its own
    document already. Nothing for a run without `--json`."""
    if not JSON_RUN or getattr(sys.stdout, "wrote", False):
        return
    import json

    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(json.dumps({"error": sentence, "code": code}, ensure_ascii=False) + "\n")
        sys.stdout.flush()


def _asks_json(argv: list[str]) -> bool:
    """`--json` among the options (before a `--`): known before argparse runs, for its errors."""
    return "--json" in (argv[:argv.index("--")] if "--" in argv else argv)


def main(argv: list[str] | None = None) -> int:
    global JSON_RUN
    args_list = list(sys.argv[1:] if argv is None else argv)
    JSON_RUN = False
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
        JSON_RUN = _asks_json(args_list)
        args: Any = None
        if first == "search":  # a plain `search WORD...` skips argparse (commands/search.py, `plain`)
            from git_memex.commands.search import plain

            args = plain(args_list)
        if args is None:
            parser = build_parser(first if first in available_commands() else None)
            args, extras = parser.parse_known_args(args_list)
            JSON_RUN = bool(getattr(args, "json", False)) or (bool(extras) and JSON_RUN)
            if extras:  # argparse would blame the top-level parser; the subcommand's help is the useful one
                _subparser(parser, args).error(
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
    loaded = sys.modules.get("git_memex.core.context")
    if loaded is not None:
        loaded.LAST.clear()  # an earlier command in this process (tests run several) is not this one
    code = _run(call)
    if code == 0 and hook is None and args_list[:1] and args_list[0] not in NO_SCAN_NOTICE:
        _scan_notice()  # after a failure the error is the one sentence on stderr
    return code


# Commands that do not print the scan notice: the hooks and the driver themselves, init (which sets
# the check up, or takes it away on purpose), doctor (its own check says it), context (the block
# says it to the agent), the MCP server (the session block in its handshake says it) and the
# remote server (no repository).
NO_SCAN_NOTICE = frozenset({"init", "hook", "merge-driver", "doctor", "context", "mcp", "remote-server"})


def _scan_notice() -> None:
    """One stderr line when the command ran in a clone whose commits do not reach git-memex's
    secret scan (`managers.scan_missing`). Costs nothing for a command that loaded no context."""
    mod = sys.modules.get("git_memex.core.context")
    if mod is None or not mod.LAST:
        return
    try:
        from git_memex.git.reach import scan_notice

        line = scan_notice(mod.LAST[-1])
    except Exception:  # noqa: BLE001 - a notice never changes how a command ends
        return
    if line:
        print(line, file=sys.stderr)


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
            if not WRITTEN:
                json_error(f"{exc}; the next command rebuilds the index", FAILED_CODE)
            return 0 if WRITTEN else FAILED_CODE
        return _run(call, again=False)
    except MemexError as exc:
        return _error(masked_message(exc.message), exc.code)
    except FileNotFoundError as exc:
        if os.path.basename(str(exc.filename or "")) != "git":
            return _internal(exc)
        return _error("this command needs the git program, and there is none on PATH; install git or put "
                      "it on PATH", FAILED_CODE)
    except KeyboardInterrupt:
        return _error("interrupted", 130)
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one sentence, no traceback
        return _internal(exc)


def _error(sentence: str, code: int) -> int:
    """One failure, said once: the sentence on stderr and, for a `--json` run, as its document."""
    print(f"git-memex: {sentence}", file=sys.stderr)
    json_error(sentence, code)
    return code


def _internal(exc: BaseException) -> int:
    if os.environ.get("GIT_MEMEX_DEBUG"):
        raise exc
    return _error(f"internal error ({type(exc).__name__}: {masked_message(str(exc))}); "
                  "rerun with GIT_MEMEX_DEBUG=1 for details and report it", 2)


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

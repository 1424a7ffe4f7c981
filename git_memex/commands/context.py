"""`git memex context`: the session-start memory block, for a terminal or an agent's hook.

With ``--hook claude`` (or ``--hook codex``) it is Claude Code's (Codex's) SessionStart hook: it
reads the hook's JSON from stdin (the payload may be missing or garbage), prints the hook output
JSON (both clients document the same ``hookSpecificOutput.additionalContext``), and never fails
the session: any error is one line on stderr and exit 0. Imports stay light on this path (no
mcp, pygit2 or detect-secrets).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from git_memex.commands._common import add_json, context, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse is loaded with the parser, which the hook fast path skips
    import argparse
    from typing import Any

    from git_memex.core.context import Context

HOOK_CLIENTS = ("claude", "codex")
MAX_HOOK_INPUT = 4 * 1024 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("context", help="print the session-start memory block",
                       description="Print the compact memory block an agent gets at session start: approved "
                       "instructions, warnings that match what you are working on, and the most relevant project "
                       "and personal memories (query-aware: --query, the branch name and changed files), within "
                       "memex.injectMaxTokens. Prints nothing when there is nothing to say.")
    p.add_argument("--query", "-q", default=None, help="what the session is about (optional)")
    p.add_argument("--hook", choices=HOOK_CLIENTS, default=None,
                   help="run as the agent's session-start hook: read its JSON from stdin, print its output JSON")
    add_json(p)
    p.set_defaults(func=run)


def read_hook_payload() -> dict[str, Any]:
    """The hook's JSON object from stdin; {} when stdin is a terminal, empty, or not a JSON object."""
    stream = sys.stdin
    if stream is None:
        return {}
    try:
        if stream.isatty():
            return {}
        raw = stream.buffer.read(MAX_HOOK_INPUT) if hasattr(stream, "buffer") else stream.read().encode()
    except (OSError, ValueError):
        return {}
    try:
        data = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def hook_context(payload: dict[str, Any]) -> Context:
    """The context of the hook's `cwd` when it names a folder, else of the process's cwd."""
    from git_memex.core.context import load_context

    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        return load_context(Path(cwd))
    return context()


def hook_output(event: str, text: str) -> str:
    """The hook output document of Claude Code and Codex alike (ASCII-escaped, so any console
    encoding copes)."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def hook_failed(command: str, exc: BaseException) -> int:
    """Report a hook failure in one stderr line and let the agent carry on (exit 0)."""
    if os.environ.get("GIT_MEMEX_DEBUG"):
        raise exc
    msg = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    first = str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__
    print(f"git-memex {command}: skipped ({first})", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.hook:
        return run_hook(query=args.query, client=args.hook)
    from git_memex.agents.session import build_context

    ctx = context()
    block = build_context(ctx, query=args.query)
    note = scan_note(ctx)
    if args.json:
        emit_json({**block.to_json(), **({"scan_missing": note} if note else {})})
        return 0
    text = f"{block.text}\n{note}" if block.text and note else (block.text or note or "")
    if text:
        print(text)
    return 0


def scan_note(ctx: Context) -> str | None:
    """The session block's line for the agent when commits here do not reach the secret scan."""
    from git_memex.git.reach import agent_note

    return agent_note(ctx)


def run_hook(query: str | None = None, client: str = "claude") -> int:
    """The SessionStart hook of Claude Code or Codex (also reached without argparse: see `main.HOOKS`).
    `client` changes nothing in what is printed: both read the same output document."""
    try:
        payload = read_hook_payload()
        from git_memex.agents.session import build_context

        ctx = hook_context(payload)
        block = build_context(ctx, query=query)
        text = block.text
        note = scan_note(ctx)
        if note:
            text = f"{text}\n{note}" if text else note
        if ctx.config.get("memex.autopull"):  # the common case reads one dict key, imports nothing
            from git_memex.git.autopull import start

            line = start(ctx)
            if line and text:
                text = f"{text}\n{line}"
        if text:
            sys.stdout.write(hook_output("SessionStart", text) + "\n")
            sys.stdout.flush()
        return 0
    except Exception as exc:  # noqa: BLE001 - a session-start hook must never break the session
        return hook_failed("context", exc)

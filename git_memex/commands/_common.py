"""Small helpers shared by the command modules: JSON output, context, id formatting."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from git_memex.core.context import Context


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout (for scripts)")


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def print_staged(r: dict[str, Any]) -> None:
    """On stderr: what a command staged for the next commit, and what it staged past a
    `.gitignore` rule (docs/git.md, "What a command stages")."""
    if r.get("staged"):
        print(f"staged for commit: {' '.join(r['staged'])}", file=sys.stderr)
    for path in r.get("forced") or []:
        print(f"note: a .gitignore rule ignores {path}; staged it all the same (`git add -f`): without it the "
              "change is not whole on the default branch", file=sys.stderr)


def context() -> Context:  # imported lazily so --help stays cheap
    from git_memex.core.context import load_context

    return load_context()


def read_text_arg(value: str) -> str:
    """A memory text argument: `-` reads stdin as UTF-8. Bytes that are not UTF-8 (stdin, or an
    argument the OS decoded with surrogate escapes) are refused with one sentence."""
    from git_memex.errors import UsageError

    if value == "-":
        raw = sys.stdin.buffer.read()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"the text on stdin is not valid UTF-8 (byte {exc.start})") from None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"the memory text is not valid UTF-8 (character {exc.start}); "
                         "pass it as UTF-8 or on stdin with -") from None
    return value


def short(mid: str | None) -> str:
    return (mid or "")[:10]


def label(d: dict[str, Any]) -> str:
    """A hit's or a listing's label: where it lives and its type, its review as the MCP tools say it
    (`render.review_label`: a rule's gate verdict, knowledge's review standing), its status, and
    `[rule]` for a rule."""
    from git_memex.agents.render import review_label

    where = d.get("scope", "?")
    status = d.get("status")
    out = f"{where}/{d.get('type', '?')}"
    if d.get("org"):
        out = f"org {d['org']}/{d.get('type', '?')}"
    elif d.get("remote"):
        out = f"remote:{d['remote']}/{d.get('type', '?')}"
    review = review_label(d)
    if review:
        out += f" [{review}]"
    if status and status != "active":
        out += f" ({status})"
    if d.get("role") == "instruction":
        out += " [rule]"
    return out


def warn(lines: list[str] | None) -> None:
    for w in lines or []:
        print(f"warning: {w}", file=sys.stderr)




def _type_help() -> str:
    from git_memex.core.model import TYPES

    return "one of " + ", ".join(TYPES)


TYPE_HELP = _type_help()
"""`--type`'s choices said in its help, so that usage lines stay short (`TYPE`): the man page
cannot wrap a usage line, and one with fourteen choices overran it."""

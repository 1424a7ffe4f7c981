"""`git memex capture`: save the "remember …" / "记住…" lines of a user's message (docs/decisions.md, capture and D18).

Only the USER's text is scanned (never an assistant's): with ``--hook claude`` that is the
``prompt`` field of Claude Code's UserPromptSubmit payload and nothing else. Each hit goes through
`ops.add` (source keyword), which masks secrets, strips <private> parts and skips duplicates.

The hook path must not slow the prompt down: a message without a trigger word costs one regex
scan and no git call; detect-secrets loads only inside `redact`, i.e. only when there is
something to save. A hook never blocks the prompt: any failure is one stderr line and exit 0.
"""

from __future__ import annotations

import sys

from git_memex.commands._common import add_json, context, emit_json, short
from git_memex.errors import FAILED

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse is loaded with the parser, which the hook fast path skips
    import argparse
    from typing import Any

    from git_memex.core.context import Context

# The statement patterns say what kind of memory it is; everything else is a plain fact.
TRIGGER_TYPES = {
    "zh-personal-xihuan": "preference",
    "zh-personal-juede": "preference",
    "zh-women-jueding": "decision",
    "zh-women-renwei": "decision",
    "til": "lesson",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("capture", help="save 'remember …' lines of a message as memories",
                       description="Scan a user's message for keyword triggers (remember …, note that …, TIL …, "
                       "记住…, 我们决定…) and save each as a memory: 我/'remember for me' → personal, "
                       "我们/'remember' → project. Narration such as 记得… or 'remind me to…' never triggers. "
                       "Secrets are masked before anything is written.")
    p.add_argument("text", nargs="?", default=None, help="the user's message, or - to read it from stdin")
    p.add_argument("--dry-run", action="store_true", help="show what would be saved; write nothing")
    p.add_argument("--hook", choices=("claude", "codex"), default=None,
                   help="run as the agent's prompt hook: read its JSON from stdin, print its output JSON (not with --json)")
    p.add_argument("--stop", action="store_true",
                   help="with --hook: run as the agent's Stop hook instead; with memex.implicitCapture true it asks "
                   "the model once per session whether anything is worth remembering, else it prints nothing")
    add_json(p)
    p.set_defaults(func=run)


def _dropped_reason(line: str) -> str:
    from git_memex.agents.capture import MAX_CAPTURE_CHARS

    return "too long" if len(line) > MAX_CAPTURE_CHARS else "too short"


HOOK_MAX_CAPTURES = 5
"""At most this many memories saved from one prompt by the hook: a pasted list of 300 "remember
that …" lines took 14 s (past the client's hook timeout) and wrote 300 drafts. The rest are
reported as dropped, with the command that saves them."""
HOOK_MAX_SCAN = 64 * 1024
"""Characters of one prompt the hook scans for triggers (a write path's body limit)."""


def _masked(ctx: Context, line: str) -> str:
    """A dropped line as reported: its secrets masked like a saved body's (it is printed, and
    `--json` output is read by agents)."""
    from git_memex.secrets.redact import redact

    return redact(line, ctx.redact_patterns).text


def capture_message(ctx: Context, text: str, *, dry_run: bool = False, via: str = "cli",
                    limit: int | None = None) -> dict[str, Any]:
    """Scan `text` and save (or, dry run, preview) each hit; a plain result, no printing.

    ``{"enabled", "dry_run", "saved": [...], "duplicates": [...], "would_save": [...],
    "dropped": [{"line", "reason"}]}``; saved entries carry the body as stored (masked), and a
    dropped line is reported with its secrets masked too.
    """
    from git_memex.agents.capture import scan

    out: dict[str, Any] = {"enabled": True, "dry_run": dry_run, "saved": [], "duplicates": [],
                           "would_save": [], "dropped": []}
    if not ctx.bool_setting("keywordCapture"):
        out["enabled"] = False
        return out
    found = scan(text or "", ctx.capture_patterns)
    out["dropped"] = [{"line": _masked(ctx, line), "reason": _dropped_reason(line)} for line in found.dropped]
    if not found.hits:
        return out
    hits = list(found.hits)
    if limit is not None and len(hits) > limit:
        for hit in hits[limit:]:
            out["dropped"].append({"line": _masked(ctx, hit.line), "reason": f"more than {limit} captures in one message; "
                                   "`git memex capture -` saves the rest"})
        hits = hits[:limit]
    from git_memex.errors import MemexError

    if dry_run:
        from git_memex.secrets.redact import redact

        for hit in hits:
            red = redact(hit.body, ctx.redact_patterns)
            out["would_save"].append({"scope": hit.scope, "type": TRIGGER_TYPES.get(hit.trigger, "fact"),
                                      "trigger": hit.trigger, "body": red.text.strip(),
                                      "masked": list(red.masked)})
        return out

    from git_memex.index.stores import Stores
    from git_memex.ops import add

    with Stores(ctx) as st:
        if st.degraded:  # capture only writes: an unusable data root is its failure
            raise MemexError(st.degraded, FAILED)
        for hit in hits:
            kind = TRIGGER_TYPES.get(hit.trigger, "fact")
            try:
                res = add(ctx, hit.body, scope=hit.scope, type=kind, source="keyword", via=via, stores=st)
            except MemexError as exc:
                out["dropped"].append({"line": _masked(ctx, hit.line), "reason": exc.message})
                continue
            entry: dict[str, Any] = {"id": res.id, "scope": hit.scope, "type": kind, "trigger": hit.trigger,
                                     "masked": res.masked}
            if res.duplicate_of:
                entry["id"] = res.duplicate_of
                entry["duplicate_of"] = res.duplicate_of
                out["duplicates"].append(entry)
                continue
            entry["body"] = res.body or ""
            entry["location"] = res.location
            entry["near_duplicates"] = res.near_duplicates
            out["saved"].append(entry)
    return out


def _read_text(arg: str | None) -> str:
    from git_memex.errors import UsageError

    if arg is not None and arg != "-":
        return arg
    if sys.stdin is None:  # started with stdin closed (`<&-`): nothing to read, not a crash
        raise UsageError("standard input is closed: give the message to scan as an argument, or pipe it to "
                         "`git memex capture -`")
    if arg is None and sys.stdin.isatty():
        raise UsageError("give the message to scan, or - to read it from stdin")
    return sys.stdin.read()


def run(args: argparse.Namespace) -> int:
    if args.stop and not args.hook:
        from git_memex.errors import UsageError

        raise UsageError("--stop is the agent's Stop hook: give --hook claude or --hook codex too")
    if args.hook:
        if args.json:  # a hook's output is the agent's own JSON, and nothing when it has nothing to say
            from git_memex.errors import UsageError

            raise UsageError("--hook prints the agent's own hook JSON (or nothing); leave out --json, or leave "
                             "out --hook to get capture's JSON document")
        if args.stop:
            return run_stop_hook(client=args.hook)
        return run_hook(dry_run=args.dry_run, client=args.hook)
    ctx = context()
    res = capture_message(ctx, _read_text(args.text), dry_run=args.dry_run, via="cli")
    if args.json:
        emit_json(res)
        return 0
    if not res["enabled"]:
        print("keyword capture is off (memex.keywordCapture=false); nothing saved")
        return 0
    for e in res["would_save"]:
        print(f"would save ({e['scope']}/{e['type']}): {e['body']}")
    for e in res["saved"]:
        print(f"saved {e['id']} ({e['scope']}/{e['type']}): {e['body']}")
        if e["masked"]:
            print(f"masked {len(e['masked'])} secret(s): {', '.join(e['masked'])}", file=sys.stderr)
    for e in res["duplicates"]:
        print(f"already remembered as {short(e['id'])} ({e['scope']}); nothing written")
    for d in res["dropped"]:
        print(f"dropped ({d['reason']}): {d['line'].strip()}")
    if not (res["saved"] or res["would_save"] or res["duplicates"] or res["dropped"]):
        print("no capture keyword found; nothing saved")
    return 0


def run_hook(dry_run: bool = False, client: str = "claude") -> int:
    """The UserPromptSubmit hook of Claude Code or Codex (also reached without argparse: see
    `main.HOOKS`); both send the user's text as `prompt` and read the same output document."""
    from git_memex.commands.context import hook_context, hook_failed, hook_output, read_hook_payload

    try:
        payload = read_hook_payload()
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return 0
        from git_memex.agents.capture import scan

        ctx = hook_context(payload)
        lines: list[str] = []
        saved: list[dict] = []
        if scan(prompt, ctx.capture_patterns).hits:
            res = capture_message(ctx, prompt[:HOOK_MAX_SCAN], dry_run=dry_run, via=client, limit=HOOK_MAX_CAPTURES)
            saved = res["saved"]
            if saved:
                lines.append(f"git-memex saved {len(saved)} memor{'y' if len(saved) == 1 else 'ies'} from this "
                             "message (keyword capture):")
                for e in saved:
                    body = " ".join(str(e.get("body", "")).split())
                    if len(body) > 200:
                        body = body[:199] + "…"
                    lines.append(f"- [{e['scope']}/{e['type']}] {body} (id {e['id']})")
                lines.append("Mention it briefly to the user; `git memex forget ID` undoes it.")
        from git_memex.agents.session import prompt_memories

        # the capture above refreshed the index a moment ago in this process: no second stat scan
        block, _items = prompt_memories(ctx, prompt, exclude={str(e["id"]) for e in saved}, refresh=not saved)
        if block:
            lines += ([""] if lines else []) + [block]
        if not lines:
            return 0
        sys.stdout.write(hook_output("UserPromptSubmit", "\n".join(lines)) + "\n")
        sys.stdout.flush()
        return 0
    except Exception as exc:  # noqa: BLE001 - a prompt hook must never block the prompt
        return hook_failed("capture", exc)


# --------------------------------------------------------------------- the end-of-session question (opt-in)
STOP_MARKERS = "sessions"
"""Folder of the data root holding one empty 0600 file per session already asked."""
MARKER_DAYS = 30
"""Markers older than this are removed when a new one is written."""


def stop_reason() -> str:
    """What the Stop hook asks the model, once per session (the model's own judgment, D16)."""
    return ("git-memex asks once per session (memex.implicitCapture is on): did this session settle anything "
            "worth remembering in later sessions: a decision, a convention, a gotcha and its fix, a preference "
            "the user stated? If so, save each one as one self-contained statement with the memory_add tool, "
            "with source \"inference\" and confidence \"low\", and tell the user in one line what you saved; "
            "they review such saves with `git memex list --confidence low` and undo one with "
            "`git memex forget ID`. Save nothing the user said to keep private, and no secrets. "
            "If nothing is worth keeping, do not call any tool: just stop.")


def _first_ask(ctx: Context, client: str, session: str) -> bool:
    """True exactly once per (client, session): the marker file is created here (O_EXCL, 0600)."""
    import hashlib
    import os
    import time

    from git_memex.core.data_root import prepare_data_root, refuse_link_out

    prepare_data_root(ctx.data_root)
    folder = ctx.data_root / STOP_MARKERS
    refuse_link_out(ctx.data_root, folder)  # a `sessions` link out of the data root: one sentence, no marker
    folder.mkdir(mode=0o700, exist_ok=True)
    name = "stop-" + hashlib.sha256(f"{client}\0{session}".encode()).hexdigest()[:32]
    try:
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    cutoff = time.time() - MARKER_DAYS * 86400
    try:
        for old in os.scandir(folder):
            if old.name.startswith("stop-") and old.stat().st_mtime < cutoff:
                os.unlink(old.path)
    except OSError:
        pass
    return True


def run_stop_hook(client: str = "claude") -> int:
    """The Stop hook of Claude Code or Codex (also reached without argparse: see `main.HOOKS`).

    Off (the default, memex.implicitCapture false) it prints nothing. On, it answers the first Stop
    of each session with the documented ``{"decision": "block", "reason": …}``: both clients then
    let the model go on with the reason as its next instruction. A Stop that a Stop hook caused
    (``stop_hook_active``), a payload without ``session_id`` and every later Stop of the session
    print nothing, so the model is asked once and can never loop. Both clients always send
    ``stop_hook_active`` (a boolean: Claude Code's hooks reference, Codex's stop.command.input
    schema), so a payload without it, or with anything but ``false``, is not a first Stop we know
    of and is not asked either (docs/agents.md)."""
    from git_memex.commands.context import hook_context, hook_failed, read_hook_payload

    try:
        payload = read_hook_payload()
        if payload.get("stop_hook_active") is not False:  # missing: not the documented payload
            return 0
        session = payload.get("session_id")
        if not isinstance(session, str) or not session.strip():
            return 0
        ctx = hook_context(payload)
        if not ctx.bool_setting("implicitCapture") or not _first_ask(ctx, client, session):
            return 0
        import json

        sys.stdout.write(json.dumps({"decision": "block", "reason": stop_reason()}) + "\n")
        sys.stdout.flush()
        return 0
    except Exception as exc:  # noqa: BLE001 - a Stop hook must never keep the agent from stopping
        return hook_failed("capture --stop", exc)

"""The MCP server's stdio transport with a guard on the reader: every line the client sends is answered.

The SDK's stdio transport drops a line its JSON-RPC model cannot take (a lone surrogate escape
that Python's json accepts, a number over 4,300 digits, nesting past its parser's depth limit, a
line that is not JSON): it passes an exception to the server, which logs it at debug level and
answers nothing, so the client waits for ever (docs/agents.md, "Malformed lines").

Invariants:

- Every line is vetted before the SDK sees it (`LineGuard.readline`) with the SDK's own parser
  (`jsonrpc_message_adapter.validate_json`), so the guard and the SDK agree on which lines are
  dropped. A line the SDK takes is passed on unchanged, except a request whose id is no string
  or integer, which the SDK takes for a notification and would not answer.
- For a line it would drop, the guard works out the answer first (`answer`: a JSON-RPC error
  carrying the request's id when one can be read, `-32700` for a line that is not JSON,
  `-32600` for JSON that is no request the server can read) and queues it, then passes on an
  empty line; the SDK turns that into an exception item, and `GuardedReadStream` writes the
  queued answer in its place through the server's own write stream (one writer on stdout, so no
  frame is torn). A notification, a response or a blank line gets no answer, as JSON-RPC says.
- The id is read without building the line (`top_level`): a linear scan of the top-level object,
  so a line nested 5,000 deep or holding a 5,000-digit number still gets its id back.
- No traceback: nothing here raises into the SDK; the error text never quotes the line.
- A line is read up to MAX_LINE_CHARS characters and no further: a longer one (a 200 MB line
  with no newline) is skipped in bounded pieces and answered -32600; the next line is served.
- At EOF on stdin every request still running is answered before the server exits (`InFlight`).
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import re
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger("git_memex.mcp")

MAX_DEPTH = 64
"""Deeper than this, a well-formed line is named as too deeply nested (the SDK's parser stops
before 256 levels; nothing the tools take nests more than a few)."""


MAX_LINE_CHARS = 4 * 1024 * 1024
"""The longest line (one JSON-RPC message) the server reads: a memory's text is at most 64 KiB
(`frontmatter.MAX_BODY_BYTES`), ~400 K characters once JSON-escaped, so no call comes near it. A
longer line is read past in `_SKIP_CHUNK` pieces, never held whole, and answered -32600."""
_SKIP_CHUNK = 64 * 1024


# ------------------------------------------------------------------ what to answer
def top_level(text: str) -> dict[str, str]:
    """The raw text of the top-level `id` and `method` values of a JSON object, read by a linear
    scan that builds nothing (for a line json.loads cannot build); {} when it is not an object."""
    out: dict[str, str] = {}
    n = len(text)
    i = _skip_ws(text, 0)
    if i >= n or text[i] != "{":
        return out
    i += 1
    while True:
        i = _skip_ws(text, i)
        if i >= n or text[i] != '"':
            return out
        j = _string_end(text, i)
        if j < 0:
            return out
        key = text[i:j]
        i = _skip_ws(text, j)
        if i >= n or text[i] != ":":
            return out
        start = _skip_ws(text, i + 1)
        i = _value_end(text, start)
        if i < 0:
            return out
        name = key[1:-1]
        if name in ("id", "method") and name not in out:
            out[name] = text[start:i]
        i = _skip_ws(text, i)
        if i < n and text[i] == ",":
            i += 1
            continue
        return out


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    """The index after the string that opens at `i`, or -1 when it does not close."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == '"':
            return j + 1
        else:
            j += 1
    return -1


def _value_end(text: str, i: int) -> int:
    """The index after the JSON value that starts at `i` (nested values skipped by counting
    brackets outside strings), or -1."""
    n = len(text)
    if i >= n:
        return -1
    if text[i] == '"':
        return _string_end(text, i)
    if text[i] in "{[":
        depth, j = 0, i
        while j < n:
            c = text[j]
            if c == '"':
                j = _string_end(text, j)
                if j < 0:
                    return -1
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return -1
    j = i
    while j < n and text[j] not in ",}] \t\r\n":
        j += 1
    return j if j > i else -1


def _request_id(raw: str | None) -> str | int | None:
    """A JSON-RPC id from its raw text: a string, or an integer (not a float, not a bool)."""
    if raw is None:
        return None
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, str) and not _has_lone_surrogate(value) else None
    if re.fullmatch(r"-?\d{1,18}", raw):
        return int(raw)
    return None


def _has_lone_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _what_is_wrong(doc: Any) -> str:
    """Why a line Python's json reads is still no message the server takes (an iterative walk)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    deepest = 0
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(value, str):
            if _has_lone_surrogate(value):
                return "holds a lone surrogate escape (such as \\ud800), which is not a character"
        elif isinstance(value, dict):
            for k, v in value.items():
                if _has_lone_surrogate(k):
                    return "holds a lone surrogate escape (such as \\ud800), which is not a character"
                stack.append((v, depth + 1))
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    if deepest > MAX_DEPTH:
        return f"nests arrays or objects more than {MAX_DEPTH} levels deep"
    return "is not a JSON-RPC 2.0 request this server can read"


def answer(line: str) -> types.JSONRPCError | None:
    """The error that answers a line the SDK cannot take, or None when nothing should be
    answered (a blank line, a notification, a response: JSON-RPC answers requests only)."""
    text = line.strip()
    if not text:
        return None
    doc: Any = None
    try:
        doc = json.loads(text)
    except RecursionError:
        why = f"nests arrays or objects more than {MAX_DEPTH} levels deep"
    except json.JSONDecodeError:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON; send one JSON-RPC message a line")
    except ValueError:  # an integer of more than 4,300 digits (sys.get_int_max_str_digits)
        why = "holds a number of more than 4,300 digits"
    else:
        why = _what_is_wrong(doc)
    if isinstance(doc, dict):
        raw_id = json.dumps(doc["id"]) if "id" in doc and not isinstance(doc["id"], bool) else None
        has_method = isinstance(doc.get("method"), str)
    else:
        found = top_level(text) if doc is None else {}
        raw_id, has_method = found.get("id"), "method" in found
        if doc is not None:  # JSON, but not an object: no request at all
            return _error(None, types.INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object")
    request_id = _request_id(raw_id)
    if request_id is None and has_method and raw_id is None:
        log.warning("a notification the server cannot read was ignored (it %s)", why)
        return None
    if request_id is None and not has_method and isinstance(doc, dict) and ("result" in doc or "error" in doc):
        log.warning("a response the server cannot read was ignored (it %s)", why)
        return None
    return _error(request_id, types.INVALID_REQUEST, f"Invalid request: the message {why}; nothing was done")


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


# ------------------------------------------------------------------ the reader
EMPTY = "\n"
"""What the SDK is given in place of a line it would drop: it reports it as an exception item,
which `GuardedReadStream` answers with the queued error."""


class LineGuard:
    """The client's lines, vetted (see the module docstring); `readline` is what the SDK's reader
    calls on a worker thread. Reads the wire from `source` (a binary stream); `verdicts` holds the
    answer (or None) of each line passed on as EMPTY, in order."""

    def __init__(self, source: Any) -> None:
        import io

        # the SDK decodes the same way: UTF-8 with replacement, universal newlines
        self._lines = io.TextIOWrapper(source, encoding="utf-8", errors="replace")
        self.verdicts: collections.deque[types.JSONRPCError | None] = collections.deque()

    def readline(self) -> str:
        line = self._lines.readline(MAX_LINE_CHARS)
        if not line:
            return ""
        if len(line) >= MAX_LINE_CHARS and not line.endswith("\n"):
            self.verdicts.append(self._overlong(line))
            return EMPTY
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception:  # noqa: BLE001 - whatever the SDK's parser refuses, the guard answers
            message = None
        if message is not None:
            if not (isinstance(message, types.JSONRPCNotification) and '"id"' in line and "id" in top_level(line)):
                return line
            # the SDK reads a request whose id is no string or integer (`"id": {}`, `1.5`) as a
            # notification and answers nothing; JSON-RPC says it is an invalid request
            self.verdicts.append(_error(None, types.INVALID_REQUEST,
                                        "Invalid request: the id must be a string or an integer; nothing was done"))
            return EMPTY
        try:
            verdict = answer(line)
        except Exception as exc:  # noqa: BLE001 - an answer must never cost the connection
            log.warning("could not read a malformed line (%s: %s)", type(exc).__name__, exc)
            verdict = _error(None, types.INVALID_REQUEST, "Invalid request: the server could not read this message")
        self.verdicts.append(verdict)
        return EMPTY

    def _overlong(self, head: str) -> types.JSONRPCError:
        """Read the rest of a line longer than MAX_LINE_CHARS a chunk at a time (never holding it
        whole) and give its answer: -32600 with the request's id when its first MAX_LINE_CHARS
        characters hold it."""
        skipped = len(head)
        while True:
            chunk = self._lines.readline(_SKIP_CHUNK)
            skipped += len(chunk)
            if not chunk or chunk.endswith("\n"):
                break
        try:
            request_id = _request_id(top_level(head).get("id"))
        except Exception:  # noqa: BLE001 - an answer must never cost the connection
            request_id = None
        log.warning("a line of %d characters (more than %d) was skipped unread", skipped, MAX_LINE_CHARS)
        return _error(request_id, types.INVALID_REQUEST,
                      f"Invalid request: the line is longer than {MAX_LINE_CHARS:,} characters "
                      f"({MAX_LINE_CHARS // (1024 * 1024)} MiB), the most one message may be; nothing was done")

    def close(self) -> None:
        """The wire is not the guard's to close (a worker thread may still wait on it)."""


DRAIN_SECONDS = 60.0
"""At EOF on stdin, how long the server waits for the requests still running to be answered
before it exits (a client that writes its requests and closes stdin at once reads every answer;
one that cancelled a request, which JSON-RPC leaves unanswered, costs at most this wait)."""


def _key(request_id: Any) -> tuple[str, Any]:
    """A request id as a set key: 1 and "1" are different ids."""
    return (type(request_id).__name__, request_id)


class InFlight:
    """The ids of the client's requests not answered yet: `GuardedReadStream` adds each request
    it passes to the server, `AnsweringWriteStream` removes each id the server answers."""

    def __init__(self) -> None:
        self.pending: set[tuple[str, Any]] = set()

    def saw(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.pending.add(_key(message.id))
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params if isinstance(message.params, dict) else {}
            self.pending.discard(_key(params.get("requestId")))  # a cancelled request gets no answer

    def answered(self, message: Any) -> None:
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self.pending.discard(_key(message.id))

    async def drained(self, limit: float = DRAIN_SECONDS) -> None:
        """Return once every request seen was answered, or after `limit` seconds."""
        with anyio.move_on_after(limit):
            while self.pending:
                await anyio.sleep(0.01)
        if self.pending:
            log.warning("stdin closed with %d request(s) still running after %.0f s; exiting without their answers",
                        len(self.pending), limit)


class AnsweringWriteStream:
    """The server's write stream, noting each answer in `InFlight`; everything else is the inner stream's."""

    def __init__(self, inner: Any, flight: InFlight) -> None:
        self._inner = inner
        self._flight = flight

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        self._flight.answered(getattr(item, "message", None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> AnsweringWriteStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.aclose()


class GuardedReadStream:
    """The SDK's read stream, with each exception item (a line the SDK dropped) answered by the
    error `LineGuard` queued for it, written through the server's write stream. At EOF it waits
    until the requests still running are answered (`InFlight.drained`), then ends: the SDK's loop
    would otherwise leave while they run, and they would never be answered."""

    def __init__(self, inner: Any, write: Any, verdicts: collections.deque[types.JSONRPCError | None],
                 flight: InFlight | None = None) -> None:
        self._inner = inner
        self._write = write
        self._verdicts = verdicts
        self._flight = flight

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                if self._flight is not None:
                    await self._flight.drained()
                raise
            if not isinstance(item, Exception):
                if self._flight is not None:
                    self._flight.saw(getattr(item, "message", None))
                return item
            verdict = self._verdicts.popleft() if self._verdicts else _error(
                None, types.PARSE_ERROR, "Parse error: the line could not be read")
            if verdict is not None:
                await self._write.send(SessionMessage(verdict))

    def __aiter__(self) -> GuardedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> GuardedReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ------------------------------------------------------------------ serving
def _claim_stdin() -> tuple[Any, int | None]:
    """The wire (a binary stream over a private copy of fd 0) and that copy; fd 0 itself is
    pointed at the null device while serving, so a child process can never read the protocol.
    Falls back to sys.stdin's buffer when descriptors cannot be moved."""
    try:
        private = os.dup(0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(devnull, 0)
        finally:
            os.close(devnull)
        os.set_inheritable(private, False)
        return os.fdopen(private, "rb", buffering=0, closefd=False), private
    except (OSError, ValueError):
        return sys.stdin.buffer, None


async def serve_stdio(low: Any) -> None:
    """Serve the low-level MCP server `low` over stdio until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    source, private = _claim_stdin()
    guard = LineGuard(source)
    try:
        async with stdio_server(stdin=anyio.wrap_file(guard)) as (read, write):  # type: ignore[arg-type]
            flight = InFlight()
            answering = AnsweringWriteStream(write, flight)
            await low.run(GuardedReadStream(read, answering, guard.verdicts, flight), answering,
                          low.create_initialization_options())
    finally:
        if private is not None:
            with contextlib.suppress(OSError):
                os.dup2(private, 0)

"""The remote-server sample's HTTP side (docs/remote.md): a Starlette app over a `Store`, run by uvicorn.

Invariants:

- Every answer is JSON; an error is `{"error": "<one sentence>"}` (protocol.error_body), a
  request uvicorn cannot parse included (`json_http_protocol`). No traceback reaches a client or
  the terminal: an unexpected exception is a 500 with one sentence and one line on stderr (`_Guard`).
- Every endpoint but `/v1/health` needs `Authorization: Bearer TOKEN`; tokens are compared in
  constant time (their SHA-256 digests with `hmac.compare_digest`, every token every time).
  Missing or unknown: 401 with `WWW-Authenticate: Bearer`; role too low: 403.
- A request body is read up to protocol.MAX_BODY bytes and no further (413 before any parsing),
  whether or not it declares its length.
- The Store runs on one worker thread (`ThreadPoolExecutor(max_workers=1)`): its SQLite index
  is used by the thread that opened it, and writes are serialised.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from git_memex.errors import USAGE, MemexError
from git_memex.remote import protocol
from git_memex.remote.store import Store, StoreError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
TOKEN_RE = re.compile(r"^[\x21-\x7e]{16,512}$")


class Token:
    __slots__ = ("digest", "name", "role")

    def __init__(self, token: str, name: str, role: str) -> None:
        self.digest = hashlib.sha256(token.encode()).digest()
        self.name = name
        self.role = role


def load_tokens(path: Path, patterns: tuple[str, ...] = ()) -> list[Token]:
    """The token file `TOKEN NAME ROLE` per line (blank lines and `#` comments skipped). A bad line
    is one sentence naming its number, never its token (MemexError, exit 1)."""
    import os
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # before any open: a FIFO would wait for a writer forever
            raise MemexError(f"the token file {path} is not a regular file", USAGE)
        if st.st_mode & 0o077:
            raise MemexError(f"the token file {path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); "
                             f"run `chmod 600 {path}`", USAGE)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO since the stat
                raise MemexError(f"the token file {path} is not a regular file", USAGE)
            with os.fdopen(fd, "rb") as fh:
                fd = -1
                raw = fh.read(1 << 20)
        finally:
            if fd >= 0:
                os.close(fd)
    except OSError as exc:
        raise MemexError(f"cannot read the token file {path} ({exc.strerror})", USAGE) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MemexError(f"the token file {path} is not UTF-8 text", USAGE) from None
    tokens: list[Token] = []
    seen: dict[bytes, int] = {}
    from git_memex.secrets.admission import mask_value

    for n, line in enumerate(text.split("\n"), 1):  # only \n ends a line (not \x1c, \x85, U+2028...)
        line = line.removesuffix("\r")
        where = f"{path} line {n}"
        if any(ch not in " \t" and (ch.isspace() or not ch.isprintable()) for ch in line):
            raise MemexError(f"{where} holds a control character or a space other than ' ' and tab; one token per "
                             "line, words separated by spaces", USAGE)
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3:
            raise MemexError(f"{where} is not `TOKEN NAME ROLE` (three words separated by spaces)", USAGE)
        token, name, role = parts
        if not TOKEN_RE.match(token):
            raise MemexError(f"{where}: the token must be 16 to 512 printable characters without spaces", USAGE)
        if not NAME_RE.match(name):
            raise MemexError(f"{where}: the name must be letters, digits, '.', '_', '@' or '-' (at most 64)", USAGE)
        if mask_value(name, patterns)[1]:
            raise MemexError(f"{where}: the name looks like a secret to the detectors; names are written into "
                             "memory files and the audit log, so choose a person's or a job's name", USAGE)
        if role not in protocol.ROLES:
            raise MemexError(f"{where}: the role must be one of {', '.join(protocol.ROLES)}", USAGE)
        t = Token(token, name, role)
        if t.digest in seen:
            raise MemexError(f"{where} repeats the token of line {seen[t.digest]}", USAGE)
        seen[t.digest] = n
        tokens.append(t)
    if not tokens:
        raise MemexError(f"the token file {path} holds no token; add a line `TOKEN NAME ROLE`", USAGE)
    return tokens


class _Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.headers, self.extra = status, message, headers, extra


def _json(status: int, doc: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(doc, status_code=status, headers=headers)


def create_app(store: Store, tokens: list[Token], executor: ThreadPoolExecutor) -> Any:
    """The ASGI app serving `store` (called only on `executor`'s one thread) to `tokens`."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.routing import Route

    def who(request: Request, need: str) -> Token:
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise _Refused(401, "this endpoint needs a token: send `Authorization: Bearer TOKEN`",
                           {"WWW-Authenticate": "Bearer"})
        digest = hashlib.sha256(given.strip().encode("utf-8", "surrogateescape")).digest()
        found = None
        for t in tokens:  # every token, every time: the time taken does not say which one nearly matched
            if hmac.compare_digest(digest, t.digest):
                found = t
        if found is None:
            raise _Refused(401, "that token is not known to this server", {"WWW-Authenticate": "Bearer"})
        if not protocol.role_allows(found.role, need):
            raise _Refused(403, f"the token of {found.name} has the role {found.role}; this needs {need}")
        return found

    async def call(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    async def body_of(request: Request) -> dict[str, Any]:
        length = request.headers.get("content-length")
        if length is not None:
            if not (length.isascii() and length.isdigit()):
                raise _Refused(400, "the Content-Length header is not a number")
            if int(length) > protocol.MAX_BODY:
                raise _Refused(413, f"the body is larger than {protocol.MAX_BODY // 1024} KiB; nothing was read")
        from starlette.requests import ClientDisconnect

        chunks, size = [], 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > protocol.MAX_BODY:
                    raise _Refused(413, f"the body is larger than {protocol.MAX_BODY // 1024} KiB; nothing was read")
                chunks.append(chunk)
        except ClientDisconnect:  # the client went away mid-body: nothing to answer, nothing to log
            raise _Refused(400, "the client went away before its body arrived; nothing was read") from None
        try:
            doc = json.loads(b"".join(chunks))
        except (ValueError, RecursionError):
            raise _Refused(400, "the body is not JSON") from None
        if not isinstance(doc, dict):
            raise _Refused(400, "the body is not a JSON object")
        return doc

    def handler(fn: Callable[[Request], Awaitable[tuple[int, dict[str, Any]]]]) -> Callable[[Request], Awaitable[Any]]:
        async def endpoint(request: Request) -> Any:
            try:
                status, doc = await fn(request)
            except _Refused as exc:
                return _json(exc.status, protocol.error_body(exc.message, **exc.extra), exc.headers)
            except StoreError as exc:
                return _json(exc.status, exc.body(store.patterns))
            return _json(status, doc)
        return endpoint

    def memory_id(request: Request) -> str:
        mid = request.path_params["id"]
        Store.check_id(mid)
        return str(mid)

    async def health(request: Request) -> tuple[int, dict[str, Any]]:
        return 200, {"ok": True, "protocol": protocol.PROTOCOL, "server": protocol.SERVER_NAME}

    async def search(request: Request) -> tuple[int, dict[str, Any]]:
        who(request, "reader")
        q = request.query_params.get("q")
        if q is None or not q.strip():
            raise _Refused(400, "search needs a query: give q=WORDS")
        if len(q) > 1000:
            raise _Refused(400, "the query is longer than 1000 characters")
        raw = request.query_params.get("limit")
        limit = protocol.SEARCH_LIMIT_DEFAULT
        if raw is not None:
            if not (raw.isascii() and raw.isdigit() and len(raw) <= 3
                    and 1 <= int(raw) <= protocol.SEARCH_LIMIT_MAX):
                raise _Refused(400, f"limit must be a whole number from 1 to {protocol.SEARCH_LIMIT_MAX}")
            limit = int(raw)
        return 200, await call(store.search, q, limit)

    async def get(request: Request) -> tuple[int, dict[str, Any]]:
        who(request, "reader")
        return 200, await call(store.get, memory_id(request))

    async def history(request: Request) -> tuple[int, dict[str, Any]]:
        who(request, "reader")
        return 200, await call(store.history, memory_id(request))

    async def pull(request: Request) -> tuple[int, dict[str, Any]]:
        who(request, "reader")
        raw = request.query_params.get("limit")
        limit = None
        if raw is not None:
            if not (raw.isascii() and raw.isdigit() and len(raw) <= 4 and 1 <= int(raw) <= protocol.PULL_LIMIT_MAX):
                raise _Refused(400, f"limit must be a whole number from 1 to {protocol.PULL_LIMIT_MAX}")
            limit = int(raw)
        return 200, await call(store.pull, request.query_params.get("since"), limit)

    async def propose(request: Request) -> tuple[int, dict[str, Any]]:
        t = who(request, "proposer")
        doc = await body_of(request)
        text, base = doc.get("file"), doc.get("base_revision", ...)
        if not isinstance(text, str):
            raise _Refused(400, "the body needs `file`, the memory file's text as a string")
        if base is ...:
            raise _Refused(400, "the body needs `base_revision`: the revision you changed, or null for a new memory")
        if base is not None and not (type(base) is int and base >= 0):
            raise _Refused(400, "base_revision must be a whole number or null")
        return 201, await call(store.propose, t.name, t.role, text, base)

    async def review(request: Request) -> tuple[int, dict[str, Any]]:
        t = who(request, "reviewer")
        mid = memory_id(request)
        doc = await body_of(request)
        decision, revision, note = doc.get("decision"), doc.get("revision"), doc.get("note")
        if decision not in protocol.DECISIONS:
            raise _Refused(400, "decision must be approve or reject")
        if not (type(revision) is int and revision >= 0):
            raise _Refused(400, "the body needs `revision`, the revision you reviewed, as a whole number")
        if note is not None and not (isinstance(note, str) and len(note) <= 4096):
            raise _Refused(400, "note must be a string of at most 4096 characters")
        return 200, await call(store.review, t.name, t.role, mid, decision, revision, note)

    async def http_error(request: Request, exc: Exception) -> Any:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        headers = dict(exc.headers) if isinstance(exc, HTTPException) and exc.headers else None
        message = {404: "no such endpoint; see docs/remote.md", 405: "that method is not allowed here"}.get(
            status, "the request cannot be served")
        return _json(status, protocol.error_body(message), headers)

    api = protocol.API
    routes = [
        Route(f"{api}/health", handler(health), methods=["GET"]),
        Route(f"{api}/search", handler(search), methods=["GET"]),
        Route(f"{api}/memories/{{id:path}}/history", handler(history), methods=["GET"]),
        Route(f"{api}/memories/{{id:path}}", handler(get), methods=["GET"]),
        Route(f"{api}/pull", handler(pull), methods=["GET"]),
        Route(f"{api}/propose", handler(propose), methods=["POST"]),
        Route(f"{api}/review/{{id:path}}", handler(review), methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return _Guard(app)


class _Guard:
    """The outermost layer: an exception nothing else answered is a 500 with one sentence, and
    one line on stderr; never a traceback."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            from git_memex.secrets.redact import redact

            print(f"git-memex remote-server: internal error ({type(exc).__name__}: {redact(str(exc)).text})",
                  file=sys.stderr, flush=True)
            if scope.get("type") == "http" and not started:
                body = protocol.error_json("the server failed on this request; its log has one line about it")
                await send({"type": "http.response.start", "status": 500,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})


MALFORMED_HTTP = ("the request is not HTTP/1.1 this server can read (a malformed request line, or a header "
                  "such as Content-Length that cannot be read); see docs/remote.md")


READ_TIMEOUT = 30.0
"""Seconds a connection may keep the server waiting for its next bytes while a request is not
whole (nothing sent yet, half a request line or header, half a body): then it gets a 408 (or,
having sent nothing, is closed) and its slot is free. `--read-timeout` changes it."""
TIMED_OUT = ("the request did not arrive in time: the server waited {seconds:g} s for its next bytes "
             "(--read-timeout); nothing was done")


def json_http_protocol(read_timeout: float = READ_TIMEOUT) -> type:
    """uvicorn's h11 protocol, answering a request it cannot parse (`Content-Length: -5`, two
    lengths, a bad request line, an oversized header, an HTTP/2 preface, a broken chunk of a
    chunked body) with a 400 whose body is JSON, `{"error": MALFORMED_HTTP}`, like every other
    answer (docs/remote.md, "Endpoints"): uvicorn answers those itself, before any application
    code runs, in plain text. The h11 implementation is chosen explicitly, so an installed
    `httptools` never takes its place.

    A read timeout: while the server waits for a client's bytes with its request not whole (a
    client that connects and sends nothing, half a header, half a body), each wait is at most
    `read_timeout` seconds, then the connection gets a JSON 408 (a connection that sent nothing
    is just closed); uvicorn has none (its keep-alive timer runs only between requests). The
    wait for the application's own answer is not timed."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class JsonH11Protocol(H11Protocol):
        _read_timer: Any = None
        _got_bytes = False

        def send_400_response(self, msg: str) -> None:
            self._send_json(400, b"Bad Request", protocol.error_json(MALFORMED_HTTP))

        def _send_json(self, status: int, reason: bytes, body: bytes) -> None:
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close")]
            try:  # a response already under way (the body broke mid-request) can only be cut short
                for event in (h11.Response(status_code=status, headers=headers, reason=reason),
                              h11.Data(data=body), h11.EndOfMessage()):
                    out = self.conn.send(event)
                    if out:
                        self.transport.write(out)
            except h11.LocalProtocolError:
                pass
            self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            self._got_bytes = True
            self._arm()
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
                self._read_timer = None
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
            self._read_timer = self.loop.call_later(read_timeout, self._timed_out)

        def _waiting_for_client(self) -> bool:
            """Whether the server waits for this client's bytes (not for its own answer)."""
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                return True  # no request yet, or the next one not whole
            return bool(cycle.more_body)  # the body not whole (the app waits for it, or answered early)

        def _timed_out(self) -> None:
            self._read_timer = None
            if self.transport.is_closing():
                return
            if not self._waiting_for_client():
                self._arm()  # the application is at work on a whole request: its answer is not timed
                return
            cycle = self.cycle
            idle = cycle is not None and cycle.response_complete and self.conn.their_state is h11.IDLE
            if not self._got_bytes or (idle and not self.conn.trailing_data[0]):
                self.transport.close()  # nothing of a request came: nothing to answer
                return
            if cycle is not None and not cycle.response_complete:
                cycle.disconnected = True  # the application's late answer goes nowhere
                cycle.message_event.set()
            self._send_json(408, b"Request Timeout", protocol.error_json(TIMED_OUT.format(seconds=read_timeout)))

    return JsonH11Protocol


def check_patterns(patterns: list[str]) -> tuple[str, ...]:
    """The `--redact-pattern` values, each checked as `git memex config set` checks one (one
    sentence, exit 1, for a pattern that cannot be used)."""
    from git_memex.core.userregex import timed_problem

    for p in patterns:
        why = timed_problem(p)
        if why is not None:
            raise MemexError(f"--redact-pattern {p!r} cannot be used: {why}", USAGE)
    return tuple(patterns)


def timed_team_patterns(root: Path) -> tuple[tuple[str, ...], list[str]]:
    """The git-config `memex.redactPattern`s of `root` (`store.team_patterns`) that pass the
    stress test `git memex config set` runs, and a warning for each one skipped: one regex holds
    the whole process (CPython's engine keeps the interpreter lock), so one slow pattern would
    stop every client. Call it in the main thread: the stress test's timer signal works only
    there."""
    from git_memex.core.userregex import TOO_SLOW, too_slow
    from git_memex.remote.store import team_patterns

    probe = Path(root)
    while not probe.is_dir() and probe.parent != probe:  # DIR may not exist yet: its repo is a parent's
        probe = probe.parent
    kept, warnings = [], []
    for p in team_patterns(probe):
        if too_slow(p):
            warnings.append(f"memex.redactPattern {p!r} is skipped: {TOO_SLOW}")
        else:
            kept.append(p)
    return tuple(kept), warnings


def serve(host: str, port: int, token_file: Path, root: Path, patterns: tuple[str, ...] = (),
          read_timeout: float = READ_TIMEOUT) -> int:
    """Open the folder, bind, print the URL on stderr, serve until SIGINT/SIGTERM."""
    import socket

    import uvicorn

    team, slow = timed_team_patterns(root)
    tokens = load_tokens(token_file, (*patterns, *team))
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="remote-store")
    try:
        try:
            store = executor.submit(Store, root, patterns, team).result()
        except StoreError as exc:
            raise MemexError(exc.message) from None
        for w in [*slow, *store.warnings]:
            print(f"git-memex remote-server: warning: {w}", file=sys.stderr)
        for r in store.recovered:
            print(f"git-memex remote-server: recovered the {r.get('of')} of {r.get('id')} revision "
                  f"{r.get('revision')}: {r['outcome']} (audit line {r['seq']})", file=sys.stderr)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(2048)  # before the URL is printed: a client that reads it can connect at once
        except OSError as exc:
            sock.close()
            executor.submit(store.close).result()
            raise MemexError(f"cannot listen on {host}:{port} ({exc.strerror}); nothing was started") from None
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        print(f"git-memex remote-server: serving {store.root} at http://{shown}:{bound} "
              "(Ctrl-C stops it)", file=sys.stderr, flush=True)
        app = create_app(store, tokens, executor)
        # every answer JSON, the malformed requests uvicorn answers itself too; no WebSocket upgrade
        config = uvicorn.Config(app, http=json_http_protocol(read_timeout), ws="none", log_level="error", access_log=False,
                                lifespan="off", server_header=False)
        try:
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            sock.close()
            executor.submit(store.close).result()
    finally:
        executor.shutdown(wait=True)
    return 0

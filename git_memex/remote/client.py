"""`RemoteProvider`: the client of a git-memex remote server (docs/remote.md, "The client").

Stdlib only (`urllib.request`, imported when a call is made, never at import time), a timeout
on every call. The bearer token is read from the token file at each call and never copied
anywhere; a token file that group or others may read is refused, as ssh refuses such a key.
Every failure is one sentence (MemexError): an unreachable server or a 5xx exits 2, a refused
request (bad token, a role too low, a bad request) exits 1. A 409 of a propose is
`ProposeConflict`, which carries both revisions; a 409 of a review is `ReviewConflict` (exit 2),
which carries the server's current revision.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from git_memex.errors import FAILED, USAGE, MemexError

TIMEOUT_S = 15.0
"""Seconds any one call may take, connect and read together (the caller may pass its own)."""
MAX_ANSWER = 64 * 1024 * 1024
"""The largest answer read (a pull of a big folder); more is refused, never read to the end."""


class RemoteUnreachable(MemexError):
    """The server could not be reached or answered with a 5xx: exit 2, nothing changed."""


class ReviewConflict(MemexError):
    """409 of a review: the revision sent is not the server's current one, or it is not proposed."""

    def __init__(self, message: str, current: int | None) -> None:
        super().__init__(message, FAILED)
        self.current_revision = current


class ProposeConflict(MemexError):
    """409 of a propose: the base revision sent is not the server's current one."""

    def __init__(self, message: str, memory_id: str, base: int | None, current: int | None) -> None:
        super().__init__(message, USAGE)
        self.memory_id = memory_id
        self.base_revision = base
        self.current_revision = current


def read_token(path: str | os.PathLike[str]) -> str:
    """The token in `path` (its first non-blank, non-comment line), read now. The file must be
    owned by this user and closed to group and others (mode 0600 or 0400)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise MemexError(f"the token file {p} does not exist; create it (mode 0600) holding the token", USAGE) from None
    except OSError as exc:
        raise MemexError(f"cannot read the token file {p} ({exc.strerror})", USAGE) from None
    if not stat.S_ISREG(st.st_mode):
        raise MemexError(f"the token file {p} is not a regular file", USAGE)
    if os.name == "posix" and st.st_mode & 0o077:
        raise MemexError(f"the token file {p} may be read by group or others (mode {stat.S_IMODE(st.st_mode):04o}), "
                         f"so it is not used; run `chmod 600 {p}`", USAGE)
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MemexError(f"cannot read the token file {p} ({getattr(exc, 'strerror', None) or exc})", USAGE) from None
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            token = line.split()[0]
            if not all(33 <= ord(c) < 127 for c in token):
                raise MemexError(f"the token in {p} holds characters an HTTP header cannot carry", USAGE)
            return token
    raise MemexError(f"the token file {p} holds no token", USAGE)


def check_url(url: str) -> str:
    """`url` without a trailing slash, or one sentence: http or https, a host, nothing after the
    path (no query, fragment or user info, which would put a secret in git config). The sentence
    never repeats the URL as given: it may carry a password (`protocol.shown_url` is what is shown)."""
    from urllib.parse import urlsplit

    from git_memex.remote.protocol import shown_url

    def said() -> str:
        shown = shown_url(url)
        return f"the URL {shown}" if shown and shown == url.strip().rstrip("/") else (
            f"the URL given for {shown}" if shown else "the URL given")

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise MemexError(f"{said()} is not a URL (a port out of range, or a bad host); give http://HOST:PORT of "
                         "the remote server", USAGE) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise MemexError(f"{said()} is not an http:// or https:// URL with a host; give http://HOST:PORT of the "
                         "remote server", USAGE)
    if parts.username or parts.password or parts.query or parts.fragment:
        raise MemexError(f"the URL {parts.scheme}://{parts.hostname}{'' if port is None else f':{port}'} must not carry "
                         "user info, a query or a fragment; put the token in the token file", USAGE)
    return url.rstrip("/")


class RemoteProvider:
    """One remote server: `url` (no trailing slash) and the file holding its token."""

    def __init__(self, name: str, url: str, token_file: str | os.PathLike[str] | None,
                 timeout: float = TIMEOUT_S) -> None:
        self.name = name
        self.url = check_url(url)
        self.token_file = token_file
        self.timeout = timeout

    # ------------------------------------------------------------ the wire
    def _call(self, method: str, path: str, body: dict[str, Any] | None = None, *,
              auth: bool = True, ok: tuple[int, ...] = (200,)) -> dict[str, Any]:
        import http.client
        import urllib.error
        import urllib.request

        from git_memex.remote.protocol import API

        headers = {"Accept": "application/json", "User-Agent": "git-memex"}
        if auth:
            if self.token_file is None:
                raise MemexError(f"remote {self.name} has no token file; `git memex remote remove {self.name}` "
                                 "then add it again with --token-file", USAGE)
            headers["Authorization"] = f"Bearer {read_token(self.token_file)}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + API + path, data=data, method=method, headers=headers)
        opener = _opener()
        where = f"remote {self.name} ({self.url})"
        try:
            with opener.open(req, timeout=self.timeout) as resp:
                status, raw = resp.status, resp.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                raw = exc.read(MAX_ANSWER + 1)
            except (OSError, http.client.HTTPException):
                raw = b""
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", None) or exc
            if isinstance(reason, OSError) and reason.strerror:
                reason = reason.strerror
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                reason = f"no answer within {self.timeout:g} s"
            raise RemoteUnreachable(f"cannot reach {where}: {reason}; nothing was changed", FAILED) from None
        if len(raw) > MAX_ANSWER:
            raise MemexError(f"{where} sent an answer larger than {MAX_ANSWER // (1024 * 1024)} MiB; nothing was "
                             "changed", FAILED)
        try:
            doc = json.loads(raw.decode("utf-8")) if raw else {}
        except (UnicodeDecodeError, ValueError):
            doc = None
        if not isinstance(doc, dict):
            if status >= 500 or status in ok:
                raise RemoteUnreachable(f"{where} answered {status} with something that is not JSON; is it a "
                                        "git-memex remote server? nothing was changed", FAILED)
            doc = {}
        if status in ok:
            return doc
        if 300 <= status < 400:
            raise MemexError(f"{where} answered {status}, a redirect; git-memex never follows one (it would carry "
                             "the token elsewhere); give the server's own URL to `git memex remote add`", USAGE)
        said = _said(doc.get("error"), status, headers.get("Authorization", "").removeprefix("Bearer "))
        if status >= 500:
            raise RemoteUnreachable(f"{where} failed ({status}: {said}); nothing was changed", FAILED)
        if status == 401:
            raise MemexError(f"{where} refused the token in {self.token_file} (401: {said}); check the token file",
                             USAGE)
        if status == 403:
            raise MemexError(f"{where} refused: the token's role is too low for this (403: {said})", USAGE)
        if status == 409 and path == "/propose":
            mid = str(doc.get("id") or "")
            base, cur = doc.get("base_revision"), doc.get("current_revision")
            raise ProposeConflict(said, mid, base if isinstance(base, int) else None,
                                  cur if isinstance(cur, int) else None)
        if status == 409 and path.startswith("/review/"):
            cur = doc.get("current_revision")
            raise ReviewConflict(said, cur if isinstance(cur, int) and not isinstance(cur, bool) else None)
        raise MemexError(f"{where} refused the request ({status}: {said})", USAGE)

    # ------------------------------------------------------------ endpoints
    def health(self) -> dict[str, Any]:
        doc = self._call("GET", "/health", auth=False)
        from git_memex.remote.protocol import PROTOCOL

        if doc.get("ok") is not True or doc.get("protocol") != PROTOCOL:
            raise MemexError(f"{self.url} is not a git-memex remote server speaking {PROTOCOL} (its /v1/health "
                             "answer differs); nothing was changed", FAILED)
        return doc

    def search(self, query: str, limit: int = 8) -> dict[str, Any]:
        from urllib.parse import urlencode

        return self._call("GET", "/search?" + urlencode({"q": query, "limit": limit}))

    def get(self, memory_id: str) -> dict[str, Any]:
        return self._call("GET", f"/memories/{_id(memory_id)}")

    def history(self, memory_id: str) -> dict[str, Any]:
        return self._call("GET", f"/memories/{_id(memory_id)}/history")

    def pull(self, since: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """One page of `GET /v1/pull`: `{"cursor", "changes", "more"}` (`more` False from a server
        that does not page)."""
        from urllib.parse import urlencode

        query = {k: v for k, v in (("since", since), ("limit", limit)) if v is not None}
        doc = self._call("GET", "/pull" + (f"?{urlencode(query)}" if query else ""))
        if not isinstance(doc.get("cursor"), str) or not isinstance(doc.get("changes"), list):
            raise MemexError(f"remote {self.name} ({self.url}) sent a pull answer without a cursor and a list of "
                             "changes; nothing was changed", FAILED)
        if not _CURSOR_RE.fullmatch(doc["cursor"]):
            raise MemexError(f"remote {self.name} ({self.url}) sent a cursor that is not one (at most 64 letters, "
                             "digits, '.', '_', ':' or '-'); nothing was changed", FAILED)
        doc["more"] = doc.get("more") is True
        return doc

    def propose(self, file_text: str, base_revision: int | None) -> dict[str, Any]:
        return self._call("POST", "/propose", {"file": file_text, "base_revision": base_revision}, ok=(200, 201))

    def review(self, memory_id: str, decision: str, revision: int, note: str | None = None) -> dict[str, Any]:
        """`POST /v1/review/ID`: a reviewer's decision ("approve" or "reject") on the revision they read."""
        body: dict[str, Any] = {"decision": decision, "revision": revision}
        if note is not None:
            body["note"] = note
        return self._call("POST", f"/review/{_id(memory_id)}", body)


_CURSOR_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
"""A cursor kept and sent back as `since=`: short and plain, whatever a server sends."""

MAX_SAID = 300
"""The most of a server's error sentence quoted in ours."""


def _opener() -> Any:
    """urllib's opener with no proxy (a relay for memories is reached directly, never through a
    proxy that would see the token) and no redirect followed: a redirect is answered as the
    status it is, since following it would send the bearer token wherever the answer names."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
            return None

    return urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())


def _said(error: object, status: int, token: str) -> str:
    """The server's error sentence as we quote it: one line, at most MAX_SAID characters, the
    token and any secret masked (a server is not trusted with what our errors and state.json
    keep)."""
    from git_memex.secrets.redact import redact

    if not isinstance(error, str) or not error.strip():
        return f"HTTP {status}"
    text = error[:8 * MAX_SAID]  # far past the cut below, so no token part at this edge survives it
    if token:  # the token, also when spaces or line separators (U+2028...) are put inside it
        text = re.sub(r"\s*".join(map(re.escape, token)), "[the token]", text)
    text = " ".join(text.split())
    text = redact(text).text
    if len(text) > MAX_SAID:
        text = text[:MAX_SAID] + "…"
    return text.rstrip(".")


def _id(memory_id: str) -> str:
    from git_memex.remote.protocol import is_memory_id

    if not is_memory_id(memory_id):
        raise MemexError(f"{memory_id!r} is not a memory id", USAGE)
    return memory_id

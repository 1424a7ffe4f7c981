"""Helpers of the client tests (tests/remote/test_client.py, test_cache.py): the real remote
server in its own process, memory files for its folder, a hostile server for what the real one
never serves, and the reviewer's call."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from git_memex.core import frontmatter, model

TOKENS = {"reader": "reader-token-0123456789abcdef", "proposer": "proposer-token-0123456789abcdef",
          "reviewer": "reviewer-token-0123456789abcdef"}


class Server:
    def __init__(self, root: Path, url: str, proc: subprocess.Popen[str], tokens: dict[str, Path]) -> None:
        self.root, self.url, self.proc, self.tokens = root, url, proc, tokens

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)

    def call(self, method: str, path: str, role: str = "reviewer", body: dict[str, Any] | None = None) -> Any:
        req = urllib.request.Request(self.url + "/v1" + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {TOKENS[role]}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    def approve(self, mid: str) -> dict[str, Any]:
        rev = self.call("GET", f"/memories/{mid}", role="reader")["revision"]
        return self.call("POST", f"/review/{mid}", body={"decision": "approve", "revision": rev})


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: Path | None = None) -> Result:
    """The real command in a new process, as tests/conftest.py's `run_cli` (that module is shadowed
    here by tests/remote/conftest.py, the server fixtures)."""
    p = subprocess.run([sys.executable, "-m", "git_memex", *args], capture_output=True, text=True,
                       cwd=cwd or os.getcwd(), env=dict(os.environ), timeout=120)
    return Result(p.returncode, p.stdout, p.stderr)


def token_files(folder: Path) -> dict[str, Path]:
    """One client token file per role (mode 0600) and the server's token file."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for role, tok in TOKENS.items():
        p = folder / f"{role}.token"
        p.write_text(tok + "\n")
        p.chmod(0o600)
        out[role] = p
    server = folder / "server-tokens"
    server.write_text("".join(f"{tok} {role}1 {role}\n" for role, tok in TOKENS.items()))
    server.chmod(0o600)
    out["server"] = server
    return out


@contextmanager
def remote_server(tmp_path: Path, files: dict[str, str] | None = None) -> Iterator[Server]:
    """`git memex remote-server --port 0` on 127.0.0.1 serving `tmp_path/served` (with `files`
    put there first, name -> text), in its own process; stopped at the end."""
    root = tmp_path / "served"
    root.mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (root / name).write_text(text, encoding="utf-8")
    tokens = token_files(tmp_path / "tokens")
    env = {**os.environ, "GIT_MEMEX_HOME": str(tmp_path / "server-home")}
    proc = subprocess.Popen([sys.executable, "-m", "git_memex", "remote-server", "--host", "127.0.0.1", "--port",
                             "0", "--token-file", str(tokens["server"]), "--root", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    url = None
    end = time.monotonic() + 60  # a hang guard, not a measure
    while url is None and time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"at (http://[^ ]+)", line)
        if m:
            url = m.group(1)
    if url is None:
        proc.kill()
        raise AssertionError(f"the remote server did not start: {proc.stderr.read()}")
    srv = Server(root, url, proc, tokens)
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain
    try:
        yield srv
    finally:
        srv.stop()


def memory_file(body: str, *, role: str = "knowledge", tags: list[str] | None = None,
                extra: dict[str, Any] | None = None, raw_tags: str | None = None) -> tuple[str, str]:
    """(id, file text) of a v0.2 project memory as the server's folder holds one; `raw_tags`
    replaces the tags line as written (a YAML tag, a secret)."""
    m = model.create(body, role=role, tags=tags, review_state="approved", extra=extra)
    text = frontmatter.serialize(m.fm, m.body)
    if raw_tags is not None:
        text = re.sub(r"^tags:.*$", f"tags: {raw_tags}", text, count=1, flags=re.M)
    return m.id, text


@contextmanager
def hostile_server(changes: list[dict[str, Any]], more: bool = False,
                   memories: dict[str, dict[str, Any]] | None = None) -> Iterator[str]:
    """A server on 127.0.0.1 that speaks the protocol's health and pull but sends `changes` as
    they are (and `more`, a cursor that never moves): the client must not trust what a server sends.
    With `memories` (id -> the `GET /v1/memories/ID` document), it answers that, and every
    `POST /v1/propose` of such an id with a 409 naming the document's revision as current."""

    class Handler(BaseHTTPRequestHandler):
        def send(self, status: int, doc: dict[str, Any]) -> None:
            raw = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            mid = self.path.removeprefix("/v1/memories/")
            if self.path.startswith("/v1/health"):
                doc: dict[str, Any] = {"ok": True, "protocol": "openmemex/0.2", "server": "git-memex remote-server"}
            elif self.path.startswith("/v1/pull"):
                doc = {"cursor": "9", "changes": changes, **({"more": True} if more else {})}
            elif memories and mid in memories:
                doc = memories[mid]
            else:
                self.send(404, {"error": "no such thing"})
                return
            self.send(200, doc)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            mid = re.search(r"(?m)^id: *(\S+)", str(body.get("file") or ""))
            if self.path == "/v1/propose" and memories and mid and mid.group(1) in memories:
                cur = memories[mid.group(1)]["revision"]
                self.send(409, {"error": f"memory is at revision {cur}", "id": mid.group(1),
                                "base_revision": body.get("base_revision"), "current_revision": cur})
                return
            self.send(404, {"error": "no such thing"})

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()

"""The real `git memex remote-server` in a subprocess, for the server's tests (not a conftest.py: a
second module named `conftest` would shadow the root one that other tests import helpers from).

Fixtures (import them into the test module: `from server_support import remote_server`):

- `remote_server` -> RemoteServer: a server started on 127.0.0.1 with port 0 over `tmp_path/served`,
  with one token per role. `.url` ("http://127.0.0.1:PORT", no /v1), `.root` (the served folder),
  `.tokens` ({"reader": T, "proposer": T, "reviewer": T}), `.names` (the token NAMEs),
  `.headers(role)`, `.stop()` (SIGTERM), `.kill()` (SIGKILL), `.start(env=None)` (again, same
  folder and tokens, a new free port: `.url` changes), `.stderr()` (what it printed).
- `start_remote_server(root, token_file, *args, env=None)` -> RemoteServer for other set-ups.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROLES = ("reader", "proposer", "reviewer")
NAMES = {"reader": "rita", "proposer": "pete", "reviewer": "vera"}
START_TIMEOUT_S = 60  # a hang guard only


def write_tokens(path: Path) -> dict[str, str]:
    tokens = {role: f"{role}-{os.urandom(12).hex()}" for role in ROLES}
    path.write_text("# TOKEN NAME ROLE\n" + "".join(f"{tokens[r]} {NAMES[r]} {r}\n" for r in ROLES))
    path.chmod(0o600)
    return tokens


def wait_for(path: Path, timeout: float = 60) -> None:
    """Until `path` exists (a pause point's `.reached` file); a hang guard only."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


class RemoteServer:
    def __init__(self, root: Path, token_file: Path, tokens: dict[str, str], args: tuple[str, ...] = (),
                 log: Path | None = None) -> None:
        self.root, self.token_file, self.tokens, self.args = root, token_file, tokens, args
        self.names = dict(NAMES)
        self.log = log or root.parent / f"{root.name}-server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.runs = 0

    def command(self) -> list[str]:
        return [sys.executable, "-m", "git_memex", "remote-server", "--port", "0", "--token-file",
                str(self.token_file), "--root", str(self.root), *self.args]

    def start(self, env: dict[str, str] | None = None) -> RemoteServer:
        """Start (again); returns once the bound URL is printed. Fails the test if it exits first."""
        self.runs += 1
        self.current_log = self.log.with_suffix(f".{self.runs}.log")
        with open(self.current_log, "wb") as err:
            self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=err,
                                         env={**os.environ, **(env or {})})
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            text = self.stderr()
            for line in text.splitlines():
                if " at http://" in line and "serving" in line:
                    self.url = line.split(" at ", 1)[1].split()[0]
                    return self
            if self.proc.poll() is not None:
                raise AssertionError(f"remote-server exited with {self.proc.returncode}: {text}")
            time.sleep(0.02)
        self.kill()
        raise AssertionError(f"remote-server printed no URL in {START_TIMEOUT_S} s: {self.stderr()}")

    def stderr(self) -> str:
        return self.current_log.read_text(errors="replace")

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> int:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        return -1 if self.proc is None else int(self.proc.returncode)


@pytest.fixture
def start_remote_server(tmp_path: Path) -> Iterator[object]:
    started: list[RemoteServer] = []

    def start(root: Path, token_file: Path, *args: str, env: dict[str, str] | None = None,
              tokens: dict[str, str] | None = None) -> RemoteServer:
        s = RemoteServer(root, token_file, tokens or {}, args)
        started.append(s)
        return s.start(env)

    yield start
    for s in started:
        s.kill()


@pytest.fixture
def remote_server(tmp_path: Path) -> Iterator[RemoteServer]:
    token_file = tmp_path / "tokens"
    tokens = write_tokens(token_file)
    s = RemoteServer(tmp_path / "served", token_file, tokens)
    s.start()
    yield s
    s.kill()

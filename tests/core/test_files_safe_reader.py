"""One safe reader of memory files: a FIFO, device or link named `*.md` is never opened as a
file or waited on (issue 20 hole 9), in the work tree's memory folder or in the data root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

HANG_BUDGET = 90  # seconds: only to catch a command that waits forever on the FIFO

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "git_memex", *args], input=input, capture_output=True,
                          text=True, timeout=HANG_BUDGET)


def _fifos(repo: Path) -> list[Path]:
    assert run_cli("add", "--scope", "personal", "the staging box runs traefik").code == 0
    assert run_cli("add", "the deploy uses traefik labels").code == 0
    data = Path(os.environ["GIT_MEMEX_HOME"])
    made = [repo / ".ai" / "open-memex" / "01M8SYPXS529KY8R5BCF82V8AA.md",
            data / "memories" / "personal" / "01M8SYPXS529KY8R5BCF82V8AB.md"]
    for p in made:
        os.mkfifo(p)
    return made


def test_fifo_named_md_never_hangs_the_cli(ready: Path) -> None:
    fifos = _fifos(ready)
    r = _run("search", "traefik")
    assert r.returncode == 0, r.stderr
    assert "traefik" in r.stdout
    assert _run("context").returncode == 0
    hook = _run("context", "--hook", "claude", input="{}")
    assert hook.returncode == 0, hook.stderr
    assert _run("capture", "--hook", "claude", input=json.dumps({"prompt": "hello"})).returncode == 0
    doc = _run("doctor")
    for p in fifos:
        assert p.name in doc.stdout + doc.stderr
    assert "not a regular file" in doc.stdout + doc.stderr
    assert _run("reindex", "--full").returncode == 0


def test_fifo_named_md_never_hangs_an_mcp_tool(ready: Path) -> None:
    _fifos(ready)
    script = ("import mcp_client as m, sys\n"
              "r = m.call('memory_search', {'query': 'traefik'})\n"
              "sys.stdout.write(m.text(r))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), *sys.path])}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_BUDGET,
                       env=env, cwd=ready)
    assert r.returncode == 0, r.stderr
    assert "traefik" in r.stdout


def test_scan_reports_a_fifo_a_link_and_a_huge_file_never_waits(ready: Path) -> None:
    """`git memex scan` reads memory files through the same reader: a FIFO, a link to /dev/zero and
    a file over the size cap are each one finding (exit 1), read no further."""
    folder = ready / ".ai" / "open-memex"
    os.mkfifo(folder / "01M8SYPXS529KY8R5BCF82V8AC.md")
    (folder / "01M8SYPXS529KY8R5BCF82V8AD.md").symlink_to("/dev/zero")
    (folder / "01M8SYPXS529KY8R5BCF82V8AE.md").write_bytes(b"a" * (3 << 20))
    r = _run("scan")
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert len([x for x in lines if ":0: unreadable: " in x]) == 3, r.stdout
    assert "regular file" in r.stdout and "symbolic link" in r.stdout and "larger than" in r.stdout

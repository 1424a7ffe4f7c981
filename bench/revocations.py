"""What the durable revocation check costs a session start (docs/agents.md, "Approval records").

    python -m bench.revocations [--commits 20000] [--reps 9]

A repository with --commits commits (made with `git fast-import`) and one approved rule committed
on main. Whole `git memex context --json` processes, median and spread of --reps, wall clock:
with the revocation cache (`<data root>/approvals/revocations-*.json`) warm, and deleted before
every call (the full `git log --full-history -m` walk over `.approvals/`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args: list[str], cwd: Path, env: dict[str, str], data: bytes | None = None) -> bytes:
    return subprocess.run(args, cwd=cwd, env=env, input=data, check=True, capture_output=True, timeout=600).stdout


def history(n: int) -> bytes:
    out = []
    for i in range(n):
        body = f"line {i}\n"
        out.append(f"commit refs/heads/main\nmark :{i + 1}\ncommitter B <b@example.com> {1700000000 + i} +0000\n"
                   f"data 2\nc\n" + (f"from :{i}\n" if i else "") + f"M 644 inline src/f{i % 200}.txt\n"
                   f"data {len(body)}\n{body}\n")
    return "".join(out).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    memex = str(Path(sys.executable).with_name("git-memex"))
    tmp = Path(tempfile.mkdtemp(prefix="bench-revocations-"))
    env = {**os.environ, "HOME": str(tmp), "GIT_MEMEX_HOME": str(tmp / "data"), "GIT_AUTHOR_NAME": "B",
           "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.com"}
    work = tmp / "work"
    try:
        run(["git", "init", "-q", "-b", "main", str(work)], tmp, env)
        run(["git", "fast-import", "--quiet"], work, env, history(a.commits))
        run(["git", "checkout", "-q", "-f", "main"], work, env)
        run([memex, "init", "--yes"], work, env)
        run(["git", "add", "-A"], work, env)
        run(["git", "commit", "-qm", "memex init"], work, env)
        mid = json.loads(run([memex, "add", "Run make check before pushing", "--role", "instruction", "--json"],
                             work, env))["id"]
        run([memex, "submit", mid], work, env)
        run([memex, "instruction", "approve", mid], work, env)
        run(["git", "commit", "-qam", "approve"], work, env)
        served = json.loads(run([memex, "context", "--json"], work, env))["instructions"]
        assert [i["id"] for i in served] == [mid], served
        caches = tmp / "data" / "approvals"

        def measure(cold: bool) -> list[float]:
            xs = []
            for _ in range(a.reps):
                if cold:
                    for f in caches.glob("revocations-*.json"):
                        f.unlink()
                t = time.perf_counter()
                run([memex, "context", "--json"], work, env)
                xs.append((time.perf_counter() - t) * 1000)
            return sorted(xs)

        for label, cold in (("cache warm", False), ("cache deleted before each call", True)):
            xs = measure(cold)
            print(f"context --json, {a.commits} commits, {label}: median {statistics.median(xs):.0f} ms "
                  f"(min {xs[0]:.0f}, max {xs[-1]:.0f}, {a.reps} runs)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""What serving org rules costs a session start (docs/org.md, "Org instructions and owners").

    python -m bench.org_gate [--rules 10] [--reps 9]

A bare org remote with an OWNERS file and --rules org rules (each approved and committed by its
owner, one commit each), subscribed from a project. Whole `git memex context` processes, median
of --reps, wall clock: with no org rule at all (the baseline), with the rules and the gate's
per-commit cache (`<clone>/.git/memex/gate.json`) warm, and with the cache deleted before every
call (what the first session start after an `org pull` pays).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEM = ".ai/open-memex"
OWNER = "owner@example.com"


def sh(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)
    return (time.perf_counter() - t) * 1000


def rule(folder: Path, i: int) -> None:
    mid = f"01JGATE{i:019d}"
    (folder / f"{mid}.md").write_text(
        f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: constraint\nrole: instruction\n"
        f"instruction_state: approved\ntrust_level: trusted\napproved_by: local:{OWNER}\nstatus: active\n"
        f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n"
        f"Org rule number {i}: every service does thing {i}.\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=10)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        env = {**os.environ, "HOME": str(tmp / "home"), "GIT_MEMEX_HOME": str(tmp / "data"),
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"),
               "GIT_AUTHOR_NAME": "o", "GIT_AUTHOR_EMAIL": OWNER, "GIT_COMMITTER_NAME": "o",
               "GIT_COMMITTER_EMAIL": OWNER}
        (tmp / "home").mkdir()
        memex = [sys.executable, "-m", "git_memex"]
        remote, seed, work = tmp / "org.git", tmp / "seed", tmp / "work"
        sh(["git", "init", "-q", "--bare", "-b", "main", str(remote)], tmp, env)
        sh(["git", "clone", "-q", str(remote), str(seed)], tmp, env)
        (seed / MEM).mkdir(parents=True)
        (seed / MEM / "OWNERS").write_text(f"* local:{OWNER}\n")
        sh(["git", "add", "-A"], seed, env)
        sh(["git", "commit", "-q", "-m", "owners"], seed, env)
        sh(["git", "push", "-q", "origin", "main"], seed, env)
        work.mkdir()
        sh(["git", "init", "-q", "-b", "main"], work, env)
        sh(["git", "commit", "-q", "--allow-empty", "-m", "init"], work, env)
        sh([*memex, "org", "add", "acme", str(remote)], work, env)

        def median(before: object = None) -> float:
            times = []
            for _ in range(a.reps):
                if callable(before):
                    before()
                times.append(sh([*memex, "context"], work, env))
            return statistics.median(times)

        base = median()
        for i in range(a.rules):
            rule(seed / MEM, i)
            sh(["git", "add", "-A"], seed, env)
            sh(["git", "commit", "-q", "-m", f"rule {i}"], seed, env)
        sh(["git", "push", "-q", "origin", "main"], seed, env)
        sh([*memex, "org", "pull"], work, env)
        out = subprocess.run([*memex, "context", "--json"], cwd=work, env=env, capture_output=True, text=True, check=True)
        served = sum(1 for i in json.loads(out.stdout)["instructions"] if i["location"] == "org:acme")
        cache = tmp / "data" / "org" / "acme" / ".git" / "memex" / "gate.json"
        warm = median()
        cold = median(lambda: cache.unlink(missing_ok=True))
        print(f"org rules: {a.rules} ({served} served), context median of {a.reps}: no org rule {base:.0f} ms, "
              f"rules with the cache warm {warm:.0f} ms, cache deleted before each call {cold:.0f} ms")


if __name__ == "__main__":
    main()

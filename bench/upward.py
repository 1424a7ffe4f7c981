"""Promotion upward at scale (docs/org.md, "Promotion upward"): `propose ID --to org NAME` against
a generated org repo of N memories.

    python -m bench.upward --sizes 1000,10000 [--reps 5]

For each size: a bare org remote of N memories in four subfolders, subscribed from a project with
`org add`; --reps published project memories, each proposed once; the whole `propose --to org`
process is timed (wall clock, median). Its cost that grows with N is the temporary index
(`read-tree` of the org tree, `write-tree`). Whole processes, wall clock, this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ["service", "deploy", "cache", "retry", "queue", "token", "schema", "index", "shard", "replica",
         "latency", "budget", "alert", "rollback", "canary", "migration", "lint", "review", "owner", "policy"]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(args, cwd=cwd, env=env, check=False, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{args[2:4]} failed: {r.stderr.strip()}")
    return r


def bench(n: int, reps: int, tmp: Path) -> dict[str, float]:
    env = {**os.environ, "HOME": str(tmp / "home"), "GIT_MEMEX_HOME": str(tmp / "data"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": str(tmp / "home" / ".gitconfig"), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e"}
    (tmp / "home").mkdir()
    (tmp / "home" / ".gitconfig").write_text("[user]\n\tname = b\n\temail = b@e\n")
    memex = [sys.executable, "-m", "git_memex"]
    remote, seed, work = tmp / "org.git", tmp / "seed", tmp / "work"
    run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], tmp, env)
    run(["git", "clone", "-q", str(remote), str(seed)], tmp, env)
    rng = random.Random(n)
    folders = [seed / ".ai/open-memex" / d for d in ("engineering", "decisions", "lessons", "policies")]
    for f in folders:
        f.mkdir(parents=True)
    for i in range(n):
        mid = f"01JBENCH{i:018d}"
        text = " ".join(rng.choice(WORDS) for _ in range(18)) + f" item{i}."
        (folders[i % 4] / f"{mid}.md").write_text(
            f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: fact\nstatus: active\n"
            f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{text}\n")
    for args in (["add", "-A"], ["commit", "-q", "-m", "seed"], ["push", "-q", "origin", "main"]):
        run(["git", *args], seed, env)
    work.mkdir()
    run(["git", "init", "-q", "-b", "main"], work, env)
    run(["git", "commit", "-q", "--allow-empty", "-m", "init"], work, env)
    run([*memex, "init", "--yes"], work, env)
    run(["git", "add", "-A"], work, env)
    run(["git", "commit", "-q", "-m", "memex"], work, env)
    run([*memex, "org", "add", "acme", str(remote)], work, env)
    ids = []
    for i in range(reps):
        mid = json.loads(run([*memex, "add", f"lesson number {i} about {rng.choice(WORDS)} holds everywhere",
                              "--json"], work, env).stdout)["id"]
        run([*memex, "submit", mid], work, env)
        run([*memex, "promote", mid, "--by", "x"], work, env)
        run([*memex, "promote", mid, "--by", "x"], work, env)
        ids.append(mid)
    run(["git", "commit", "-q", "-am", "published"], work, env)
    times = []
    for mid in ids:
        t = time.perf_counter()
        run([*memex, "propose", mid, "--to", "org", "acme", "--json"], work, env)
        times.append((time.perf_counter() - t) * 1000)
    return {"n": n, "propose_ms": statistics.median(times)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
    print("| org memories | `propose --to org`, whole process, median |")
    print("|---|---|")
    for n in (int(x) for x in a.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="memex-upward-") as d:
            r = bench(n, a.reps, Path(d))
        print(f"| {n:,} | {r['propose_ms']:.0f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Org memory at scale (docs/org.md): a generated org repo of N memories, subscribed from a project.

    python -m bench.org --sizes 1000,10000 [--reps 9]

For each size: `org add` (clone + index), a whole `git memex search` process (median of --reps,
the org index checked by its clone's commit), `reindex` (what a stat of every file costs), and
`org pull` of 100 changed org memories. Whole processes, wall clock, this machine.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ["service", "deploy", "cache", "retry", "queue", "token", "schema", "index", "shard", "replica", "latency", "budget", "alert", "rollback", "canary", "migration", "lint", "review", "owner", "policy", "secret", "vault", "backup", "restore", "metric"]


def body(rng: random.Random, i: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(18)) + f" item{i}."


def write(folder: Path, i: int, text: str) -> None:
    mid = f"01JBENCH{i:018d}"
    (folder / f"{mid}.md").write_text(
        f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: fact\nstatus: active\n"
        f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{text}\n")


def sh(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)
    return (time.perf_counter() - t) * 1000


def bench(n: int, reps: int, tmp: Path) -> dict[str, float]:
    env = {**os.environ, "HOME": str(tmp / "home"), "GIT_MEMEX_HOME": str(tmp / "data"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e"}
    (tmp / "home").mkdir()
    memex = [sys.executable, "-m", "git_memex"]
    remote, seed, work = tmp / "org.git", tmp / "seed", tmp / "work"
    sh(["git", "init", "-q", "--bare", "-b", "main", str(remote)], tmp, env)
    sh(["git", "clone", "-q", str(remote), str(seed)], tmp, env)
    rng = random.Random(n)
    folders = [seed / ".ai/open-memex" / d for d in ("engineering", "decisions", "lessons", "policies")]
    for f in folders:
        f.mkdir(parents=True)
    for i in range(n):
        write(folders[i % len(folders)], i, body(rng, i))
    for args in (["add", "-A"], ["commit", "-q", "-m", "seed"], ["push", "-q", "origin", "main"]):
        sh(["git", *args], seed, env)
    work.mkdir()
    sh(["git", "init", "-q", "-b", "main"], work, env)
    out = {"org add (clone + index)": sh([*memex, "org", "add", "acme", str(remote)], work, env)}
    search = [sh([*memex, "search", "canary", "rollback"], work, env) for _ in range(reps)]
    out["search, whole process, median"] = statistics.median(search)
    out["reindex (stat every file), median of 3"] = statistics.median(
        sh([*memex, "reindex"], work, env) for _ in range(3))
    for i in range(100):
        write(folders[i % len(folders)], i, body(rng, i) + " changed")
    for args in (["add", "-A"], ["commit", "-q", "-m", "100 changed"], ["push", "-q", "origin", "main"]):
        sh(["git", *args], seed, env)
    out["org pull, 100 changed"] = sh([*memex, "org", "pull"], work, env)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args(argv)
    for n in (int(s) for s in a.sizes.split(",")):
        with tempfile.TemporaryDirectory() as d:
            for k, v in bench(n, a.reps, Path(d)).items():
                print(f"{n:>7}  {k:40} {v:8.1f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Start-up A/B: whole-process time of the hot paths for two source trees, interleaved.

    python -m bench.startup BEFORE_TREE [AFTER_TREE] [--runs 30]

Each tree is a folder holding a `git_memex/` package (e.g. `git worktree add /tmp/before
7d2a890`); AFTER_TREE defaults to this checkout. The rows run in one small repository (git
memex init, 20 memories) with each tree's package first on PYTHONPATH and the same interpreter,
alternating A and B run by run so that machine load falls on both alike. Reported: median and
spread (p10-p90) in ms per row, and a machine-speed reference (`python -c pass`) taken the same
way, so that the figures read as ratios on a noisy VM.
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

ROOT = Path(__file__).resolve().parents[1]


def rows(repo: Path) -> dict[str, tuple[list[str], str]]:
    prompt = json.dumps({"prompt": "what is the kestrel proxy timeout", "session_id": "s", "cwd": str(repo),
                         "hook_event_name": "UserPromptSubmit"})
    plain = json.dumps({"prompt": "please fix the failing build", "session_id": "s", "cwd": str(repo),
                        "hook_event_name": "UserPromptSubmit"})
    return {
        "python -c pass (reference)": (["-c", "pass"], ""),
        "search": (["-m", "git_memex", "search", "kestrel proxy"], ""),
        "context hook (a prompt)": (["-m", "git_memex", "context", "--hook", "claude"], prompt),
        "capture hook (no trigger)": (["-m", "git_memex", "capture", "--hook", "claude"], plain),
        "pre-commit hook (no memory file)": (["-m", "git_memex", "hook", "pre-commit"], ""),
    }


def setup(tmp: Path, tree: Path, env: dict[str, str]) -> Path:
    """A repository and data root of this tree's own (two versions may keep different indexes)."""
    tmp.mkdir()
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True, env=env)
    run = [sys.executable, "-m", "git_memex"]
    e = env
    subprocess.run([*run, "init", "--yes"], cwd=repo, env=e, check=True, capture_output=True)
    for i in range(20):
        subprocess.run([*run, "add", f"the kestrel proxy timeout for service {i} is {30 + i} seconds"], cwd=repo,
                       env=e, check=True, capture_output=True)
    (repo / "notes.txt").write_text("x\n")
    subprocess.run(["git", "add", "notes.txt"], cwd=repo, check=True)
    return repo


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path, nargs="?", default=ROOT)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        base = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@x"}
        trees = {"before": args.before.resolve(), "after": args.after.resolve()}
        envs = {label: {**base, "GIT_MEMEX_HOME": str(tmp / label / "home"), "PYTHONPATH": str(tree)}
                for label, tree in trees.items()}
        repos = {label: setup(tmp / label, tree, envs[label]) for label, tree in trees.items()}
        times: dict[tuple[str, str], list[float]] = {}
        tables = {label: rows(repos[label]) for label in trees}
        table = tables["after"]
        for _ in range(args.runs):
            for name in table:
                for label in trees:
                    cmd, stdin = tables[label][name]
                    t0 = time.perf_counter()
                    subprocess.run([sys.executable, *cmd], cwd=repos[label], env=envs[label], input=stdin, text=True,
                                   capture_output=True, check=False)
                    times.setdefault((name, label), []).append((time.perf_counter() - t0) * 1000)
    print(f"| row | before median (p10-p90) ms | after median (p10-p90) ms | after / before |  ({args.runs} runs each, interleaved)")
    print("|---|---|---|---|")
    for name in table:
        cells = []
        med = {}
        for label in trees:
            xs = sorted(times[(name, label)])
            med[label] = statistics.median(xs)
            cells.append(f"{med[label]:.1f} ({xs[len(xs) // 10]:.1f}-{xs[(len(xs) * 9) // 10]:.1f})")
        print(f"| {name} | {cells[0]} | {cells[1]} | {med['after'] / med['before']:.2f} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

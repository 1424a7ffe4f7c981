"""What the remote server's stat-walk refresh (remote/store.py, `Store.refresh`) adds to a read.

    python -m bench.remote_refresh [--files 1000 5000] [--reps 51]

A served folder of --files memory files (a quarter in sub folders), opened as the server opens it.
In process, wall clock, median and spread of --reps: `refresh()` when nothing changed (what
every search, get and pull pays), and when one file was edited by hand (admitted again,
re-indexed, given an `edit` line).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def timed(store: Any, paths: list[Path], reps: int) -> list[float]:
    """`store.refresh()` times in ms, sorted; before each, one of `paths` edited (none: no edit)."""
    xs = []
    for k in range(reps):
        if paths:
            p = paths[k % len(paths)]
            p.write_text(p.read_text().replace("deploy steps", f"deploy steps ({k})"))
        t = time.perf_counter()
        store.refresh()
        xs.append((time.perf_counter() - t) * 1000)
    return sorted(xs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--reps", type=int, default=51)
    a = ap.parse_args()
    from git_memex.core import frontmatter, model
    from git_memex.remote.store import Store

    for n in a.files:
        tmp = Path(tempfile.mkdtemp(prefix="bench-remote-refresh-"))
        os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
        try:
            root = tmp / "served"
            (root / "team").mkdir(parents=True)
            paths = []
            for i in range(n):
                m = model.create(f"Memory {i} about service {i % 97} and its deploy steps", tags=["bench"])
                p = (root / "team" if i % 4 == 0 else root) / f"{m.id}.md"
                p.write_text(frontmatter.serialize(m.fm, m.body))
                paths.append(p)
            store = Store(root)
            try:
                for label, edits in (("nothing changed", False), ("one file edited by hand", True)):
                    xs = timed(store, paths if edits else [], a.reps)
                    q = statistics.quantiles(xs, n=20)
                    print(f"refresh, {n} files, {label}: median {statistics.median(xs):.2f} ms "
                          f"(p5 {q[0]:.2f}, p95 {q[-1]:.2f}, min {xs[0]:.2f}, max {xs[-1]:.2f}, {a.reps} runs)")
            finally:
                store.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""What finding contradictions costs (docs/search.md, "Memories that disagree").

    python -m bench.contradictions [--n 1000] [--rounds 7] [--corpus DIR]

One generated corpus (../shared/bench/gen_corpus.py, seed 1, as `python -m bench`; or the
memory files in --corpus DIR with a queries-N.json beside them) committed in a fresh repository,
indexed once. In one process, with the index fresh:

* search: the CPU time (`time.process_time`) of `ops.search` for every query of the query file,
  each run with the real check among the hits and with the check switched off
  (`review.contradictions.among` returning nothing), one right after the other, in turns which
  first; the sums and their ratio;
* the session block (`agents.session.build_context`, without a query and with every tenth query)
  the same way;
* the whole store's finder (`review.contradictions.contradictions`, what `sync-status`, `doctor`
  and `inventory` run; `audit` runs it over the files): CPU and wall time, the pairs it found,
  and a second run over the unchanged store (its data-root cache).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--corpus", type=Path, default=None, help="a folder of memory files (queries-N.json beside it)")
    args = ap.parse_args(argv)
    if args.corpus is not None:
        mem = args.corpus
        qfile = mem.parent / f"queries-{args.n}.json"
    else:
        from bench.run import ensure_corpus

        mem, qfile = ensure_corpus(args.n, 200)
    queries = [q["query"] if isinstance(q, dict) else str(q) for q in json.loads(qfile.read_text("utf-8"))]
    tmp = Path(tempfile.mkdtemp(prefix="memex-contra-"))
    try:
        os.environ.update(GIT_MEMEX_HOME=str(tmp / "data"), HOME=str(tmp), GIT_CONFIG_NOSYSTEM="1",
                          GIT_CONFIG_GLOBAL=str(tmp / "gitconfig"))
        (tmp / "gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        work = tmp / "w"
        (work / ".ai" / "open-memex").mkdir(parents=True)
        for p in mem.glob("*.md"):
            shutil.copy(p, work / ".ai" / "open-memex" / p.name)
        for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "corpus"]):
            subprocess.run(["git", *cmd], cwd=work, check=True, capture_output=True)
        os.chdir(work)
        from git_memex import ops
        from git_memex.agents.session import build_context
        from git_memex.core.context import load_context
        from git_memex.index.stores import Stores
        from git_memex.review import contradictions

        ctx = load_context()
        real = contradictions.among
        with Stores(ctx) as st:
            st.refresh()
            t, c = time.perf_counter(), time.process_time()
            pairs = contradictions.contradictions(ctx, stores=st)
            finder, finder_cpu = time.perf_counter() - t, time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            contradictions.contradictions(ctx, stores=st)
            cached, cached_cpu = time.perf_counter() - t, time.process_time() - c

            def off(_ctx: Any, _items: Any) -> list[Any]:
                return []

            def timed(state: str, run: Any) -> tuple[float, Any]:
                setattr(contradictions, "among", real if state == "on" else off)  # noqa: B010  (the switch)
                try:
                    t0 = time.process_time()
                    got = run()
                    return time.process_time() - t0, got
                finally:
                    setattr(contradictions, "among", real)  # noqa: B010

            # each query runs with the check and without it, one right after the other (in turns,
            # which first), so a busy machine's drift lands on both sides alike
            cpu = {"search": {"on": 0.0, "off": 0.0}, "block": {"on": 0.0, "off": 0.0}}
            marked = shown = 0
            blocks = [None, *queries[::10]]  # the block without a query, and with every tenth query
            for q in queries:  # warm-up: caches, the scratch table, the secret checks
                ops.search(ctx, q, limit=8, stores=st)
            for r in range(args.rounds):
                for k, q in enumerate(queries):
                    for state in (("on", "off") if (r + k) % 2 == 0 else ("off", "on")):
                        took, out = timed(state, lambda q=q: ops.search(ctx, q, limit=8, stores=st))
                        cpu["search"][state] += took
                        if state == "on" and r == 0:
                            marked += sum(1 for h in out["hits"] if h["contradicts"])
                for k, q in enumerate(blocks):
                    for state in (("on", "off") if (r + k) % 2 == 0 else ("off", "on")):
                        took, got = timed(state, lambda q=q: build_context(ctx, query=q, branch="", changed_paths=[],
                                                                            stores=st))
                        cpu["block"][state] += took
                        if state == "on" and r == 0:
                            shown += len(got.disagreements)
        n = args.rounds * len(queries)
        print(f"corpus: {args.n:,} memories, {len(queries)} queries, {args.rounds} rounds (CPU time)")
        on, offs = cpu["search"]["on"], cpu["search"]["off"]
        print(f"search, a query: with the check {on / n * 1000:.3f} ms, without {offs / n * 1000:.3f} ms, "
              f"x{on / offs:.3f}")
        on, offs = cpu["block"]["on"], cpu["block"]["off"]
        nb = args.rounds * len(blocks)
        print(f"session block:   with the check {on / nb * 1000:.2f} ms, without {offs / nb * 1000:.2f} ms, "
              f"x{on / offs:.3f} (no query, and every tenth query)")
        print(f"hits naming another that disagrees: {marked} over all queries; pairs in the session block: {shown}")
        print(f"whole-store finder: {finder_cpu:.2f} s CPU ({finder:.2f} s wall), {len(pairs)} pair(s); again over the "
              f"unchanged store (its cache): {cached_cpu:.3f} s CPU ({cached:.3f} s wall)")
    finally:
        os.chdir(tempfile.gettempdir())
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

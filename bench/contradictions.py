"""What finding contradictions costs (docs/search.md, "Memories that disagree").

    python -m bench.contradictions [--n 1000] [--rounds 7] [--corpus DIR]

One generated corpus (../shared/bench/gen_corpus.py, seed 1, as `python -m bench`; or the
memory files in --corpus DIR with a queries-N.json beside them) committed in a fresh repository,
indexed once. In one process, with the index fresh:

* search: the CPU time (`time.process_time`) of `ops.search` over every query of the query file,
  in rounds that alternate the real check among the hits with the check switched off
  (`review.contradictions.among` returning nothing); medians of the rounds and their ratio;
* the session block (`agents.session.build_context`, no query) the same way;
* the whole store's finder (`review.contradictions.contradictions`, what `sync-status`, `doctor`
  and `audit` run): wall time and the pairs it found.
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
            t = time.perf_counter()
            pairs = contradictions.contradictions(ctx, stores=st)
            finder = time.perf_counter() - t

            def searches() -> tuple[float, int]:
                marked = 0
                t0 = time.process_time()
                for q in queries:
                    out = ops.search(ctx, q, limit=8, stores=st)
                    marked += sum(1 for h in out["hits"] if h["contradicts"])
                return time.process_time() - t0, marked

            def block() -> tuple[float, int]:
                t0 = time.process_time()
                got = build_context(ctx, branch="", changed_paths=[], stores=st)
                return time.process_time() - t0, len(got.disagreements)

            def off(_ctx: Any, _items: Any) -> list[Any]:
                return []

            rows: dict[str, dict[str, list[float]]] = {"search": {"on": [], "off": []}, "block": {"on": [], "off": []}}
            marked = shown = 0
            searches()  # warm-up: caches, the scratch table, the secret checks
            for _ in range(args.rounds):
                for state in ("on", "off"):
                    setattr(contradictions, "among", real if state == "on" else off)  # noqa: B010  (the switch)
                    try:
                        s, m = searches()
                        b, d = block()
                    finally:
                        contradictions.among = real
                    rows["search"][state].append(s)
                    rows["block"][state].append(b)
                    if state == "on":
                        marked, shown = m, d
        print(f"corpus: {args.n:,} memories, {len(queries)} queries, {args.rounds} rounds (medians; CPU time)")
        for name, per in (("search, every query", rows["search"]), ("session block", rows["block"])):
            on, offm = statistics.median(per["on"]), statistics.median(per["off"])
            unit = f"{on / len(queries) * 1000:.3f} ms a query" if name.startswith("search") else f"{on * 1000:.1f} ms"
            print(f"{name:22} with the check {on:.3f} s, without {offm:.3f} s: x{on / offm:.3f} ({unit})")
        print(f"hits naming another that disagrees: {marked} over all queries; pairs in the session block: {shown}")
        print(f"whole-store finder: {finder:.2f} s, {len(pairs)} pair(s)")
    finally:
        os.chdir(tempfile.gettempdir())
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

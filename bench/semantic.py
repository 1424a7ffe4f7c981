"""The semantic lane on the retrieval sets: lexical alone against lexical + semantic, same store.

    python -m bench.semantic [--dataset openmemex-eval|locomo|synthetic-10k|all] [--json] [--out FILE]
    python -m bench.retrieval --semantic       (the same, from the retrieval bench)

For every set: the memories are written and indexed as bench/retrieval.py does, every query
runs through `git_memex.search.engine.search` once without vectors (lexical) and once after
`semantic.build` (the code `git memex reindex --embeddings` runs): both halves, both runs.
Cost rows: embedding time per 1,000 memories (measured on a fixed sample of the set, since the
vectors themselves are cached), vectors.db size and bytes per memory, in-process query p50/p95
with the lane, the lane's import + model load time in a fresh process, and at 10k the whole
`git-memex search` process and MCP `memory_search` round trips (bench/worker.py's client).

Vectors are cached per set and model in bench/.corpora/semantic/ (keyed by content hash, as the
lane keys them), so only the first run pays the embedding (~25 min for the 10k set on this
2-core machine). Needs the extra: pip install -e '.[semantic]'.
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

from bench.retrieval import DEPTH, Scores, build_store, half_of, load

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".corpora" / "semantic"
SETS = ("openmemex-eval", "locomo", "synthetic-10k")
SAMPLE = 200  # memories embedded for the per-1k figure


def _synthetic(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from bench.run import ensure_corpus
    from git_memex.core.frontmatter import parse

    mem, qfile = ensure_corpus(n, 200)
    mems = []
    for f in sorted(mem.glob("*.md")):
        fm, body = parse(f.read_text(encoding="utf-8"))
        mems.append({"id": f.stem, "text": body.strip(), "tags": fm.get("tags") or [], "type": fm.get("type")})
    qs = [{"id": str(q["qid"]), "query": q["query"], "relevant": [q["relevant"]]}
          for q in json.loads(qfile.read_text(encoding="utf-8"))]
    return mems, qs


def _repo_store(tmp: Path, n: int) -> tuple[Any, dict[str, str], Path, Path]:
    """The synthetic corpus as bench/retrieval.py searches it (and as the issue measured it through
    the CLI): its files copied as they are into a fresh repository's memory folder, so their
    importance, dates and review state count. (stores, id map, work tree, data root)."""
    from bench.retrieval import synthetic_repo
    from bench.run import ensure_corpus
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores

    mem, _q = ensure_corpus(n, 200)
    work, home = synthetic_repo(tmp / "repo", mem), tmp / "home"
    os.environ["GIT_MEMEX_HOME"] = str(home)
    stores = Stores(load_context(work))
    stores.refresh()
    return stores, {}, work, home


def _groups(name: str) -> tuple[list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], int]:
    """[(memories, queries)] per store, and the search limit."""
    if name == "synthetic-10k":
        mems, qs = _synthetic(10_000)
        return [(mems, qs)], 10
    data = load(name)
    by: dict[Any, list[dict[str, Any]]] = {}
    for m in data["memories"]:
        by.setdefault(m.get("group"), []).append(m)
    return [(ms, [q for q in data["queries"] if q.get("group") == g]) for g, ms in by.items()], DEPTH


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(len(s) * p))], 2) if s else 0.0


def score(name: str, whole: int = 15) -> dict[str, Any]:
    from git_memex.search import semantic
    from git_memex.search.engine import search

    stores_groups, limit = _groups(name)
    runs = {"lexical": (Scores(), {"A": Scores(), "B": Scores()}), "semantic": (Scores(), {"A": Scores(), "B": Scores()})}
    embed_s = 0.0
    embedded = memories = vec_bytes = 0
    prov = None
    cost: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memex-semantic-") as tmp:
        for gi, (mems, qs) in enumerate(stores_groups):
            root = Path(tmp) / f"g{gi}"
            if name == "synthetic-10k":
                stores, back, cwd, home = _repo_store(root, 10_000)
            else:
                stores, back = build_store(root, mems)
                cwd = home = root
            try:
                prov = prov or semantic.provider(stores.ctx)
                if prov is None:
                    raise SystemExit("the semantic lane is off: pip install -e '.[semantic]'")
                for lane in ("lexical", "semantic"):
                    if lane == "semantic":
                        cached = CACHE / f"{name}-g{gi}-{prov.name.replace('/', '_')}.db"
                        vp = semantic.vectors_path(stores.repo.path if stores.repo is not None else stores.home.path)
                        if cached.exists():
                            shutil.copyfile(cached, vp)
                        t0 = time.perf_counter()
                        done, total = semantic.build(stores, prov)
                        embed_s += time.perf_counter() - t0
                        embedded += done
                        memories += total
                        cached.parent.mkdir(parents=True, exist_ok=True)
                        v = semantic.Vectors(vp)
                        v.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                        v.close()
                        shutil.copyfile(vp, cached)
                        vec_bytes += vp.stat().st_size
                    total_s, halves = runs[lane]
                    for q in qs:
                        t0 = time.perf_counter()
                        res = search(stores, q["query"], limit=limit, refresh=False)
                        dt = (time.perf_counter() - t0) * 1000
                        ranked = [back.get(h.id, h.id) for h in res.hits]
                        for s in (total_s, halves[half_of(q["id"])]):
                            s.add(ranked, set(q["relevant"]))
                            s.latencies_ms.append(dt)
            finally:
                stores.close()
            if name == "synthetic-10k":
                cost.update(_process_costs(cwd, home, qs, whole))
        assert prov is not None
        sample = [m["text"] for g in stores_groups for m in g[0]][:SAMPLE]
        t0 = time.perf_counter()
        for i in range(0, len(sample), semantic.BATCH):
            prov.passages(sample[i : i + semantic.BATCH])
        per_1k = (time.perf_counter() - t0) / len(sample) * 1000
    out: dict[str, Any] = {"dataset": name, "model": prov.name, "limit": limit}
    for lane, (total_s, halves) in runs.items():
        out[lane] = {"all": total_s.summary(), "half_A": halves["A"].summary(), "half_B": halves["B"].summary()}
    out["cost"] = {"embed_s_per_1k": round(per_1k, 1), "embedded_now": embedded, "embed_now_s": round(embed_s, 1),
                   "memories": memories, "vectors_mb": round(vec_bytes / 1e6, 2),
                   "vector_bytes_per_memory": round(vec_bytes / max(memories, 1), 1), **cost}
    return out


def _process_costs(root: Path, home: Path, qs: list[dict[str, Any]], whole: int) -> dict[str, Any]:
    """Import + model load of the lane in a fresh process; whole `git-memex search` process; MCP.
    `root`: where the commands run; `home`: the data root."""
    env = {**os.environ, "GIT_MEMEX_HOME": str(home), "GIT_MEMEX_PROGRESS": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    probe = ("import time; t0 = time.perf_counter()\n"
             "from git_memex.core.context import load_context\nfrom git_memex.search import semantic\n"
             "p = semantic.provider(load_context()); t1 = time.perf_counter(); p.query('warm up the model')\n"
             "t2 = time.perf_counter(); print((t1 - t0) * 1000, (t2 - t1) * 1000)")
    loads, firsts = [], []
    for _ in range(5):
        r = subprocess.run([sys.executable, "-c", probe], cwd=root, env=env, capture_output=True, text=True, check=True)
        a, b = r.stdout.split()
        loads.append(float(a))
        firsts.append(float(b))
    exe = shutil.which("git-memex") or str(Path(sys.executable).with_name("git-memex"))
    off = {**env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "memex.embeddingModel", "GIT_CONFIG_VALUE_0": "off"}
    times: list[float] = []
    times_off: list[float] = []
    for i in range(whole + 1):
        for e, into in ((env, times), (off, times_off)):
            t0 = time.perf_counter()
            subprocess.run([exe, "search", qs[i % len(qs)]["query"], "--limit", "10", "--json"], cwd=root, env=e,
                           capture_output=True, check=True)
            if i:  # the first run warms the page cache and writes .pyc files
                into.append((time.perf_counter() - t0) * 1000)
    qfile = home / "queries.json"
    qfile.write_text(json.dumps([{"query": q["query"]} for q in qs]), encoding="utf-8")
    from bench.worker import mcp_bench

    os.environ.update({"GIT_MEMEX_HOME": str(home)})
    m = mcp_bench({"repo": str(root), "queries": str(qfile), "command": [exe], "spawns": 1, "calls": 60})
    return {"lane_import_load_ms": round(statistics.median(loads), 1), "first_query_ms": round(statistics.median(firsts), 1),
            "search_process_median_ms": round(statistics.median(times), 1),
            "search_process_min_max_ms": [round(min(times), 1), round(max(times), 1)],
            "search_process_median_ms_lane_off": round(statistics.median(times_off), 1),
            "mcp_search_p50_ms": m["search_ms"]["p50"], "mcp_search_p95_ms": m["search_ms"]["p95"],
            "mcp_errors": m["errors"]}


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| dataset | lane | run | queries | R@1 | R@5 | R@10 | MRR | p50 ms | p95 ms |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for lane in ("lexical", "semantic"):
            for run in ("all", "half_A", "half_B"):
                s = r[lane][run]
                lines.append(f"| {r['dataset']} | {lane} | {run} | {s['queries']} | {s['R@1']:.3f} | {s['R@5']:.3f} | "
                             f"{s['R@10']:.3f} | {s['MRR']:.3f} | {s['p50_ms']} | {s['p95_ms']} |")
    lines += ["", "| dataset | cost | value |", "|---|---|---|"]
    for r in results:
        for k, v in r["cost"].items():
            lines.append(f"| {r['dataset']} | {k} | {v} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.semantic", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=(*SETS, "all"), default="all")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", help="also write the table to this markdown file")
    args = ap.parse_args(argv)
    os.environ.setdefault("GIT_MEMEX_PROGRESS", "0")
    results = [score(n) for n in (SETS if args.dataset == "all" else (args.dataset,))]
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(markdown(results))
    if args.out:
        Path(args.out).write_text("# The semantic lane on the retrieval sets\n\n`python -m bench.semantic`\n\n"
                                  + markdown(results) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

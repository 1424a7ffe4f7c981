"""Retrieval quality of git-memex's real search on the shared datasets.

    python -m bench.retrieval [--dataset openmemex-eval|locomo|all] [--groups N] [--misses] [--json]

Every memory of a dataset is written as a real memory file (our model and serialiser, with
its tags, type, capture-time aliases and alias/target vocabulary) into a temporary data
root, indexed by our index code, and every query runs through `git_memex.search.engine.search`,
the function `git memex search` and the MCP server call. Nothing is re-implemented here.

- LoCoMo: each conversation (`group`) gets a data root of its own, and its queries search
  only that store, as the README's baseline does.
- All memories get the same creation time, so the recency boost (a real-use signal that the
  datasets' dates do not stand for) is the same for every memory.
- Metrics as in ../shared/bench/retrieval_baseline.py: R@k = share of queries with a relevant
  memory in the top k; MRR over the top 50; evR@k = mean share of a query's relevant memories
  in the top k. Queries are also scored by half (a stable hash of the query id), to show that
  nothing was tuned to a particular set of queries: both halves must move together.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = (ROOT.parent / "shared" / "bench" / "retrieval").resolve()
DEPTH = 50
FIXED_TIME = "2026-01-01T00:00:00Z"

# The README's figures for ../shared/bench/retrieval_baseline.py (plain FTS5 BM25).
BASELINE = {
    "openmemex-eval": {"R@1": 0.705, "R@5": 0.795, "R@10": 0.795, "MRR": 0.739},
    "locomo": {"R@1": 0.338, "R@5": 0.581, "R@10": 0.671, "MRR": 0.452},
}
REFERENCE = {"openmemex-eval": {"R@1": 0.750, "R@5": 0.977, "MRR": 0.857}}  # open-memex (TypeScript), reported
TARGETS = {"openmemex-eval": {"R@5": 0.98, "MRR": 0.90}, "locomo": {"R@5": 0.581, "MRR": 0.452}}


@dataclass
class Scores:
    n: int = 0
    r1: float = 0.0
    r5: float = 0.0
    r10: float = 0.0
    mrr: float = 0.0
    ev5: float = 0.0
    ev10: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], relevant: set[str]) -> int | None:
        self.n += 1
        first = next((i for i, mid in enumerate(ranked[:DEPTH], 1) if mid in relevant), None)
        if first is not None:
            self.r1 += first <= 1
            self.r5 += first <= 5
            self.r10 += first <= 10
            self.mrr += 1.0 / first
        self.ev5 += len(relevant & set(ranked[:5])) / len(relevant)
        self.ev10 += len(relevant & set(ranked[:10])) / len(relevant)
        return first

    def summary(self) -> dict[str, float]:
        n = max(self.n, 1)
        lat = sorted(self.latencies_ms)
        return {
            "queries": self.n,
            "R@1": round(self.r1 / n, 3),
            "R@5": round(self.r5 / n, 3),
            "R@10": round(self.r10 / n, 3),
            "MRR": round(self.mrr / n, 3),
            "evR@5": round(self.ev5 / n, 3),
            "evR@10": round(self.ev10 / n, 3),
            "p50_ms": round(statistics.median(lat), 3) if lat else 0.0,
            "p95_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.95))], 3) if lat else 0.0,
        }


def half_of(query_id: str) -> str:
    return "A" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "B"


def load(name: str) -> dict[str, Any]:
    path = DATA_DIR / f"{name}.json"
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def build_store(root: Path, memories: Iterable[dict[str, Any]]) -> tuple[Any, dict[str, str]]:
    """Write the memories as files under a fresh data root and index them; (stores, ulid -> dataset id)."""
    from git_memex.core import frontmatter, model
    from git_memex.core.paths import Context
    from git_memex.index.stores import Stores

    ctx = Context(data_root=root, cwd=root, repo=None, config={})
    folder = ctx.personal_dir
    folder.mkdir(parents=True, exist_ok=True)
    back: dict[str, str] = {}
    for mem in memories:
        extra: dict[str, Any] = {}
        for key in ("aliases", "alias", "target"):
            if mem.get(key):
                extra[key] = mem[key]
        mtype = mem.get("type") if mem.get("type") in model.TYPES else "fact"
        m = model.create(mem["text"], scope="personal", type=mtype, tags=list(mem.get("tags") or []),
                         source="import", extra=extra)  # fmt: skip
        m.fm["created_at"] = m.fm["updated_at"] = FIXED_TIME
        # the bytes write_memory would write, without its per-file fsync (thousands of files)
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
        back[m.id] = mem["id"]
    stores = Stores(ctx)
    stores.refresh()
    return stores, back


def baseline_scores(data: dict[str, Any], group_names: list[str | None]) -> dict[str, float]:
    """The README's FTS5 baseline (../shared/bench/retrieval_baseline.py, imported, not copied),
    measured on exactly these groups: the fair comparison for a subset."""
    import importlib.util
    import sqlite3

    spec = importlib.util.spec_from_file_location("retrieval_baseline", DATA_DIR.parent / "retrieval_baseline.py")
    assert spec is not None and spec.loader is not None
    rb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rb)
    wanted = set(group_names)
    mems = [m for m in data["memories"] if m.get("group") in wanted]
    queries = [q for q in data["queries"] if q.get("group") in wanted]
    conn = sqlite3.connect(":memory:")
    with conn:
        grouped, tables = rb.build_index(conn, mems, False)
    rows = []
    for q in queries:
        table = tables.get(q.get("group", "") if grouped else "")
        rows.append(rb.score(rb.search(conn, table, q["query"], DEPTH), q["relevant"], DEPTH))
    s = rb.summarize(rows)
    pick = {"R@1": ("r@1", "R@1"), "R@5": ("r@5", "R@5"), "R@10": ("r@10", "R@10"), "MRR": ("mrr", "MRR")}
    out = {}
    for k, names in pick.items():
        for n in names:
            if n in s:
                out[k] = round(float(s[n]), 3)
                break
    return out


def score_dataset(name: str, *, groups: int | None = None, misses: bool = False,
                  query_filter: Any = None) -> dict[str, Any]:  # fmt: skip
    from git_memex.search.engine import search

    data = load(name)
    by_group: dict[str | None, list[dict[str, Any]]] = {}
    for mem in data["memories"]:
        by_group.setdefault(mem.get("group"), []).append(mem)
    group_names = list(by_group)
    subset = groups is not None and groups < len(group_names)
    if groups is not None:
        group_names = group_names[:groups]
    total, halves = Scores(), {"A": Scores(), "B": Scores()}
    cats: dict[str, Scores] = {}
    missed: list[dict[str, Any]] = []
    t_build = 0.0
    with tempfile.TemporaryDirectory(prefix="memex-retrieval-") as tmp:
        for gi, g in enumerate(group_names):
            t0 = time.perf_counter()
            stores, back = build_store(Path(tmp) / f"g{gi}", by_group[g])
            t_build += time.perf_counter() - t0
            try:
                for q in data["queries"]:
                    if q.get("group") != g or (query_filter is not None and not query_filter(q)):
                        continue
                    t0 = time.perf_counter()
                    res = search(stores, q["query"], limit=DEPTH, refresh=False)
                    dt = (time.perf_counter() - t0) * 1000
                    ranked = [back.get(h.id, h.id) for h in res.hits]
                    rel = set(q["relevant"])
                    for s in (total, halves[half_of(q["id"])], cats.setdefault(q.get("category", "-"), Scores())):
                        first = s.add(ranked, rel)
                        s.latencies_ms.append(dt)
                    if misses and (first is None or first > 1):
                        missed.append({"id": q["id"], "query": q["query"], "rank": first, "relevant": q["relevant"],
                                       "top": ranked[:3]})  # fmt: skip
            finally:
                stores.close()
    out: dict[str, Any] = {
        "dataset": name,
        "groups": len(group_names),
        "all": total.summary(),
        "half_A": halves["A"].summary(),
        "half_B": halves["B"].summary(),
        "by_category": {c: s.summary() for c, s in sorted(cats.items())},
        "build_s": round(t_build, 2),
        "baseline": baseline_scores(data, group_names) if subset else BASELINE.get(name),
        "baseline_measured_on_subset": subset,
        "target": TARGETS.get(name),
    }
    if misses:
        out["misses"] = missed
    return out


def check_targets(res: dict[str, Any]) -> list[str]:
    """Targets not met (empty = all met). openmemex: R@5 >= 0.98 and MRR >= 0.90; locomo: beat the baseline."""
    name = res["dataset"]
    got = res["all"]
    fails = []
    if name == "openmemex-eval":
        for k, v in TARGETS[name].items():
            if got[k] < v:
                fails.append(f"{name} {k} {got[k]} < {v}")
    elif name == "locomo":
        base = res["baseline"] or TARGETS[name]
        for k in ("R@5", "MRR"):
            if got[k] <= base[k]:
                fails.append(f"{name} {k} {got[k]} <= baseline {base[k]}")
    return fails


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| dataset | run | queries | R@1 | R@5 | R@10 | MRR | evR@5 | evR@10 | p50 ms | p95 ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in results:
        name = r["dataset"] + (f" ({r['groups']} groups)" if r["dataset"] == "locomo" else "")
        base = r.get("baseline")
        if base:
            which = "FTS5 baseline (same groups, shared scorer)" if r.get("baseline_measured_on_subset") else "FTS5 baseline (README)"
            lines.append(f"| {name} | {which} | | {base['R@1']:.3f} | {base['R@5']:.3f} | {base['R@10']:.3f} "
                         f"| {base['MRR']:.3f} | | | | |")  # fmt: skip
        ref = REFERENCE.get(r["dataset"])
        if ref:
            lines.append(f"| {name} | open-memex TS (reported) | | {ref['R@1']:.3f} | {ref['R@5']:.3f} | | {ref['MRR']:.3f} | | | | |")
        for label, key in (("git-memex", "all"), ("git-memex, half A", "half_A"), ("git-memex, half B", "half_B")):
            s = r[key]
            lines.append(f"| {name} | {label} | {s['queries']} | {s['R@1']:.3f} | {s['R@5']:.3f} | {s['R@10']:.3f} "
                         f"| {s['MRR']:.3f} | {s['evR@5']:.3f} | {s['evR@10']:.3f} | {s['p50_ms']} | {s['p95_ms']} |")  # fmt: skip
    return "\n".join(lines)


def write_markdown(path: Path, results: list[dict[str, Any]]) -> None:
    import platform
    import sqlite3

    lines = ["# Retrieval quality of git-memex search", "",
             f"`python -m bench.retrieval --out {path.name}`; Python {platform.python_version()}, SQLite "
             f"{sqlite3.sqlite_version}. Metrics over depth {DEPTH}; latency = one `search()` call with limit "
             f"{DEPTH}, in process. Halves A/B split the queries by a hash of their id.", "", markdown(results), ""]  # fmt: skip
    for r in results:
        lines += [f"## {r['dataset']} by category", "", "| category | queries | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|"]
        for c, sc in r["by_category"].items():
            lines.append(f"| {c} | {sc['queries']} | {sc['R@1']:.3f} | {sc['R@5']:.3f} | {sc['R@10']:.3f} | {sc['MRR']:.3f} |")
        lines.append("")
    fails = [f for r in results for f in check_targets(r)]
    lines.append("Targets: " + ("all met." if not fails else "; ".join(fails) + "."))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--dataset", choices=("openmemex-eval", "locomo", "all"), default="all")
    ap.add_argument("--groups", type=int, default=None, help="locomo: only the first N conversations")
    ap.add_argument("--misses", action="store_true", help="list queries whose first relevant hit is not at rank 1")
    ap.add_argument("--categories", action="store_true", help="also print the figures per query category")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", help="also write the table (with categories) to this markdown file")
    ap.add_argument("--semantic", action="store_true",
                    help="lexical against lexical + the semantic lane on every set, with cost rows (bench/semantic.py)")
    args = ap.parse_args(argv)
    if args.semantic:
        from bench import semantic

        return semantic.main([*(["--json"] if args.json else []), *(["--out", args.out] if args.out else [])])
    names = ["openmemex-eval", "locomo"] if args.dataset == "all" else [args.dataset]
    results = [score_dataset(n, groups=args.groups if n == "locomo" else None, misses=args.misses) for n in names]
    if args.json:
        json.dump(results, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(markdown(results))
        for r in results:
            if args.categories:
                print(f"\n{r['dataset']} by category:")
                for c, s in r["by_category"].items():
                    print(f"  {c:22} n={s['queries']:4} R@1 {s['R@1']:.3f} R@5 {s['R@5']:.3f} R@10 {s['R@10']:.3f} MRR {s['MRR']:.3f}")
            for m in r.get("misses", []):
                print(f"  miss {m['id']}: rank {m['rank']}  {m['query']!r}  want {m['relevant']} got {m['top']}")
        fails = [f for r in results for f in check_targets(r)]
        print("\ntargets: " + ("all met" if not fails else "; ".join(fails)))
    if args.out:
        write_markdown(Path(args.out), results)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GIT_MEMEX_PROGRESS", "0")
    raise SystemExit(main())

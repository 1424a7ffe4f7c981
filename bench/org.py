"""Org memory at scale (docs/org.md, issue 16 item 5): an org repo of N memories, subscribed from a project.

    python -m bench.org [--sizes 1000,10000,100000] [--reps 9] [--out FILE] [--corpus auto|shared|builtin]

Corpus: `../shared/bench/gen_corpus.py` (seed 1, 15% Chinese, cached in bench/.corpora/ like
`python -m bench`) with `scope: org`, spread over four subfolders (engineering/, decisions/,
lessons/, policies/), and its query file; without ../shared, a built-in generator (18-word bodies
from 25 words, 20 fixed two-word queries) and the output says so.

For each size, whole processes unless marked: `org add` (clone + index, once); `git-memex search`
(median and min–max of --reps after one warm-up, cycling through the query file); search
in-process (a child process searching every query of the query file once through the
engine, the org index checked by its clone's commit: p50 and p95); `reindex` (every file
stat-checked, median of 3); `org pull` of 100 changed org memories (median of 3 rounds, each
editing 100 other files; the receipt is checked). Machine reference rows, taken before and
after: a `git --version` process, a `python -c pass` process and a fixed pure-Python loop in
this process, and a `git-memex --version` process (what any command pays to start), so the
figures read as ratios on a shared, noisy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
MEM = ".ai/open-memex"
FOLDERS = ("engineering", "decisions", "lessons", "policies")
TARGETS = {"search": 150.0, "inproc_p95": 50.0, "pull": 1000.0}  # ms at 100k (issue 16)

WORDS = ["service", "deploy", "cache", "retry", "queue", "token", "schema", "index", "shard", "replica", "latency",
         "budget", "alert", "rollback", "canary", "migration", "lint", "review", "owner", "policy", "secret",
         "vault", "backup", "restore", "metric"]


# ------------------------------------------------------------------ corpus
def builtin_file(rng: random.Random, i: int, extra: str = "") -> tuple[str, str]:
    """(file name, text) of the built-in generator's memory number i."""
    mid = f"01JBENCH{i:018d}"
    body = " ".join(rng.choice(WORDS) for _ in range(18)) + f" item{i}." + extra
    return f"{mid}.md", (f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: fact\nstatus: active\n"
                         f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{body}\n")


def corpus(n: int, dest: Path, which: str = "auto") -> tuple[str, list[str], list[str]]:
    """Write n org memories under dest (the seed's memory folder, four subfolders). Returns (which
    generator, the queries, the files' paths relative to dest in a fixed order)."""
    from bench.run import GEN, ensure_corpus

    for f in FOLDERS:
        (dest / f).mkdir(parents=True, exist_ok=True)
    rel: list[str] = []
    if which == "shared" and not GEN.exists():
        raise SystemExit(f"bench.org: {GEN} not found (the shared corpus generator)")
    if GEN.exists() and which != "builtin":
        mem, qfile = ensure_corpus(n, 200)
        for i, src in enumerate(sorted(mem.glob("*.md"))):
            r = f"{FOLDERS[i % len(FOLDERS)]}/{src.name}"
            text = src.read_text(encoding="utf-8").replace("\nscope: project\n", "\nscope: org\n", 1)
            (dest / r).write_text(text, encoding="utf-8")
            rel.append(r)
        queries = [q["query"] for q in json.loads(qfile.read_text(encoding="utf-8"))]
        return f"{GEN.name} (seed 1, 15% Chinese)", queries, rel
    rng = random.Random(n)
    for i in range(n):
        name, text = builtin_file(rng, i)
        r = f"{FOLDERS[i % len(FOLDERS)]}/{name}"
        (dest / r).write_text(text, encoding="utf-8")
        rel.append(r)
    qr = random.Random(1)
    queries = [f"{a} {b}" for a, b in (qr.sample(WORDS, 2) for _ in range(20))]
    why = "asked for" if which == "builtin" else "../shared/bench/gen_corpus.py not found"
    return f"built-in ({why})", queries, rel


# ------------------------------------------------------------------ processes
def environment(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp / "home"), "GIT_MEMEX_HOME": str(tmp / "data"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e", "GIT_MEMEX_PROGRESS": "0", "LC_ALL": "C.UTF-8"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users run with cached bytecode (bench/README.md)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # `git memex` finds ours
    (tmp / "home").mkdir(exist_ok=True)
    return env


CPU: list[float] = []  # CPU ms (user + system) of the last process `sh` ran, with the children it waited for


def sh(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(wall ms, stdout) of one process, which must succeed; its CPU time goes to CPU[-1]."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        ms = (time.perf_counter() - t) * 1000
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed (exit {p.returncode}): {err.read().decode()[:400]}")
        CPU.append((ru.ru_utime + ru.ru_stime) * 1000)
        return ms, out.read().decode("utf-8", "replace")


def timed(args: list[str], cwd: Path, env: dict[str, str], reps: int = 1, vary: Any = None) -> dict[str, float]:
    """Wall-clock spread of `reps` runs of a process, with the median CPU time (user + system, the
    process and the git processes it ran): CPU time varies far less than wall time on a busy machine."""
    walls, cpus = [], []
    for i in range(reps):
        walls.append(sh(vary(i) if vary else args, cwd, env)[0])
        cpus.append(CPU[-1])
    return {**spread(walls), "cpu": statistics.median(cpus)}


def memex_cmd() -> list[str]:
    script = Path(sys.executable).with_name("git-memex")
    return [str(script)] if script.exists() else [sys.executable, "-m", "git_memex"]


def spread(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    return {"median": statistics.median(s), "min": s[0], "max": s[-1], "n": len(s)}


def reference(reps: int = 11) -> dict[str, dict[str, float]]:
    """How fast this machine is right now: a `git --version` process, a `python -c pass` process
    (the interpreter's start, no git-memex), and a fixed pure-Python loop in this process."""
    def loop() -> float:  # the same steps every time: only the machine's speed changes it
        t = time.perf_counter()
        acc = 0
        for i in range(1_000_000):
            acc += i * i % 7
        return (time.perf_counter() - t) * 1000
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cwd = Path.cwd()
    return {"git --version": timed(["git", "--version"], cwd, env, reps),
            "python -c pass": timed([sys.executable, "-S", "-c", "pass"], cwd, env, reps),
            "git-memex --version (start-up floor)": timed([*memex_cmd(), "--version"], cwd, env, reps),
            "pure-Python loop (10^6 steps)": spread([loop() for _ in range(5)])}


# ------------------------------------------------------------------ in-process search (child)
def inproc(work: str, qfile: str) -> dict[str, Any]:
    """Every query of the file once through the engine, in this process, the way the MCP server
    searches: one open Stores, the freshness check included (for the org index, its clone's commit)."""
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores
    from git_memex.search.engine import search

    queries = json.loads(Path(qfile).read_text(encoding="utf-8"))
    ctx = load_context(Path(work))
    lat: list[float] = []
    cpu: list[float] = []
    with Stores(ctx) as st:
        search(st, queries[0], scope="all")  # warm-up: the scratch tables, the first page reads
        for q in queries:
            t0, c0 = time.perf_counter(), time.process_time()
            search(st, q, scope="all")
            lat.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)

    def p95(xs: list[float]) -> float:
        return sorted(xs)[min(len(xs) - 1, int(len(xs) * 0.95))]
    return {"p50": statistics.median(lat), "p95": p95(lat), "max": max(lat), "n": len(lat), "cpu_p95": p95(cpu)}


# ------------------------------------------------------------------ one size
def edit(dest: Path, rel: list[str], start: int, tag: str) -> None:
    """Change the body of 100 files spread over the corpus and over the four folders (`rel` is in
    corpus order, the folders taking turns): every folder's git tree changes, as in a real pull."""
    n = len(rel)
    step = max(1, n // 100)
    picked = dict.fromkeys((start + k * step + k) % n for k in range(100))
    picked.update(dict.fromkeys(i for i in range(n) if i not in picked))  # tiny corpora: fill up in order
    for i in list(picked)[:100]:
        p = dest / rel[i]
        p.write_text(p.read_text(encoding="utf-8").rstrip("\n") + f" Changed in round {tag}.\n", encoding="utf-8")


def bench(n: int, reps: int, tmp: Path, which: str = "auto") -> dict[str, Any]:
    env = environment(tmp)
    memex = memex_cmd()
    remote, seed, work = tmp / "org.git", tmp / "seed", tmp / "work"
    sh(["git", "init", "-q", "--bare", "-b", "main", str(remote)], tmp, env)
    sh(["git", "clone", "-q", str(remote), str(seed)], tmp, env)
    dest = seed / MEM
    which, queries, rel = corpus(n, dest, which)

    def push(message: str) -> None:
        for args in (["add", "-A"], ["commit", "-q", "-m", message], ["push", "-q", "origin", "main"]):
            sh(["git", *args], seed, env)
    push("seed")
    work.mkdir()
    sh(["git", "init", "-q", "-b", "main"], work, env)
    out: dict[str, Any] = {"n": n, "corpus": which, "queries": len(queries)}
    out["org add (clone + index)"] = timed([*memex, "org", "add", "acme", str(remote)], work, env)
    # the machine's speed at the same moment: a `git-memex --version` process after each timed one
    floor: list[float] = []

    def ref() -> None:
        floor.append(sh([*memex, "--version"], work, env)[0])
    sh(["git", "memex", "search", queries[0]], work, env)  # warm-up
    walls, cpus = [], []
    for i in range(1, reps + 1):
        walls.append(sh(["git", "memex", "search", queries[i % len(queries)]], work, env)[0])
        cpus.append(CPU[-1])
        ref()
    out["`git memex search`, whole process"] = {**spread(walls), "cpu": statistics.median(cpus)}
    qfile = tmp / "queries.json"
    qfile.write_text(json.dumps(queries), encoding="utf-8")
    _, got = sh([sys.executable, "-m", "bench.org", "--inproc", str(work), str(qfile)], BENCH_DIR.parent, env)
    out["search in-process"] = json.loads(got)
    out["reindex (stat every file)"] = timed([*memex, "reindex"], work, env, 3)
    pulls, cpus = [], []
    for r in range(3):
        edit(dest, rel, r, f"{n}-{r}")
        push(f"100 changed, round {r}")
        ms, receipt = sh([*memex, "org", "pull", "--json"], work, env)
        got_r = json.loads(receipt)["orgs"][0]
        if len(got_r["changed"]) != 100 or got_r["reindexed"]["changed"] != 100:
            raise RuntimeError(f"org pull did not report 100 changed files: {got_r['reindexed']}")
        pulls.append(ms)
        cpus.append(CPU[-1])
        ref()
    out["org pull, 100 changed"] = {**spread(pulls), "cpu": statistics.median(cpus)}
    out[FLOOR] = spread(floor)
    return out


# ------------------------------------------------------------------ report
def fmt(ms: float) -> str:
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.1f} ms"


def cell(d: dict[str, Any]) -> str:
    if "p95" in d:
        return f"{fmt(d['p50'])} / p95 {fmt(d['p95'])}" + (f", CPU p95 {fmt(d['cpu_p95'])}" if "cpu_p95" in d else "")
    text = fmt(d["median"]) if d["n"] == 1 else f"{fmt(d['median'])} ({fmt(d['min'])}–{fmt(d['max'])})"
    return text + (f", CPU {fmt(d['cpu'])}" if "cpu" in d else "")


def key(d: dict[str, Any]) -> float:
    return float(d["p95"] if "p95" in d else d["median"])


def cpu(d: dict[str, Any]) -> float:
    return float(d["cpu_p95"] if "cpu_p95" in d else d["cpu"])


FLOOR = "`git-memex --version`, after each search and pull"
ROWS = ["org add (clone + index)", "`git memex search`, whole process", "search in-process", "reindex (stat every file)",
        "org pull, 100 changed"]


def report(results: list[dict[str, Any]], before: dict[str, Any], after: dict[str, Any], reps: int) -> str:
    L = [f"Corpus: {results[0]['corpus']}; {results[0]['queries']} queries. Whole processes: wall-clock median "
         f"(min–max) of {reps} searches after a warm-up, of 3 reindexes, of 3 pulls, and the median CPU time (user + "
         "system, with the git processes it ran); in-process: p50 / p95 over the query file.", ""]
    L.append("| row | " + " | ".join(f"{r['n']:,} org memories" for r in results) + " |")
    L.append("|---|" + "---|" * len(results))
    for row in [*ROWS, FLOOR]:
        L.append(f"| {row} | " + " | ".join(cell(r[row]) for r in results) + " |")
    L += ["", "Machine reference (median, min–max; before / after the run):", "",
          "| reference | before | after |", "|---|---|---|"]
    for k in before:
        L.append(f"| {k} | {cell(before[k])} | {cell(after[k])} |")
    big = results[-1]
    floor = big[FLOOR]["median"]
    checks = [("`git memex search`, whole process", "median", "search", big["`git memex search`, whole process"]),
              ("search in-process", "p95", "inproc_p95", big["search in-process"]),
              ("org pull, 100 changed", "median", "pull", big["org pull, 100 changed"])]
    L += ["", f"Targets (issue 16) at {big['n']:,}. Wall clock as measured; CPU time (what the same work costs "
          "of the process and the git processes it waited for: on an idle machine the wall time is close to it); and the wall time in units of the `git-memex "
          f"--version` processes run between the timed ones ({floor:.1f} ms), target likewise:", "",
          "| target | wall | met | CPU | met | × `git-memex --version` (target) |", "|---|---|---|---|---|---|"]
    for row, stat, t, d in checks:
        wall = d["p95"] if stat == "p95" else d["median"]
        c = d["cpu_p95"] if stat == "p95" else d["cpu"]
        L.append(f"| {row} {stat} < {fmt(TARGETS[t])} | {fmt(wall)} | {'yes' if wall < TARGETS[t] else '**no**'} "
                 f"| {fmt(c)} | {'yes' if c < TARGETS[t] else '**no**'} | {wall / floor:.1f} ({TARGETS[t] / floor:.1f}) |")
    if len(results) > 1:
        first = results[0]
        L += ["", f"Cost growth against {first['n']:,}: wall median (p95 in-process), and CPU time in brackets:", "",
              "| row | " + " | ".join(f"{r['n']:,}" for r in results[1:]) + " |", "|---|" + "---|" * (len(results) - 1)]
        for row in ROWS:
            L.append(f"| {row} | " + " | ".join(f"×{key(r[row]) / key(first[row]):.1f} (×{cpu(r[row]) / cpu(first[row]):.1f})"
                                                  for r in results[1:]) + " |")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--inproc"]:
        print(json.dumps(inproc(argv[1], argv[2])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--out", default=None, help="also write the report (markdown) and the raw figures (FILE.json)")
    ap.add_argument("--corpus", choices=("auto", "shared", "builtin"), default="auto",
                    help="shared: ../shared/bench/gen_corpus.py; builtin: the generator here; auto: shared when present")
    ap.add_argument("--keep", default=None, help="build the workspaces under this folder and keep them")
    a = ap.parse_args(argv)
    before = reference()
    results = []
    for n in (int(s) for s in a.sizes.split(",")):
        print(f"bench.org: {n:,} org memories", file=sys.stderr, flush=True)
        if a.keep:
            tmp = Path(a.keep) / f"n{n}"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            results.append(bench(n, a.reps, tmp, a.corpus))
        else:
            with tempfile.TemporaryDirectory(prefix="memex-bench-org-") as d:
                results.append(bench(n, a.reps, Path(d), a.corpus))
        for row in ROWS:
            print(f"  {row:28} {cell(results[-1][row])}", file=sys.stderr, flush=True)
    after = reference()
    text = report(results, before, after, a.reps)
    print(text)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
        Path(a.out).with_suffix(".json").write_text(json.dumps({"results": results, "reference_before": before,
                                                                "reference_after": after}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

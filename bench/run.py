"""git-memex benchmarks: `python -m bench [--quick] [--smoke] [--sizes 1000,10000,100000] [--out DIR]`.

For each corpus size it generates memories with ../shared/bench/gen_corpus.py (cached in
bench/.corpora/), commits them to a bare origin, makes two clones, and measures what a user
waits for as whole processes (`git memex …`, the git hook, the merge driver, the MCP server
over stdio) and the rest in-process (search latency over the corpus's query file). Every
figure is a median with its spread over repeated runs; whole-process runs follow one
warm-up run and have PYTHONDONTWRITEBYTECODE removed from their environment, so they use
cached .pyc files as an installed git-memex does.

Writes DIR/results.md (the table, the machine, the targets), DIR/results.json (raw figures)
and DIR/latency.png (matplotlib, the `[bench]` extra; skipped with a note when missing).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import json
import os
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
GEN = (ROOT.parent / "shared" / "bench" / "gen_corpus.py").resolve()
CORPORA = BENCH_DIR / ".corpora"
MEMORY_DIR = ".ai/open-memex"


# ------------------------------------------------------------------ configuration
@dataclass
class Mode:
    name: str
    sizes: list[int]
    reps: int  # whole-process repeats (after one warm-up)
    reps_slow: int  # repeats of slow operations (cold rebuild at >= 50k)
    edits: int  # rounds of "10 changed files" (incremental reindex, post-merge)
    search_cli: int  # whole-process searches
    passes: int  # in-process passes over the query file
    refresh_queries: int  # in-process searches that include the freshness scan
    mcp_spawns: int
    mcp_calls: int
    queries: int  # queries in the generated query file


MODES = {
    "smoke": Mode("smoke", [200], 1, 1, 1, 2, 1, 5, 1, 5, 20),
    "quick": Mode("quick", [1000, 10000], 3, 2, 3, 10, 1, 30, 1, 40, 200),
    "full": Mode("full", [1000, 10000, 100000], 5, 3, 5, 20, 3, 100, 3, 200, 200),
}

# (row id, label, unit, kind) in table order. kind: proc = whole process, inproc = in one process.
ROWS: list[tuple[str, str, str]] = [
    ("reindex_full", "`reindex --full`, cold (from markdown)", "proc"),
    ("reindex_noop", "`reindex`, nothing changed", "proc"),
    ("reindex_incr", "`reindex` after 10 changed files", "proc"),
    ("post_merge", "post-merge hook after `git pull` of 10 changed files", "proc"),
    ("git_pull_hooked", "`git pull` of 10 changed files, our hook installed", "proc"),
    ("search_git", "`git memex search` (via git)", "proc"),
    ("search_cli", "`git-memex search` (direct)", "proc"),
    ("search_inproc", "search in-process, index fresh", "inproc"),
    ("search_inproc_refresh", "search in-process incl. the stat freshness check", "inproc"),
    ("refresh_noop", "freshness check alone: stat of every file (CLI process)", "inproc"),
    ("refresh_watched", "freshness check alone: watched folder (long-lived process)", "inproc"),
    ("add", "`git memex add`", "proc"),
    ("merge_driver", "`git-memex merge-driver` (one 3-way file)", "proc"),
    ("context", "`context --hook claude`", "proc"),
    ("capture_plain", "`capture --hook claude`, prompt without trigger", "proc"),
    ("capture_save", "`capture --hook claude`, saves a memory", "proc"),
    ("mcp_ready", "MCP server ready (spawn → initialize)", "proc"),
    ("mcp_search", "MCP memory_search round trip", "inproc"),
]
LABELS = {r[0]: r[1] for r in ROWS}

# Targets from the issues: (row, size, statistic, limit in ms, text)
TARGETS: list[tuple[str, int, str, float, str]] = [
    ("reindex_full", 10000, "median", 3000, "< 3 s at 10k"),
    ("reindex_full", 100000, "median", 30000, "< 30 s at 100k"),
    ("search_git", 10000, "median", 120, "< 120 ms median at 10k"),
    ("search_inproc", 10000, "p95", 10, "p95 < 10 ms at 10k"),
    ("search_inproc", 100000, "p95", 50, "p95 < 50 ms at 100k"),
    ("post_merge", 10000, "median", 300, "< 300 ms at 10k"),
    ("merge_driver", 10000, "median", 80, "< 80 ms"),
    ("mcp_ready", 10000, "median", 1500, "< 1.5 s"),
    ("mcp_search", 10000, "p95", 20, "p95 < 20 ms at 10k"),
    ("context", 10000, "median", 150, "< 150 ms"),
    ("capture_plain", 10000, "median", 150, "< 150 ms"),
    ("capture_save", 10000, "median", 150, "< 150 ms"),
]
MEMORY_TARGET_MB = 300


# ------------------------------------------------------------------ results
@dataclass
class Measure:
    samples: list[float] = field(default_factory=list)  # ms
    rss_kb: list[int] = field(default_factory=list)
    note: str | None = None  # "n/a (command missing)", "error: ...", etc.
    p50: float | None = None  # in-process figures come summarised
    p95: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def stats(self) -> dict[str, Any]:
        s = sorted(self.samples)
        d: dict[str, Any] = {"n": len(s), "note": self.note, **self.extra}
        if s:
            d.update(median=statistics.median(s), min=s[0], max=s[-1], p95=s[min(len(s) - 1, int(len(s) * 0.95))])
        if self.p50 is not None:
            d["median"] = self.p50
            d["p95"] = self.p95
        if self.rss_kb:
            d["peak_rss_mb"] = round(max(self.rss_kb) / 1024, 1)
        return d


@dataclass
class SizeResult:
    n: int
    rows: dict[str, Measure] = field(default_factory=dict)
    index_mb: float | None = None
    setup_s: dict[str, float] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ processes
def child_env(base: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users run with cached bytecode
    env["GIT_MEMEX_PROGRESS"] = "0"
    return env


def run(cmd: list[str], *, cwd: Path, env: dict[str, str], stdin: bytes | None = None,
        timeout: float = 900) -> tuple[float, int, int, str, str]:
    """(ms, exit code, peak RSS in KiB of the process and its waited-for children, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=out, stderr=err)
        if stdin is not None:
            assert p.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                p.stdin.write(stdin)
            p.stdin.close()
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.0005)
        ms = (time.perf_counter() - t0) * 1000
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ms, p.returncode, ru.ru_maxrss, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")


def git(args: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {r.stderr.strip()[:500]}")
    return r.stdout


def memex_cmd() -> list[str]:
    exe = Path(sys.executable)
    script = exe.with_name("git-memex")
    if script.exists():
        return [str(script)]
    found = shutil.which("git-memex")
    return [found] if found else [sys.executable, "-m", "git_memex"]


def command_exists(name: str) -> bool:
    """Is `git memex NAME` implemented in this checkout? (Others are writing some of them.)"""
    try:
        from git_memex.main import COMMANDS
    except ImportError:
        return False
    mod = COMMANDS.get(name)
    return mod is not None and importlib.util.find_spec(f"git_memex.commands.{mod}") is not None


def first_line(s: str) -> str:
    s = s.strip()
    return s.splitlines()[-1][:160] if s else ""


def repeat(label: str, m: Measure, n: int, step: Callable[[int], tuple[float, int, int, str, str] | None],
           warmup: bool = True) -> None:
    """Run step(i) for a warm-up and n timed rounds; record ms and RSS, or the first failure."""
    for i in range(-1 if warmup else 0, n):
        res = step(i)
        if res is None:
            continue
        ms, rc, rss, _out, err = res
        if rc != 0:
            m.note = f"error (exit {rc}: {first_line(err)})"
            log(f"    {label}: {m.note}")
            return
        if i >= 0:
            m.samples.append(ms)
            m.rss_kb.append(rss)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ corpus and repositories
def ensure_corpus(n: int, queries: int) -> tuple[Path, Path]:
    folder = CORPORA / f"n{n}"
    mem = folder / "memories"
    qfile = folder / f"queries-{n}.json"
    count = sum(1 for _ in mem.glob("*.md")) if mem.is_dir() else 0
    ok = count == n and qfile.exists() and len(json.loads(qfile.read_text(encoding="utf-8"))) == min(queries, n)
    if not ok:
        log(f"  generating {n:,} memories with {GEN.name}")
        mem.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(GEN), "--n", str(n), "--out", str(mem), "--force",
                        "--queries", str(min(queries, n))], check=True, capture_output=True)
    return mem, qfile


def ensure_seed(n: int, mem: Path, env: dict[str, str]) -> Path:
    """A bare repository holding the corpus in one commit (cached next to the corpus)."""
    seed = CORPORA / f"n{n}" / "seed.git"
    stamp = seed / "memex-bench-stamp"
    if stamp.exists() and stamp.read_text() == str(n):
        return seed
    log(f"  committing {n:,} memories to a seed repository")
    shutil.rmtree(seed, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="memex-seed-") as tmp:
        work = Path(tmp) / "w"
        git(["init", "-q", "-b", "main", str(work)], Path(tmp), env)
        dest = work / MEMORY_DIR
        dest.mkdir(parents=True)
        for f in mem.iterdir():
            if f.suffix == ".md":
                shutil.copyfile(f, dest / f.name)
        (work / ".gitattributes").write_text(f"{MEMORY_DIR}/*.md merge=memex\n")
        git(["add", "-A"], work, env)
        git(["commit", "-q", "-m", f"{n} memories"], work, env)
        git(["clone", "-q", "--bare", str(work), str(seed)], Path(tmp), env)
    stamp.write_text(str(n))
    return seed


@dataclass
class Workspace:
    root: Path
    a: Path
    b: Path
    env_a: dict[str, str]
    env_b: dict[str, str]
    origin: Path


def make_workspace(n: int, seed: Path, base_env: dict[str, str], keep: bool) -> Workspace:
    root = Path(tempfile.mkdtemp(prefix=f"memex-bench-{n}-"))
    origin = root / "origin.git"
    git(["clone", "-q", "--bare", str(seed), str(origin)], root, base_env)
    a, b = root / "a", root / "b"
    git(["clone", "-q", str(origin), str(a)], root, base_env)
    git(["clone", "-q", str(origin), str(b)], root, base_env)
    env_a = child_env(base_env)
    env_a["GIT_MEMEX_HOME"] = str(root / "home-a")
    env_b = child_env(base_env)
    env_b["GIT_MEMEX_HOME"] = str(root / "home-b")
    return Workspace(root, a, b, env_a, env_b, origin)


def base_environment(tmp: Path) -> dict[str, str]:
    """Isolated git configuration (no user hooks or settings leak in), the venv's git-memex on PATH."""
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / ".gitconfig"
    cfg.write_text("[user]\n\tname = memex bench\n\temail = bench@example.invalid\n"
                   "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
                   "[pull]\n\tff = only\n")
    env = dict(os.environ)
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C.UTF-8")
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_MEMEX_HOME"):
        env.pop(k, None)
    return env


def edit_files(work: Path, files: list[str], tag: str) -> None:
    """Change the body of each file (a new sentence with a unique marker word)."""
    for name in files:
        p = work / MEMORY_DIR / name
        text = p.read_text(encoding="utf-8")
        p.write_text(text.rstrip("\n") + f" Benchmark edit {tag} marker{tag}.\n", encoding="utf-8")


def index_mb(work: Path) -> float:
    d = work / ".git" / "memex"
    return sum(f.stat().st_size for f in d.glob("index.db*")) / 1e6 if d.is_dir() else 0.0


# ------------------------------------------------------------------ one corpus size
def bench_size(n: int, mode: Mode, base_env: dict[str, str], keep: bool) -> SizeResult:
    res = SizeResult(n)
    t0 = time.perf_counter()
    mem, qfile = ensure_corpus(n, mode.queries)
    seed = ensure_seed(n, mem, base_env)
    res.setup_s["corpus+seed"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    ws = make_workspace(n, seed, base_env, keep)
    res.setup_s["clones"] = round(time.perf_counter() - t0, 1)
    log(f"  workspace {ws.root}")
    cmd = memex_cmd()
    queries = json.loads(qfile.read_text(encoding="utf-8"))
    names = sorted(f.name for f in (ws.a / MEMORY_DIR).iterdir() if f.suffix == ".md")
    slow = n >= 50000
    R = res.rows
    try:
        # -------- cold rebuild
        m = R["reindex_full"] = Measure()
        db = ws.a / ".git" / "memex" / "index.db"

        def cold(i: int) -> tuple[float, int, int, str, str]:
            for f in db.parent.glob("index.db*"):
                f.unlink()
            return run([*cmd, "reindex", "--full"], cwd=ws.a, env=ws.env_a)

        log("  reindex --full")
        repeat("reindex --full", m, mode.reps_slow if slow else mode.reps, cold, warmup=not slow)
        res.index_mb = round(index_mb(ws.a), 1)

        # -------- no-op reindex
        log("  reindex (nothing changed)")
        repeat("reindex", R.setdefault("reindex_noop", Measure()), mode.reps,
               lambda i: run([*cmd, "reindex"], cwd=ws.a, env=ws.env_a))

        # -------- post-merge after a real pull (B gets A's commits through origin)
        log("  post-merge hook after git pull")
        run([*cmd, "reindex"], cwd=ws.b, env=ws.env_b)
        m = R["post_merge"] = Measure()
        verified = []
        for i in range(-1, mode.edits):
            files = names[(i + 1) * 10 : (i + 2) * 10]
            tag = f"pm{i + 1}"
            edit_files(ws.a, files, tag)
            git(["commit", "-q", "-m", f"bench edit {tag}", "--", *[f"{MEMORY_DIR}/{f}" for f in files]], ws.a, base_env)
            git(["push", "-q", "origin", "HEAD:main"], ws.a, base_env)
            git(["-c", "core.hooksPath=/dev/null", "pull", "-q", "--ff-only"], ws.b, base_env)
            ms, rc, rss, _o, err = run([*cmd, "hook", "post-merge", "0"], cwd=ws.b, env=ws.env_b)
            if rc != 0:
                m.note = f"error (exit {rc}: {first_line(err)})"
                break
            with sqlite3.connect(ws.b / ".git" / "memex" / "index.db") as c:
                verified.append(c.execute("SELECT count(*) FROM memories WHERE body LIKE ?", (f"%marker{tag}%",)).fetchone()[0])
            if i >= 0:
                m.samples.append(ms)
                m.rss_kb.append(rss)
        res.checks["post_merge_rows_updated"] = verified
        if verified and any(v != 10 for v in verified):
            m.note = f"index not updated as expected: {verified}"

        # -------- git pull with our hook installed (what the user actually waits for)
        m = R["git_pull_hooked"] = Measure()
        if command_exists("init"):
            ms, rc, _rss, _o, err = run([*cmd, "init", "--yes"], cwd=ws.b, env=ws.env_b)
            if rc != 0:
                m.note = f"error (init exit {rc}: {first_line(err)})"
            else:
                for i in range(mode.edits):
                    files = names[(mode.edits + i + 2) * 10 : (mode.edits + i + 3) * 10]
                    tag = f"gp{i}"
                    edit_files(ws.a, files, tag)
                    git(["commit", "-q", "-m", f"bench {tag}", "--", *[f"{MEMORY_DIR}/{f}" for f in files]], ws.a, base_env)
                    git(["push", "-q", "origin", "HEAD:main"], ws.a, base_env)
                    ms, rc, rss, _o, err = run(["git", "pull", "-q", "--ff-only"], cwd=ws.b, env=ws.env_b)
                    if rc != 0:
                        m.note = f"error (exit {rc}: {first_line(err)})"
                        break
                    m.samples.append(ms)
                    m.rss_kb.append(rss)
        else:
            m.note = "n/a (command missing: init)"

        # -------- incremental reindex after 10 changed files (work tree edits, no git)
        log("  reindex after 10 changed files")
        m = R["reindex_incr"] = Measure()
        start = (2 * mode.edits + 4) * 10

        def incr(i: int) -> tuple[float, int, int, str, str]:
            files = names[start + (i + 1) * 10 : start + (i + 2) * 10]
            edit_files(ws.a, files, f"ri{i + 1}")
            time.sleep(0.01)
            return run([*cmd, "reindex"], cwd=ws.a, env=ws.env_a)

        repeat("reindex incremental", m, mode.edits, incr)

        # -------- search, whole process
        log("  search (whole process)")
        qs = [q["query"] for q in queries]
        for row, prefix in (("search_git", ["git", "memex"]), ("search_cli", cmd)):
            def search(i: int, p: list[str] = prefix) -> tuple[float, int, int, str, str] | None:
                return run([*p, "search", qs[(i + 1) % len(qs)]], cwd=ws.a, env=ws.env_a)

            repeat(row, R.setdefault(row, Measure()), mode.search_cli, search)

        # -------- search, in process
        log("  search (in process)")
        wargs = {"repo": str(ws.a), "queries": str(qfile), "passes": mode.passes,
                 "refresh_queries": min(mode.refresh_queries, 30 if slow else mode.refresh_queries)}
        ms, rc, rss, out, err = run([sys.executable, "-m", "bench.worker", "inproc", json.dumps(wargs)], cwd=ROOT,
                                    env=ws.env_a | {"PYTHONPATH": str(ROOT)})
        if rc == 0:
            w = json.loads(out)
            for row, key in (("search_inproc", "search_ms"), ("search_inproc_refresh", "search_refresh_ms"),
                             ("refresh_noop", "refresh_noop_ms"), ("refresh_watched", "refresh_watched_ms")):
                s = w[key]
                R[row] = Measure(p50=s["p50"], p95=s["p95"], extra={"n": s["n"], "min": s["min"], "max": s["max"]})
            R["search_inproc"].rss_kb.append(rss)
            R["search_inproc"].extra["quality"] = w["quality"]
            res.checks["synthetic_quality"] = w["quality"]
        else:
            for row in ("search_inproc", "search_inproc_refresh", "refresh_noop", "refresh_watched"):
                R[row] = Measure(note=f"error (exit {rc}: {first_line(err)})")

        # -------- add
        log("  add")
        if command_exists("add"):
            repeat("add", R.setdefault("add", Measure()), mode.reps,
                   lambda i: run([*cmd, "add", f"Benchmark note {i + 2}: the nightly export job {i + 2} writes "
                                  f"to bucket exports-{i + 2} and retries three times", "--tags", "bench"],
                                 cwd=ws.a, env=ws.env_a))
        else:
            R["add"] = Measure(note="n/a (command missing)")

        # -------- merge driver on a real file triple
        log("  merge-driver")
        if command_exists("merge-driver"):
            R["merge_driver"] = merge_driver_bench(ws, cmd, names[-1], mode.reps)
        else:
            R["merge_driver"] = Measure(note="n/a (command missing)")

        # -------- agent hooks
        log("  context / capture")
        if command_exists("context"):
            payload = json.dumps({"session_id": "bench", "cwd": str(ws.a), "hook_event_name": "SessionStart",
                                  "source": "startup"}).encode()
            repeat("context", R.setdefault("context", Measure()), mode.reps,
                   lambda i: run([*cmd, "context", "--hook", "claude"], cwd=ws.a, env=ws.env_a, stdin=payload))
        else:
            R["context"] = Measure(note="n/a (command missing)")
        if command_exists("capture"):
            plain = json.dumps({"session_id": "bench", "cwd": str(ws.a), "hook_event_name": "UserPromptSubmit",
                                "prompt": "Why do the integration tests time out on CI since yesterday?"}).encode()
            repeat("capture", R.setdefault("capture_plain", Measure()), mode.reps,
                   lambda i: run([*cmd, "capture", "--hook", "claude"], cwd=ws.a, env=ws.env_a, stdin=plain))

            def save(i: int) -> tuple[float, int, int, str, str]:
                prompt = (f"remember that the staging database {i + 2} is rebuilt every night at {i + 2} am "
                          f"from the snapshot bucket snap-{i + 2}")
                body = json.dumps({"session_id": "bench", "cwd": str(ws.a), "hook_event_name": "UserPromptSubmit",
                                   "prompt": prompt}).encode()
                return run([*cmd, "capture", "--hook", "claude"], cwd=ws.a, env=ws.env_a, stdin=body)

            repeat("capture save", R.setdefault("capture_save", Measure()), mode.reps, save)
        else:
            R["capture_plain"] = Measure(note="n/a (command missing)")
            R["capture_save"] = Measure(note="n/a (command missing)")

        # -------- MCP over stdio with the official client
        log("  mcp")
        if command_exists("mcp") and importlib.util.find_spec("mcp") is not None:
            wargs = {"repo": str(ws.a), "queries": str(qfile), "command": cmd, "spawns": mode.mcp_spawns,
                     "calls": mode.mcp_calls}
            # one warm-up spawn so the server's .pyc files exist
            run([sys.executable, "-m", "bench.worker", "mcp", json.dumps(wargs | {"spawns": 1, "calls": 1})], cwd=ROOT,
                env=ws.env_a | {"PYTHONPATH": str(ROOT)})
            ms, rc, rss, out, err = run([sys.executable, "-m", "bench.worker", "mcp", json.dumps(wargs)], cwd=ROOT,
                                        env=ws.env_a | {"PYTHONPATH": str(ROOT)})
            if rc == 0:
                w = json.loads(out)
                r = w["ready_ms"]
                R["mcp_ready"] = Measure(p50=r["p50"], p95=r["p95"], extra={"n": r["n"], "min": r["min"], "max": r["max"]})
                s = w["search_ms"]
                R["mcp_search"] = Measure(p50=s["p50"], p95=s["p95"], extra={"n": s["n"], "min": s["min"], "max": s["max"]})
                if w["errors"]:
                    R["mcp_search"].note = "tool errors: " + w["errors"][0]
            else:
                R["mcp_ready"] = Measure(note=f"error (exit {rc}: {first_line(err)})")
                R["mcp_search"] = Measure(note=R["mcp_ready"].note)
        else:
            R["mcp_ready"] = Measure(note="n/a (command missing)")
            R["mcp_search"] = Measure(note="n/a (command missing)")
    finally:
        if not keep:
            shutil.rmtree(ws.root, ignore_errors=True)
    return res


def merge_driver_bench(ws: Workspace, cmd: list[str], name: str, reps: int) -> Measure:
    """base/ours/theirs of one memory: ours adds a tag, theirs adds a sentence; a clean merge."""
    m = Measure()
    base_text = (ws.a / MEMORY_DIR / name).read_text(encoding="utf-8")
    ours = re.sub(r"^tags: \[(.*)\]$", lambda mt: f"tags: [{mt.group(1)}, bench-ours]", base_text, count=1, flags=re.M)
    if ours == base_text:
        ours = base_text.replace("\nstatus: active\n", "\nstatus: active\nimportance_note: ours\n", 1)
    theirs = base_text.rstrip("\n") + " A sentence added on the other branch.\n"
    d = ws.root / "merge"
    d.mkdir(exist_ok=True)
    (d / "base").write_text(base_text, encoding="utf-8")
    (d / "theirs").write_text(theirs, encoding="utf-8")

    def step(i: int) -> tuple[float, int, int, str, str]:
        (d / "ours").write_text(ours, encoding="utf-8")
        return run([*cmd, "merge-driver", str(d / "base"), str(d / "ours"), str(d / "theirs"), f"{MEMORY_DIR}/{name}"],
                   cwd=ws.a, env=ws.env_a)

    repeat("merge-driver", m, reps, step)
    merged = (d / "ours").read_text(encoding="utf-8")
    m.extra["clean"] = "bench-ours" in merged and "other branch" in merged
    if not m.extra["clean"] and m.note is None:
        m.note = "merge result lost a side"
    return m


# ------------------------------------------------------------------ machine
def machine() -> dict[str, str]:
    info: dict[str, str] = {}
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    info["CPU"] = cpu
    info["cores"] = str(os.cpu_count())
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["RAM"] = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    info["OS"] = f"{platform.system()} {platform.release()}"
    info["Python"] = platform.python_version()
    info["SQLite"] = sqlite3.sqlite_version
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        info["git"] = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip().replace("git version ", "")
    for mod in ("pygit2", "yaml", "mcp"):
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            info[mod] = version({"yaml": "PyYAML"}.get(mod, mod))
    with contextlib.suppress(Exception):
        import git_memex

        info["git-memex"] = git_memex.__version__
    with contextlib.suppress(OSError):
        info["load average at start"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return info


# ------------------------------------------------------------------ report
def fmt_ms(v: float | None) -> str:
    if v is None:
        return "–"
    if v >= 10000:
        return f"{v / 1000:.1f} s"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms"


def cell(m: Measure | None) -> str:
    if m is None:
        return "–"
    if m.note and not m.samples and m.p50 is None:
        return m.note
    s = m.stats()
    if m.p50 is not None:
        txt = f"{fmt_ms(s['median'])} / p95 {fmt_ms(s['p95'])}"
    elif s.get("n", 0) >= 1:
        txt = f"{fmt_ms(s['median'])} ({fmt_ms(s['min'])}–{fmt_ms(s['max'])})"
    else:
        txt = "–"
    if m.note:
        txt += f" ⚠ {m.note}"
    return txt


def stat_of(m: Measure | None, which: str) -> float | None:
    if m is None:
        return None
    s = m.stats()
    return s.get("p95" if which == "p95" else "median")


def report(results: list[SizeResult], mode: Mode, info: dict[str, str], out: Path, chart: str, wall_s: float) -> str:
    sizes = [r.n for r in results]
    by = {r.n: r for r in results}
    L: list[str] = []
    L.append("# git-memex benchmark results")
    L.append("")
    L.append(f"Mode `{mode.name}`, {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}, wall time {wall_s:.0f} s. "
             "Command: `python -m bench" + ("" if mode.name == "full" else f" --{mode.name}") + "`.")
    L.append("")
    L.append("**Machine:** " + "; ".join(f"{k} {v}" for k, v in info.items()) + ".")
    L.append("")
    L.append("Corpora from `../shared/bench/gen_corpus.py` (seed 1, 15% Chinese), committed to a bare origin and "
             "cloned twice; data root per clone in a temp folder. Whole-process rows: median (min–max) over "
             f"{mode.reps} runs after one warm-up run (cold rebuild at ≥ 50k: {mode.reps_slow} runs, no warm-up), "
             "children started with PYTHONDONTWRITEBYTECODE removed so they use cached .pyc files as an installed "
             "tool does. In-process rows: p50 / p95 over the corpus's query file "
             f"({mode.passes} pass(es) of {mode.queries} queries; the freshness-scan variant over fewer). "
             "The machine is shared with other work, so single runs are noisy: read medians.")
    L.append("")
    L.append("| measurement | " + " | ".join(f"{n:,} memories" for n in sizes) + " |")
    L.append("|---|" + "---|" * len(sizes))
    for row, label, _kind in ROWS:
        L.append(f"| {label} | " + " | ".join(cell(by[n].rows.get(row)) for n in sizes) + " |")
    L.append("| index size on disk | " + " | ".join(
        f"{mb} MB ({mb * 1e6 / n / 1024:.2f} KiB/memory)" if (mb := by[n].index_mb) else "–" for n in sizes) + " |")
    for row, label in (("reindex_full", "peak memory, `reindex --full`"), ("reindex_incr", "peak memory, incremental `reindex`"),
                       ("search_cli", "peak memory, `git-memex search`"), ("add", "peak memory, `add`"),
                       ("post_merge", "peak memory, post-merge hook"),
                       ("search_inproc", "peak memory, in-process search worker")):
        vals = []
        for n in sizes:
            m = by[n].rows.get(row)
            vals.append(f"{max(m.rss_kb) / 1024:.0f} MB" if m and m.rss_kb else "–")
        L.append(f"| {label} | " + " | ".join(vals) + " |")
    q = [by[n].checks.get("synthetic_quality") for n in sizes]
    if any(q):
        L.append("| search quality on the query file (R@5 / MRR@8) | " + " | ".join(
            f"{x['R@5']:.3f} / {x['MRR@8']:.3f}" if x else "–" for x in q) + " |")
    L.append("")
    # targets
    L.append("## Targets")
    L.append("")
    L.append("| target | measured | holds? |")
    L.append("|---|---|---|")
    for row, n, which, limit, text in TARGETS:
        if n not in by:
            continue
        v = stat_of(by[n].rows.get(row), which)
        if v is None:
            L.append(f"| {LABELS[row]} {text} | {cell(by[n].rows.get(row))} | not measured |")
            continue
        ok = v < limit
        L.append(f"| {LABELS[row]} {text} | {which} {fmt_ms(v)} | {'yes' if ok else f'**no** ({v / limit:.1f}× the limit)'} |")
    if 100000 in by:
        m = by[100000].rows.get("reindex_full")
        if m and m.rss_kb:
            mb = max(m.rss_kb) / 1024
            L.append(f"| peak memory of `reindex --full` < {MEMORY_TARGET_MB} MB at 100k | {mb:.0f} MB | "
                     f"{'yes' if mb < MEMORY_TARGET_MB else '**no**'} |")
    L.append("")
    # growth
    if len(sizes) >= 2:
        L.append("## Cost growth")
        L.append("")
        L.append("Ratio of medians between consecutive sizes (10× more memories: 10.0 = linear, 1.0 = flat). "
                 "Rows that must stay flat (a change of 10 files, one search) should be far below 10.")
        L.append("")
        pairs = list(zip(sizes, sizes[1:], strict=False))
        L.append("| measurement | " + " | ".join(f"{b // a}× memories ({a:,} → {b:,})" for a, b in pairs) + " |")
        L.append("|---|" + "---|" * len(pairs))
        for row, label, _k in ROWS:
            vals = []
            for a, b in pairs:
                va, vb = stat_of(by[a].rows.get(row), "median"), stat_of(by[b].rows.get(row), "median")
                vals.append(f"{vb / va:.1f}" if va and vb else "–")
            if any(v != "–" for v in vals):
                L.append(f"| {label} | " + " | ".join(vals) + " |")
        L.append("")
    L.append(chart)
    L.append("")
    notes = [f"{n:,}: " + ", ".join(f"{k} {v} s" for k, v in by[n].setup_s.items()) for n in sizes]
    L.append("Set-up (not measured): " + "; ".join(notes) + ".")
    L.append("")
    return "\n".join(L)


def draw_chart(results: list[SizeResult], out: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "Chart skipped: matplotlib is not installed (`pip install -e '.[bench]'`)."
    sizes = [r.n for r in results]
    if len(sizes) < 2:
        return "Chart skipped: one corpus size only."
    rows = ["reindex_full", "reindex_incr", "post_merge", "search_git", "search_inproc", "search_inproc_refresh",
            "add", "context", "mcp_search"]
    fig, ax = plt.subplots(figsize=(9, 6))
    for row in rows:
        xs, ys = [], []
        for r in results:
            v = stat_of(r.rows.get(row), "median")
            if v:
                xs.append(r.n)
                ys.append(v)
        if len(xs) >= 2:
            ax.plot(xs, ys, marker="o", label=LABELS[row].replace("`", ""))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the corpus")
    ax.set_ylabel("median latency (ms)")
    ax.set_title("git-memex latency against corpus size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)
    return "![latency against corpus size](latency.png)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="1k and 10k memories, fewer repeats (under two minutes)")
    g.add_argument("--smoke", action="store_true", help="a 200-memory corpus: checks that every measurement runs")
    ap.add_argument("--sizes", help="comma-separated corpus sizes (overrides the mode's)")
    ap.add_argument("--out", default=str(BENCH_DIR / "results"), help="folder for results.md, results.json, latency.png")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories (their paths are logged)")
    args = ap.parse_args(argv)
    mode = MODES["smoke" if args.smoke else "quick" if args.quick else "full"]
    if args.sizes:
        mode.sizes = [int(s.replace("_", "").replace("k", "000")) for s in args.sizes.split(",") if s.strip()]
    if not GEN.exists():
        print(f"bench: {GEN} not found (the shared corpus generator)", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    CORPORA.mkdir(parents=True, exist_ok=True)
    info = machine()
    t_start = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="memex-bench-env-") as tmp:
        base_env = base_environment(Path(tmp))
        # one throw-away run so that the package's .pyc files exist before anything is timed
        run([*memex_cmd(), "--version"], cwd=Path(tmp), env=child_env(base_env))
        for n in mode.sizes:
            log(f"bench: {n:,} memories ({mode.name})")
            results.append(bench_size(n, mode, base_env, args.keep))
    wall = time.perf_counter() - t_start
    with contextlib.suppress(OSError):
        info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    chart = draw_chart(results, out)
    text = report(results, mode, info, out, chart, wall)
    (out / "results.md").write_text(text, encoding="utf-8")
    raw = {"mode": mode.name, "machine": info, "wall_s": wall,
           "sizes": {r.n: {"rows": {k: v.stats() for k, v in r.rows.items()}, "index_mb": r.index_mb,
                           "setup_s": r.setup_s, "checks": r.checks} for r in results}}
    (out / "results.json").write_text(json.dumps(raw, indent=1, default=str) + "\n", encoding="utf-8")
    print(text)
    log(f"bench: wrote {out / 'results.md'} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

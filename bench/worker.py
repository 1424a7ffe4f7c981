"""Measurements that run inside one Python process (a child of bench.run, so that the
benchmark's own state never leaks in): in-process search latency, the freshness scan, and
the MCP round trip through the official client. Prints one JSON document on stdout.

    python -m bench.worker inproc '{"repo": ..., "queries": ..., "passes": 3, "refresh_queries": 50}'
    python -m bench.worker mcp '{"repo": ..., "queries": ..., "command": [...], "spawns": 3, "calls": 100}'
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p))] if s else 0.0


def summary(xs: list[float]) -> dict[str, Any]:
    return {"n": len(xs), "p50": statistics.median(xs) if xs else None, "p95": _pct(xs, 0.95) if xs else None,
            "min": min(xs) if xs else None, "max": max(xs) if xs else None}


def load_queries(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def inproc(args: dict[str, Any]) -> dict[str, Any]:
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores
    from git_memex.search.engine import search

    queries = load_queries(args["queries"])
    ctx = load_context(Path(args["repo"]))
    out: dict[str, Any] = {}
    with Stores(ctx) as st:
        st.refresh()  # the index is fresh before timing (a cold build is measured elsewhere)
        # 1. the freshness check a command-line process makes: lstat every memory file
        os.environ["GIT_MEMEX_WATCH"] = "0"
        scan = []
        for _ in range(args.get("scans", 10)):
            t0 = time.perf_counter()
            st.refresh()
            scan.append((time.perf_counter() - t0) * 1000)
        out["refresh_noop_ms"] = summary(scan)
        lat_r: list[float] = []
        for q in queries[: args.get("refresh_queries", 50)]:
            t0 = time.perf_counter()
            search(st, q["query"], limit=8, refresh=True)
            lat_r.append((time.perf_counter() - t0) * 1000)
        out["search_refresh_ms"] = summary(lat_r)
        # 2. the same check in a long-lived process (MCP server) with the folder watched
        os.environ["GIT_MEMEX_WATCH"] = "1"
        st.refresh()
        st.refresh()
        watched = []
        for _ in range(args.get("scans", 10)):
            t0 = time.perf_counter()
            st.refresh()
            watched.append((time.perf_counter() - t0) * 1000)
        out["refresh_watched_ms"] = summary(watched)
        # 3. the search itself
        lat: list[float] = []
        r5 = rr = 0.0
        for p in range(args.get("passes", 1)):
            for q in queries:
                t0 = time.perf_counter()
                res = search(st, q["query"], limit=8, refresh=False)
                lat.append((time.perf_counter() - t0) * 1000)
                if p == 0:
                    ids = [h.id for h in res.hits]
                    if q["relevant"] in ids:
                        rank = ids.index(q["relevant"]) + 1
                        r5 += rank <= 5
                        rr += 1.0 / rank
        out["search_ms"] = summary(lat)
        out["quality"] = {"R@5": round(r5 / max(len(queries), 1), 3), "MRR@8": round(rr / max(len(queries), 1), 3)}
    return out


def mcp_bench(args: dict[str, Any]) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    queries = [q["query"] for q in load_queries(args["queries"])]
    cmd = args["command"]
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp"], env=dict(os.environ), cwd=args["repo"])
    ready: list[float] = []
    calls: list[float] = []
    errors: list[str] = []

    async def one(n_calls: int) -> None:
        with open(os.devnull, "w") as errlog, anyio.fail_after(300):
            t0 = time.perf_counter()
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                ready.append((time.perf_counter() - t0) * 1000)
                for i in range(n_calls):
                    q = queries[i % len(queries)]
                    t1 = time.perf_counter()
                    res = await s.call_tool("memory_search", {"query": q, "limit": 8})
                    calls.append((time.perf_counter() - t1) * 1000)
                    if getattr(res, "is_error", False) and len(errors) < 3:
                        errors.append(str(getattr(res, "content", ""))[:200])

    spawns = args.get("spawns", 1)
    for i in range(spawns):
        anyio.run(one, args.get("calls", 50) if i == spawns - 1 else 0)
    # the first few calls of a session warm the server (imports, statement cache)
    warm = calls[min(5, len(calls) // 4):]
    return {"ready_ms": summary(ready), "search_ms": summary(warm), "errors": errors}


def main(argv: list[str]) -> int:
    kind, raw = argv[0], argv[1]
    args = json.loads(raw)
    os.environ.setdefault("GIT_MEMEX_PROGRESS", "0")
    if kind == "inproc":
        res = inproc(args)
    elif kind == "mcp":
        res = mcp_bench(args)
    else:
        raise SystemExit(f"unknown worker {kind}")
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

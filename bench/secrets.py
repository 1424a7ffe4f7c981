"""`python -m bench.secrets`: what the secret detector costs on the texts it meets.

Rows: the labelled corpus (`tests/data/secret_corpus.json`, every text redacted once: the cost
of a typical note), 64 KiB bodies full of findings (one credential a line), and 64 KiB runs of
the units that used to be, or could be, slow (`tests/secrets/test_redact.py` holds the same
units to a hang guard). Each row is the median (min-max) over `--runs` runs in this process,
after one warm-up run that compiles the patterns. The machine is shared: read the ratio between
the 16 KiB and 64 KiB columns (about 4 for a linear cost), not single figures.

Then the throughput of the detector (`redact`, what `add` and every hook pay) in KiB/s on four
kinds of ordinary text with no secret in them, 64 KiB each cut into 4 KiB notes: prose (this
checkout's docs/*.md), code (git_memex/**/*.py), an environment dump and a service log (both
generated from a fixed seed); with the share of it spent in the vendor-format table
(secrets/formats.py) where the measured code has one. Last, the first call in a fresh process
(import + first `redact` + a second one), median of `--fresh` processes that use cached bytecode
as an installed package does.

To measure another checkout's code with the same texts, run this file with that checkout's
interpreter from outside any checkout, e.g. ``cd /tmp && /path/to/main/.venv/bin/python
/path/to/this/bench/secrets.py``: the header names the `git_memex` that was measured.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "secret_corpus.json"
NOTE, KIND_SIZE = 4096, 65536
FULL_OF_FINDINGS = ["password: Tr0ub4dor&3", 'DB_PASSWORD="p@ss w0rd!"', "كلمة المرور: Qw7!mZ92a",
                    "p\u0430ssword: Yt6!pw2Rn", "token ghp_R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a"]
UNITS = ["password: a ", 'password="a b', "pw: a ", "the password for prod is ", "كلمة المرور ",
         "p\u0430ss", "a1Secret", "mysql -p'", "secret=", "a1", "https://a"]


def _times(fn, arg, runs: int) -> list[float]:
    fn(arg)  # warm-up: compiles the patterns this text needs
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(arg)
        out.append(time.perf_counter() - t)
    return out


def _fmt(ts: list[float]) -> str:
    return f"{statistics.median(ts) * 1000:.1f} ({min(ts) * 1000:.1f}-{max(ts) * 1000:.1f})"


def _sized(text: str, n: int) -> str:
    return (text * (n // len(text) + 1))[:n]


def _env_dump(rnd: random.Random) -> str:
    """`env` of a CI job: paths, hosts, versions, ids, hashes (nothing secret)."""
    names = ["PATH", "HOME", "LANG", "SHELL", "CI_JOB_ID", "CI_COMMIT_SHA", "BUILD_NUMBER", "HOSTNAME",
             "JAVA_HOME", "NODE_VERSION", "PYTHONPATH", "KUBERNETES_SERVICE_HOST", "RUNNER_ARCH", "TZ",
             "GIT_BRANCH", "DOCKER_HOST", "XDG_CONFIG_HOME", "MAVEN_OPTS", "LOG_LEVEL", "REGION"]
    lines: list[str] = []
    size = 0
    while size < KIND_SIZE:
        name = rnd.choice(names) + rnd.choice(["", "_1", "_PREV", "_NEXT"])
        value = rnd.choice([
            "/usr/local/bin:/usr/bin:/bin:/opt/tools/" + rnd.choice(["go", "node", "jdk"]) + "/bin",
            f"{rnd.getrandbits(160):040x}", str(rnd.randrange(10 ** 8)), "en_US.UTF-8",
            f"ip-10-{rnd.randrange(256)}-{rnd.randrange(256)}-{rnd.randrange(256)}.ec2.internal",
            f"v{rnd.randrange(30)}.{rnd.randrange(30)}.{rnd.randrange(30)}", f"release/{rnd.randrange(9)}.{rnd.randrange(99)}",
            f"-Xmx{rnd.choice([512, 1024, 2048])}m -XX:+UseG1GC", rnd.choice(["info", "debug", "warn"]),
            f"eu-west-{rnd.randrange(4)}",
        ])
        lines.append(f"{name}={value}\n")
        size += len(lines[-1])
    return "".join(lines)


def _service_log(rnd: random.Random) -> str:
    """A web service's log: timestamps, levels, request ids, routes, timings, small JSON bodies."""
    lines: list[str] = []
    size, t = 0, 1_700_000_000
    while size < KIND_SIZE:
        t += rnd.randrange(1, 900)
        route = rnd.choice(["/api/v2/orders", f"/api/v2/users/{rnd.randrange(10 ** 6)}", "/health",
                            f"/static/app.{rnd.getrandbits(32):08x}.js",
                            f"/api/v2/search?q={rnd.choice(['shoes', 'red+hat', 'gift'])}&page={rnd.randrange(9)}"])
        lines.append(
            f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t))}.{rnd.randrange(1000):03d}Z "
            f"{rnd.choice(['INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'])} [req-{rnd.getrandbits(64):016x}] "
            f"{rnd.choice(['GET', 'POST', 'PUT'])} {route} {rnd.choice([200, 200, 201, 304, 404, 500])} "
            f"{rnd.randrange(1, 900)}ms user_agent=\"Mozilla/5.0\" body={{\"items\": {rnd.randrange(40)}, \"retry\": false}}\n")
        size += len(lines[-1])
    return "".join(lines)


def _kinds() -> dict[str, str]:
    """64 KiB of each kind of ordinary text (the same bytes for any checkout measured)."""
    rnd = random.Random(31)
    prose = "".join(p.read_text("utf-8") for p in sorted((ROOT / "docs").glob("*.md")))
    code = "".join(p.read_text("utf-8") for p in sorted((ROOT / "git_memex").rglob("*.py")))
    return {"prose": prose[:KIND_SIZE], "env dump": _env_dump(rnd)[:KIND_SIZE],
            "log": _service_log(rnd)[:KIND_SIZE], "code": code[:KIND_SIZE]}


def _throughput(runs: int) -> list[str]:
    from git_memex.secrets.redact import redact

    formats_find: Callable[[str], Iterable[object]] | None = None
    with contextlib.suppress(ImportError):  # a checkout without the vendor-format table keeps None
        from git_memex.secrets.formats import find as formats_find
    lines = ["| text (64 KiB in 4 KiB notes) | detector, KiB/s | of which formats.py, KiB/s |", "|---|---|---|"]
    for kind, text in _kinds().items():
        notes = [text[i : i + NOTE] for i in range(0, len(text), NOTE)]
        kib = len(text.encode()) / 1024

        def rate(ts: list[float], kib: float = kib) -> str:
            r = sorted(kib / t for t in ts)
            return f"{statistics.median(r):,.0f} ({r[0]:,.0f}-{r[-1]:,.0f})"

        det = rate(_times(lambda _, notes=notes: [redact(n) for n in notes], None, runs))
        fmt = "n/a"
        if formats_find is not None:
            fmt = rate(_times(lambda _, notes=notes, f=formats_find: [list(f(n)) for n in notes], None, runs))
        lines.append(f"| {kind} | {det} | {fmt} |")
    return lines


FIRST = """
import sys, time
t0 = time.perf_counter()
from git_memex.secrets.redact import redact
t1 = time.perf_counter()
redact(sys.argv[1])
t2 = time.perf_counter()
redact(sys.argv[1] + " ")
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""
FIRST_FORMATS = FIRST.replace("from git_memex.secrets.redact import redact", "from git_memex.secrets.formats import find").replace(
    "redact(sys.argv[1])", "list(find(sys.argv[1]))").replace('redact(sys.argv[1] + " ")', 'list(find(sys.argv[1] + " "))')


def _first_call(fresh: int) -> str:
    """Import + first call + second call in fresh processes, with cached bytecode: of `redact`,
    and of the vendor-format table alone where the measured code has one."""
    note = _kinds()["env dump"][:NOTE]
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for label, script in (("redact", FIRST), ("formats.find alone", FIRST_FORMATS)):
            figures = []
            for i in range(fresh + 1):  # the first process writes the bytecode cache
                run = subprocess.run([sys.executable, "-c", script, note], env=env, cwd=cache, capture_output=True, text=True)
                if run.returncode:
                    break  # no formats.py in the measured code
                if i:
                    figures.append([float(x) for x in run.stdout.split()])
            if not figures:
                out.append(f"{label}: n/a")
                continue
            cols = list(zip(*figures, strict=True))
            med = [statistics.median(c) for c in cols]
            out.append(f"{label}: import {med[0]:.1f} ms, first call {med[1]:.1f} ({min(cols[1]):.1f}-{max(cols[1]):.1f}) ms, "
                       f"second {med[2]:.2f} ms")
    return f"fresh process, a 4 KiB env dump, median of {fresh}: " + "; ".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.secrets", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fresh", type=int, default=7, help="fresh processes for the first-call figure")
    ap.add_argument("--throughput-only", action="store_true", help="only the KiB/s table and the fresh-process figure")
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    args = ap.parse_args(argv)
    import git_memex

    lines = [] if args.throughput_only else _units(args.runs)
    lines += ["", *_throughput(args.runs), "", _first_call(args.fresh)]
    lines.insert(0, f"measured: {Path(git_memex.__file__).parent}\n")
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.out:
        args.out.write_text(table, "utf-8")
    return 0


def _units(runs: int) -> list[str]:
    """The corpus, the bodies full of findings and the long runs (the rows before the KiB/s table)."""
    from git_memex.secrets.redact import redact

    corpus = json.loads(CORPUS.read_text("utf-8"))
    texts = [e["text"] for e in corpus["positives"] + corpus["negatives"]]
    texts += [e["text"] for e in corpus["held_out"]["positives"] + corpus["held_out"]["negatives"]]

    def whole_corpus(_: object) -> None:
        for t in texts:
            redact(t)

    lines = ["| input | 16 KiB, ms | 64 KiB, ms | ratio |", "|---|---|---|---|"]
    ts = _times(whole_corpus, None, runs)
    lines.insert(0, f"corpus: {len(texts)} texts, {_fmt(ts)} ms for all, "
                    f"{statistics.median(ts) / len(texts) * 1e6:.0f} µs a text (median)\n")
    for label, unit in [*(("findings: " + f, f + "\n") for f in FULL_OF_FINDINGS),
                        *(("run: " + u, u) for u in UNITS)]:
        small, big = (_times(redact, _sized(unit, n), runs) for n in (16384, 65536))
        ratio = statistics.median(big) / max(statistics.median(small), 1e-9)
        lines.append(f"| {label!r} | {_fmt(small)} | {_fmt(big)} | {ratio:.1f} |")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())

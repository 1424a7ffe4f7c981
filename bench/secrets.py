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


_PROSE_WORDS = ("the build cache lives on the runner and is cleared when the lockfile changes so a "
                "fresh install takes about four minutes while a warm one takes twenty seconds we "
                "deploy from main after review and roll back by reverting the merge commit the "
                "staging database is read only on weekends and the proxy timeout is forty five "
                "seconds")


def _realistic(kind: str, size: int = 65536) -> str:
    """A text of `size` characters like those agents store: prose, an env dump, a log, code.
    Deterministic (seeded); roughly one line in forty holds a credential (all FAKE)."""
    import random
    import string

    rnd = random.Random(kind)
    alnum = string.ascii_letters + string.digits

    def tok(n: int) -> str:
        return "".join(rnd.choice(alnum) for _ in range(n))

    words = _PROSE_WORDS.split()
    lines: list[str] = []
    n = 0
    while n < size:
        i = len(lines)
        secret = i % 40 == 7
        if kind == "prose":
            line = " ".join(rnd.choice(words) for _ in range(rnd.randint(8, 20))).capitalize() + "."
            if secret:
                line += f" The staging password is Pr0d-{tok(8)}!"
        elif kind == "env":
            name = rnd.choice(("PATH", "HOME", "LANG", "NODE_ENV", "LOG_LEVEL", "REGION", "PORT", "TZ", "SHELL"))
            line = f"{name}_{i}={rnd.choice(('production', '/usr/local/bin', 'en_US.UTF-8', 'eu-west-1', '8080'))}"
            if secret:
                line = rnd.choice((f"GITHUB_TOKEN=ghp_{tok(36)}", f"DB_PASSWORD={tok(14)}9!",
                                   f"AWS_SECRET_ACCESS_KEY={tok(40)}"))
        elif kind == "log":
            line = (f"2026-03-0{i % 9 + 1}T10:{i % 60:02d}:{i % 59:02d}Z {rnd.choice(('INFO', 'DEBUG', 'WARN'))} "
                    f"worker-{i % 7} request id={tok(12)} path=/api/v2/items/{i} status=200 took={i % 97}ms")
            if secret:
                line += f" Authorization: Bearer {tok(40)}"
        else:  # code
            line = rnd.choice((f"    result = compute_total(items[{i}], discount=0.{i % 10})",
                               f"def handler_{i}(event, context):", "    return {'status': 'ok'}",
                               f"const url = `${{base}}/v1/items/${{id}}`; // {i}",
                               f"    if retries > {i % 5}: raise TimeoutError('upstream')"))
            if secret:
                line = f'API_KEY = "sk-{tok(40)}"  # FAKE' if i % 80 == 7 else f'password = "{tok(12)}7#"'
        lines.append(line)
        n += len(line) + 1
    return ("\n".join(lines))[:size]


def _realistic_throughput(runs: int) -> list[str]:
    """KiB/s of `redact` on each realistic text (whole, 64 KiB): median (min-max) of `runs` runs."""
    from git_memex.secrets.redact import redact

    rows = ["| text (64 KiB, a credential about every 40 lines) | KiB/s, median (min-max) | findings |", "|---|---|---|"]
    for kind in ("prose", "env", "log", "code"):
        text = _realistic(kind)
        ts = _times(redact, text, runs)
        kib = len(text.encode("utf-8")) / 1024
        speeds = sorted(kib / t for t in ts)
        rows.append(f"| {kind} | {statistics.median(speeds):.0f} ({speeds[0]:.0f}-{speeds[-1]:.0f}) "
                    f"| {len(redact(text).masked)} |")
    return rows


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
c0, t0 = time.process_time(), time.perf_counter()
from git_memex.secrets.redact import redact
c1, t1 = time.process_time(), time.perf_counter()
redact(sys.argv[1])
c2, t2 = time.process_time(), time.perf_counter()
redact(sys.argv[1] + " ")
c3 = time.process_time()
print((c1 - c0) * 1000, (c2 - c1) * 1000, (c3 - c2) * 1000, (t2 - t1) * 1000)
"""
# A hook's note: one password and one token (FAKE), and a 4 KiB env dump with nothing secret.
SECRET_NOTE = ("Deploy notes for the staging box.\npassword: Tr0ub4dor&3-staging\n"
               "CI uses GITHUB_TOKEN=ghp_R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a for releases.\n")


def _first_call(fresh: int) -> list[str]:
    """The first `redact` in a fresh process (what a hook pays), with cached bytecode as an
    installed package has: CPU ms of the import, the first call and a second call, median
    (min-max) of `fresh` processes, for a note with a password and a token and for a plain 4 KiB
    env dump."""
    out = [f"fresh process, CPU ms, median (min-max) of {fresh}:", "",
           "| note | import | first redact | second redact | first redact, wall |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        env["GIT_MEMEX_HOME"] = str(Path(cache) / "home")  # a data root of its own (no pattern cache yet)
        for label, note in (("a password and a token", SECRET_NOTE), ("4 KiB env dump", _kinds()["env dump"][:NOTE])):
            figures = []
            for i in range(fresh + 1):  # the first process writes the bytecode cache
                run = subprocess.run([sys.executable, "-c", FIRST, note], env=env, cwd=cache, capture_output=True, text=True)
                if run.returncode:
                    raise SystemExit(run.stderr)
                if i:
                    figures.append([float(x) for x in run.stdout.split()])
            cols = list(zip(*figures, strict=True))
            out.append(f"| {label} | " + " | ".join(
                f"{statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f})" for c in cols) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.secrets", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fresh", type=int, default=7, help="fresh processes for the first-call figure")
    ap.add_argument("--throughput", action="store_true", help="only the KiB/s tables and the fresh-process figures")
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    args = ap.parse_args(argv)
    import git_memex

    lines = [] if args.throughput else _units(args.runs)
    lines += ["", *_realistic_throughput(args.runs), "", *_throughput(args.runs), "", *_first_call(args.fresh)]
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

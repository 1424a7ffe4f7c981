"""`python -m bench.secrets`: what the secret detector costs on the texts it meets.

`--throughput`: KiB/s of `redact` on four realistic 64 KiB texts made here (prose, an environment
dump, a log, code; a few credentials in each), median (min-max) over `--runs` runs after a warm-up.
The script runs under any interpreter that has git-memex installed, so the same figures can be
taken for another checkout: ``cd /tmp && /path/to/other/.venv/bin/python /path/to/bench/secrets.py
--throughput`` imports that interpreter's git_memex (the file it read is printed).

Rows: the labelled corpus (`tests/data/secret_corpus.json`, every text redacted once: the cost
of a typical note), 64 KiB bodies full of findings (one credential a line), and 64 KiB runs of
the units that used to be, or could be, slow (`tests/secrets/test_redact.py` holds the same
units to a hang guard). Each row is the median (min-max) over `--runs` runs in this process,
after one warm-up run that compiles the patterns. The machine is shared: read the ratio between
the 16 KiB and 64 KiB columns (about 4 for a linear cost), not single figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "secret_corpus.json"
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


def throughput(runs: int) -> str:
    """KiB/s of `redact` on each realistic text: median (min-max) of `runs` runs."""
    import git_memex
    from git_memex.secrets.redact import redact

    rows = [f"git_memex from {Path(git_memex.__file__).parent}", "",
            "| text (64 KiB) | KiB/s, median (min-max) | findings |", "|---|---|---|"]
    for kind in ("prose", "env", "log", "code"):
        text = _realistic(kind)
        ts = _times(redact, text, runs)
        kib = len(text.encode("utf-8")) / 1024
        speeds = sorted(kib / t for t in ts)
        rows.append(f"| {kind} | {statistics.median(speeds):.0f} ({speeds[0]:.0f}-{speeds[-1]:.0f}) "
                    f"| {len(redact(text).masked)} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.secrets", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    ap.add_argument("--throughput", action="store_true", help="KiB/s on four realistic texts (see above)")
    args = ap.parse_args(argv)
    if args.throughput:
        table = throughput(args.runs)
        print(table, end="")
        if args.out:
            args.out.write_text(table, "utf-8")
        return 0
    from git_memex.secrets.redact import redact

    corpus = json.loads(CORPUS.read_text("utf-8"))
    texts = [e["text"] for e in corpus["positives"] + corpus["negatives"]]
    texts += [e["text"] for e in corpus["held_out"]["positives"] + corpus["held_out"]["negatives"]]

    def whole_corpus(_: object) -> None:
        for t in texts:
            redact(t)

    lines = ["| input | 16 KiB, ms | 64 KiB, ms | ratio |", "|---|---|---|---|"]
    ts = _times(whole_corpus, None, args.runs)
    lines.insert(0, f"corpus: {len(texts)} texts, {_fmt(ts)} ms for all, "
                    f"{statistics.median(ts) / len(texts) * 1e6:.0f} µs a text (median)\n")
    for label, unit in [*(("findings: " + f, f + "\n") for f in FULL_OF_FINDINGS),
                        *(("run: " + u, u) for u in UNITS)]:
        small, big = (_times(redact, _sized(unit, n), args.runs) for n in (16384, 65536))
        ratio = statistics.median(big) / max(statistics.median(small), 1e-9)
        lines.append(f"| {label!r} | {_fmt(small)} | {_fmt(big)} | {ratio:.1f} |")
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.out:
        args.out.write_text(table, "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

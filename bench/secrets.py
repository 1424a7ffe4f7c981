"""`python -m bench.secrets`: what the secret detector costs on the texts it meets.

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.secrets", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    args = ap.parse_args(argv)
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

"""`memex.cjkTokenizer bigram|trigram` (D8): which CJK indexing finds Chinese memories better?

    python -m bench.cjk_tokenizer [--json]

The Chinese queries of the shared sets: openmemex-eval's `zh` queries (10, against its 54
memories) and the `zh` queries of the synthetic 10k corpus (../shared/bench/gen_corpus.py
--n 10000 --seed 1 --cjk-share 0.15, the corpus bench.retrieval uses). Every variant is the same
plain FTS5 table (text, tags, CJK; bm25 weights 1, 2, 1; top 50); only the CJK indexing and
the query built from the CJK text differ, so the rows compare tokenizers and nothing else:

- `bigram`: what git-memex indexes (core/textproc.cjk_index_text: each character and every
  overlapping bigram of a CJK run) and searches (each bigram of the query's CJK runs).
- `trigram`: each character and every overlapping trigram; queries search the trigrams of their
  CJK runs, and a 2-character run as the phrase of its two characters (the best a trigram
  index can do for a 2-character word: it holds no token for one).
- `sqlite-trigram`: SQLite's own `tokenize='trigram'` on every column (3.40: a term under three
  characters matches nothing); queries search the CJK runs' trigrams and the Latin words.

A last row gives git-memex's real search (`git_memex.search.engine.search`, bigram) on the same
queries, for scale. Metrics as bench.retrieval: R@k share of queries with a relevant memory in
the top k, MRR over the top 50.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.retrieval import DEPTH, Scores, build_store, load
from bench.run import GEN

VARIANTS = ("bigram", "trigram", "sqlite-trigram")


def _grams(run: str, n: int) -> list[str]:
    if len(run) < n:
        return []
    return [run[i:i + n] for i in range(len(run) - n + 1)]


def _cjk_index(text: str, n: int) -> str:
    from git_memex.core.textproc import CJK_RE

    out: list[str] = []
    for run in CJK_RE.findall(text):
        out.extend(run)
        out.extend(_grams(run, n))
    return " ".join(out)


def _q(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _query(variant: str, text: str) -> str | None:
    from git_memex.core.textproc import CJK_RE, cjk_terms, latin_terms

    latin = [_q(t) + ("*" if variant != "sqlite-trigram" else "") for t in latin_terms(text)
             if variant != "sqlite-trigram" or len(t) >= 3]
    cjk: list[str] = []
    if variant == "bigram":
        cjk = [_q(g) for g in cjk_terms(text)]
    else:
        for run in CJK_RE.findall(text):
            grams = _grams(run, 3)
            if grams:
                cjk += [_q(g) for g in grams]
            elif variant == "trigram":
                cjk.append(_q(" ".join(run)))  # 1 or 2 characters: the phrase of its characters
    if variant == "sqlite-trigram":
        terms = latin + cjk
        return " OR ".join(dict.fromkeys(terms)) or None
    parts = []
    if latin:
        parts.append("(" + " OR ".join(dict.fromkeys(latin)) + ")")
    if cjk:
        parts.append("{cjk}:(" + " OR ".join(dict.fromkeys(cjk)) + ")")
    return " OR ".join(parts) or None


def _table(variant: str, memories: list[tuple[str, str, list[str]]]) -> sqlite3.Connection:
    from git_memex.core.textproc import CJK_RE, latin_text

    c = sqlite3.connect(":memory:")
    tok = "trigram" if variant == "sqlite-trigram" else "porter unicode61 remove_diacritics 2"
    c.execute(f"CREATE VIRTUAL TABLE t USING fts5(mid UNINDEXED, text, tags, cjk, tokenize='{tok}')")
    rows = []
    for mid, body, tags in memories:
        src = body + " " + " ".join(tags)
        if variant == "sqlite-trigram":
            cjk = "\n".join(CJK_RE.findall(src))
        else:
            cjk = _cjk_index(src, 2 if variant == "bigram" else 3)
        rows.append((mid, latin_text(body), latin_text(" ".join(tags)), cjk))
    c.executemany("INSERT INTO t(mid, text, tags, cjk) VALUES(?, ?, ?, ?)", rows)
    return c


def _rank(c: sqlite3.Connection, expr: str | None) -> list[str]:
    if not expr:
        return []
    try:
        return [r[0] for r in c.execute("SELECT mid FROM t WHERE t MATCH ? ORDER BY bm25(t, 0, 1, 2, 1), rowid LIMIT ?",
                                        (expr, DEPTH))]
    except sqlite3.OperationalError:
        return []


def _openmemex() -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, set[str]]], list[dict[str, Any]]]:
    data = load("openmemex-eval")
    mems = [(m["id"], m["text"], list(m.get("tags") or [])) for m in data["memories"]]
    queries = [(q["query"], set(q["relevant"])) for q in data["queries"] if q.get("lang") == "zh"]
    return mems, queries, data["memories"]


def _synthetic(tmp: Path) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, set[str]]]]:
    from git_memex.core import frontmatter

    out = tmp / "synthetic" / "mem"
    subprocess.run([sys.executable, str(GEN), "--n", "10000", "--seed", "1", "--cjk-share", "0.15", "--out", str(out)],
                   check=True, capture_output=True)
    mems = []
    for f in sorted(out.glob("*.md")):
        fm, body = frontmatter.parse(f.read_text(encoding="utf-8"))
        mems.append((str(fm.get("id") or f.stem), body, [str(t) for t in fm.get("tags") or []]))
    qs = json.loads((out.parent / "queries-10000.json").read_text(encoding="utf-8"))
    return mems, [(q["query"], {q["relevant"]}) for q in qs if q.get("lang") == "zh"]


def _engine(memories: list[dict[str, Any]] | None, mems: list[tuple[str, str, list[str]]],
            queries: list[tuple[str, set[str]]], tmp: Path, name: str) -> dict[str, float]:
    from git_memex.search.engine import search

    raw = memories if memories is not None else [{"id": m, "text": b, "tags": t} for m, b, t in mems]
    stores, back = build_store(tmp / f"engine-{name}", raw)
    s = Scores()
    try:
        for text, rel in queries:
            res = search(stores, text, limit=DEPTH, refresh=False)
            s.add([back.get(h.id, h.id) for h in res.hits], rel)
    finally:
        stores.close()
    return s.summary()


def run() -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="memex-cjk-") as tmpdir:
        tmp = Path(tmpdir)
        om_mems, om_queries, om_raw = _openmemex()
        sy_mems, sy_queries = _synthetic(tmp)
        for name, mems, queries, raw in (("openmemex-eval zh", om_mems, om_queries, om_raw),
                                         ("synthetic-10k zh", sy_mems, sy_queries, None)):
            for variant in VARIANTS:
                c = _table(variant, mems)
                s = Scores()
                for text, rel in queries:
                    s.add(_rank(c, _query(variant, text)), rel)
                c.close()
                results.append({"set": name, "variant": variant, **s.summary()})
            results.append({"set": name, "variant": "git-memex search (bigram)", **_engine(raw, mems, queries, tmp, name[:4])})
    return results


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| set | CJK indexing | queries | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['set']} | {r['variant']} | {r['queries']} | {r['R@1']} | {r['R@5']} | {r['R@10']} | {r['MRR']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.cjk_tokenizer", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = run()
    print(json.dumps(results, indent=2) if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How precise is each pinyin form a Han tag could be indexed with (docs/search.md, "Pinyin")?

    python -m bench.pinyin [--json]

Tags: the Han words of the shared sets, as a vocabulary of tags (openmemex-eval's Han tags and
the Chinese words of ../shared/bench/gen_corpus.py's templates, 2 to 4 characters each). English
queries: every `en` query of openmemex-eval, LoCoMo and the synthetic 10k query file (the
people who never meant pinyin). For each form of a tag's pinyin:

- `false hits`: the share of (tag, English query) pairs in which one of the query's words (as
  search parses it, matched as a prefix, as search does) finds a token of that form: the noise
  a Chinese-tagged memory would pick up from English searches.
- `queries hit`: the share of English queries that find at least one tag of the vocabulary.
- `shared`: the share of tags whose token is also another tag's (a query for it finds both).

Forms: `joined` (数据库 -> shujuku), `syllables` (shu, ju, ku as tokens of their own),
`initials-3` (sjk, for tags of three characters or more), `initials-2` (sj, for two).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.retrieval import load
from bench.run import GEN

FORMS = ("joined", "syllables", "initials-3", "initials-2")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]+")


def vocabulary() -> list[str]:
    words: set[str] = set()
    for m in load("openmemex-eval")["memories"]:
        for t in m.get("tags") or []:
            words.update(w for w in _HAN.findall(t))
    src = GEN.read_text(encoding="utf-8")
    for s in re.findall(r'"([^"]*)"', src):
        for seg in re.split(r"[|{} ]", s):
            words.update(_HAN.findall(seg))
    return sorted(w for w in words if 2 <= len(w) <= 4)


def english_queries() -> list[str]:
    out = [q["query"] for name in ("openmemex-eval", "locomo") for q in load(name)["queries"] if q.get("lang") != "zh"]
    with tempfile.TemporaryDirectory(prefix="memex-pinyin-") as tmp:
        dest = Path(tmp) / "mem"
        subprocess.run([sys.executable, str(GEN), "--n", "10000", "--seed", "1", "--cjk-share", "0.15", "--out", str(dest)],
                       check=True, capture_output=True)
        out += [q["query"] for q in json.loads((Path(tmp) / "queries-10000.json").read_text(encoding="utf-8"))
                if q.get("lang") != "zh"]
    return out


def tokens(word: str, form: str) -> set[str]:
    from pypinyin import lazy_pinyin

    syl = lazy_pinyin(word)
    if form == "joined":
        return {"".join(syl)}
    if form == "syllables":
        return set(syl)
    n = 3 if form == "initials-3" else 2
    if (len(word) >= 3) != (n == 3):
        return set()
    return {"".join(s[0] for s in syl)}


def measure() -> list[dict[str, Any]]:
    from git_memex.search.query import parse_query

    vocab = vocabulary()
    queries = [parse_query(q, expand=False).latin for q in english_queries()]
    rows = []
    for form in FORMS:
        toks = {w: tokens(w, form) for w in vocab}
        toks = {w: t for w, t in toks.items() if t}
        pairs = hit_queries = 0
        for terms in queries:
            hit = 0
            for t in toks.values():
                if any(tok.startswith(term) for term in terms for tok in t):
                    hit += 1
            pairs += hit
            hit_queries += hit > 0
        owners: dict[str, int] = {}
        for t in toks.values():
            for tok in t:
                owners[tok] = owners.get(tok, 0) + 1
        shared = sum(1 for t in toks.values() if any(owners[tok] > 1 for tok in t))
        rows.append({"form": form, "tags": len(toks), "queries": len(queries),
                     "false_hits": round(pairs / max(len(toks) * len(queries), 1), 5),
                     "queries_hit": round(hit_queries / max(len(queries), 1), 4),
                     "shared": round(shared / max(len(toks), 1), 3)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.pinyin", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = measure()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| form | tags | English queries | false hits (per tag, per query) | queries hit | shared |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['form']} | {r['tags']} | {r['queries']} | {r['false_hits']:.3%} | {r['queries_hit']:.1%} | {r['shared']:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

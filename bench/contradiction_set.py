"""Precision and recall of the contradiction finder on labelled pairs (docs/search.md).

    python -m bench.contradiction_set [FILE ...]

Each FILE is a labelled set: tests/data/contradictions/*.json ({"pairs": [{"label", "a", "b", ...}]})
or JSON lines ({"label", "a", "b"} a line; a line without a label is a compatible pair). Each pair
alone goes through the store's finder (`review.contradictions.find`, the path `audit`,
`sync-status` and `doctor` take), as two active memories of one tier and review state. Prints,
per file: contradictions flagged of all (recall), compatible pairs flagged of all, precision, and
with --misses the pairs it got wrong. Default: the six committed halves.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "contradictions"
HALVES = ("tuning.json", "heldout.json", "paraphrase-tuning.json", "paraphrase-heldout.json", "reworded-tuning.json",
          "reworded-heldout.json")


def load(path: Path) -> list[dict[str, Any]]:
    text = path.read_text("utf-8")
    if path.suffix == ".json":
        return list(json.loads(text)["pairs"])
    out = []
    for line in text.splitlines():
        if line.strip():
            p = json.loads(line)
            p.setdefault("label", "compatible")
            out.append(p)
    return out


def flagged(a: str, b: str) -> bool:
    from git_memex.review.contradictions import find

    rows = [{"id": f"m{i}", "body": t, "location": "project", "type": "fact", "source": "manual",
             "review_state": "published", "supersedes": None, "superseded_by": None} for i, t in enumerate((a, b))]
    return bool(find(rows))


def score(pairs: list[dict[str, Any]]) -> tuple[int, int, int, int, list[dict[str, Any]]]:
    tp = fp = pos = neg = 0
    wrong = []
    for p in pairs:
        f = flagged(p["a"], p["b"])
        if p["label"] == "contradiction":
            pos += 1
            tp += f
            if not f:
                wrong.append(p)
        else:
            neg += 1
            fp += f
            if f:
                wrong.append(p)
    return tp, pos, fp, neg, wrong


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--misses", action="store_true", help="print the pairs it got wrong")
    args = ap.parse_args(argv)
    files = args.files or [DATA / h for h in HALVES]
    for f in files:
        tp, pos, fp, neg, wrong = score(load(f))
        prec = tp / (tp + fp) if tp + fp else 1.0
        print(f"{f.name}: {tp} of {pos} contradictions flagged, {fp} of {neg} compatible flagged, precision {prec:.2f}")
        if args.misses:
            for p in wrong:
                print(f"   {p.get('id', p.get('n', ''))} [{p['label']}/{p.get('kind', '')}] {p['a']!r} | {p['b']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

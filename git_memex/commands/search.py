"""`git memex search QUERY`: ranked search over project and personal memories."""

from __future__ import annotations

from git_memex.commands._common import (
    TYPE_HELP,
    add_json,
    context,
    emit_json,
    label,
    short,
    warn,
)
from git_memex.core import model

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse is imported by main.py only when it parses (a plain search skips it)
    import argparse
    from typing import Any

READ_SCOPES = ("all", "both", "project", "personal", "org")  # as index.stores.READ_SCOPES (docs/org.md)
DEFAULTS: dict[str, Any] = {"scope": "all", "type": None, "limit": 8, "confidence": None, "explain": False,
                               "json": False}
"""Every option's value when it is not given: the parser's defaults, and a plain search's."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("search", help="search memories (BM25, CJK-aware)",
                       description="Search memories. Terms are OR-ed; only the newest of a supersede chain is "
                       "shown; retracted and archived memories never are.")
    p.add_argument("query", nargs="+", help="words to look for")
    p.add_argument("--scope", choices=READ_SCOPES,
                   help="all (default): project, personal and subscribed org memories; both: project and personal")
    p.add_argument("--type", choices=model.TYPES, metavar="TYPE", help=TYPE_HELP)
    p.add_argument("--limit", type=int, help=f"at most this many hits (default {DEFAULTS['limit']}); the output says "
                   "when more matched")
    p.add_argument("--confidence", choices=model.CONFIDENCES,
                   help="only memories of this confidence (low: the regret window)")
    p.add_argument("--explain", action="store_true", help="show the FTS expression and why each hit ranked where it did")
    add_json(p)
    p.set_defaults(func=run, **DEFAULTS)


class Plain:
    """The arguments of `search WORD...` with no option, as the parser would give them (DEFAULTS)."""

    command = "search"

    def __init__(self, words: list[str]) -> None:
        self.query = words
        self.func = run
        self.scope: str = DEFAULTS["scope"]
        self.type: str | None = DEFAULTS["type"]
        self.limit: int = DEFAULTS["limit"]
        self.confidence: str | None = DEFAULTS["confidence"]
        self.explain: bool = DEFAULTS["explain"]
        self.json: bool = DEFAULTS["json"]


def plain(argv: list[str]) -> Plain | None:
    """`search WORD...` where no word starts with `-` (an option, `--`, a negative number: the
    parser's to read): its arguments without building the parser, which costs a search ~6 ms
    (argparse, its help formatter's imports, the subcommand's parser). None otherwise."""
    words = argv[1:]
    if argv[:1] != ["search"] or not words or any(w.startswith("-") for w in words):
        return None
    return Plain(words)


def run(args: argparse.Namespace | Plain) -> int:
    from git_memex.ops import search

    q = " ".join(args.query)
    res = search(context(), q, scope=args.scope, type=args.type, limit=args.limit, explain=args.explain,
                 confidence=args.confidence)
    if args.json:
        emit_json(res)
        return 0
    warn(res.get("warnings"))
    if args.explain:
        print(f"fts: {res.get('fts')}")
        rk = res.get("ranking")
        if rk:
            words = ", ".join(f"{w['word']} df {w['documents']} idf {w['idf']}" for w in rk["words"])
            print(f"corpus: {rk['memories']} memories in {rk['indexes']} index{'es' if rk['indexes'] != 1 else ''}, "
                  f"avg length {rk['avg_length']} tokens; BM25F k1 {rk['k1']} b {rk['b']}; words: {words}")
            for ix in rk.get("per_index") or []:  # the share of each index, as ranked (rows this search may return)
                docs = ", ".join(f"{w} {d}" for w, d in ix["documents"].items())
                print(f"  index {ix['index']}: {ix['memories']} memories; df {docs}")
        print(semantic_line(res.get("semantic")))
        chains = res.get("precedence") or {}
        print("precedence where memories disagree: facts " + " › ".join(chains.get("fact", []))
              + "; preferences " + " › ".join(chains.get("preference", [])))
    if not res["hits"]:
        print(f"no memories match {q!r}")
        return 0
    w = max(len(h.get("short_id") or short(h["id"])) for h in res["hits"])
    for rank, h in enumerate(res["hits"], 1):
        print(f"{h.get('short_id') or short(h['id']):{w}}  {label(h):28}  {relevance(h['score'], res['hits'], rank)}  {h['snippet']}")
        if h.get("also_in"):
            from git_memex.agents.render import where_words

            print("    the same text is also in " + "; ".join(f"{where_words(c['location'])} {short(c['id'])}"
                                                          for c in h["also_in"]))
        if h.get("contradicts"):
            print(f"    {disagrees(h, res['hits'], res.get('disagreements', []))}")
        if args.explain:
            e = h["explain"]
            b = " ".join(f"{k}×{v}" for k, v in e["boosts"].items())
            sem = e.get("semantic")
            fused = f", dense {sem['dense']} fused {sem['fused']}" if sem else ""
            print(f"    rank {e['rank']}: words {e['words']}, bm25 {e['bm25']} (length {e['length']}), coverage {e['coverage']}, proximity "
                  f"{e['proximity']}, phrases {e['phrases']}, {b} -> lexical {e['lexical']}, score {round(h['score'], 4)}; "
                  f"{review_part(e.get('review'))}index {e['index']},"
                  f" lanes {','.join(h['lanes'])}{fused}" + (f" ({e['note']})" if "note" in e else ""))
            p = e.get("precedence")
            if p:
                where = f"org {h['org']}" if h.get("org") else p["tier"]
                print(f"    precedence: {p['kind']}, tier {p['rank']} of {p['of']} ({where})")
                doc = p.get("cites")
                if doc and doc.get("authoritative"):
                    print(f"    cites {doc['ref']}, an authoritative document (tier {doc['rank']} of {doc['of']}): "
                          "where they disagree, the document wins")
                elif doc:
                    print(f"    cites {doc['ref']} ({'exists' if doc['exists'] else 'not found' if doc['exists'] is False else 'not checked'}"
                          ", not marked authoritative)")
    if res.get("more"):
        print(f"({len(res['hits'])} shown; more memories matched: --limit N shows more)")
    for f in res.get("freshness", []):
        if f.get("note"):
            print(f"note: {f['note']}")
    for o in res.get("remote_revisions", []):
        print(f"note: {o['note']}")
    return 0


def review_part(review: dict | None) -> str:
    """--explain's review order of one hit (docs/search.md, "Reviewed knowledge first")."""
    if not review:
        return ""
    out = f"review {review['state'] or 'personal'} ({review['level']}"
    if review.get("above"):
        n = len(review["above"])
        out += f"; above {n} hit{'s' if n != 1 else ''} of higher score holding the same words: " + ", ".join(
            short(i) for i in review["above"])
    return out + "); "


def disagrees(h: dict, shown: list[dict], pairs: list[dict]) -> str:
    """The line under a hit (or listed memory) that another one shown disagrees with (docs/search.md)."""
    ids = {m["id"]: m.get("short_id") or short(m["id"]) for m in shown}
    parts = []
    for p in pairs:
        if h["id"] not in p["ids"]:
            continue
        other = p["ids"][1] if p["ids"][0] == h["id"] else p["ids"][0]
        said = f'{p["kind"]}: "{p["values"][0]}" vs "{p["values"][1]}"'
        if p["preferred"] == h["id"]:
            pref = f"precedence prefers this one: {p['why']}"
        elif p["preferred"]:
            pref = f"precedence prefers {ids.get(other, other)}: {p['why']}"
        else:
            pref = p["why"]
        parts.append(f"disagrees with {ids.get(other, other)} ({said}); {pref}")
    return "; ".join(parts) + "; a person decides (`git memex audit`)"


def relevance(score: float, hits: list[dict], rank: int) -> str:
    """A hit's score relative to the best one (1.00 = as good as the top hit), for people.

    Raw BM25 scores depend on the store's size: in a small store every hit scores about 3e-06,
    which `:.3f` printed as 0.000. Where scores cannot be compared (none positive), the rank."""
    top = max((h["score"] for h in hits), default=0.0)
    if top > 0 and score >= 0:
        return f"{score / top:4.2f}"
    return f"#{rank:<3}"


def semantic_line(lane: dict | None) -> str:
    """What --explain says about the semantic lane (docs/semantic.md)."""
    if not lane:
        return "semantic lane: off (pip install 'git-memex[semantic]', or memex.embeddingModel is off)"
    line = f"semantic lane: {lane['model']}, {lane['with_vectors']} of {lane['memories']} memories have vectors"
    if "alpha" in lane:
        line += f", fused with weight {lane['alpha']} on the lexical score"
    if lane["missing"]:
        line += f"; {lane['missing']} missing (run `git memex reindex --embeddings`)"
    return line

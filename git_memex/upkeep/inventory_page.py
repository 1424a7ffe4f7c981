"""The inventory as one self-contained static HTML page: inline CSS and JS, nothing fetched.

Every piece of memory text (bodies, tags, ids, authors) goes through `html.escape`, in element
text and in attributes alike; the script never parses memory text, it only hides and shows
rows the server side already rendered. A Content-Security-Policy meta tag allows exactly the
page's own style and script blocks (by their SHA-256) and no other source, so even a browser
that followed a link from the page could not load anything. `tests/upkeep/test_inventory_browser.py`
renders the page in a real headless Chromium.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from typing import Any

PAGE_LIST = 500
"""Most entries the page lists per finding; every memory is still a row of its full table."""

CSS_BASE = """
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--mute:#5f6b7a;--line:#e2e6eb;--accent:#3559c7;
--draft:#8a94a3;--proposed:#c98a12;--approved:#3577d4;--published:#2f9e5b;--rejected:#c9453b}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
header{background:#1d2330;color:#fff;padding:22px 32px 18px}
header h1{margin:0;font-size:22px;font-weight:600}
header h1 span{font-weight:400;color:#b8c3d6}
header p{margin:6px 0 0;color:#b8c3d6;font-size:13px}
main{max-width:1180px;margin:0 auto;padding:20px 24px 40px}
h2{font-size:15px;margin:0 0 10px;font-weight:600}
h2 .count{display:inline-block;min-width:22px;margin-left:6px;padding:0 7px;border-radius:10px;background:var(--line);color:var(--mute);font-size:12px;font-weight:500;text-align:center}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:12px;margin:0 0 16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card b{display:block;font-size:24px;font-weight:600}
.card span{color:var(--mute);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card.warn b{color:var(--rejected)}
.pipeline{display:flex;gap:8px;list-style:none;margin:0;padding:0;flex-wrap:wrap}
.pipeline li{flex:1 1 120px;border-radius:6px;padding:10px 12px;color:#fff;position:relative}
.pipeline li b{display:block;font-size:22px}
.pipeline li.draft{background:var(--draft)}.pipeline li.proposed{background:var(--proposed)}
.pipeline li.approved{background:var(--approved)}.pipeline li.published{background:var(--published)}
.pipeline li.rejected{background:var(--rejected);flex-grow:.6}
.pipeline li small{display:block;opacity:.85;font-size:11px;margin-top:2px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:16px;margin:0 0 16px}
.grid section{margin:0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--mute);font-weight:500;text-transform:uppercase;letter-spacing:.03em}
tr:last-child td{border-bottom:0}
td.kind{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
table.mem{table-layout:fixed}
.chunk{content-visibility:auto}
.chunk+.chunk table.mem tr:first-child td{border-top:1px solid var(--line)}
col.c-id{width:110px}col.c-when{width:96px}col.c-kind{width:215px}
tr.gone td{opacity:.55}
td.n{text-align:right;width:3em;font-variant-numeric:tabular-nums}
td.bar{width:45%}
td.bar span{display:block;height:10px;border-radius:5px;background:var(--accent);min-width:2px;margin-top:5px}
code,.id{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.id{color:var(--accent);white-space:nowrap}
.when{white-space:nowrap;color:var(--mute);font-size:12px}
.text{word-break:break-word}
.tag{display:inline-block;background:#eef1f6;color:var(--mute);border-radius:4px;padding:0 5px;margin:0 3px 0 0;font-size:11px}
.pill{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;color:#fff;background:var(--draft);white-space:nowrap}
.pill.proposed{background:var(--proposed)}.pill.approved{background:var(--approved)}
.pill.published{background:var(--published)}.pill.rejected{background:var(--rejected)}
.pill.personal,.pill.private{background:#7b5cc4}
.st{color:var(--mute);font-size:12px}
.filterbar{position:sticky;top:0;z-index:2;background:var(--bg);padding:10px 0;margin:0 0 6px;display:flex;gap:12px;align-items:center}
.filterbar input{flex:1;font:inherit;padding:9px 12px;border:1px solid #c9d0da;border-radius:6px;background:#fff}
.filterbar input:focus{outline:2px solid var(--accent);outline-offset:-1px}
.filterbar span{color:var(--mute);font-size:13px;white-space:nowrap}
.pair{border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:0 0 8px}
.pair .sim{float:right;color:var(--mute);font-size:12px}
.pair div.m{margin:3px 0}
.chain{margin:0 0 6px}
.chain .arrow{color:var(--mute);margin:0 6px}
.missing{color:var(--rejected)}
.none{color:var(--mute);margin:0}
.problem{color:var(--rejected);font-size:13px;margin:4px 0 0}
footer{color:var(--mute);font-size:12px;text-align:center;padding:0 0 30px}
"""

JS = """
(function () {
  var box = document.getElementById('filter');
  var shown = document.getElementById('shown');
  var groups = [];
  var items = Array.prototype.map.call(document.querySelectorAll('[data-search]'), function (el) {
    var sec = el.closest('section');
    var g = groups.filter(function (x) { return x.sec === sec; })[0];
    if (!g) {
      g = {sec: sec, all: 0, vis: 0, count: sec.querySelector('h2 .count'), none: sec.querySelector('.nomatch'),
           table: sec.querySelector('.rows')};
      groups.push(g);
    }
    g.all += 1;
    return {el: el, hay: el.getAttribute('data-search'), group: g};
  });
  function apply() {
    var terms = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
    groups.forEach(function (g) { g.vis = 0; });
    items.forEach(function (it) {
      var ok = true;
      for (var i = 0; i < terms.length && ok; i++) { ok = it.hay.indexOf(terms[i]) !== -1; }
      if (it.el.hidden === ok) { it.el.hidden = !ok; }
      if (ok) { it.group.vis += 1; }
    });
    groups.forEach(function (g) {
      if (g.sec.id === 'all') {
        shown.textContent = terms.length ? g.vis + ' of ' + g.all + ' memories match' : g.all + ' memories';
      }
      g.count.textContent = terms.length ? g.vis + ' of ' + g.all : g.all;
      if (g.none) { g.none.hidden = !(terms.length && !g.vis); }
      if (g.table) { g.table.hidden = !g.vis; }
    });
  }
  box.addEventListener('input', apply);
  apply();
})();
"""


CHUNK = 100
"""Rows per table in a long list (see `_table`)."""
ROW_PX = 31
"""A one-line row's height in Chromium at the page's font size (the first chunk's head included)."""


def _css() -> str:
    bars = "".join(f".p{i}{{width:{i}%}}" for i in range(101))
    # the height an off-screen chunk of n rows is taken to have until it is first drawn
    heights = "".join(f".r{n}{{contain-intrinsic-size:auto {n * ROW_PX}px}}" for n in range(1, CHUNK + 1))
    return CSS_BASE + bars + "\n" + heights + "\n"


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _search_key(e: dict[str, Any]) -> str:
    parts = [e["id"], e["snippet"], f"type:{e['type']}", f"scope:{e['scope']}", f"loc:{e['location']}",
             f"status:{e['status']}", f"role:{e['role']}", f"confidence:{e.get('confidence') or 'medium'}",
             *(f"tag:{t}" for t in e["tags"])]
    if e["review_state"]:
        parts.append(f"state:{e['review_state']}")
    if e.get("created_by"):
        parts.append(str(e["created_by"]))
    return " ".join(parts).lower()


def _pill(e: dict[str, Any]) -> str:
    if e["location"] in ("personal", "private"):
        return f'<span class="pill {e["location"]}">{e["location"]}</span>'
    state = e["review_state"] or "draft"
    return f'<span class="pill {esc(state)}">{esc(state)}</span>'


def _tags(e: dict[str, Any]) -> str:
    return "".join(f'<span class="tag">{esc(t)}</span>' for t in e["tags"])


def _row(e: dict[str, Any], cols: tuple[str, ...] = ("id", "when", "kind", "text")) -> str:
    cells = []
    for c in cols:
        if c == "id":
            cells.append(f'<td class="id" title="{esc(e["id"])}">{esc(e["id"][:10])}</td>')
        elif c == "when":
            cells.append(f'<td class="when">{esc((e["updated_at"] or "")[:10])}</td>')
        elif c == "kind":
            status = "" if e["status"] == "active" else f' <span class="st">{esc(e["status"])}</span>'
            cells.append(f'<td class="kind">{esc(e["type"])} {_pill(e)}{status}</td>')
        elif c == "text":
            cells.append(f'<td class="text">{esc(e["snippet"])} {_tags(e)}</td>')
    gone = ' class="gone"' if e["status"] not in ("active", "deprecated") else ""
    return f'<tr{gone} data-search="{esc(_search_key(e))}" data-id="{esc(e["id"])}">{"".join(cells)}</tr>'


def _table(rows: list[str], head: tuple[str, ...] = ("id", "changed", "kind", "memory")) -> str:
    if not rows:
        return '<p class="none">none</p>'
    th = "".join(f"<th>{h}</th>" for h in head)
    cols = '<colgroup><col class="c-id"><col class="c-when"><col class="c-kind"><col></colgroup>'
    # Rows in tables of CHUNK, each skipped by the browser's layout while off screen
    # (content-visibility), so filtering a page of thousands of memories stays quick.
    chunks = [
        f'<div class="chunk r{len(rows[i:i + CHUNK])}"><table class="mem">{cols}{f"<thead><tr>{th}</tr></thead>" if i == 0 else ""}'
        f'<tbody>{"".join(rows[i:i + CHUNK])}</tbody></table></div>'
        for i in range(0, len(rows), CHUNK)
    ]
    return f'<div class="rows">{"".join(chunks)}</div>' + _nomatch()


def _nomatch() -> str:
    return '<p class="none nomatch" hidden>nothing here matches the filter</p>'


def _section(sid: str, title: str, n: int, body: str, *, listed: bool = True) -> str:
    attr = ' data-list=""' if listed else ""
    return f'<section id="{sid}"{attr}><h2>{esc(title)}<span class="count">{n}</span></h2>{body}</section>'


def _more(total: int, listed: int | None = None) -> str:
    """A note under a finding's list when it lists fewer than `total`: the page lists PAGE_LIST at
    most; `listed` is how many the inventory itself holds where it is bounded (near-duplicates)."""
    shown = min(PAGE_LIST, total if listed is None else listed)
    if total <= shown:
        return ""
    json_lists = "lists them all" if listed is None or listed >= total else f"lists the first {listed}"
    return (f'<p class="none">the first {shown} of {total} are listed here; '
            f"<code>git memex inventory --format json</code> {json_lists}</p>")


def _counts(title: str, counts: dict[str, int]) -> str:
    top = max(counts.values(), default=0)
    rows = "".join(
        f'<tr><td>{esc(k)}</td><td class="n">{v}</td>'
        f'<td class="bar"><span class="p{round(100 * v / top) if top else 0}"></span></td></tr>'
        for k, v in counts.items()
    )
    body = f"<table><tbody>{rows}</tbody></table>" if rows else '<p class="none">none</p>'
    return f"<section><h2>{esc(title)}</h2>{body}</section>"


def _memory_line(e: dict[str, Any] | None, mid: str) -> str:
    if e is None:
        return f'<div class="m"><span class="id missing">{esc(mid[:10])}</span> <span class="missing">not here</span></div>'
    return (f'<div class="m"><span class="id" title="{esc(mid)}">{esc(mid[:10])}</span> {esc(e["type"])} {_pill(e)} '
            f'<span class="text">{esc(e["snippet"])}</span></div>')


def pair_note(pair: dict[str, Any]) -> str:
    """What a listed pair shares: a near-duplicate's similarity, or what a contradiction's two
    memories say differently (review/contradictions.py)."""
    if "values" in pair:
        return f'{pair["kind"]}: "{pair["values"][0]}" vs "{pair["values"][1]}"'
    return f"similarity {pair['similarity']}"


def _pairs(pairs: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]) -> str:
    out = []
    for p in pairs:
        a, b = by_id.get(p["a"]), by_id.get(p["b"])
        key = " ".join(_search_key(e) for e in (a, b) if e is not None)
        out.append(f'<div class="pair" data-search="{esc(key)}"><span class="sim">{esc(pair_note(p))}</span>'
                   f'{_memory_line(a, p["a"])}{_memory_line(b, p["b"])}</div>')
    return "".join(out) + _nomatch() if out else '<p class="none">none</p>'


def _chains(inv: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str:
    out = []
    for ch in inv["chains"][:PAGE_LIST]:
        links = []
        for mid in ch["ids"]:
            e = by_id.get(mid)
            if e is None:
                links.append(f'<span class="id missing" title="not here">{esc(mid[:10])} (not here)</span>')
            else:
                links.append(f'<span class="id" title="{esc(e["snippet"])}">{esc(mid[:10])}</span>'
                             f' <span class="st">{esc(e["status"])}</span>')
        key = " ".join(_search_key(by_id[m]) if m in by_id else m.lower() for m in ch["ids"])
        out.append(f'<div class="chain" data-search="{esc(key)}">' + '<span class="arrow">→</span>'.join(links) + "</div>")
    problems = "".join(f'<p class="problem">{esc(m)}</p>' for m in inv["chain_problems"][:PAGE_LIST])
    return ("".join(out) + _nomatch() if out else '<p class="none">none</p>') + _more(len(inv["chains"])) + problems


def render_html(inv: dict[str, Any]) -> str:
    from git_memex import __version__

    by_id = {e["id"]: e for e in inv["memories"]}
    c = inv["counts"]
    css, js = _css(), JS
    csp = (f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; img-src 'none'; "
           "base-uri 'none'; form-action 'none'")
    where = inv["project"] or "no repository"
    active = sum(v for k, v in c["status"].items() if k in ("active", "deprecated"))
    dups = len(inv["near_duplicates"]) + inv.get("near_duplicates_left_out", 0)  # listed at most 100 (audit's bound)
    cards = [
        (inv["total"], "memories", ""), (c["scope"].get("project", 0), "project", ""),
        (c["scope"].get("personal", 0), "personal", ""), (active, "active", ""),
        (len(inv["stale"]), f"stale ({inv['stale_days']} d)", "warn" if inv["stale"] else ""),
        (len(inv["contradictions"]), "contradictions", "warn" if inv["contradictions"] else ""),
        (dups, "near-duplicates", "warn" if inv["near_duplicates"] else ""),
    ]
    card_html = "".join(f'<div class="card {cls}"><b>{n}</b><span>{esc(label)}</span></div>' for n, label, cls in cards)
    stages = []
    for s in ("draft", "proposed", "approved", "published", "rejected"):
        ids = inv["pipeline"][s]
        sample = ", ".join(i[:8] for i in ids[:3]) + (" …" if len(ids) > 3 else "")
        stages.append(f'<li class="{s}"><b>{len(ids)}</b>{s}<small>{esc(sample) or "&nbsp;"}</small></li>')
    recent = [_row(by_id[i]) for i in inv["recent"]]
    stale = [_row(by_id[i]) for i in inv["stale"][:PAGE_LIST]]
    every = [_row(e) for e in inv["memories"]]
    body = [
        f'<header><h1>Memory inventory <span>· {esc(where)}</span></h1>'
        f'<p>generated {esc(inv["generated_at"])} · scope {esc(inv["scope"])} · {inv["total"]} memories'
        f'{" · " + esc(inv["work_tree"]) if inv["work_tree"] else ""}</p></header><main>',
        f'<div class="cards">{card_html}</div>',
        f'<section id="pipeline"><h2>Review pipeline</h2><ol class="pipeline">{"".join(stages)}</ol></section>',
        '<div class="grid">',
        _counts("By scope", c["scope"]), _counts("By location", c["location"]),
        _counts("By type", c["type"]), _counts("By review state", c["review_state"]),
        _counts("By status", c["status"]), _counts("By role", c["role"]),
        "</div>",
        '<div class="filterbar"><input id="filter" type="search" autocomplete="off" '
        'placeholder="Filter: words, an id, type:decision, state:proposed, scope:personal, tag:…" '
        f'aria-label="Filter memories"><span id="shown">{len(every)} memories</span></div>',
        _section("recent", "Recent changes", len(recent), _table(recent)),
        _section("stale", f"Stale: not changed in {inv['stale_days']} days", len(stale),
                 _table(stale) + _more(len(inv["stale"]))),
        _section("contradictions", "Possible contradictions", min(len(inv["contradictions"]), PAGE_LIST),
                 _pairs(inv["contradictions"][:PAGE_LIST], by_id) + _more(len(inv["contradictions"]))),
        _section("duplicates", "Near-duplicate pairs", min(len(inv["near_duplicates"]), PAGE_LIST),
                 _pairs(inv["near_duplicates"][:PAGE_LIST], by_id) + _more(dups, len(inv["near_duplicates"]))),
        _section("chains", "Supersede chains", min(len(inv["chains"]), PAGE_LIST), _chains(inv, by_id)),
        _section("all", "All memories", len(every), _table(every)),
        f"</main><footer>git-memex {esc(__version__)} · a static page: nothing on it is fetched from a network</footer>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="git-memex {esc(__version__)}">\n'
        f"<title>Memory inventory · {esc(where)}</title>\n"
        f"<style>{css}</style>\n</head><body>\n" + "\n".join(body) + f"\n<script>{js}</script>\n</body></html>\n"
    )

"""`git memex inventory`: the state of the memory at a glance, for a curator or a team lead.

`collect` reads every memory of the chosen scope once from the indexes (all statuses, bodies
through `guard.safe_bodies`, so a secret a file brought in by another road is masked as on every
read path) and derives the counts, the review pipeline, recent changes, stale memories, supersede
chains, possible contradictions (`review.contradictions.contradictions`) and near-duplicate pairs.
`render_text`, `render_json` and `render_html` turn that one dict into output; the HTML page is
one self-contained file (`inventory_page`). `write_out` writes it atomically and refuses to put
personal or private memories into a git work tree unless allowed.

Stale memories and near-duplicate pairs are found by `upkeep.audit`, the same finders `audit`
uses, so the page and `git memex audit` always agree.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.errors import FAILED, MemexError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context
    from git_memex.index.stores import Stores

STALE_DAYS = 90
"""An active memory not changed for this many days is listed as stale."""
RECENT = 15
"""How many of the most recently changed memories the inventory lists."""
LOCAL_ONLY = ("personal", "private")
"""Locations whose memories never leave this machine: the work-tree guard counts these."""
PIPELINE = ("draft", "proposed", "approved", "published", "rejected")
INVENTORY_VERSION = 1
TEXT_LIST = 20
"""Most entries the text format lists per finding (the JSON lists all; the page up to PAGE_LIST)."""


# ------------------------------------------------------------------ chains (plain records in)
def supersede_chains(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each supersede chain, oldest first, as {"ids": [...], "missing": [...]}; `missing` names
    ids a chain points to that are not among `rows` (a dangling `supersedes`/`superseded_by`)."""
    succ: dict[str, str] = {}
    pred: dict[str, str] = {}
    for r in sorted(rows.values(), key=lambda r: r["id"]):
        if r["supersedes"]:
            succ.setdefault(r["supersedes"], r["id"])
            pred.setdefault(r["id"], r["supersedes"])
        if r["superseded_by"]:
            succ.setdefault(r["id"], r["superseded_by"])
            pred.setdefault(r["superseded_by"], r["id"])
    nodes = set(succ) | set(pred)
    out: list[dict[str, Any]] = []
    done: set[str] = set()
    for start in sorted(nodes, key=lambda n: (n in pred, n)):  # the oldest ends first, then cycles
        if start in done:
            continue
        ids = [start]
        done.add(start)
        while ids[-1] in succ and succ[ids[-1]] not in done:
            ids.append(succ[ids[-1]])
            done.add(ids[-1])
        out.append({"ids": ids, "missing": [i for i in ids if i not in rows]})
    return out


def chain_problems(rows: dict[str, dict[str, Any]], disagreements: Any) -> list[str]:
    """`chains.disagreements` over `rows`, plus each `superseded_by` naming a memory not among them
    (a dangling successor, which `disagreements` leaves to the view that has the successor)."""
    out = [msg for _level, msg in disagreements(rows)]
    for r in sorted(rows.values(), key=lambda r: r["id"]):
        sb = r["superseded_by"]
        if sb and sb not in rows:
            out.append(f"{r['id']} names {sb} as its successor, which is not here")
    return out


# ------------------------------------------------------------------ collect
def _entry(r: Any, body: str, tags: list[str]) -> dict[str, Any]:
    """One memory as the inventory shows it: `body` and `tags` as `guard` gives them (masked)."""
    from git_memex.search.engine import _snippet
    from git_memex.secrets.admission import mask_value

    loc = r["location"]
    return {
        "id": r["id"],
        "scope": "personal" if loc == "personal" else "project",
        "location": loc,
        "type": r["type"],
        "status": r["status"] or "active",
        "review_state": None if loc == "personal" else (r["standing"] or "draft"),  # as it stands (core.model.standing)
        "role": r["role"] or "knowledge",
        "importance": r["importance"],
        "confidence": r["confidence"] or "medium",
        "visibility": r["visibility"],
        "created_by": mask_value(r["created_by"])[0],
        "created_at": r["created_at"],
        "updated_at": r["updated_at"],
        "updated_ts": r["updated_ts"],
        "tags": tags,
        "supersedes": r["supersedes"],
        "superseded_by": r["superseded_by"],
        "snippet": _snippet(body, []),
    }


def collect(ctx: Context, *, scope: str = "both", now: float | None = None, stores: Stores | None = None) -> dict[str, Any]:
    """Everything the inventory shows, as one JSON-able dict."""
    from git_memex.index.stores import opened, scope_filter
    from git_memex.review.contradictions import contradictions
    from git_memex.search.chains import disagreements, superseded_ids
    from git_memex.secrets.guard import safe_bodies, safe_tags

    at = time.time() if now is None else now
    with opened(ctx, stores) as st:
        st.refresh()
        raw = st.by_id(scope_filter(scope))  # the repository's copy first, as `find` does
        bodies = safe_bodies(st, [(mid, r["body"]) for mid, r in raw.items()])
        tags = safe_tags(st, [(mid, json.loads(r["tags"] or "[]")) for mid, r in raw.items()])
        entries = {mid: _entry(r, bodies[mid], tags[mid]) for mid, r in raw.items()}
        # the newer side of a chain is the authority (search/chains.py): a memory a live one
        # replaces is superseded here as in list and search, whatever its own file still says
        for mid in superseded_ids(st, list(entries)):
            if entries[mid]["status"] in ("active", "deprecated"):
                entries[mid]["status"] = "superseded"
        pairs = contradictions(ctx, stores=st)
        warnings = list(st.warnings)
    # newest first; within one second (times have seconds) the newer id first
    memories = sorted(entries.values(), key=lambda e: (e["updated_ts"] or 0, e["id"]), reverse=True)
    active = [e for e in memories if e["status"] in ("active", "deprecated")]
    project = [e for e in memories if e["scope"] == "project"]

    def counts(key: str, of: list[dict[str, Any]], order: tuple[str, ...] = ()) -> dict[str, int]:
        c = Counter(str(e[key]) for e in of)
        return {k: c[k] for k in (*[o for o in order if c[o]], *sorted(k for k in c if k not in order))}

    # the review pipeline: project memories a review can still move (not private, not replaced or withdrawn)
    moving = [e for e in project if e["location"] != "private" and e["status"] in ("active", "deprecated")]
    pipeline = {s: [e["id"] for e in moving if e["review_state"] == s] for s in PIPELINE}
    contra = [p for p in pairs if p["a"] in entries and p["b"] in entries]
    from git_memex.upkeep.audit import NEAR_DUPLICATE_LIMIT, near_duplicate_pairs, stale_memories

    # bounded as audit bounds them: n memories written alike are n(n-1)/2 pairs, most similar first
    found_dups = near_duplicate_pairs(
        {"id": e["id"], "status": e["status"], "location": e["location"], "body": bodies[e["id"]]} for e in active)
    dups = [p.to_json() for p in found_dups[:NEAR_DUPLICATE_LIMIT]]
    chain_rows = {e["id"]: e for e in memories}
    return {
        "inventory_version": INVENTORY_VERSION,
        "generated_at": model.epoch_ms_to_rfc3339(at * 1000),
        "project": ctx.project_name if ctx.repo is not None else None,
        "work_tree": str(ctx.repo.work_tree) if ctx.repo is not None else None,
        "scope": scope,
        "stale_days": STALE_DAYS,
        "total": len(memories),
        "local_only": sum(1 for e in memories if e["location"] in LOCAL_ONLY),
        "counts": {
            "scope": counts("scope", memories, ("project", "personal")),
            "location": counts("location", memories, ("repo", "outbox", "private", "personal")),
            "type": counts("type", memories),
            "review_state": counts("review_state", [e for e in project if e["location"] != "private"], PIPELINE),
            "status": counts("status", memories, model.STATUSES),
            "role": counts("role", memories, model.ROLES),
        },
        "pipeline": pipeline,
        "recent": [e["id"] for e in memories[:RECENT]],
        "stale": [m.id for m in stale_memories(memories, now=at)],
        "chains": supersede_chains(chain_rows),
        "chain_problems": chain_problems(chain_rows, disagreements),
        "contradictions": contra,
        "near_duplicates": dups,
        "near_duplicates_left_out": len(found_dups) - len(dups),
        "memories": memories,
        "warnings": warnings,
    }


# ------------------------------------------------------------------ render
def _label(e: dict[str, Any]) -> str:
    out = f"{e['scope']}/{e['type']}"
    if e["review_state"] and e["location"] != "private":
        out += f" [{e['review_state']}]"
    if e["location"] == "private":
        out += " [private]"
    if e["status"] != "active":
        out += f" ({e['status']})"
    return out


def _joined(c: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.items()) or "none"


def _clip(text: str, n: int = 72) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def render_text(inv: dict[str, Any]) -> str:
    by_id = {e["id"]: e for e in inv["memories"]}

    def line(mid: str, indent: str = "  ") -> str:
        e = by_id.get(mid)
        if e is None:
            return f"{indent}{mid[:10]}  (not here)"
        day = (e["updated_at"] or "")[:10]
        return f"{indent}{mid[:10]}  {day:10}  {_label(e):30}  {_clip(e['snippet'])}"

    c = inv["counts"]
    where = inv["project"] or "outside a git repository"
    out = [f"git-memex inventory of {where} (scope {inv['scope']}), {inv['generated_at']}"]
    loc = {k: v for k, v in c["location"].items() if k != "personal"}
    out.append(f"{inv['total']} memories: {c['scope'].get('project', 0)} project ({_joined(loc)}), "
               f"{c['scope'].get('personal', 0)} personal")
    out.append(f"status: {_joined(c['status'])}")
    out.append(f"types: {_joined(c['type'])}")
    p = {s: len(v) for s, v in inv["pipeline"].items()}
    out.append(f"review pipeline: draft {p['draft']} → proposed {p['proposed']} → approved {p['approved']} "
               f"→ published {p['published']}; rejected {p['rejected']}")
    def more(items: list[Any], n: int, listed: str = "lists them all") -> list[str]:
        return [f"  … and {n - len(items)} more (--format json {listed})"] if n > len(items) else []

    stale = inv["stale"][:TEXT_LIST]
    chains = inv["chains"][:TEXT_LIST]
    sections: list[tuple[str, list[str]]] = [
        (f"recent changes ({len(inv['recent'])})", [line(i) for i in inv["recent"]]),
        (f"stale: not changed in {inv['stale_days']} days ({len(inv['stale'])})",
         [line(i) for i in stale] + more(stale, len(inv["stale"]))),
        (f"supersede chains ({len(inv['chains'])})",
         ["  " + " → ".join(i[:10] + (" (not here)" if i in ch["missing"] else "") for i in ch["ids"])
          for ch in chains] + more(chains, len(inv["chains"])) + [f"  problem: {m}" for m in inv["chain_problems"]]),
    ]
    for title, key in (("possible contradictions", "contradictions"), ("near-duplicate pairs", "near_duplicates")):
        rows = []
        shown = inv[key][:TEXT_LIST]
        total = len(inv[key]) + inv.get(f"{key}_left_out", 0)
        listed = f"lists the first {len(inv[key])}" if total > len(inv[key]) else "lists them all"
        for pair in shown:
            from git_memex.upkeep.inventory_page import pair_note

            rows.append(f"  {pair['a'][:10]} and {pair['b'][:10]} ({pair_note(pair)})")
            rows += [line(pair["a"], "    "), line(pair["b"], "    ")]
        sections.append((f"{title} ({total})", rows + more(shown, total, listed)))
    for title, rows in sections:
        out.append("")
        out.append(title)
        out.extend(rows or ["  none"])
    for w in inv["warnings"]:
        out.append(f"warning: {w}")
    return "\n".join(out) + "\n"


def render_json(inv: dict[str, Any]) -> str:
    return json.dumps(inv, ensure_ascii=False, indent=2, default=str) + "\n"


def render(inv: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return render_json(inv)
    if fmt == "html":
        from git_memex.upkeep.inventory_page import render_html

        return render_html(inv)
    return render_text(inv)


# ------------------------------------------------------------------ write
def work_tree_of(folder: Path) -> Path | None:
    """The git work tree `folder` lies in, or None; fails closed (`data_root.enclosing_work_tree`)."""
    from git_memex.core.data_root import enclosing_work_tree

    return enclosing_work_tree(folder)


def _refuse_local(inv: dict[str, Any], target: str, folder: Path) -> None:
    tree = work_tree_of(folder)
    if tree is None:
        return
    loc = inv["counts"]["location"]
    held = [f"{n} {kind}" for kind, n in (("personal", loc.get("personal", 0)), ("private", loc.get("private", 0))) if n]
    n = inv["local_only"]
    ways = "write it elsewhere, " + ("use --scope project, " if not loc.get("private") else "")
    raise MemexError(
        f"the inventory holds {' and '.join(held)} {'memory that never leaves' if n == 1 else 'memories that never leave'} "
        f"this machine, and {target} is inside the git work tree {tree}; {ways}or pass --allow-personal "
        "(nothing was written)", FAILED)


def write_out(inv: dict[str, Any], text: str, out: str | None, *, allow_personal: bool = False) -> str | None:
    """Write `text` to the file `out` in one step (0600 when it holds personal or private
    memories), or to stdout when `out` is None or "-"; return the path written, or None.
    Refused (exit 2, nothing written) when that would put personal or private memories into a
    git work tree without `allow_personal`."""
    import sys

    local = inv["local_only"] > 0
    if out is None or out == "-":
        path = _stdout_file()
        if local and not allow_personal and path is not None:
            _refuse_local(inv, f"standard output ({path})", path.parent)
        sys.stdout.write(text)
        return None
    target = Path(out)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise MemexError(f"{out} is a folder; give a file name for --out (nothing was written)", FAILED)
    if not folder.is_dir():
        why = "is not a folder" if folder.exists() else "does not exist"
        raise MemexError(f"cannot write {out}: {folder} {why} (nothing was written)", FAILED)
    if local and not allow_personal:
        _refuse_local(inv, out, folder)
    from git_memex.core.files import atomic_write_text

    try:
        atomic_write_text(target, text, 0o600 if local else None)
    except OSError as exc:
        raise MemexError(f"cannot write {out} ({exc.strerror or exc}); nothing was written", FAILED) from None
    return str(target)


def _stdout_file() -> Path | None:
    """The regular file standard output is redirected to (Linux /proc), or None."""
    import stat
    import sys

    try:
        if not stat.S_ISREG(os.fstat(sys.stdout.fileno()).st_mode):
            return None
        return Path(os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}"))
    except (OSError, ValueError, AttributeError):
        return None

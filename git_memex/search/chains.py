"""Supersede chains: which memory replaces which, read from the indexes.

A chain has two sides: the newer memory's ``supersedes`` and the older one's
``superseded_by`` + ``status: superseded``. `git memex supersede` writes the newer file first,
so an interrupted run, or a hand edit of one file, can leave only the newer side. The newer
side is the authority: a memory is superseded as soon as a live (not retracted or archived)
memory names it in ``supersedes``, whatever its own file says. Search, list, context and show
use that view; `reindex` completes the older files to match it; `doctor` reports chains whose
sides disagree.

A link counts only where its writer could have made it (`may_supersede`, the one rule every
reader and the repair go through): a memory replaces one of its own location, and an outbox draft
also a repository memory (what `supersede` of a team memory writes before `submit`). A
repository file (a teammate's, arriving by checkout or merge) naming a personal, private or
outbox memory in ``supersedes``, an org or remote memory naming one outside its own org or
server, or a personal memory naming a project one, hides nothing and is never repaired: no file
of the data root is ever rewritten because of a file from the repository, and no file is rewritten
in an org clone or a remote cache (those change only through their pull).

A link on a cycle of ``supersedes`` links (a memory naming itself, two naming each other, a longer
ring) counts for neither side (`on_cycles`): a ring would otherwise hide every memory in it, and
the repair would write each as superseded by another. `doctor` and `audit` report the ring for a
person to break; the pre-commit hook refuses a file naming itself (`secrets.scan`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from git_memex.index.stores import Stores

# A replacement that was itself retracted or archived replaces nothing.
_GONE = ("retracted", "archived")
_LIVE = f"m.status NOT IN ({', '.join(repr(s) for s in _GONE)})"
# Where a chain repair may rewrite the older file: the locations this machine writes (an org
# clone and a remote cache change only through their pull).
REPAIRABLE = ("repo", "outbox", "private", "personal")


def may_supersede(new_location: str, old_location: str) -> bool:
    """Whether a memory at `new_location` may replace one at `old_location` (module docstring):
    the same location (personal by personal, repository by repository, one org's or one remote's
    memories among themselves), or an outbox draft replacing a repository memory."""
    return new_location == old_location or (new_location == "outbox" and old_location == "repo")


def links(stores: Stores, old_ids: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(newer id, older id, older location) for every live memory that names another in
    ``supersedes`` and may replace that copy of it (`may_supersede`), in both indexes; only
    those replacing one of `old_ids` when given (an empty list gives [])."""
    from git_memex.index.database import in_chunks

    if old_ids is None:
        conds: list[tuple[str, list[str]]] = [("m.supersedes IS NOT NULL", [])]
    else:
        conds = [(f"m.supersedes IN ({marks})", chunk) for chunk, marks in in_chunks(old_ids)]
    newer: list[tuple[str, str, str]] = []
    for cond, args in conds:
        newer.extend((r[0], r[1], r[2]) for r in stores.rows(f"{cond} AND {_LIVE}", args,
                                                             columns="m.id, m.supersedes, m.location"))
    if not newer:
        return []
    where: dict[str, list[str]] = {}
    for chunk, marks in in_chunks(sorted({old for _n, old, _l in newer})):
        for mid, loc in stores.rows(f"m.id IN ({marks})", chunk, columns="m.id, m.location"):
            where.setdefault(mid, []).append(loc)
    cyclic = on_cycles(stores, [(new, old) for new, old, _l in newer])
    return [(new, old, loc) for new, old, new_loc in newer for loc in dict.fromkeys(where.get(old, ()))
            if may_supersede(new_loc, loc) and (new, old) not in cyclic]


MAX_CHAIN = 64
"""How far `on_cycles` follows ``supersedes`` from a link before it stops looking for a way back."""


def on_cycles(stores: Stores, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The links among `pairs` ((newer id, older id), from live memories' ``supersedes``) that lie on
    a cycle of such links: a memory naming itself, two naming each other, or a longer ring. A link
    on a cycle counts for neither side (`links`): each memory of a ring would hide another and the
    ring would vanish from every read, and `reindex` would write it as superseded; `disagreements`
    reports it instead, for a person to break. One query per step along the chains, only when a
    link's older memory itself names another (a chain of one link costs one query)."""
    from git_memex.index.database import in_chunks

    out = {(n, o) for n, o in pairs if n == o}
    rest = [(n, o) for n, o in pairs if n != o]
    if not rest:
        return out
    graph: dict[str, set[str]] = {}
    frontier = {o for _n, o in rest}
    seen: set[str] = set()
    for _ in range(MAX_CHAIN):
        frontier -= seen
        if not frontier:
            break
        seen |= frontier
        nxt: set[str] = set()
        for chunk, marks in in_chunks(sorted(frontier)):
            for mid, older in stores.rows(f"m.id IN ({marks}) AND m.supersedes IS NOT NULL AND {_LIVE}", chunk,
                                          columns="m.id, m.supersedes"):
                graph.setdefault(str(mid), set()).add(str(older))
                nxt.add(str(older))
        frontier = nxt
    for new, old in rest:
        todo, reached = [old], {old}
        while todo and new not in reached:
            for x in graph.get(todo.pop(), ()):
                if x not in reached:
                    reached.add(x)
                    todo.append(x)
        if new in reached:
            out.add((new, old))
    return out


def cycles(rows: dict[str, Any]) -> list[list[str]]:
    """Each ring of ``supersedes`` links among `rows` (id -> row with id, supersedes, status), live
    memories only, as its ids from the smallest, once: what `on_cycles` makes count for neither side."""
    out: list[list[str]] = []
    done: set[str] = set()
    for start in sorted(rows):
        path: list[str] = []
        cur: str | None = start
        while cur is not None and cur in rows and cur not in path and cur not in done \
                and rows[cur]["status"] not in _GONE:
            path.append(cur)
            cur = rows[cur]["supersedes"] or None
        if cur is not None and cur in path:
            ring = path[path.index(cur):]
            k = ring.index(min(ring))
            out.append(ring[k:] + ring[:k])
        done.update(path)
    return out


def replacements(stores: Stores, old_ids: list[str] | None = None) -> list[tuple[str, str]]:
    """(newer id, older id) for every link that counts (`links`); only those replacing one of
    `old_ids` when given (an empty list gives [])."""
    return list(dict.fromkeys((new, old) for new, old, _loc in links(stores, old_ids)))


def superseded_ids(stores: Stores, ids: list[str]) -> set[str]:
    """Ids among `ids` that a live newer memory replaces (hand-broken chains included)."""
    return {old for _new, old in replacements(stores, ids)}


def successor(stores: Stores, memory_id: str) -> str | None:
    """The live memory that replaces `memory_id`, if any (the first index that has one wins)."""
    found = replacements(stores, [memory_id])
    return found[0][0] if found else None


def disagreements(rows: dict[str, Any]) -> list[tuple[str, str]]:
    """(level, sentence) for each chain whose two sides disagree, over `rows` (id -> index row
    with id, supersedes, superseded_by, status) of one view of the store.

    Retracted and archived memories neither replace nor need replacing, exactly as in
    `replacements`, so what is reported as fixable by `reindex` is what `reindex` fixes."""
    out: list[tuple[str, str]] = []
    ring_links: set[tuple[str, str]] = set()
    for ring in cycles(rows):
        ring_links |= {(a, ring[(k + 1) % len(ring)]) for k, a in enumerate(ring)}
        if len(ring) == 1:
            out.append(("fail", f"{ring[0]} names itself in `supersedes`: the link counts for nothing; remove it"))
        else:
            out.append(("fail", f"supersede links form a cycle: {' → '.join([*ring, ring[0]])} (each names the next in "
                                "`supersedes`): they count for none of them, and `reindex` repairs none; "
                                "remove the link that is wrong by hand"))
    for r in rows.values():
        old_id = r["supersedes"]
        if old_id and r["status"] not in _GONE and (r["id"], old_id) not in ring_links:
            old = rows.get(old_id)
            if old is None:
                out.append(("warn", f"{r['id']} replaces {old_id}, which is not here"))
            elif not may_supersede(r["location"], old["location"]):
                out.append(("warn", f"{r['id']} ({r['location']}) names {old_id} ({old['location']}) in `supersedes`, "
                                    f"but a {r['location']} memory cannot replace a {old['location']} one: "
                                    "the link is ignored and nothing is hidden"))
            elif old["status"] not in _GONE and (old["superseded_by"] != r["id"] or old["status"] != "superseded"):
                out.append(("fail", f"{r['id']} replaces {old_id}, but {old_id} does not point back: "
                                    f"`git memex reindex` sets its superseded_by and status: superseded"))
        new_id = r["superseded_by"]
        if new_id:
            new = rows.get(new_id)
            if new is not None and not may_supersede(new["location"], r["location"]):
                out.append(("fail", f"{r['id']} ({r['location']}) names {new_id} ({new['location']}) as its successor, "
                                    f"but a {new['location']} memory cannot replace a {r['location']} one; "
                                    f"set {r['id']}'s status back to active and remove its superseded_by"))
            elif new is not None and new["supersedes"] != r["id"]:
                out.append(("fail", f"{r['id']} names {new_id} as its successor, but {new_id} does not name it "
                                    "in `supersedes`; fix one of the two files by hand"))
    return out

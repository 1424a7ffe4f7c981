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
    return [(new, old, loc) for new, old, new_loc in newer for loc in dict.fromkeys(where.get(old, ()))
            if may_supersede(new_loc, loc)]


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
    for r in rows.values():
        old_id = r["supersedes"]
        if old_id and r["status"] not in _GONE:
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

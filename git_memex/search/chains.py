"""Supersede chains: which memory replaces which, read from the indexes.

A chain has two sides: the newer memory's ``supersedes`` and the older one's
``superseded_by`` + ``status: superseded``. `git memex supersede` writes the newer file first,
so an interrupted run, or a hand edit of one file, can leave only the newer side. The newer
side is the authority: a memory is superseded as soon as a live (not retracted or archived)
memory names it in ``supersedes``, whatever its own file says. Search, list, context and show
use that view; `reindex` completes the older files to match it; `doctor` reports chains whose
sides disagree.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from git_memex.index.stores import Stores

# A replacement that was itself retracted or archived replaces nothing.
_GONE = ("retracted", "archived")
_LIVE = f"m.status NOT IN ({', '.join(repr(s) for s in _GONE)})"


def replacements(stores: Stores, old_ids: list[str] | None = None) -> list[tuple[str, str]]:
    """(newer id, older id) for every live memory that names another in ``supersedes``, in both
    indexes; only those replacing one of `old_ids` when given (an empty list gives [])."""
    from git_memex.index.database import in_chunks

    if old_ids is None:
        conds: list[tuple[str, list[str]]] = [("m.supersedes IS NOT NULL", [])]
    else:
        conds = [(f"m.supersedes IN ({marks})", chunk) for chunk, marks in in_chunks(old_ids)]
    out: list[tuple[str, str]] = []
    for cond, args in conds:
        out.extend((new, old) for new, old in stores.rows(f"{cond} AND {_LIVE}", args, columns="m.id, m.supersedes"))
    return out


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
            elif old["status"] not in _GONE and (old["superseded_by"] != r["id"] or old["status"] != "superseded"):
                out.append(("fail", f"{r['id']} replaces {old_id}, but {old_id} does not point back: "
                                    f"`git memex reindex` sets its superseded_by and status: superseded"))
        new_id = r["superseded_by"]
        if new_id:
            new = rows.get(new_id)
            if new is not None and new["supersedes"] != r["id"]:
                out.append(("fail", f"{r['id']} names {new_id} as its successor, but {new_id} does not name it "
                                    "in `supersedes`; fix one of the two files by hand"))
    return out

"""promote: move a repository memory up the review ladder, or reject it.
"""

from __future__ import annotations

from typing import Any

from git_memex.core import model
from git_memex.core.files import (
    read_memory,
    write_memory,
)
from git_memex.core.identity import actor
from git_memex.core.paths import Context
from git_memex.errors import MemexError, UsageError
from git_memex.index.stores import Stores, opened
from git_memex.review.history import LADDER, record_step


def promote(ctx: Context, memory_id: str, *, reject: bool = False, note: str | None = None,
            resubmit: bool = False, by: str | None = None, stores: Stores | None = None) -> dict[str, Any]:
    if reject and resubmit:
        raise UsageError("--reject and --resubmit cannot be combined")
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find(memory_id)
        if found.row["location"] != "repo":
            where = found.row["location"]
            hint = "submit it first (`git memex submit ID`)" if where == "outbox" else "only repository memories are reviewed"
            raise MemexError(f"{found.row['id']} is in the {where}, not the repository; {hint}", 1)
        m = read_memory(found.path)
        cur = m.fm.get("review_state") or "draft"
        who = by or actor(ctx)
        if reject:
            if cur not in ("proposed", "approved"):
                raise MemexError(f"{m.id} is {cur}; only proposed or approved memories can be rejected", 1)
            if not note or not note.strip():
                raise UsageError("a rejection needs a reason: --note \"why\"")
            new = "rejected"
            # a rejected memory has no approver; the key is dropped, never written as `null`
            # (which turned a rejection of a never-approved memory into a needless merge conflict)
            m.fm.pop("approved_by", None)
            m.fm["review_note"] = note.strip()
        elif resubmit:
            if cur != "rejected":
                raise MemexError(f"{m.id} is {cur}; only rejected memories can be resubmitted", 1)
            new = "proposed"
        else:
            if cur == "rejected":
                raise MemexError(f"{m.id} was rejected; revise it, then `git memex promote {m.id} --resubmit`", 1)
            if cur == "published":
                raise MemexError(f"{m.id} is already published", 1)
            if cur == "draft":
                raise MemexError(f"{m.id} is a draft; submit it for review first", 1)
            new = LADDER[LADDER.index(cur) + 1]
            if new == "approved":
                m.fm["approved_by"] = who
        m.fm["review_state"] = new
        record_step(m, cur, new, who, note.strip() if note else None)
        model.touch(m)
        model.stamp_reference(m.fm, ctx.reference_keys)
        write_memory(found.source.folder, m)
        found.index.upsert(m, found.source)
        return {"id": m.id, "from": cur, "to": new, "by": who, "history": m.fm["review_history"]}



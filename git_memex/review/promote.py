"""promote: move a repository memory up the review ladder, or reject it.

Invariant: the reviewer recorded is the person git knows (`person.actor`), whoever calls; a
`--by` from the command line is accepted only when it names that same person (`person.named_by`).
The changed file is staged, so a plain `git commit` records the step. A caller that showed the memory to a person
first passes ``expect`` (the review state and text the person saw): anything else refuses, and
nothing is written.
"""

from __future__ import annotations

from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.files import (
    read_memory,
    write_memory,
)
from git_memex.core.person import named_by
from git_memex.errors import FAILED, USAGE, MemexError, UsageError
from git_memex.index.stores import Stores, opened
from git_memex.review.log import LADDER, record_step


def _step(m: model.Memory, cur: str, *, reject: bool, resubmit: bool, note: str | None) -> str:
    """The review state `m` moves to, or the reason it cannot (MemexError)."""
    if reject:
        if cur not in ("proposed", "approved"):
            raise MemexError(f"{m.id} is {cur}; only proposed or approved memories can be rejected", USAGE)
        if not note or not note.strip():
            raise UsageError("a rejection needs a reason: --note \"why\"")
        return "rejected"
    if resubmit:
        if cur != "rejected":
            raise MemexError(f"{m.id} is {cur}; only rejected memories can be resubmitted", USAGE)
        return "proposed"
    if cur == "rejected":
        raise MemexError(f"{m.id} was rejected; revise it, then `git memex promote {m.id} --resubmit`", USAGE)
    if cur == "published":
        raise MemexError(f"{m.id} is already published", USAGE)
    if cur == "draft" or cur not in LADDER:
        raise MemexError(f"{m.id} is a draft; submit it for review first", USAGE)
    return LADDER[LADDER.index(cur) + 1]


def _target(st: Stores, memory_id: str) -> tuple[Any, model.Memory]:
    found = st.find(memory_id)
    if found.row["location"] != "repo":
        where = found.row["location"]
        hint = "submit it first (`git memex submit ID`)" if where == "outbox" else "only repository memories are reviewed"
        raise MemexError(f"{found.row['id']} is in the {where}, not the repository; {hint}", USAGE)
    return found, read_memory(found.path)


def promote(ctx: Context, memory_id: str, *, reject: bool = False, note: str | None = None,
            resubmit: bool = False, by: str | None = None, expect: tuple[str, str] | None = None,
            stores: Stores | None = None) -> dict[str, Any]:
    if reject and resubmit:
        raise UsageError("--reject and --resubmit cannot be combined")
    with opened(ctx, stores) as st:
        st.refresh()
        found, m = _target(st, memory_id)
        # where it stands, not what its file claims: a claim of approved or published that no review
        # step records is in review, and promote records the steps (core.model.standing)
        cur = model.standing("repo", m.fm) or "draft"
        if expect is not None and expect != (cur, m.body):
            raise MemexError(f"{m.id} changed since the person was shown it; nothing was changed, ask again", FAILED)
        who = named_by(ctx, by)
        new = _step(m, cur, reject=reject, resubmit=resubmit, note=note)
        if new == "rejected":
            # a rejected memory has no approver; the key is dropped, never written as `null`
            # (which turned a rejection of a never-approved memory into a needless merge conflict)
            m.fm.pop("approved_by", None)
            m.fm["review_note"] = (note or "").strip()
        elif new == "approved":
            m.fm["approved_by"] = who
        elif new == "published":
            m.fm["promoted_by"] = who  # who published it (docs/format.md): git's person, or --by
        m.fm["review_state"] = new
        record_step(m, cur, new, who, note.strip() if note else None)
        model.touch(m)
        model.stamp_reference(m.fm, ctx.reference_keys)
        write_memory(found.source.folder, m)
        found.index.upsert(m, found.source)
        from git_memex.git.sync import stage, staged_fields

        staged = stage(ctx, [found.path], f"the review step of {m.id}")
        return {"id": m.id, "from": cur, "to": new, "by": who, "history": m.fm["review_history"],
                **staged_fields(staged)}


def look(ctx: Context, memory_id: str, *, reject: bool = False, note: str | None = None, resubmit: bool = False,
         stores: Stores | None = None) -> dict[str, Any]:
    """What `promote` with these arguments would do, as a person should see it before deciding:
    the same refusals, and nothing written."""
    if reject and resubmit:
        raise UsageError("--reject and --resubmit cannot be combined")
    with opened(ctx, stores) as st:
        st.refresh()
        _, m = _target(st, memory_id)
        cur = str(model.standing("repo", m.fm) or "draft")
        return {"id": m.id, "review_state": cur, "to": _step(m, cur, reject=reject, resubmit=resubmit, note=note),
                "type": m.type, "body": m.body}

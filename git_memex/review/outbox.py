"""propose: copy personal memories into the project outbox, as drafts for review.

The personal original stays; the copy names it in ``derived_from``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.files import (
    delete_file,
    read_memory,
    write_memory,
)
from git_memex.core.identity import actor
from git_memex.core.paths import Context
from git_memex.errors import USAGE, MemexError, UsageError
from git_memex.index.stores import Stores, opened
from git_memex.review.history import record_step


def propose(ctx: Context, ids: list[str], *, local_approve: bool = False, stores: Stores | None = None) -> list[dict[str, Any]]:
    """Copy personal memories into the project outbox as drafts; all or nothing."""
    from git_memex.secrets.redact import redact

    if not ids:
        raise UsageError("name at least one personal memory id to propose")
    written: list[Path] = []
    with opened(ctx, stores) as st:
        try:
            st.refresh()
            originals = []
            for mid in ids:
                found = st.find(mid)
                if found.row["location"] != "personal":
                    raise MemexError(f"{found.row['id']} is not a personal memory (it is in the {found.row['location']}); "
                                     "only personal memories are proposed", USAGE)
                m = read_memory(found.path)
                if m.status not in ("active", "deprecated"):
                    raise MemexError(f"{m.id} is {m.status}; only active memories can be proposed", USAGE)
                originals.append(m)
            out = []
            outbox = st.source("outbox")
            me = actor(ctx)
            for orig in originals:
                existing = st.first("m.derived_from = ? AND m.location = 'outbox' AND m.project_key = ?",
                                    (orig.id, ctx.project_key), columns="m.id, m.review_state")
                if existing:
                    out.append({"source": orig.id, "id": existing[0], "review_state": existing[1], "existing": True})
                    continue
                red = redact(orig.body, ctx.redact_patterns)
                copy = model.create(
                    red.text,
                    scope="project",
                    type=orig.type if orig.type in model.TYPES else "fact",
                    tags=orig.tags,
                    importance=str(orig.fm.get("importance") or "normal"),
                    role=str(orig.fm.get("role") or "knowledge"),
                    source=str(orig.fm.get("source") or "user") if orig.fm.get("source") in model.SOURCES else "user",
                    visibility="internal",
                    created_by=orig.fm.get("created_by"),
                    via="cli",
                    repo_id=ctx.repo_id,
                    paths=orig.paths,
                    extra={"derived_from": orig.id, "proposed_by": me},
                )
                from git_memex.secrets.admission import admit

                admit(copy, ctx.redact_patterns, body=False)  # tags, paths…: masked like the body
                if local_approve:
                    copy.fm["review_state"] = "approved"
                    copy.fm["approved_by"] = me
                    record_step(copy, "draft", "approved", me, "local approve (solo mode)")
                write_memory(outbox.folder, copy, private=True)
                written.append(outbox.folder / f"{copy.id}.md")
                st.home.upsert(copy, outbox)
                out.append({"source": orig.id, "id": copy.id, "review_state": copy.fm["review_state"], "existing": False})
            return out
        except BaseException:
            for p in written:
                delete_file(p)
                st.home.remove(p)
            raise



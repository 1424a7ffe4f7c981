"""propose: copy personal memories into the project outbox, as drafts for review.

The personal original stays; the copy names it in ``derived_from``.

Invariants: a copy never claims more than its original. It keeps the original's ``via`` and a
``trust_level`` no higher than the original's (an agent's memory stays ``untrusted, via: mcp``
on its way into the project). `crossing` gives the exact text each copy will hold; a caller that
showed it to a person passes it back as ``shown`` and `propose` refuses (nothing written) when
the text to be written differs from what the person saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.files import (
    delete_file,
    read_memory,
    write_memory,
)
from git_memex.core.person import actor
from git_memex.errors import FAILED, USAGE, MemexError, UsageError
from git_memex.index.stores import Stores, opened
from git_memex.review.log import record_step


def _originals(st: Stores, ids: list[str]) -> list[model.Memory]:
    if not ids:
        raise UsageError("name at least one personal memory id to propose")
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
    return originals


def _copy(ctx: Context, orig: model.Memory, *, via: str = "cli", me: str | None = None) -> model.Memory:
    """The project copy of `orig`, through the admission barrier as `git memex add` puts a memory
    (issue 31): the body redacted, then every field masked with the copies of each value found
    (`secrets.admission.admit` with the body's `Redaction.values`, one `redact.CopyMask` for all
    fields), a tag read for secrets as written before it is lower-cased (`tags_as_given`). So a
    value found in the body (``db.password=V``) and repeated in a tag or a path is masked there too,
    in any case. Pure: `crossing` shows it, `propose` writes it."""
    from git_memex.secrets.admission import admit, tag_holds_secret
    from git_memex.secrets.redact import redact

    red = redact(orig.body, ctx.redact_patterns)
    orig_via = orig.fm.get("via")
    road = (str(orig_via) if model.is_agent_road(orig_via) else via if model.is_agent_road(via)
            else str(orig_via or via))
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
        via=road,
        repo_id=ctx.repo_id,
        paths=orig.paths,
        extra={"derived_from": orig.id, "proposed_by": me if me is not None else actor(ctx)},
        tags_as_given=tag_holds_secret,
    )
    # never more trusted than the original (a personal file may say anything of itself
    # only downwards: an untrusted original stays untrusted)
    copy.fm["trust_level"] = _lower_trust(copy.fm.get("trust_level"), orig.fm.get("trust_level"))
    admit(copy, ctx.redact_patterns, body=False, values=red.values)  # tags, paths…: masked like the body, copies too
    return copy


def _crossing_view(ctx: Context, orig: model.Memory) -> str:
    """Everything of `orig` the project copy carries across, as the person is shown it: the tags,
    paths and body of the copy `propose` writes (`_copy`: masked, copies too). What the person
    agreed to is compared with this whole view, so a tag or path changed while they were asked
    refuses the call too."""
    copy = _copy(ctx, orig)
    head = []
    if copy.tags:
        head.append(f"tags: {', '.join(copy.tags)}")
    if copy.paths:
        head.append(f"paths: {', '.join(copy.paths)}")
    return "\n".join([*head, copy.body])


def crossing(ctx: Context, ids: list[str], *, stores: Stores | None = None) -> list[dict[str, Any]]:
    """What `propose` would carry into the project, per original: its id, type and the exact
    tags, paths and text (masked); reads only. For showing to the person before they agree.
    Outside a repository there is no project to carry it into: refused before anyone is asked."""
    ctx.require_project("")
    with opened(ctx, stores) as st:
        st.refresh()
        return [{"source": m.id, "type": m.type, "role": str(m.fm.get("role") or "knowledge"),
                 "text": _crossing_view(ctx, m)} for m in _originals(st, ids)]


def _lower_trust(a: Any, b: Any) -> str:
    levels = model.TRUST_LEVELS
    ranks = [levels.index(x) for x in (a, b) if x in levels]
    return levels[min(ranks)] if ranks else levels[0]


def propose(ctx: Context, ids: list[str], *, local_approve: bool = False, via: str = "cli",
            shown: dict[str, str] | None = None, stores: Stores | None = None) -> list[dict[str, Any]]:
    """Copy personal memories into the project outbox as drafts; all or nothing.

    `via` is the road this call came by ("mcp" for the MCP tool): a copy made over MCP, or of a
    memory that came by MCP, says `via: mcp` and stays untrusted. `shown`: original id → the text
    the person agreed to; any difference refuses the whole call."""
    if not ids:
        raise UsageError("name at least one personal memory id to propose")
    ctx.require_project("")
    written: list[Path] = []
    with opened(ctx, stores) as st:
        try:
            st.refresh()
            originals = _originals(st, ids)
            if shown is not None:
                for orig in originals:
                    if shown.get(orig.id) != _crossing_view(ctx, orig):
                        raise MemexError(f"{orig.id} changed since the person was shown it; nothing was proposed, "
                                         "ask again", FAILED)
            out = []
            outbox = st.source("outbox")
            me = actor(ctx)
            for orig in originals:
                existing = st.first("m.derived_from = ? AND m.location = 'outbox' AND m.project_key = ?",
                                    (orig.id, ctx.project_key), columns="m.id, m.review_state")
                if existing:
                    out.append({"source": orig.id, "id": existing[0], "review_state": existing[1], "existing": True})
                    continue
                copy = _copy(ctx, orig, via=via, me=me)
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



"""Review history: the ladder of review states, the entries every step appends, and a memory's log.

Every step that changes review_state (propose, submit, promote, pr-status, instruction
approve/revoke) appends one entry with `record_step`; `log` reads them back with git's history.
"""

from __future__ import annotations

from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.files import (
    read_memory,
)
from git_memex.core.model import Memory
from git_memex.errors import MemexError, NotFound
from git_memex.index.stores import Stores, opened

LADDER = ("draft", "proposed", "approved", "published")


def record_step(m: Memory, frm: str | None, to: str, by: str, note: str | None = None,
             field: str | None = None) -> None:
    """Append a review_history entry; `field` names what changed when it is not review_state."""
    entry: dict[str, Any] = {"at": model.now(), "by": by, "from": frm, "to": to, "note": note}
    if field:
        entry["field"] = field
    hist = m.fm.get("review_history")
    if not isinstance(hist, list):
        hist = []
    hist.append(entry)
    m.fm["review_history"] = hist




def log(ctx: Context, memory_id: str, stores: Stores | None = None) -> dict[str, Any]:
    """The memory's commits (its chain's too) merged with its review_history, oldest first."""
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find(memory_id)
        m = read_memory(found.path)
        chain = [m.id]
        seen = {m.id}
        prev = m.fm.get("supersedes")
        while prev and prev not in seen:
            seen.add(str(prev))
            chain.insert(0, str(prev))
            try:
                prev = read_memory(st.find(str(prev)).path).fm.get("supersedes")
            except (NotFound, MemexError, ValueError):
                break
        events: list[dict[str, Any]] = []
        shallow: str | None = None
        if ctx.repo is not None:
            from git_memex.git import pygit

            repo = pygit.open_repo(ctx.repo.work_tree)
            cut = _shallow_cut(ctx) if repo.is_shallow else set()
            for cid in chain:
                rel = f"{ctx.memory_dir_rel}/{cid}.md"
                for c in pygit.path_history(repo, rel):
                    if str(c.id) in cut:
                        shallow = str(c.id)[:10]
                    at = model.epoch_ms_to_rfc3339(c.commit_time * 1000)
                    events.append({"at": at, "kind": "commit", "id": cid, "commit": str(c.id)[:10],
                                   "by": c.author.name, "what": c.message.split("\n", 1)[0] if c.message else ""})
        for cid in chain:
            try:
                mm = m if cid == m.id else read_memory(st.find(cid).path)
            except (NotFound, MemexError, ValueError):
                continue
            for h in mm.fm.get("review_history") or []:
                if isinstance(h, dict):
                    events.append({"at": str(h.get("at", "")), "kind": "review", "id": cid, "by": h.get("by"),
                                   "what": f"{h.get('from') or '(none)'} → {h.get('to') or '(none)'}" + (f": {h['note']}" if h.get("note") else "")})
            events.append({"at": str(mm.fm.get("created_at", "")), "kind": "created", "id": cid,
                           "by": mm.fm.get("created_by"), "what": "created" + (f" (supersedes {mm.fm['supersedes']})" if mm.fm.get("supersedes") else "")})
        events.sort(key=lambda e: (e["at"], {"created": 0, "commit": 1, "review": 2}[e["kind"]]))
        out: dict[str, Any] = {"id": m.id, "chain": chain, "events": events}
        if shallow is not None:
            out["shallow"] = shallow
            out["note"] = (f"this clone is shallow: history before commit {shallow} was cut off, so what that "
                           "commit shows may have been written earlier and by someone else; "
                           "`git fetch --unshallow` fetches the rest")
        from git_memex.secrets.admission import mask_value

        # every string it shows came from a file or a commit another road may have written:
        # review notes, names, commit messages, the chain's ids
        return dict(mask_value(out, ctx.redact_patterns)[0])


def _shallow_cut(ctx: Context) -> set[str]:
    """The commits a shallow clone's history stops at (`.git/shallow`: their parents are absent)."""
    assert ctx.repo is not None
    try:
        text = (ctx.repo.common_dir / "shallow").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}



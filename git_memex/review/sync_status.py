"""sync-status: what of this clone's memory is not yet where the team can see it.
"""

from __future__ import annotations

from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.index.stores import Stores, opened
from git_memex.review.contradictions import bounded, contradictions
from git_memex.review.log import LADDER


def sync_status(ctx: Context, stores: Stores | None = None) -> dict[str, Any]:
    from git_memex.search.engine import _snippet

    with opened(ctx, stores) as st:
        st.refresh()  # recorded as this command only if it changed something
        last = None
        for index in [st.repo, st.home]:
            if index is None:
                continue
            ts = index.get_meta("last_sync")
            trig = index.get_meta("last_sync_trigger")
            if ts and (last is None or float(ts) > last[0]):
                last = (float(ts), trig)
        from git_memex.secrets.guard import safe_bodies

        drafts = st.rows("m.location = 'outbox' AND m.project_key = ? AND m.status IN ('active', 'deprecated')",
                         (ctx.project_key,), order_by="m.id")
        bodies = safe_bodies(st, [(r["id"], r["body"]) for r in drafts])
        from git_memex.core.model import claim_beyond

        def claimed(r: Any) -> str | None:
            return claim_beyond(r["location"], r["review_state"], r["standing"])

        # review states as they stand (core.model.standing): an outbox file is a draft whatever it
        # says (its claim beside it), a repository claim no review step records is in review
        outbox = [{"id": r["id"], "review_state": r["standing"], "snippet": _snippet(bodies[r["id"]], []),
                   **({"review_claim": claimed(r)} if claimed(r) else {})} for r in drafts]
        states: dict[str, list[str]] = {s: [] for s in (*LADDER, "rejected")}
        for row in st.rows("m.location = 'repo'", columns="m.id, m.standing", order_by="m.id"):
            states.setdefault(row[1] or "draft", []).append(row[0])
        uncommitted = []
        if ctx.repo is not None:
            from git_memex.core.gitcmd import git_text

            r = git_text(["status", "--porcelain", "-z", "--no-renames", "--", ctx.memory_dir_rel], ctx.repo.work_tree)
            uncommitted = [e[3:] for e in (r.stdout if r else "").split("\0") if e[3:].endswith(".md")]
        stats: dict[str, int] = {}
        conflicts = contradictions(ctx, stores=st, stats=stats)
        if outbox and ctx.repo is None:
            nxt = ("nothing can be submitted here: submit needs a git repository, and these drafts stay on this "
                   "machine until this folder is one (`git init`, then `git memex submit ID`)")
        elif outbox:
            nxt = f"git memex submit {' '.join(o['id'] for o in outbox[:3])}{' …' if len(outbox) > 3 else ''}"
        elif uncommitted:
            nxt = "git add the memory files and commit them (or `git memex scan` first)"
        elif states.get("proposed") or states.get("approved"):
            nxt = "git memex pr-status (or `git memex promote ID` after review)"
        else:
            nxt = "nothing to do"
        from git_memex.git.autopull import read_receipt

        return {
            "auto_pull": read_receipt(ctx),
            "last_sync": None if last is None else {
                "at": model.epoch_ms_to_rfc3339(last[0] * 1000), "trigger": last[1]},
            "outbox": outbox,
            "repo": {k: v for k, v in states.items()},
            "uncommitted": uncommitted,
            "contradictions": bounded(conflicts)[0],
            "contradictions_count": len(conflicts),
            "contradictions_left_out": bounded(conflicts)[1],
            "contradictions_unchecked": stats.get("unchecked", 0),
            "next": nxt,
            "git": ctx.repo is not None,
        }



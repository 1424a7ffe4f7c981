"""distill: gather what the team's memories say, grouped, for a person to condense.
"""

from __future__ import annotations

from typing import Any

from git_memex.core.context import Context
from git_memex.index.stores import Stores, opened


def distill(ctx: Context, stores: Stores | None = None) -> dict[str, Any]:
    """AGENTS.md candidates: high-confidence rules that pass the instruction gate (approved by a
    person and committed as they are on the default branch, see `gate`); never personal."""
    from git_memex.agents.gate import passing

    with opened(ctx, stores) as st:
        st.refresh()
        from git_memex.secrets.guard import safe_bodies

        groups: dict[str, list[dict[str, Any]]] = {}
        rows = st.rows("m.location = 'repo' AND m.scope != 'personal' AND m.role = 'instruction' AND m.status = 'active'"
                       " AND m.review_state IN ('approved', 'published') AND m.confidence = 'high'"
                       " AND (m.source IS NULL OR m.source != 'inference') AND m.instruction_state = 'approved'",
                       order_by="m.type, m.id")
        rows = passing(ctx, rows, None)
        bodies = safe_bodies(st, [(r["id"], r["body"]) for r in rows])  # this text is meant for AGENTS.md
        for r in rows:
            groups.setdefault(r["type"], []).append({"id": r["id"], "text": " ".join(bodies[r["id"]].split())})
        lines = ["## Distilled from project memory (git-memex)", ""]
        for t in sorted(groups):
            lines.append(f"### {t}")
            for it in groups[t]:
                lines.append(f"- {it['text']} <!-- memex:{it['id']} -->")
            lines.append("")
        count = sum(len(v) for v in groups.values())
        return {"count": count, "groups": groups, "markdown": "\n".join(lines).rstrip() + "\n" if count else ""}

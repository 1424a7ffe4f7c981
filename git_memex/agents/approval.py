"""A person opens and closes the instruction gate: approve, revoke, list.

Approving is a normal file edit, like any other change to a memory: it sets
``instruction_state: approved``, ``trust_level``, ``approved_by`` and appends a
``review_history`` entry in the work tree. The rule reaches agents only once that exact
content is committed on the project's default branch (see `gate`): the commit, and the pull
request that merges it, are the review. Revoking closes the gate at once in this work tree
(the file no longer matches the reviewed blob) and for the team once the revoke is merged.

Only these commands change instruction_state or trust_level; no MCP tool calls them, so an
agent can never raise its own trust.
"""

from __future__ import annotations

from typing import Any

from git_memex.core import model
from git_memex.core.paths import Context
from git_memex.errors import USAGE, MemexError, UsageError
from git_memex.index.stores import Stores, opened

TRUST_CHOICES = ("reviewed", "trusted")


def _load_rule(st: Stores, memory_id: str) -> tuple[Any, model.Memory]:
    from git_memex.core.files import read_memory

    found = st.find_changeable(memory_id)
    m = read_memory(found.path)
    if (m.fm.get("role") or "knowledge") != "instruction":
        raise MemexError(f"{m.id} is knowledge, not a rule; only role: instruction memories are approved "
                         f"(`git memex supersede {m.id} TEXT --role instruction` makes a rule of it)", USAGE)
    return found, m


def _self_approval(ctx: Context, m: model.Memory, me: str) -> bool:
    """Team mode (a repository with an origin remote) and the approver proposed the rule."""
    if not ctx.origin_url:
        return False
    from git_memex.core.identity import spellings

    mine = spellings(ctx) | {me}
    return any(str(m.fm.get(k) or "") in mine for k in ("proposed_by", "created_by"))


def _not_an_owner(ctx: Context, path: Any, who: str) -> str | None:
    """In an org memory repo: a warning when `who` is not an owner of the rule's path in the work
    tree's OWNERS file. Only a hint: the gate reads OWNERS from the org's default branch."""
    from git_memex.agents.owners import OWNERS_FILE, identity, owners_of, parse

    folder = ctx.memory_dir
    if folder is None:
        return None
    try:
        text = (folder / OWNERS_FILE).read_text("utf-8")
        rel = path.resolve().relative_to(folder.resolve()).as_posix()
    except (OSError, ValueError):
        return None
    if identity(who) in owners_of(parse(text), rel):
        return None
    return (f"{who} is not an owner of {rel} in {ctx.memory_dir_rel}/{OWNERS_FILE}: projects subscribed to this org "
            "serve the rule only once an owner approved it and put it on the default branch (docs/org.md)")


def approve(ctx: Context, memory_id: str, *, trust: str = "reviewed", note: str | None = None,
            by: str | None = None, stores: Stores | None = None) -> dict[str, Any]:
    """Open the gate for one submitted rule (or one of your own personal rules)."""
    from git_memex.agents.gate import default_branch
    from git_memex.core.files import write_memory
    from git_memex.core.identity import actor
    from git_memex.review.history import record_step

    if trust not in TRUST_CHOICES:
        raise UsageError(f"--trust takes one of: {', '.join(TRUST_CHOICES)}; not {trust!r}")
    with opened(ctx, stores) as st:
        st.refresh()
        found, m = _load_rule(st, memory_id)
        where = found.row["location"]
        if where in ("outbox", "private"):
            hint = (f"submit it for review first (`git memex submit {m.id}`)" if where == "outbox"
                    else "a private memory never reaches the team; approve a submitted copy")
            raise MemexError(f"{m.id} is in the {where}, not the repository; {hint}", USAGE)
        if m.status != "active":
            raise MemexError(f"{m.id} is {m.status}; only an active rule can be approved", USAGE)
        if m.fm.get("review_state") == "rejected":
            raise MemexError(f"{m.id} was rejected in review; resubmit it (`git memex promote {m.id} --resubmit`) "
                             "before approving it as a rule", USAGE)
        if m.fm.get("source") == "inference":
            raise MemexError(f"{m.id} was inferred by an agent (source: inference) and can never be a rule; "
                             "write the rule yourself with `git memex add --role instruction`", USAGE)
        who = by or actor(ctx)
        before = str(m.fm.get("instruction_state") or "draft")
        warnings: list[str] = []
        if where == "repo" and _self_approval(ctx, m, who):
            warnings.append(f"you proposed {m.id} yourself; in a team, let another reviewer approve it")
        if where == "repo" and m.fm.get("scope") == "org":
            owner_hint = _not_an_owner(ctx, found.path, who)
            if owner_hint:
                warnings.append(owner_hint)
        if before == "approved" and m.fm.get("trust_level") == trust and m.fm.get("approved_by"):
            changed = False
        else:
            m.fm["instruction_state"] = "approved"
            m.fm["trust_level"] = trust
            m.fm["approved_by"] = who
            record_step(m, before, "approved", who, note.strip() if note else None, field="instruction_state")
            model.touch(m)
            if where == "repo":
                model.stamp_reference(m.fm, ctx.reference_keys)
            write_memory(found.source.folder, m, private=where != "repo")
            found.index.upsert(m, found.source)
            changed = True
        ref = default_branch(ctx) if where == "repo" else None
        if where == "personal":
            nxt = "it is one of your personal rules: it reaches your agents now, and nobody else's"
        elif ref is None:
            nxt = ("commit it; the project's default branch is unknown, so set it with "
                   "`git memex config set memex.defaultBranch NAME`")
        else:
            nxt = f"commit it; it reaches agents once it is on {ref.branch} as it is now (merge the PR)"
        return {"id": m.id, "from": before, "to": "approved", "trust_level": trust, "by": who,
                "changed": changed, "path": str(found.path), "location": where, "next": nxt,
                "warnings": warnings}


def revoke(ctx: Context, memory_id: str, *, note: str | None = None, by: str | None = None,
           stores: Stores | None = None) -> dict[str, Any]:
    """Close the gate for one rule: it stays as history, never again as an instruction."""
    from git_memex.core.files import write_memory
    from git_memex.core.identity import actor
    from git_memex.review.history import record_step

    with opened(ctx, stores) as st:
        st.refresh()
        found, m = _load_rule(st, memory_id)
        who = by or actor(ctx)
        before = str(m.fm.get("instruction_state") or "draft")
        changed = before != "revoked"
        if changed:
            m.fm["instruction_state"] = "revoked"
            record_step(m, before, "revoked", who, note.strip() if note else None, field="instruction_state")
            model.touch(m)
            if found.row["location"] == "repo":
                model.stamp_reference(m.fm, ctx.reference_keys)
            write_memory(found.source.folder, m, private=found.row["location"] != "repo")
            found.index.upsert(m, found.source)
        where = found.row["location"]
        nxt = ("agents in this work tree stop seeing it now; commit it so that the team's do too"
               if where == "repo" else "your agents stop seeing it now")
        return {"id": m.id, "from": before, "to": "revoked", "by": who, "changed": changed,
                "path": str(found.path), "location": where, "next": nxt}


def list_rules(ctx: Context, *, stores: Stores | None = None) -> dict[str, Any]:
    """Every rule (role: instruction) grouped pending / approved / revoked, with whether the
    gate lets it through and, when not, why."""
    from git_memex.agents.gate import passes_claims, reviewed_ids, why_not
    from git_memex.core.identity import person

    groups: dict[str, list[dict[str, Any]]] = {"pending": [], "approved": [], "revoked": []}
    with opened(ctx, stores) as st:
        st.refresh()
        rows = st.by_id("m.role = 'instruction' AND m.status NOT IN ('retracted', 'archived')",
                        order_by="m.updated_ts DESC, m.id")
        user = person(ctx) if any(r["location"] == "personal" for r in rows.values()) else None
        # one git call for every approved repository rule, not one per rule
        reviewed = reviewed_ids(ctx, [r for r in rows.values() if r["instruction_state"] == "approved"])
        org_rows = [r for r in rows.values() if r["instruction_state"] == "approved"
                    and str(r["location"]).startswith("org:") and passes_claims(r, user)]
        org: dict[str, str | None] = {}
        if org_rows:
            from git_memex.agents.owners import org_verdicts

            org = org_verdicts(ctx, org_rows)
        from git_memex.secrets.guard import safe_bodies

        bodies = safe_bodies(st, [(r["id"], r["body"]) for r in rows.values()])
        for r in rows.values():
            state = r["instruction_state"] or "draft"
            group = "approved" if state == "approved" else "revoked" if state == "revoked" else "pending"
            reason = why_not(ctx, r, user, reviewed, org) if group == "approved" else None
            groups[group].append({
                "id": r["id"], "scope": r["scope"], "location": r["location"], "status": r["status"],
                "review_state": r["review_state"], "instruction_state": state,
                "trust_level": r["trust_level"], "served": group == "approved" and reason is None,
                "why_not": reason, "text": " ".join((bodies.get(r["id"]) or "").split()),
            })
    return groups

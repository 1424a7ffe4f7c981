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
from git_memex.core.context import Context
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
    from git_memex.core.person import same_person, spellings

    mine = spellings(ctx) | {me}
    return any(same_person(m.fm.get(k), x) for k in ("proposed_by", "created_by") for x in mine)


def _not_an_owner(ctx: Context, path: Any, who: str) -> str | None:
    """In an org memory repo: a warning when `who` is not an owner of the rule's path in the work
    tree's OWNERS file. Only a hint: the gate reads OWNERS from the org's default branch."""
    from git_memex.agents.owners import OWNERS_FILE, owner_email, owners_of, parse

    folder = ctx.memory_dir
    if folder is None:
        return None
    try:
        text = (folder / OWNERS_FILE).read_text("utf-8")
        rel = path.resolve().relative_to(folder.resolve()).as_posix()
    except (OSError, ValueError):
        return None
    if owner_email(who) in owners_of(parse(text), rel):
        return None
    return (f"{who} is not an owner of {rel} in {ctx.memory_dir_rel}/{OWNERS_FILE}: projects subscribed to this org "
            "serve the rule only once an owner approved it and put it on the default branch (docs/org.md)")


def _record_path(ctx: Context, where: str, mid: str) -> Any:
    from git_memex.agents import approval_record

    if where == "personal":
        return approval_record.personal_path(ctx, mid)
    assert ctx.repo is not None
    return ctx.repo.work_tree / approval_record.repo_rel(ctx, mid)


def _revocation_path(ctx: Context, where: str, mid: str) -> Any:
    from git_memex.agents import approval_record

    if where == "personal":
        return approval_record.personal_revoked_path(ctx, mid)
    assert ctx.repo is not None
    return ctx.repo.work_tree / approval_record.revoked_rel(ctx, mid)


def _history(ctx: Context, name: str) -> list[bytes]:
    """Every committed version of the record file `name` (`<id>.json`, `<id>.revoked.json`) on the
    default branch and on HEAD, in any memory folder the history had ([] without git)."""
    from git_memex.agents import approval_record
    from git_memex.agents.gate import default_branch

    if ctx.repo is None:
        return []
    ref = default_branch(ctx)
    refs = [ref.ref] if ref is not None else []
    got = approval_record.history(ctx, ctx.repo.work_tree, [*refs, "HEAD"], [name])
    return (got or {}).get(name, [])


def _revoked_keys(ctx: Context, where: str, mid: str) -> set[str]:
    """The approvals of `mid` a revocation record voids: the work tree's (or data root's) and,
    for a repository rule, every version ever committed."""
    from git_memex.agents import approval_record

    path = _revocation_path(ctx, where, mid)
    try:
        versions = [path.read_bytes()]
    except OSError:
        versions = []
    if where == "repo":
        versions += _history(ctx, f"{mid}.revoked.json")
    keys: set[str] = set()
    for data in versions:
        keys |= set(approval_record.parse_revocation(data, mid) or {})
    return keys


def retire(ctx: Context, where: str, mid: str, why: str, by: str) -> bool:
    """Void every approval of rule `mid` for good: each approval record of it (the work tree's or
    data root's, and for a repository rule every version ever committed on the default branch or
    HEAD) is named in its revocation record (`<id>.revoked.json`, appended to, never trimmed), and
    the approval record is deleted; for a repository rule both are staged. Called by
    `instruction revoke` and by every change that switches a memory off (supersede, forget,
    deprecate, archive). True when anything changed."""
    from git_memex.agents import approval_record

    if where not in ("repo", "personal") or (where == "repo" and ctx.repo is None):
        return False
    record = _record_path(ctx, where, mid)
    try:
        versions = [record.read_bytes()]
    except OSError:
        versions = []
    if where == "repo":
        versions += _history(ctx, f"{mid}.json")
    approvals: dict[str, dict[str, Any]] = {}
    for data in versions:
        rec = approval_record.parse(data, mid)
        if isinstance(rec, dict):
            approvals.setdefault(approval_record.approval_key(rec), rec)
    revocation = _revocation_path(ctx, where, mid)
    changed = False
    if approvals:
        try:
            old: bytes | None = revocation.read_bytes()
        except OSError:
            old = None
        entries = approval_record.parse_revocation(old, mid) or {}
        fresh = [k for k in approvals if k not in entries]
        if fresh:
            listed = list(entries.values()) + [
                {"approval": k, "content": approvals[k].get("content"),
                 "approver": approvals[k]["approver"].get("email"), "why": why, "by": by, "at": model.now()}
                for k in fresh]
            approval_record.write(revocation, approval_record.build_revocation(mid, listed))
            changed = True
    if record.exists():
        record.unlink()
        changed = True
    if where == "repo" and changed:
        _stage(ctx, record)
        if revocation.exists():
            _stage(ctx, revocation)
    return changed


def _write_record(ctx: Context, where: str, m: model.Memory, approver: tuple[str, str], trust: str) -> bool:
    """Write (and for a repository rule, stage) the approval record of `m`'s content; False when
    the one there already names this person and this content and was never revoked."""
    import json

    from git_memex.agents import approval_record

    path = _record_path(ctx, where, m.id)
    digest = approval_record.memory_hash(m)
    try:
        old = json.loads(path.read_text("utf-8"))
        if (isinstance(old, dict) and old.get("content") == digest and isinstance(old.get("approver"), dict)
                and old["approver"].get("email") == approver[1] and old.get("trust_level") == trust
                and approval_record.approval_key(old) not in _revoked_keys(ctx, where, m.id)):
            return False
    except (OSError, ValueError):
        pass
    approval_record.write(path, approval_record.build(m.id, digest, approver[0], approver[1], trust))
    if where == "repo":
        _stage(ctx, path)
    return True


def _stage(ctx: Context, path: Any) -> None:
    """`git add` (or, for a deleted record, `git rm --cached`) so that a plain `git commit` takes it."""
    from git_memex.git.sync import stage

    stage(ctx, [path], f"the approval record {path.name}")


def _stage_rule(ctx: Context, where: str, *paths: Any) -> list[str]:
    """For a repository rule, stage its file and its records as they are now (a record that
    does not exist and was never tracked is left out), so that a plain `git commit` takes the
    whole decision: the rule's file without its record, or the record without the file, reads
    as "not committed as it is on main" (docs/agents.md, "Approval records"). [] elsewhere.
    The `sync.Staged` list it returns names in `forced` what a `.gitignore` rule ignored."""
    if where != "repo" or ctx.repo is None:
        return []
    from git_memex.core.gitcmd import run_git
    from git_memex.git.sync import stage

    root = ctx.repo.work_tree
    wanted = [p for p in paths if p.exists()]
    gone = [p.relative_to(root).as_posix() for p in paths if not p.exists()]
    if gone:  # a missing record counts only when git tracks it (its deletion is then staged)
        proc = run_git(["ls-files", "-z", "--", *gone], root, timeout=60)
        tracked = set(proc.stdout.decode("utf-8", "surrogateescape").split("\0")) if proc is not None else set()
        wanted += [root / g for g in gone if g in tracked]
    return stage(ctx, wanted, "the rule's approval")


def approve(ctx: Context, memory_id: str, *, trust: str = "reviewed", note: str | None = None,
            by: str | None = None, stores: Stores | None = None) -> dict[str, Any]:
    """Open the gate for one submitted rule (or one of your own personal rules)."""
    from git_memex.agents.gate import default_branch
    from git_memex.core.files import write_memory
    from git_memex.core.person import named_by
    from git_memex.git import sync
    from git_memex.review.log import record_step

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
        if str(m.fm.get("source") or "").strip().lower() == "inference":
            raise MemexError(f"{m.id} was inferred by an agent (source: inference) and can never be a rule; "
                             "write the rule yourself with `git memex add --role instruction`", USAGE)
        who = named_by(ctx, by, "approver")
        before = str(m.fm.get("instruction_state") or "draft")
        warnings: list[str] = []
        if where == "repo" and _self_approval(ctx, m, who):
            warnings.append(f"you proposed {m.id} yourself; in a team, let another reviewer approve it")
        if where == "repo" and m.fm.get("scope") == "org":
            owner_hint = _not_an_owner(ctx, found.path, who)
            if owner_hint:
                warnings.append(owner_hint)
        from git_memex.agents import approval_record

        work = ctx.repo.work_tree if ctx.repo is not None else ctx.cwd
        approver = approval_record.git_person(work)
        if approver is None:
            raise MemexError("git does not know who you are, so the approval cannot name you: set "
                             "`git config user.name` and `git config user.email`", USAGE)
        if before == "approved" and m.fm.get("trust_level") == trust and m.fm.get("approved_by") == who:
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
        if _write_record(ctx, where, m, approver, trust):
            changed = True
        staged = _stage_rule(ctx, where, found.path, _record_path(ctx, where, m.id))
        ref = default_branch(ctx) if where == "repo" else None
        if where == "personal":
            nxt = "it is one of your personal rules: it reaches your agents now, and nobody else's"
        elif ref is None:
            from git_memex.agents.gate import unknown_branch

            nxt = f"commit it; {unknown_branch(ctx)}"
        else:
            nxt = f"commit it; it reaches agents once it is on {ref.branch} as it is now (merge the PR)"
        return {"id": m.id, "from": before, "to": "approved", "trust_level": trust, "by": who,
                "changed": changed, "path": str(found.path), "location": where, "next": nxt,
                "warnings": warnings, **sync.staged_fields(staged)}


def revoke(ctx: Context, memory_id: str, *, note: str | None = None, by: str | None = None,
           stores: Stores | None = None) -> dict[str, Any]:
    """Close the gate for one rule: it stays as history, never again as an instruction."""
    from git_memex.core.files import write_memory
    from git_memex.core.person import named_by
    from git_memex.git import sync
    from git_memex.review.log import record_step

    with opened(ctx, stores) as st:
        st.refresh()
        found, m = _load_rule(st, memory_id)
        who = named_by(ctx, by, "person who revokes")
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
        if retire(ctx, where, m.id, "revoked", who):
            changed = True
        staged = _stage_rule(ctx, where, found.path, _record_path(ctx, where, m.id),
                             _revocation_path(ctx, where, m.id))
        nxt = ("agents in this work tree stop seeing it now; commit it so that the team's do too"
               if where == "repo" else "your agents stop seeing it now")
        return {"id": m.id, "from": before, "to": "revoked", "by": who, "changed": changed,
                "path": str(found.path), "location": where, "next": nxt, **sync.staged_fields(staged)}


def list_rules(ctx: Context, *, stores: Stores | None = None) -> dict[str, Any]:
    """Every rule (role: instruction) grouped pending / approved / revoked, with whether the
    gate lets it through and, when not, why."""
    from git_memex.agents.gate import passes_claims, repo_verdicts, why_not
    from git_memex.core.person import person

    groups: dict[str, list[dict[str, Any]]] = {"pending": [], "approved": [], "revoked": []}
    with opened(ctx, stores) as st:
        st.refresh()
        rows = st.by_id("m.role = 'instruction' AND m.status NOT IN ('retracted', 'archived')",
                        order_by="m.updated_ts DESC, m.id")
        user = person(ctx) if any(r["location"] == "personal" for r in rows.values()) else None
        # one git call for every approved repository rule, not one per rule
        reviewed = repo_verdicts(ctx, [r for r in rows.values() if r["instruction_state"] == "approved"])
        org_rows = [r for r in rows.values() if r["instruction_state"] == "approved"
                    and str(r["location"]).startswith("org:") and passes_claims(r, user)]
        org: dict[str, str | None] = {}
        if org_rows:
            from git_memex.agents.owners import org_verdicts

            org = org_verdicts(ctx, org_rows)
        from git_memex.secrets.guard import safe_bodies

        bodies = safe_bodies(st, [(r["id"], r["body"]) for r in rows.values()])
        import time

        now = time.time()
        remote_states: dict[str, dict[str, Any]] = {}
        remote_review: dict[str, str] = {}
        for r in rows.values():
            state = r["instruction_state"] or "draft"
            loc = str(r["location"])
            if loc.startswith("remote:"):
                # a remote rule's state is the server's review (state.json), not its file's claim
                from git_memex.remote.cache import load_state

                name = loc[len("remote:"):]
                if name not in remote_states:
                    remote_states[name] = load_state(ctx, name)
                item = remote_states[name]["items"].get(r["id"])
                review = item.get("review_state") if isinstance(item, dict) else None
                remote_review[r["id"]] = review or "unknown"
                if review != "approved":
                    group = "revoked" if review == "rejected" else "pending"
                else:
                    group = "approved"  # the gate says whether its bytes are what was approved
            else:
                group = "approved" if state == "approved" else "revoked" if state == "revoked" else "pending"
            reason = why_not(ctx, r, user, reviewed, org) if group == "approved" else None
            if reason is None and group == "approved" and r["expires_ts"] is not None and r["expires_ts"] <= now:
                reason = "its expires_at has passed, so no session gets it"  # as the session block's pool
            groups[group].append({
                "id": r["id"], "scope": r["scope"], "location": r["location"], "status": r["status"],
                "review_state": r["standing"], "instruction_state": state,
                "trust_level": r["trust_level"], "served": group == "approved" and reason is None,
                "why_not": reason, "text": " ".join((bodies.get(r["id"]) or "").split()),
                **({"remote_review_state": remote_review[r["id"]]} if r["id"] in remote_review else {}),
            })
    return groups

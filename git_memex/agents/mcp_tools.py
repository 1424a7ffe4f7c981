"""The MCP tools: one function per tool, each a thin adapter over one core operation.

`register_memory_tools` adds the memory tools (add, search, list, supersede, forget, get,
status); `register_review_tools` the team-review ones (submit, propose, promote, resolve,
pr_status). Each tool validates nothing the core does not, formats the result as text plus
structured content, and runs through `Adapter.call` (a fresh context, one lock, clean stdout).

Callers have roles (`mcp_person`): a tool acts for an agent. Proposing a personal memory,
approving (`local_approve`), every review step, and switching an approved rule off (forget or
supersede) are the person's: the tool asks them through elicitation, outside the lock, and
passes what they saw to the core; without their yes it changes nothing and names the command.
No argument names a person, a trust level or `via`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context as MCPContext
from mcp.types import CallToolResult
from pydantic import Field

from git_memex.agents import mcp_person as person
from git_memex.agents.mcp_schema import (
    TYPE_LIST,
    Confidence,
    Id,
    Ids,
    Importance,
    Include,
    MemoryType,
    ReadScope,
    Role,
    Visibility,
    WriteScope,
    agent_source,
    contradicts_line,
    disagreement_lines,
    error,
    format_status,
    label,
    next_for_agents,
    no_repository,
    ok,
    one_line,
    one_text,
    scope_name,
    type_filter,
)
from git_memex.agents.render import DISCLAIMER  # every block handed to an agent starts with it
from git_memex.core.frontmatter import MAX_BODY_BYTES
from git_memex.core.person import actor
from git_memex.ops import MAX_QUERY_CHARS

MAX_TEXT = MAX_BODY_BYTES
"""`maxLength` of a memory text: the write path's limit is MAX_BODY_BYTES UTF-8 bytes, and a string
of more characters than that is always more bytes (a JSON Schema length counts characters)."""
TEXT_LIMIT = (f"At most {MAX_BODY_BYTES // 1024} KiB ({MAX_BODY_BYTES:,} bytes as UTF-8; a longer one is "
              "refused, not cut).")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.agents.mcp_server import Adapter
    from git_memex.core.context import Context

def register_memory_tools(tool: Callable[..., Any], a: Adapter) -> None:
    def rule_off(mctx: MCPContext | None, name: str, memory_id: str, command: str,
                 act: str) -> CallToolResult | Callable[[Context], CallToolResult | None]:
        """The refusal, or a guard for the run: when `memory_id` is an approved rule, or reviewed
        knowledge (approved or published: the team's, not the agent's to retract or replace), the
        person is asked first; the guard (called under the lock, right before the change) refuses
        when the memory is not what was checked or shown any more."""
        seen: dict[str, Any] = {}

        def look(ctx: Context) -> CallToolResult:
            seen["rule"] = person.approved_rule(ctx, memory_id)
            seen["reviewed"] = None if seen["rule"] is not None else person.reviewed_memory(ctx, memory_id)
            return ok("", {})

        res = a.call(name, look)
        if res.is_error:
            return res
        rule, reviewed = seen["rule"], seen["reviewed"]
        if rule is not None:
            answer = person.ask(mctx, f"Your AI agent asks to switch off an approved rule: {act} {rule['id']}, "
                                "which every agent session follows:\n" + person.quoted(rule["text"])
                                + "\nDo you, the person at this computer, want this?")
            if answer != "yes":
                return error(person.refusal(answer, f"{act} {rule['id']}", command), 2)
        elif reviewed is not None:
            what = act.replace("the approved rule", f"the {reviewed['state']} memory")
            answer = person.ask(mctx, f"Your AI agent asks to change knowledge your team reviewed: {what} "
                                f"{reviewed['id']} ({reviewed['state']}), which agents are shown first:\n"
                                + person.quoted(reviewed["text"]) + "\nDo you, the person at this computer, want this?")
            if answer != "yes":
                return error(person.refusal(answer, f"{what} {reviewed['id']}", command), 2)

        def guard(ctx: Context) -> CallToolResult | None:
            if person.approved_rule(ctx, memory_id) != rule or (
                    rule is None and person.reviewed_memory(ctx, memory_id) != reviewed):
                return error(f"{memory_id} changed since it was checked (it is, or was, an approved rule or "
                             "reviewed knowledge); nothing was changed, ask again.", 2)
            return None

        return guard

    @tool
    def memory_add(
        text: Annotated[str | None, Field(min_length=1, max_length=MAX_TEXT, description="The memory: one "
                                          "self-contained statement (required; `content` is taken as the same). "
                                          + TEXT_LIMIT)] = None,
        content: Annotated[str | None, Field(min_length=1, max_length=MAX_TEXT,
                                             description="The reference tool's name for `text`.")] = None,
        type: Annotated[MemoryType, Field(description="What kind of memory this is.")] = "fact",
        scope: Annotated[WriteScope, Field(description="project (default): about this codebase, shared after "
                                           "review; personal: about the user, never leaves this machine "
                                           "(user: the same as personal).")] = "project",
        tags: Annotated[list[str] | None, Field(description="Optional tags: what the memory is about.")] = None,
        importance: Annotated[Importance, Field(description="How much it matters.")] = "normal",
        source: Annotated[str | None, Field(max_length=200, description="Where it came from: tool (default) or "
                                            "inference (your own conclusion, e.g. at a checkpoint). Any other word "
                                            "is kept as source_detail; the memory is still yours (source tool), "
                                            "never the user's own words.")] = None,
        role: Annotated[Role, Field(description="knowledge (default), or instruction: a rule the user wants agents to "
                                    "follow. A rule is saved as a draft; only a person can approve it.")] = "knowledge",
        visibility: Annotated[Visibility | None, Field(description="project scope only: internal (default) or "
                                                       "shared; private keeps it on this machine.")] = None,
        paths: Annotated[list[str] | None, Field(description="Optional file globs it is about (e.g. src/auth/**); "
                                                 "it is brought up when those files change.")] = None,
        confidence: Annotated[Confidence | None, Field(description="How sure the statement is.")] = None,
        aliases: Annotated[list[str] | None, Field(max_length=4, description="Other words it should be found by "
                                                   "(synonyms, the user's language), at most 4.")] = None,
        alias: Annotated[str | None, Field(min_length=1, max_length=200, description="With target: a vocabulary "
                                           "entry; alias is another name for target (search expands both ways).")] = None,
        target: Annotated[str | None, Field(min_length=1, max_length=200, description="See alias.")] = None,
        expires: Annotated[str | None, Field(min_length=1, max_length=64, description="When it stops being "
                                             "retrieved: 30d, 12h, 2w, a date (2027-01-31) or an RFC 3339 time.")] = None,
        related: Annotated[list[str] | None, Field(max_length=20, description="Ids (or unique prefixes) of "
                                                   "memories this one is linked to.")] = None,
        canonical_ref: Annotated[str | None, Field(min_length=1, max_length=1000, description="The document this "
                                                   "memory summarises: a path relative to the repository's top "
                                                   "folder (docs/adr/003.md, optionally #anchor; the file must "
                                                   "exist) or an http(s) URL.")] = None,
    ) -> CallToolResult:
        from git_memex import ops

        try:
            text_ = one_text("memory_add", text, content)
        except ValueError as exc:
            return error(str(exc), 1)
        where_to = scope_name(scope)
        source_, detail = agent_source(source)

        def run(ctx: Context) -> CallToolResult:
            if where_to == "project" and ctx.repo is None:
                return error(no_repository(ctx), 1)
            echo = ops.find_turn_echo(ctx, where_to, text_)
            if echo is not None:
                return ok(f"The user's own words were saved a moment ago as {echo} (keyword capture); this reads as "
                          "the same fact, so nothing was written. If it is a different fact, reword it to say what "
                          "is new; if it corrects that one, use memory_supersede.",
                          {"id": echo, "scope": where_to, "duplicate_of": echo, "echo_of": echo,
                           "near_duplicates": [], "masked": []})
            res = ops.add(ctx, text_, scope=where_to, type=type, importance=importance, source=source_,
                          source_detail=detail, via=a.via,
                          tags=[t.strip() for t in tags or [] if t.strip()], role=role, visibility=visibility,
                          paths=[p.strip() for p in paths or [] if p.strip()] or None,
                          confidence=confidence, aliases=aliases, alias=alias, target=target,
                          expires=expires, related=related, canonical_ref=canonical_ref)
            data = res.to_json()
            if res.duplicate_of:
                return ok(f"Already remembered as {res.duplicate_of}; nothing written.", data)
            where = {"outbox": "project draft on this machine; the user decides when to submit it",
                     "personal": "personal; it never leaves this machine",
                     "private": "project, private to this machine"}.get(res.location or "", res.location or "")
            lines = [f"Saved {res.id} ({where})."]
            if res.masked:
                lines.append(f"Masked {len(res.masked)} secret(s) before saving ({', '.join(res.masked)}).")
            if res.private_spans:
                lines.append(f"Removed {res.private_spans} <private> part(s).")
            if res.near_duplicates:
                lines.append("Similar memories exist: " + ", ".join(res.near_duplicates)
                             + "; if this one replaces one of them, forget this and use memory_supersede.")
            return ok("\n".join(lines), data)

        return a.call("memory_add", run)

    @tool
    def memory_search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Keywords; terms are "
                                    f"OR-ed. Try variants if nothing matches. At most {MAX_QUERY_CHARS:,} characters.")],
        scope: Annotated[ReadScope, Field(description="all (default: project, personal and subscribed org memories), both (project and personal), project, personal (user: the same) or org.")] = "all",
        type: Annotated[str | None, Field(max_length=64, description="Only memories of this type (" + TYPE_LIST + ").")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many results.")] = 8,
        confidence: Annotated[Confidence | None, Field(description="Only memories of this confidence (low: "
                                                       "the regret window of inferred memories).")] = None,
    ) -> CallToolResult:
        from git_memex import ops

        kind, note = type_filter(type)

        def run(ctx: Context) -> CallToolResult:
            data = ops.search(ctx, query, scope=scope_name(scope), type=kind, limit=limit, confidence=confidence)
            if note:
                data.setdefault("warnings", []).insert(0, note)
            hits = data["hits"]
            lines = [DISCLAIMER]
            if not hits:
                lines.append(f'No memories matched "{one_line(data["query"], 120)}". Try other keywords or synonyms.')
            for h in hits:
                lines.append(f"- {label(h)} id={h['id']}" + same_text(h))
                lines.append(f"  {one_line(h.get('snippet'))}")
                if h.get("contradicts"):
                    lines.append(contradicts_line(h, hits))
            lines.extend(disagreement_lines(data.get("disagreements", []), data.get("disagreements_left_out", 0)))
            if data.get("more"):
                lines.append(f"More memories matched; raise `limit` (now {limit}) to see them.")
            lines.extend(f"warning: {w}" for w in data.get("warnings", []))
            lines.extend(f"note: {f['note']}" for f in data.get("freshness", []) if f.get("note"))
            lines.extend(f"note: {o['note']}" for o in data.get("remote_revisions", []))
            return ok("\n".join(lines), data)

        return a.call("memory_search", run)

    @tool
    def memory_list(
        scope: Annotated[ReadScope, Field(description="all (default: project, personal and subscribed org memories), both (project and personal), project, personal (user: the same) or org.")] = "all",
        type: Annotated[str | None, Field(max_length=64, description="Only memories of this type (" + TYPE_LIST + ").")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many memories.")] = 20,
        include: Annotated[Include, Field(description="active (default: active and deprecated, newest of each "
                                          "chain) or all (superseded, retracted, archived and expired too).")] = "active",
        confidence: Annotated[Confidence | None, Field(description="Only memories of this confidence (low: "
                                                       "the regret window, inferred memories to review or clean up "
                                                       "in one batch).")] = None,
    ) -> CallToolResult:
        from git_memex import ops

        kind, note = type_filter(type)

        def run(ctx: Context) -> CallToolResult:
            data = ops.list_memories(ctx, scope=scope_name(scope), type=kind, limit=limit, include=include,
                                     confidence=confidence)
            mems = data["memories"]
            if note:
                data.setdefault("warnings", []).insert(0, note)
            lines = [DISCLAIMER]
            if not mems:
                lines.append("No memories in this scope yet.")
            else:
                lines.append(f"{len(mems)} of {data['total']} memories, newest first:")
            for m in mems:
                lines.append(f"- {label(m)} id={m['id']} — {one_line(m.get('snippet'))}")
                if m.get("contradicts"):
                    lines.append(contradicts_line(m, mems))
            lines.extend(disagreement_lines(data.get("disagreements", []), data.get("disagreements_left_out", 0)))
            if note:
                lines.append(f"warning: {note}")
            lines.extend(f"note: {f['note']}" for f in data.get("freshness", []) if f.get("note"))
            lines.extend(f"note: {o['note']}" for o in data.get("remote_revisions", []))
            return ok("\n".join(lines), data)

        return a.call("memory_list", run)

    @tool
    def memory_supersede(
        id: Id,
        text: Annotated[str | None, Field(min_length=1, max_length=MAX_TEXT, description="The new version of the "
                                          "memory, complete (required; `content` is taken as the same). "
                                          + TEXT_LIMIT)] = None,
        content: Annotated[str | None, Field(min_length=1, max_length=MAX_TEXT,
                                             description="The reference tool's name for `text`.")] = None,
        type: Annotated[MemoryType | None, Field(description="A new type (default: the old one's).")] = None,
        tags: Annotated[list[str] | None, Field(description="Tags replacing the old ones (default: kept).")] = None,
        confidence: Annotated[Confidence | None, Field(description="How sure the new statement is.")] = None,
        mctx: MCPContext | None = None,
    ) -> CallToolResult:
        from git_memex import ops

        try:
            text_ = one_text("memory_supersede", text, content)
        except ValueError as exc:
            return error(str(exc), 1)
        guard = rule_off(mctx, "memory_supersede", id, f'git memex supersede {id} "NEW TEXT"',
                         "replacing the approved rule")
        if isinstance(guard, CallToolResult):
            return guard

        def run(ctx: Context) -> CallToolResult:
            if (refused := guard(ctx)) is not None:
                return refused
            data = ops.supersede(ctx, id, text_, via=a.via, source="tool", type=type, confidence=confidence,
                                 tags=None if tags is None else [t.strip() for t in tags if t.strip()])
            lines = [f"Saved {data['id']}, replacing {data['supersedes']} (kept as history, status superseded)."]
            if data.get("location") == "outbox":
                lines.append("The replacement is a project draft on this machine; the user decides when to submit it.")
            if data.get("masked"):
                lines.append(f"Masked {len(data['masked'])} secret(s) before saving.")
            return ok("\n".join(lines), data)

        return a.call("memory_supersede", run)

    @tool
    def memory_forget(
        id: Id,
        soft: Annotated[bool, Field(description="Keep the file and mark it retracted instead of deleting it.")] = False,
        mctx: MCPContext | None = None,
    ) -> CallToolResult:
        from git_memex import ops

        guard = rule_off(mctx, "memory_forget", id, f"git memex forget {id}" + (" --soft" if soft else ""),
                         "retracting the approved rule" if soft else "deleting the approved rule")
        if isinstance(guard, CallToolResult):
            return guard

        def run(ctx: Context) -> CallToolResult:
            if (refused := guard(ctx)) is not None:
                return refused
            data = ops.forget(ctx, id, soft=soft)
            if data.get("deleted"):
                text = f"Deleted {data['id']} (file and index)."
                if any(ctx.memory_dir is not None and Path(p).parent == ctx.memory_dir for p in data.get("paths", [])):
                    text += " It was in the repository: the deletion reaches the team only with a commit."
            elif data.get("changed"):
                text = f"Retracted {data['id']}; the file stays as history and search no longer returns it."
            else:
                text = f"{data['id']} was already retracted; nothing changed."
            return ok(text, data)

        return a.call("memory_forget", run)

    @tool
    def memory_get(id: Id) -> CallToolResult:
        from git_memex import ops

        def run(ctx: Context) -> CallToolResult:
            data = ops.masked(ctx, ops.show(ctx, id))  # as show --json: every field, link and the body
            fm = data["frontmatter"]
            from git_memex.core.model import claim_beyond

            loc = str(data.get("location") or "")
            head = {**fm, "id": data["id"], "location": loc, "gate": data.get("gate"),
                    "review_state": data.get("standing"),  # labelled as it stands, never by the file's claim
                    "review_claim": claim_beyond(loc, fm.get("review_state"), data.get("standing"))}
            lines = [DISCLAIMER, f"- {label(head)} id={data['id']}"]
            for key in ("tags", "paths", "supersedes", "superseded_by", "instruction_state", "confidence",
                        "updated_at"):
                if fm.get(key) not in (None, [], ""):
                    lines.append(f"  {key}: {one_line(json.dumps(fm[key], ensure_ascii=False, default=str), 200)}")
            lines.append("  text: " + one_line(data["body"], 4000))
            return ok("\n".join(lines), data)

        return a.call("memory_get", run)

    @tool
    def memory_status() -> CallToolResult:
        from git_memex.review import sync_status

        def run(ctx: Context) -> CallToolResult:
            data = sync_status.sync_status(ctx)
            data["repository"] = str(ctx.repo.work_tree) if ctx.repo is not None else None
            data["next"] = next_for_agents(data.get("next"))
            text = format_status(data)
            head = (f"serving repository: {data['repository']}" if ctx.repo is not None
                    else no_repository(ctx))
            return ok(head + "\n" + text, data)

        return a.call("memory_status", run)



def same_text(hit: dict[str, Any]) -> str:
    """` (the same text is also in project as 01KB…)` for a hit that stands for copies of identical
    text (one fact, shown once: docs/search.md); "" otherwise."""
    from git_memex.agents.render import where_words

    copies = hit.get("also_in") or []
    if not copies:
        return ""
    return " (the same text is also in " + "; ".join(f"{where_words(c['location'])} as {c['id']}" for c in copies) + ")"


def register_review_tools(tool: Callable[..., Any], a: Adapter) -> None:
    @tool
    def memory_submit(
        ids: Annotated[Ids, Field(description="Outbox draft ids to submit (the user's choice).")],
        branch: Annotated[str | None, Field(min_length=1, description="Create this new branch (a plain name such "
                                            "as memex/review: no refs/, no remote name, not the default branch) "
                                            "and commit there, leaving the user's checkout as it is. Only "
                                            "with the user's explicit approval; default: the current branch.")] = None,
        base: Annotated[str | None, Field(min_length=1, description="The PR base branch to print "
                                          "(default: the branch submit started on).")] = None,
    ) -> CallToolResult:
        from git_memex.review import submit

        def run(ctx: Context) -> CallToolResult:
            res = submit.submit(ctx, ids, branch=branch, base=base)
            lines = [f"submitted {s['id']} [{s['review_state']}]" for s in res.submitted]
            lines += [f"already in the repository: {mid}" for mid in res.skipped_identical]
            if res.committed and res.checkout != res.branch:
                lines.append(f"committed {(res.commit or '')[:10]} on the new branch {res.branch}; the user's "
                             f"checkout stays on {res.checkout}, their files and index untouched.")
            elif res.committed:
                lines.append(f"committed {(res.commit or '')[:10]} on {res.branch} (still on this branch).")
            else:
                lines.append(f"nothing new to commit on {res.branch}.")
            lines += [f"Warning: {a.say('memory_submit', w)}." for w in res.warnings]
            if res.submitted and res.push_command:
                what = "push and open the pull request" if res.pr_command else "push"
                lines.append(f"Next: ask the user whether you should {what}, or whether they will. Never push "
                             "or open a PR without their explicit approval. The commands:")
                lines.append(f"  {res.push_command}")
                lines.extend(f"  {line}" for line in res.pr_command.splitlines())
            data = dict(res.to_json())
            if res.note:
                data["note"] = a.say("memory_submit", res.note)
            data["warnings"] = [a.say("memory_submit", w) for w in res.warnings]
            if res.submitted and res.note:
                lines.append(f"Note: {data['note']}.")
            return ok("\n".join(lines), data)

        return a.call("memory_submit", run)

    @tool
    def memory_propose(
        ids: Annotated[Ids, Field(description="Personal memory ids to copy into the project propose.")],
        local_approve: Annotated[bool | None, Field(description="Solo mode: ask the user to approve the copies "
                                                    "themselves right away (no team review). Default: false.")] = None,
        localApprove: Annotated[bool | None, Field(description="The reference tool's name for "
                                                   "local_approve.")] = None,
        mctx: MCPContext | None = None,
    ) -> CallToolResult:
        from git_memex.review import propose

        if None not in (local_approve, localApprove) and local_approve != localApprove:
            return error("Invalid arguments for memory_propose: `local_approve` and `localApprove` are the same "
                         "argument (the reference tool's name), so give one, not two different values.", 1)
        approve = bool(local_approve if local_approve is not None else localApprove)

        seen: dict[str, Any] = {}

        def look(ctx: Context) -> CallToolResult:
            if ctx.repo is None:  # no project to copy into: refused before the person is asked
                return error(no_repository(ctx), 1)
            seen["items"] = propose.crossing(ctx, ids)
            seen["me"] = actor(ctx)
            return ok("", {})

        res = a.call("memory_propose", look)
        if res.is_error:
            return res
        items = seen["items"]
        command = "git memex propose " + " ".join(i["source"] for i in items) + (" --local-approve" if approve else "")
        question = [f"Your AI agent asks to copy {len(items)} personal memor{'y' if len(items) == 1 else 'ies'} into "
                    "this project's outbox, from where it can be committed and shared with the team"
                    + (f", approved by you ({seen['me']})" if approve else "") + ". Exactly this text "
                    "would be copied:"]
        for i in items:
            question += [f"{i['source']} ({i['type']}" + (", a rule" if i["role"] == "instruction" else "") + "):",
                         person.quoted(i["text"])]
        question.append("Do you, the person at this computer, want this?")
        answer = person.ask(mctx, "\n".join(question))
        if answer != "yes":
            act = "copying a personal memory into the project" + (" and approving it" if approve else "")
            return error(person.refusal(answer, act, command), 2)
        shown = {i["source"]: i["text"] for i in items}

        def run(ctx: Context) -> CallToolResult:
            out = propose.propose(ctx, [i["source"] for i in items], local_approve=approve, via=a.via,
                                 shown=shown)
            lines = [f"proposed {o['source']} → {o['id']} [{o['review_state']}]"
                     + (" (already proposed)" if o.get("existing") else "") for o in out]
            lines.append("Next: memory_status, then memory_submit with the new ids once the user agrees.")
            return ok("\n".join(lines), {"proposed": out})

        return a.call("memory_propose", run)

    @tool
    def memory_promote(
        id: Id,
        reject: Annotated[bool, Field(description="Reject instead of advancing (needs note).")] = False,
        resubmit: Annotated[bool, Field(description="Move a rejected memory back to proposed.")] = False,
        note: Annotated[str | None, Field(description="Why (required with reject).")] = None,
        mctx: MCPContext | None = None,
    ) -> CallToolResult:
        from git_memex.review import promote

        seen: dict[str, Any] = {}

        def look(ctx: Context) -> CallToolResult:  # the core's own refusals first: no question for a call that cannot succeed
            seen["m"] = promote.look(ctx, id, reject=reject, note=note, resubmit=resubmit)
            seen["me"] = actor(ctx)
            return ok("", {})

        res = a.call("memory_promote", look)
        if res.is_error:
            return res
        m = seen["m"]
        to = m["to"]
        if reject:
            command = f'git memex promote {m["id"]} --reject --note "WHY"'
        else:
            command = f"git memex promote {m['id']}" + (" --resubmit" if resubmit else "")
        question = (f"Your AI agent asks to record a review step in your name ({seen['me']}): {m['id']} "
                    f"{m['review_state']} → {to}" + (", because:\n" + person.quoted(note) + "\n" if reject and note else "")
                    + f". The memory ({m['type']}):\n" + person.quoted(m["body"])
                    + "\nDo you, the person at this computer, decide this?")
        answer = person.ask(mctx, question)
        if answer != "yes":
            return error(person.refusal(answer, f"the review step {m['review_state']} → {to}", command), 2)

        def run(ctx: Context) -> CallToolResult:
            data = promote.promote(ctx, id, reject=reject, resubmit=resubmit, note=note,
                                     expect=(m["review_state"], m["body"]))
            lines = [f"promote {data['id']}: {data['from']} → {data['to']} (by {data['by']})."]
            if data["to"] == "rejected":
                lines.append("Nothing was deleted: the file stays. The author may revise it and resubmit, "
                             "or the PR may be closed.")
            if data["to"] in ("approved", "published", "rejected", "proposed"):
                lines.append("Commit the changed file for the team to see it.")
            return ok("\n".join(lines), data)

        return a.call("memory_promote", run)

    @tool
    def memory_resolve(
        target: Annotated[str | None, Field(min_length=1, description="Id or path of a conflicted memory file; "
                                            "omit to list the conflicted files.")] = None,
        side: Annotated[Literal["ours", "theirs"] | None, Field(description="Settle every conflict of `target` "
                                                                 "with this side (ours: the checked-out branch's; "
                                                                 "theirs: the one merged in), keeping the merged "
                                                                 "rest. For a rule, the user is asked first.")] = None,
        mctx: MCPContext | None = None,
    ) -> CallToolResult:
        from git_memex.git import sync

        expect: str | None = None
        if side is not None:
            if target is None:
                return error("Invalid arguments for memory_resolve: `side` settles one conflicted file, so give "
                             "`target` too (call without both to list them).", 1)
            seen: dict[str, Any] = {}

            def look(ctx: Context) -> CallToolResult:
                seen["view"] = sync.conflict_view(ctx, target, side)
                return ok("", {})

            res = a.call("memory_resolve", look)
            if res.is_error:
                return res
            view = seen["view"]
            expect = view["expect"]
            if view["rule"]:  # taking a side may switch a rule off or change what agents follow: the person's call
                command = f"git memex resolve {view['path']} --{side}"
                after = ("the file would be deleted" if view["deleted"] else "the file would then say "
                         + (", ".join(f"{k}: {v}" for k, v in view["after"].items()) or "what the merge gives"))
                question = (f"Your AI agent asks to settle the merge conflict in a rule ({view['path']}) by taking "
                            f"{side} for: {', '.join(view['taken']) or 'nothing'}; {after}. {side.capitalize()}'s "
                            "text:\n" + person.quoted(view["body"]) + "\nDo you, the person at this computer, "
                            "decide this?")
                answer = person.ask(mctx, question)
                if answer != "yes":
                    return error(person.refusal(answer, f"taking {side} in the rule's conflict", command), 2)

        def run(ctx: Context) -> CallToolResult:
            if target is None:
                items = sync.list_conflicts(ctx)
                data = {"conflicts": [c.__dict__ for c in items]}
                if not items:
                    return ok("No conflicted memory files.", data)
                return ok("\n".join(f"conflicted: {c.id}  {c.path}" for c in items), data)
            out = sync.resolve(ctx, target, side=side, expect=expect)
            data = out.__dict__
            if out.deleted:
                return ok(f"Resolved {out.path}: removed, as {side} deleted it; the removal is staged. Commit to "
                          "finish the merge.", data)
            if out.clean:
                merged = f" (merged: {', '.join(out.auto_merged)})" if out.auto_merged else ""
                took = f"; {side} for {', '.join(out.taken)}" if side and out.taken else ""
                return ok(f"Resolved and staged {out.path}{merged}{took}. Commit to finish the merge.", data)
            lines = [f"Cannot resolve {out.path} automatically; a human must decide. Nothing was written."]
            for c in out.conflicts:
                lines.append(f"  {c['field']} ({c['kind']} conflict):")
                for s in ("base", "ours", "theirs"):
                    lines.append(f"    {s}: {one_line(json.dumps(c[s], ensure_ascii=False, default=str))}")
            lines.append("Show these to the user; they edit the file and `git add` it, or choose a side "
                         "(call again with side=\"ours\" or side=\"theirs\" once they have).")
            return ok("\n".join(lines), data)

        return a.call("memory_resolve", run)

    @tool
    def memory_pr_status(
        apply: Annotated[bool, Field(description="Perform the mapped review transitions locally (no push); "
                                     "the user confirms them first. Default: report only.")] = False,
        mctx: MCPContext | None = None,
    ) -> CallToolResult:
        from git_memex.review import pr_status

        shown: set[str] = set()
        if apply:  # recording review steps is the person's act: asked first, or the command named
            seen: dict[str, Any] = {}

            def look(ctx: Context) -> CallToolResult:
                seen["data"] = pr_status.pr_status(ctx, apply=False)
                return ok("", {})

            res = a.call("memory_pr_status", look)
            if res.is_error:
                return res
            steps = [pr_status.step_line(it) for it in seen["data"]["memories"] if it.get("target")]
            shown = set(steps)  # applied is exactly what the person saw, whatever happens while they read it
            if steps:
                question = ("Your AI agent asks to record these review steps from the pull request in this "
                            "work tree:\n" + person.quoted("\n".join(steps))
                            + "\nDo you, the person at this computer, decide this?")
                answer = person.ask(mctx, question)
                if answer != "yes":
                    return error(person.refusal(answer, "recording the pull request's review steps",
                                                "git memex pr-status --apply"), 2)

        def run(ctx: Context) -> CallToolResult:
            data = pr_status.pr_status(ctx, apply=apply, shown=shown if apply else None)
            pr = data["pr"]
            lines = [f"{pr_status.pr_label(pr.get('number'))} {pr.get('state') or '?'}"
                     + (f", review: {pr['review_decision']}" if pr.get("review_decision") else "")
                     + (f" — {pr['url']}" if pr.get("url") else "")]
            if data.get("source") == "git":  # no GitHub pull request: the merges git shows
                lines = [f"Merges into {data['branch']} as git shows them ({data.get('note') or 'no gh'}):"]
            lines += [f"- {it['id']}: {it['action']}" for it in data["memories"]] or ["(no memory files in this PR)"]
            if apply:
                lines += [f"applied {x['id']}: {x['from']} → {x['to']} (by {x['by']})" for x in data["applied"]] \
                    or ["nothing to apply."]
                lines += [f"not applied {mid}: the user was not shown this step (it appeared or changed while they "
                          "were asked); call again to ask them" for mid in data.get("not_applied") or []]
            return ok("\n".join(lines), data)

        return a.call("memory_pr_status", run)


"""The session-start block: what an agent should know before its first turn (docs/decisions.md, the session block).

A core operation (no printing): `build_context` returns a `ContextBlock`; the `context` command
and the Claude Code SessionStart hook are thin adapters over it.

The block has up to three parts under the fixed disclaimer (with rules, `render.PARTS_NOTE` says
right after it that the Instructions part is the exception, and every part's first line says what
it is: `render.render_block`):

* **Instructions** — only memories that pass the instruction gate (iron rule 1, see `gate`:
  approved by a person *and* committed as they are on the project's default branch, or for an
  org rule, put on the org's default branch by an owner), in precedence order
  (`core.precedence`: the earlier of two that disagree wins). Nothing else can reach this heading: every memory body is squeezed
  to one line behind a ``- [scope/type]`` label, so a body that contains "## Instructions" can
  never open a section of its own.
* **Warnings** — ``warning``-type memories, attached only on a specific trigger
  (see `warning_trigger`); never on a bare tag match.
* **Knowledge** — up to ``memex.maxProjectMemories`` project and ``memex.maxProfileItems``
  personal memories, chosen query-aware (see `build_context`).

Before the closing footer, a repository with an origin that was last fetched over a day ago (or
never) gets one line saying so (D12: session start never pulls, it says how old its knowledge
may be).

The whole text fits ``memex.injectMaxTokens`` as counted by `textproc.estimate_tokens` (which
tracks BPE tokenizers, see docs/agents.md); the lowest-ranked items are dropped first. Ids are
shortened to unique prefixes (`short_ids`). An empty selection gives an empty text.
"""

from __future__ import annotations

import sqlite3
import time

from git_memex.agents import globs, relevance, render, workspace
from git_memex.search import scoring

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from git_memex.core.context import Context
    from git_memex.index.stores import Stores


def build_context(
    ctx: Context,
    *,
    query: str | None = None,
    branch: str | None = None,
    changed_paths: list[str] | None = None,
    stores: Stores | None = None,
) -> render.ContextBlock:
    """The session-start block for this place (repo, branch, changed files) and optional query.

    Knowledge selection, per memory: relevance = 1.0 × its query search score (relative to the
    best hit) + 0.6 × the same for the branch words + 0.4 × for the changed files' words + 1.0
    when one of its ``paths`` globs matches a changed file or the cwd + 0.3 when a tag names a
    topic word; score = importance × recency × (1 + 4 × relevance). With no signal at all this
    is importance × recency. Candidates: active or deprecated, newest of a supersede chain,
    never warnings (they have their own trigger), never ``role: instruction`` (shown only when
    the gate passes, under Instructions).

    `branch` and `changed_paths` default to the work tree's (pass "" / [] to ignore them).
    """
    from git_memex.index.stores import Stores as _Stores

    own = stores is None
    status = workspace.start_changed_paths(ctx) if changed_paths is None else None
    st = stores
    try:
        if st is None:
            st = _Stores(ctx)
        st.refresh()
        if changed_paths is None:
            changed_paths = workspace.finish_changed_paths(status)
        return _build(ctx, st, query=query, branch=branch, changed=changed_paths)
    finally:
        if status is not None and status.returncode is None:
            status.kill()
            status.wait()
        if own and st is not None:
            st.close()


def _build(ctx: Context, st: Stores, *, query: str | None, branch: str | None,
           changed: list[str] | None) -> render.ContextBlock:
    from git_memex.core.textproc import cjk_terms, estimate_tokens, latin_terms

    budget = ctx.int_setting("injectMaxTokens")
    max_project = ctx.int_setting("maxProjectMemories")
    max_personal = ctx.int_setting("maxProfileItems")
    now = time.time()

    query = (query or "").strip()
    if branch is None:
        branch = workspace.current_branch(ctx) or ""
    if changed is None:
        changed = workspace.changed_paths(ctx)
    changed = [p.replace("\\", "/").strip("/") for p in changed if p and p.strip("/")][:workspace.MAX_CHANGED_PATHS]
    cwd_paths = workspace.cwd_paths(ctx)
    b_words = workspace.topic_words(branch) if branch else []
    f_words = workspace.path_words(changed, skip=[ctx.memory_dir_rel] if ctx.repo is not None else [])
    words = set(b_words) | set(f_words) | {t.lower() for t in latin_terms(query)} | set(cjk_terms(query))
    words.discard("")
    branch_text = " ".join(b_words)
    topic = query or branch_text
    stale, fetch_info = workspace.staleness_line(ctx, now)
    from git_memex.secrets.guard import safe_bodies  # the query is echoed back: masked like a body

    shown_query = safe_bodies(st, [("", query)])[""] if query else None
    signals: dict[str, Any] = {"query": shown_query, "branch": branch or None, "branch_words": b_words,
                               "changed_paths": changed, "path_words": f_words, "fetch": fetch_info}

    # -- relevance signals
    q_rel, q_hits = relevance.normalised_hits(st, query) if query else ({}, [])
    b_rel, b_hits = relevance.normalised_hits(st, branch_text) if branch_text else ({}, [])
    f_rel, _ = relevance.normalised_hits(st, " ".join(f_words)) if f_words else ({}, [])
    topic_hits = q_hits if query else b_hits
    topic_rank = {mid: i for i, mid in enumerate(topic_hits)}

    # -- instructions (iron rule 1)
    instr_rows = relevance.pool_rows(st, relevance.INSTRUCTION_POOL, limit=relevance.POOL_HIGH)
    relevance.drop_superseded(st, instr_rows)
    user: str | None = None
    if any(r["scope"] == "personal" for r in instr_rows.values()):
        from git_memex.core.person import person

        user = person(ctx)
    from git_memex.agents.gate import passing
    from git_memex.core.precedence import sort_key

    instructions = passing(ctx, instr_rows.values(), user)
    gate_note = ""
    if ctx.repo is not None and any(r["location"] == "repo" for r in instr_rows.values()):
        from git_memex.agents.gate import dangling_origin_head, default_branch, unknown_branch

        if dangling_origin_head(ctx) is not None and default_branch(ctx) is None:  # say why no rule shows
            gate_note = f"This repository's rules are not served: {unknown_branch(ctx)}."
            stale = f"{stale} {gate_note}" if stale else gate_note
    # Precedence order (docs/org.md, "Precedence"): rules about facts first, org › project ›
    # personal; then preference rules, personal › project › org. The earlier of two that
    # disagree wins, and the budget drops the last first.
    # Within a tier: higher importance first, then the newest (updated_at, then id: ULIDs sort by
    # creation time), so the order is the same on every run and means something (docs/agents.md).
    instructions.sort(key=lambda r: r["id"], reverse=True)
    instructions.sort(key=lambda r: (*sort_key(r), -scoring.PRIOR_IMPORTANCE.get(r["importance"], 1.0),
                                     -(r["updated_ts"] or 0.0)))
    from git_memex.core.precedence import one_fact_once

    instructions, copies = one_fact_once(instructions)  # one fact, shown once (docs/search.md)
    shown = {r["id"] for r in instructions}

    # -- warnings (proactive nudge)
    warn_rows = relevance.pool_rows(st, relevance.WARNING_POOL, limit=relevance.POOL_PATHS)
    relevance.drop_superseded(st, warn_rows)
    fired: list[tuple[sqlite3.Row, list[str]]] = []
    for r in warn_rows.values():
        if r["id"] in shown:
            continue
        why = relevance.warning_trigger(r, paths=changed, cwd_paths=cwd_paths, words=words, topic=topic,
                              topic_rank=topic_rank)
        if why:
            fired.append((r, why))
    fired.sort(key=lambda x: (x[1] == ["paths"], x[0]["updated_ts"] or 0.0, x[0]["id"]), reverse=True)
    fired, more = one_fact_once(fired, key=lambda x: x[0])
    copies.update(more)
    fired = fired[:relevance.MAX_WARNINGS]
    shown |= {r["id"] for r, _ in fired}

    # -- knowledge
    # A role: instruction memory that fails the gate is a pending rule, not history: showing its
    # imperative text as "knowledge" is the failure mode the gate exists for (D2, docs/decisions.md). Search finds it.
    base = relevance.KNOWLEDGE_POOL
    pool = relevance.pool_rows(st, base, limit=relevance.POOL_RECENT)
    for cond, limit in ((relevance.HIGH_POOL, relevance.POOL_HIGH), (relevance.PATHS_POOL, relevance.POOL_PATHS)):
        for k, v in relevance.pool_rows(st, cond, limit=limit).items():
            pool.setdefault(k, v)
    hit_ids = [i for i in {**q_rel, **b_rel, **f_rel} if i not in pool]
    from git_memex.index.database import in_chunks

    for chunk, marks in in_chunks(hit_ids):
        for r in st.rows(base + f" AND m.id IN ({marks})", chunk):
            pool.setdefault(r["id"], r)
    relevance.drop_superseded(st, pool)
    scored: list[tuple[float, sqlite3.Row, list[str]]] = []
    for mid, r in pool.items():
        if mid in shown:
            continue
        rel = 0.0
        reasons: list[str] = []
        for name, table, weight in (("query", q_rel, relevance.W_QUERY), ("branch", b_rel, relevance.W_BRANCH), ("files", f_rel, relevance.W_FILES)):
            s = table.get(mid)
            if s:
                rel += weight * s
                reasons.append(name)
        patterns = relevance.row_paths(r)
        if patterns and (globs.glob_matches(patterns, changed) or globs.glob_matches(patterns, cwd_paths)):
            rel += relevance.W_GLOB
            reasons.append("paths")
        if words and relevance.tag_hits(relevance.row_tags(r), words, query):
            rel += relevance.W_TAG
            reasons.append("tags")
        score = scoring.prior(r, now) * (1.0 + relevance.RELEVANCE_GAIN * rel)
        scored.append((score, r, reasons or ["recent"]))
    scored.sort(key=lambda x: (x[0], x[1]["updated_ts"] or 0.0, x[1]["id"]), reverse=True)
    scored = _once(scored, [*instructions, *(r for r, _ in fired)], copies)
    project = [x for x in scored if x[1]["location"] != "personal"][:max_project]
    personal = [x for x in scored if x[1]["location"] == "personal"][:max_personal]
    ranked = sorted(project + personal, key=lambda x: (x[0], x[1]["updated_ts"] or 0.0, x[1]["id"]), reverse=True)

    # -- fit the budget: instructions first, then warnings, then knowledge by rank
    from git_memex.secrets.guard import safe_bodies

    shown_rows = [*instructions, *(r for r, _ in fired), *(r for _, r, _ in ranked)]
    fresh: list[dict[str, Any]] = []
    if any(str(r["location"]).startswith("remote:") for r in shown_rows):  # docs/remote.md, "Freshness"
        from git_memex.remote.cache import notes_for

        fresh = notes_for(ctx, [r["location"] for r in shown_rows])
    notes = [f["note"] + "." for f in fresh if f.get("note")]
    if notes:
        stale = " ".join([stale, *notes]) if stale else " ".join(notes)
    safe = safe_bodies(st, [(r["id"], r["body"]) for r in shown_rows])
    sid = render.short_ids(st, [r["id"] for r in shown_rows] + [c["id"] for r in shown_rows for c in copies.get(r["id"], [])])

    def also(r: sqlite3.Row) -> str:
        return render.also_in_words(copies.get(r["id"], []), sid)

    # a rule approved outside this project says by whom, and where
    from git_memex.agents.gate import approved_where

    elsewhere = {r["id"]: approved_where(ctx, r) for r in instructions}
    instr_lines = [(r, render.item_line(r, safe[r["id"]], instruction=True, shown_id=sid[r["id"]],
                                        also=also(r) + (f"; {elsewhere[r['id']]}" if elsewhere[r["id"]] else "")))
                   for r in instructions]
    warn_lines = [(r, render.item_line(r, safe[r["id"]], shown_id=sid[r["id"]], also=also(r)), why) for r, why in fired]
    know_lines = [(s, r, render.item_line(r, safe[r["id"]], shown_id=sid[r["id"]], also=also(r)), why)
                  for s, r, why in ranked]
    units = _disagreement_units(ctx, know_lines)
    keep_i: list[tuple[sqlite3.Row, str]] = []
    keep_w: list[tuple[sqlite3.Row, str, list[str]]] = []
    keep_k: list[tuple[float, sqlite3.Row, str, list[str]]] = []
    keep_d: list[tuple[Any, list[tuple[float, sqlite3.Row, str, list[str]]]]] = []

    def text_of(ki: list, kw: list, kk: list, kd: list | None = None) -> str:
        # Every rule not (yet) kept is counted as left out, so the line that says so is in the
        # budget from the first fit on: a cut rule is never silent.
        grouped = [x for x in kk if x[1]["location"] != "personal"] + [x for x in kk if x[1]["location"] == "personal"]
        return render.render_block([x[1] for x in ki], [x[1] for x in kw], [x[2] for x in grouped], stale,
                                   rules_left_out=len(instr_lines) - len(ki),
                                   disagreements=[([x[2] for x in two], render.disagreement_note(c))
                                                  for c, two in (keep_d if kd is None else kd)],
                                   origins={render.rule_origin(x[0]) for x in (ki or instr_lines)})

    def fits(ki: list, kw: list, kk: list, kd: list | None = None) -> bool:
        return estimate_tokens(text_of(ki, kw, kk, kd)) <= budget

    for x in instr_lines:
        if not fits([*keep_i, x], keep_w, keep_k):
            break
        keep_i.append(x)
    left_out = len(instr_lines) - len(keep_i)
    for y in warn_lines:
        if not fits(keep_i, [*keep_w, y], keep_k):
            break
        keep_w.append(y)
    for c, z in units:
        if c is None:  # one memory
            if not fits(keep_i, keep_w, [*keep_k, *z]):
                break
            keep_k.extend(z)
        else:  # two that disagree: shown together or not at all, never one without the other
            if not fits(keep_i, keep_w, keep_k, [*keep_d, (c, z)]):
                break
            keep_d.append((c, z))

    block = render.ContextBlock(text="", budget=budget, signals=signals, rules_left_out=left_out, freshness=fresh)
    if not (keep_i or keep_w or keep_k or keep_d or left_out or gate_note):
        return block
    block.text = text_of(keep_i, keep_w, keep_k)
    block.tokens = estimate_tokens(block.text)
    block.instructions = [{**render.entry(r, line, also_in=copies.get(r["id"])),
                           **({"approved": elsewhere[r["id"]]} if elsewhere[r["id"]] else {})} for r, line in keep_i]
    block.warnings = [render.entry(r, line, reasons=why, also_in=copies.get(r["id"])) for r, line, why in keep_w]
    block.items = [render.entry(r, line, s, why, also_in=copies.get(r["id"])) for s, r, line, why in keep_k]
    if keep_d:
        from git_memex.review.contradictions import disagreement_json

        block.disagreements = [disagreement_json(c) for c, _two in keep_d]
        for c, two in keep_d:
            for s, r, line, why in two:
                block.items.append({**render.entry(r, line, s, why, also_in=copies.get(r["id"])),
                                    "contradicts": [c.b if r["id"] == c.a else c.a]})
    for item in block.items:
        item.setdefault("contradicts", [])
    return block


def _once(scored: list[tuple[float, sqlite3.Row, list[str]]], above: list[sqlite3.Row],
          copies: dict[str, list[sqlite3.Row]]) -> list[tuple[float, sqlite3.Row, list[str]]]:
    """The knowledge candidates, one per text (`core.precedence.one_fact_once`): a text already shown
    above (a rule, a warning) is named by that item instead; `copies` gains what each kept one stands for."""
    from git_memex.core.precedence import one_fact_once

    shown = {r["content_hash"]: r["id"] for r in above if r["content_hash"]}
    out: list[tuple[float, sqlite3.Row, list[str]]] = []
    for x in scored:
        owner = shown.get(x[1]["content_hash"])
        if owner is not None:
            copies.setdefault(owner, []).append(x[1])
        else:
            out.append(x)
    out, more = one_fact_once(out, key=lambda x: x[1])
    copies.update(more)
    return out


def _disagreement_units(ctx: Context, know: list[tuple[float, sqlite3.Row, str, list[str]]],
                        ) -> list[tuple[Any, list[tuple[float, sqlite3.Row, str, list[str]]]]]:
    """The knowledge lines in rank order as units the budget keeps or cuts whole: (None, [one
    line]), or (the contradiction, [the line precedence prefers, the other]) for two memories that
    disagree (review/contradictions.py), placed where the better ranked of them was. A memory is
    paired once (with the first that disagrees with it); nothing is dropped."""
    from git_memex.review.contradictions import among, shown_item

    found = among(ctx, [shown_item(r["id"], r["body"] or "", r["location"], r["type"], r["source"], r["review_state"],
                                   r["content_hash"], r["path"]) for _s, r, _l, _w in know if r["status"] == "active"])
    if not found:
        return [(None, [z]) for z in know]
    line_of = {z[1]["id"]: z for z in know}
    pair_of: dict[str, Any] = {}
    for c in found:
        if c.a not in pair_of and c.b not in pair_of:
            pair_of[c.a] = pair_of[c.b] = c
    out: list[tuple[Any, list[tuple[float, sqlite3.Row, str, list[str]]]]] = []
    placed: set[str] = set()
    for z in know:
        mid = z[1]["id"]
        if mid in placed:
            continue
        two = pair_of.get(mid)
        if two is None:
            out.append((None, [z]))
            placed.add(mid)
        else:
            out.append((two, [line_of[two.a], line_of[two.b]]))
            placed |= {two.a, two.b}
    return out


# --------------------------------------------------------------------- the prompt hook
PROMPT_HITS = 3
"""At most this many memories are added to one prompt: a nudge, not a second session block."""
PROMPT_MIN_HELD = 2
PROMPT_SHARE = 0.3
PROMPT_DENSE = 1.5
"""A memory reaches a prompt when, by the engine's own matching (stems and prefixes, so "retries"
holds "retry"; synonyms and the alias vocabulary; CJK bigrams), it holds at least
PROMPT_MIN_HELD of the prompt's words carrying at least PROMPT_SHARE of their weight (the
engine's coverage: the IDF-weighted share of the query's words held); or, with the semantic
lane, one word of a prompt of two words or more and a dense score of at least PROMPT_DENSE (the
lane's raw asymmetric score; below it the lane only reorders). Chosen on the tuning half of
bench/prompts/set.json (`python -m bench.prompt_hook --sweep`): the word threshold as strict as
that half allows without losing an answer, the dense floor as loose as it allows without adding
a false positive. A rule letting one rare word alone through (IDF share >= 0.45) was tried and
dropped: on the tuning half with 200 distractors beside the set, "generate a uuid for me"
brought the changelog memory, as the IDF of a word in one memory nears that of an absent word
in a large store. docs/agents.md gives both halves' figures."""
PROMPT_MAX_CHARS = 2000
"""A longer prompt (a pasted log or diff, the search limit of ops.MAX_QUERY_CHARS) brings no memory."""


def prompt_rule(held: int, words: int, coverage: float, dense: float | None = None, *,
                min_held: int = PROMPT_MIN_HELD, share: float = PROMPT_SHARE, dense_floor: float = PROMPT_DENSE) -> bool:
    """Does a search hit holding `held` of a prompt's `words` (IDF-weighted share `coverage`;
    `dense`: the semantic lane's raw score, None without it) reach the prompt?"""
    if words <= 0 or held <= 0:
        return False
    if held >= min_held and coverage >= share:
        return True
    # by meaning: one word alone ("webhook", "continue") is no question about a memory
    return words >= 2 and dense is not None and dense >= dense_floor


def prompt_share(hit: Any, result: Any) -> float:
    """The share of a prompt's weight a search hit holds, each word weighted by its IDF over the
    store plus a fixed reference store in which everyday words are common (`agents.prior`): the
    same verdict in a store of one memory as in one of ten thousand."""
    from git_memex.agents.prior import share

    return share(hit.held_words, result.words, result.memories)


PROMPT_FOCUS_WORDS = 40
PROMPT_FOCUS_SHARE = 0.05
"""A memory is one statement: a body of more than PROMPT_FOCUS_WORDS distinct terms (the prompt
set's longest has 34) must hold at least PROMPT_FOCUS_SHARE of them from the prompt. So a memory
that lists every everyday word (a "glossary" a teammate commits) cannot ride into every prompt
(found by the attack on the merged main); search still finds it."""


def focused(body: str, held: int) -> bool:
    """Whether a body is one statement for a prompt holding `held` of its terms. Its words are
    counted as a reader counts them: Latin words, and Chinese text (cut into overlapping bigrams,
    as search and the index cut it: a run of n characters gives n - 1) at one word per two
    bigrams, so a plain Chinese sentence of 60 characters is ~30 words, not 59, as its English
    version is ~25. `held` (in the same bigrams) is measured against the terms as cut."""
    from git_memex.core.textproc import cjk_terms, latin_terms

    latin = {t.lower() for t in latin_terms(body)}
    cjk = set(cjk_terms(body))
    terms = len(latin) + len(cjk)
    return len(latin) + len(cjk) / 2 <= PROMPT_FOCUS_WORDS or held >= PROMPT_FOCUS_SHARE * terms


def prompt_memories(ctx: Context, prompt: str, *, limit: int = PROMPT_HITS,
                    exclude: frozenset[str] | set[str] = frozenset(),
                    refresh: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """The few memories that strongly match a user's prompt, as a block for the agent (the
    Claude Code UserPromptSubmit hook); ("", []) when nothing fits the relevance floor.

    The prompt is matched as a person reads it (`textproc.without_controls`: no terminal escape
    sequence or invisible character), and a memory must hold at least one of its words that is
    not everyday (`prior.rare`): "can you help me fix this test" brings nothing that shares only
    `help` and `fix`.

    Candidates are search's top hits (newest of each chain, never retracted); rules
    (role: instruction) are left out here: they reach an agent only through the gate."""
    from git_memex.agents.prior import rare
    from git_memex.core.textproc import without_controls
    from git_memex.index.stores import Stores
    from git_memex.search.engine import search
    from git_memex.secrets.guard import safe_bodies

    if len(prompt) > PROMPT_MAX_CHARS:
        return "", []
    prompt = without_controls(prompt)  # a pasted terminal line: `\x1b[31mretries` is `retries`
    if not prompt.strip():
        return "", []
    with Stores(ctx) as st:
        res = search(st, prompt, limit=10, refresh=refresh)
        hits = [h for h in res.hits if h.role != "instruction" and h.status == "active" and h.id not in exclude
                and h.review_state != "rejected"]
        strong = [h for h in hits if prompt_rule(h.held, h.words, prompt_share(h, res), h.dense)
                  and rare(h.held_words) and focused(h.body, h.held)][:limit]
        if not strong:
            return "", []
        bodies = safe_bodies(st, [(h.id, h.body) for h in strong])
    lines = [render.DISCLAIMER, "", "## Memories that match this message"]
    items = []
    for h in strong:
        extra = f", {h.review_state}" if h.scope != "personal" and h.review_state in ("draft", "proposed") else ""
        line = f"- [{h.scope}/{h.type}{extra}] {render.squeeze(bodies[h.id])} (id {h.id})"
        lines.append(line)
        items.append({"id": h.id, "scope": h.scope, "type": h.type, "line": line})
    return "\n".join(lines), items



"""Tending the garden (`git memex audit`): near-duplicates, stale memories, broken chains, misplaced files, index drift.

Near-duplicate pairs, memories nobody touched in a while, supersede chains that are broken or
point at a memory that is not there, personal or private files in the repository, and where the
index has drifted from the files. The finders are plain functions over rows (mappings with the
index's column names: id, location, scope, visibility, type, status, body, created_at,
updated_at, supersedes, superseded_by), so `inventory` and others reuse them on index rows.
See docs/curating.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.index.stores import Stores

STALE_DAYS = 90
"""A live memory not updated for this many days is listed as stale (docs/curating.md)."""
LIVE = ("active", "deprecated")


def _domain(row: Mapping[str, Any]) -> str:
    """Near-duplicates are only sought within one side: personal, or the project's."""
    return "personal" if row["location"] == "personal" else "project"


# ------------------------------------------------------------------ near-duplicates
@record(frozen=True)
class NearDuplicate:
    a: str  # the older id (ULIDs sort by time)
    b: str
    similarity: float  # Jaccard over textproc.similarity_tokens
    domain: str  # personal | project

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "similarity": round(self.similarity, 3), "domain": self.domain}


def near_duplicate_pairs(rows: Iterable[Mapping[str, Any]], threshold: float | None = None) -> list[NearDuplicate]:
    """Pairs of live memories (active or deprecated) on one side whose bodies have a Jaccard
    similarity of at least `threshold` (default `textproc.NEAR_DUP_THRESHOLD`, as `add` warns),
    most similar first. Exact: a prefix filter over tokens ordered rarest first
    (Chaudhuri et al., "A primitive operator for similarity joins", ICDE 2006) finds every such
    pair without comparing all n² of them. An id found in two places counts once."""
    from git_memex.core.textproc import NEAR_DUP_THRESHOLD, similarity_tokens

    t = NEAR_DUP_THRESHOLD if threshold is None else threshold
    if not 0 < t <= 1:
        raise ValueError("threshold must be in (0, 1]")
    items: list[tuple[str, str, frozenset[str]]] = []
    seen: set[str] = set()
    for r in rows:
        if r["status"] not in LIVE or r["id"] in seen:
            continue
        tokens = similarity_tokens(r["body"] or "")
        if tokens:
            seen.add(r["id"])
            items.append((r["id"], _domain(r), tokens))
    df: dict[str, int] = {}
    for _mid, _dom, tokens in items:
        for tok in tokens:
            df[tok] = df.get(tok, 0) + 1
    items.sort(key=lambda it: (len(it[2]), it[0]))
    postings: dict[tuple[str, str], list[int]] = {}
    out: list[NearDuplicate] = []
    for i, (mid, dom, tokens) in enumerate(items):
        ordered = sorted(tokens, key=lambda tok: (df[tok], tok))
        prefix = ordered[: len(ordered) - math.ceil(t * len(ordered) - 1e-9) + 1]
        candidates: set[int] = set()
        for tok in prefix:
            candidates.update(postings.get((dom, tok), ()))
        for j in candidates:  # every j is no larger than i: items are visited by size
            other = items[j][2]
            if len(other) < t * len(tokens) - 1e-9:
                continue
            inter = len(tokens & other)
            sim = inter / (len(tokens) + len(other) - inter)
            if sim >= t - 1e-12:
                a, b = sorted((mid, items[j][0]))
                out.append(NearDuplicate(a, b, sim, dom))
        for tok in prefix:
            postings.setdefault((dom, tok), []).append(i)
    out.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return out


# ------------------------------------------------------------------ stale
@record(frozen=True)
class StaleMemory:
    id: str
    location: str
    type: str
    updated_at: str | None
    days: int  # whole days since it was last updated

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "location": self.location, "type": self.type, "updated_at": self.updated_at,
                "days": self.days}


def stale_memories(rows: Iterable[Mapping[str, Any]], *, days: int = STALE_DAYS, now: float | None = None) -> list[StaleMemory]:
    """Active memories whose `updated_at` (else `created_at`) is at least `days` days old, oldest
    first. A memory with neither time counts as stale: nobody can tell when it was last true."""
    import time

    from git_memex.core.model import parse_time

    at = time.time() if now is None else now
    out: list[StaleMemory] = []
    seen: set[str] = set()
    for r in rows:
        if r["status"] != "active" or r["id"] in seen:
            continue
        seen.add(r["id"])
        when = r["updated_at"] or r["created_at"]
        ts = parse_time(when)
        age = math.inf if ts is None else (at - ts) / 86400
        if age >= days:
            out.append(StaleMemory(r["id"], r["location"], r["type"] or "?", when,
                                   -1 if age == math.inf else int(age)))
    out.sort(key=lambda s: (-s.days if s.days >= 0 else -10**9, s.id))
    return out


# ------------------------------------------------------------------ chains
@record(frozen=True)
class ChainProblem:
    id: str
    level: str  # warn | fail
    kind: str  # dangling | unsubmitted | one-sided | cycle
    other: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level, "kind": self.kind, "other": self.other, "detail": self.detail}


def chain_problems(rows: Iterable[Mapping[str, Any]]) -> list[ChainProblem]:
    """Broken supersede chains over one view of the store: a `superseded_by` naming a memory that
    is not there (the memory is hidden for nothing), a repository memory whose successor is only
    in this clone's outbox (teammates lose it once it is committed), chains whose two sides
    disagree (`chains.disagreements`), and cycles."""
    import re

    from git_memex.search.chains import disagreements

    by_id: dict[str, Mapping[str, Any]] = {}
    for r in rows:
        have = by_id.get(r["id"])
        if have is None or (have["location"] != "repo" and r["location"] == "repo"):
            by_id[r["id"]] = r
    out: list[ChainProblem] = []
    for r in by_id.values():
        nxt = r["superseded_by"]
        if not nxt:
            continue
        new = by_id.get(nxt)
        if new is None:
            out.append(ChainProblem(r["id"], "fail", "dangling", nxt,
                                    f"{r['id']} names {nxt} as its successor (superseded_by), which does not exist: "
                                    f"{r['id']} is hidden from search for nothing; set its superseded_by to the real "
                                    "successor, or remove the line and set status: active"))
        elif r["location"] == "repo" and new["location"] != "repo":
            out.append(ChainProblem(r["id"], "warn", "unsubmitted", nxt,
                                    f"{r['id']} in the repository names {nxt} as its successor, which is only in "
                                    f"this clone's {new['location']}: teammates would see neither; "
                                    f"`git memex submit {nxt}` commits both"))
    reported: set[str] = set()  # rings already named (by their smallest id)
    for level, sentence in disagreements(by_id):
        ids = re.findall(r"[0-9A-Za-z]{26}", sentence)
        if "which is not here" in sentence:
            kind, level = "dangling", "warn"
        elif "form a cycle" in sentence or "names itself" in sentence:
            kind = "cycle"
            reported.add(min(ids) if ids else "?")
        elif "cannot replace" in sentence:
            kind = "cross-scope"
        else:
            kind = "one-sided"
        out.append(ChainProblem(ids[0] if ids else "?", level, kind, ids[1] if len(ids) > 1 else None, sentence))
    for start in by_id:
        path: list[str] = []
        cur: str | None = start
        while cur is not None and cur in by_id and cur not in path:
            path.append(cur)
            cur = by_id[cur]["superseded_by"] or None
        if cur is not None and cur in path:
            loop = path[path.index(cur):]
            key = min(loop)
            if key not in reported:
                reported.add(key)
                out.append(ChainProblem(key, "fail", "cycle", None,
                                        f"supersede chain loops: {' → '.join([*loop, loop[0]])}; "
                                        "every memory in it is hidden; fix one superseded_by by hand"))
    out.sort(key=lambda p: (p.level != "fail", p.id, p.kind))
    return out


# ------------------------------------------------------------------ the report
NEAR_DUPLICATE_LIMIT = 100
"""At most this many near-duplicate pairs are listed by `audit --json` (the most similar first);
`near_duplicates_left_out` says how many more there are (n memories written alike make n(n-1)/2
pairs: 1,000 of them half a million), as `review.contradictions.REPORT_LIMIT` bounds contradictions."""


@record
class AuditReport:
    near_duplicates: list[NearDuplicate] = field(default_factory=list)
    stale: list[StaleMemory] = field(default_factory=list)
    chains: list[ChainProblem] = field(default_factory=list)
    personal_in_repo: list[dict[str, str]] = field(default_factory=list)
    index_drift: list[dict[str, str]] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    self_approved: list[dict[str, str]] = field(default_factory=list)
    unbacked_approvals: list[dict[str, str]] = field(default_factory=list)
    approver_mismatch: list[dict[str, str]] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)
    """A secret in a repository memory file (one that came past the hooks: `--no-verify`, a
    hosting site's editor): path, line, rule (never the secret), how many commits hold the path,
    and how to remove it (`secret_fix`)."""
    contradictions: list[dict[str, Any]] = field(default_factory=list)  # at most REPORT_LIMIT
    contradictions_left_out: int = 0  # pairs found beyond REPORT_LIMIT
    contradictions_unchecked: int = 0  # memories the finder's bounds compared with only some others
    contradictions_silenced: list[dict[str, Any]] = field(default_factory=list)  # pairs a person marked compatible
    unreviewed_claims: list[dict[str, str]] = field(default_factory=list)
    scanned: int = 0
    stale_days: int = STALE_DAYS

    @property
    def clean(self) -> bool:
        return not (self.near_duplicates or self.stale or self.chains or self.personal_in_repo
                    or self.index_drift or self.unreadable or self.self_approved or self.unbacked_approvals
                    or self.approver_mismatch or self.secrets or self.contradictions or self.unreviewed_claims
                    or self.contradictions_unchecked or self.contradictions_silenced)

    def to_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "scanned": self.scanned,
            "stale_days": self.stale_days,
            "near_duplicates": [p.to_json() for p in self.near_duplicates[:NEAR_DUPLICATE_LIMIT]],
            "near_duplicates_left_out": max(0, len(self.near_duplicates) - NEAR_DUPLICATE_LIMIT),
            "stale": [s.to_json() for s in self.stale],
            "chains": [c.to_json() for c in self.chains],
            "personal_in_repo": self.personal_in_repo,
            "index_drift": self.index_drift,
            "unreadable": self.unreadable,
            "self_approved": self.self_approved,
            "unbacked_approvals": self.unbacked_approvals,
            "approver_mismatch": self.approver_mismatch,
            "secrets": self.secrets,
            "contradictions": self.contradictions,
            "unreviewed_claims": self.unreviewed_claims,
            "contradictions_left_out": self.contradictions_left_out,
            "contradictions_unchecked": self.contradictions_unchecked,
            "contradictions_silenced": len(self.contradictions_silenced),
            "silenced": self.contradictions_silenced[:100],
        }


def _file_rows(st: Stores, rep: AuditReport) -> list[dict[str, Any]]:
    """One row per readable memory file of this context, read from disk (never the index)."""
    from git_memex.core.files import UnreadableMemory, list_md, parse_for_index
    from git_memex.index.database import _read_bytes
    from git_memex.index.schema import id_ref, memory_row

    sources = list(st.home_sources())
    if st.ctx.memory_dir is not None and st.repo is not None:
        sources[:0] = st.repo_sources()  # the memory folder and its subfolders, as the index reads them
    rows: list[dict[str, Any]] = []
    for src in sources:
        try:
            entries = list_md(src.folder)
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            path = Path(src.folder) / entry.name
            raw = _read_bytes(str(path))
            try:
                if raw is None:
                    raise UnreadableMemory("cannot be read as a regular file")
                m = parse_for_index(path, raw)
            except UnreadableMemory as exc:
                rep.unreadable.append({"path": str(path), "location": src.location, "reason": str(exc)})
                continue
            if src.location == "repo" and st.ctx.repo is not None:
                _secrets_of(st.ctx, path, raw, rep)
            fm = m.fm
            rows.append({
                "id": m.id, "path": str(path), "location": src.location,
                "scope": fm.get("scope"), "visibility": fm.get("visibility"), "type": fm.get("type"),
                "status": m.status, "body": m.body, "created_at": _s(fm.get("created_at")),
                "source": _s(fm.get("source")), "review_state": _s(fm.get("review_state")),
                "expires_at": _s(fm.get("expires_at")),
                "updated_at": _s(fm.get("updated_at")), "supersedes": id_ref(fm.get("supersedes")),
                "superseded_by": id_ref(fm.get("superseded_by")),
                "proposed_by": _masked(fm.get("proposed_by")), "approved_by": _masked(fm.get("approved_by")),
                "solo": _solo(fm.get("review_history")),
                "standing": model.standing(src.location, fm),
                "gate_row": (memory_row(m, src.location, None)
                             if src.location in ("repo", "personal") and fm.get("role") == "instruction"
                             and fm.get("instruction_state") == "approved" else None),
            })
    return rows


def secret_fix(ctx: Context, rel: str) -> tuple[int, str]:
    """(commits, what to do) for a secret in the repository file `rel`: how many commits of this
    clone (every ref) hold that path, and the way to remove it. git-memex cannot rewrite a commit
    and never runs a history rewrite; it says what does (docs/security.md, "A secret that was
    pushed"). Rotating the secret comes first: every clone already has it."""

    from git_memex.core.gitcmd import git_text

    assert ctx.repo is not None
    r = git_text(["rev-list", "--all", "--count", "--", rel], ctx.repo.work_tree, timeout=60)
    commits = int(r.stdout.strip()) if r is not None and r.returncode == 0 and r.stdout.strip().isdigit() else 0
    if not commits:
        return 0, ("not committed yet: take the secret out of the file before it is committed (the pre-commit "
                   "hook refuses it), and rotate it if it was shared")
    return commits, (f"rotate the secret first (every clone has it), then remove it from history, which git-memex "
                     f"never does for you: `git filter-repo --invert-paths {_path_option(rel)}` (or "
                     "`--replace-text` for the secret alone) in a fresh clone, force-push every branch and tag, "
                     "and have everyone clone again (docs/security.md)")


def _path_option(rel: str) -> str:
    """filter-repo's option naming the file `rel`: `--path REL`, or, when its name is a secret-shaped
    id (which no output prints), `--path-glob` on the part of the name the mask keeps (`ghp_*.md`:
    every such file is a secret's), or the plain instruction to name it when the mask keeps none."""
    import shlex

    from git_memex.core.files import mask_id, secret_id

    folder, _sep, name = rel.rpartition("/")
    stem = name.removesuffix(".md")
    if not secret_id(stem):
        return f"--path {shlex.quote(rel)}"
    masked = mask_id(stem)
    kept = next((i for i, (a, b) in enumerate(zip(stem, masked, strict=True)) if a != b), len(stem))
    if kept >= 3:
        return f"--path-glob {shlex.quote(f'{folder}/{stem[:kept]}*.md' if folder else f'{stem[:kept]}*.md')}"
    return "--path <the file, whose name is the secret and is never printed: `git ls-files` shows it>"


def _secrets_of(ctx: Context, path: Path, raw: bytes, rep: AuditReport) -> None:
    """A repository memory file's secrets (rule and line, never the value) into `rep.secrets`."""
    from git_memex.secrets.scan import check_secrets

    assert ctx.repo is not None
    try:
        rel = path.relative_to(ctx.repo.work_tree).as_posix()
    except ValueError:
        rel = str(path)
    found = check_secrets(rel, raw.decode("utf-8", "replace"), ctx.redact_patterns)
    if not found:
        return
    commits, fix = secret_fix(ctx, rel)
    rep.secrets.extend({"path": rel, "line": f.line, "rule": f.rule, "commits": commits, "fix": fix} for f in found)


def _masked(v: Any) -> str | None:
    """A name field as audit prints it: masked like any free text (a file from another road)."""
    from git_memex.secrets.admission import mask_value

    s = _s(v)
    return None if s is None else str(mask_value(s)[0])


def _solo(history: Any) -> bool:
    """Whether the review history records a solo-mode approval (`propose --local-approve`)."""
    return isinstance(history, list) and any(
        isinstance(h, dict) and "local approve" in str(h.get("note") or "") for h in history)


def _s(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def _drift(st: Stores, rows: list[dict[str, Any]], rep: AuditReport) -> None:
    """Where the index disagrees with the files: not indexed, indexed but gone, or changed since."""
    from git_memex.core.textproc import content_hash

    indexed: dict[str, Any] = {}
    # org memories are not this context's files (`_file_rows` reads none): their clone's index is theirs
    for ir in st.rows("m.location NOT LIKE 'org:%'", columns="m.path, m.location, m.content_hash, m.status, m.superseded_by"):
        indexed[ir["path"]] = ir
    unreadable = {u["path"] for u in rep.unreadable}
    # a scope: personal file in the repository is quarantined by the index on purpose, and
    # reported as `personal_in_repo`: not drift
    quarantined = {x["path"] for x in rep.personal_in_repo if x["kind"] == "personal"}
    on_disk = {r["path"]: r for r in rows}
    for path, r in on_disk.items():
        row = indexed.get(path)
        if row is None and path in quarantined:
            continue
        if row is None:
            rep.index_drift.append({"path": path, "location": r["location"], "problem": "not indexed"})
        elif (row["content_hash"] != content_hash(r["body"]) or (row["status"] or "active") != r["status"]
              or (row["superseded_by"] or None) != r["superseded_by"]):
            rep.index_drift.append({"path": path, "location": r["location"], "problem": "changed since it was indexed"})
    for path, row in indexed.items():
        if path not in on_disk and path not in unreadable:
            rep.index_drift.append({"path": path, "location": row["location"], "problem": "indexed but the file is gone"})


def audit(ctx: Context, *, days: int = STALE_DAYS, threshold: float | None = None, now: float | None = None) -> AuditReport:
    """The whole audit of this context (personal memories and this project's). Reads the files and
    the index; writes nothing (the index is not refreshed: its drift is one of the findings)."""
    from git_memex.core.person import same_person
    from git_memex.index.stores import Stores

    rep = AuditReport(stale_days=days)
    with Stores(ctx) as st:
        rows = _file_rows(st, rep)
        rep.scanned = len(rows)
        rep.near_duplicates = near_duplicate_pairs(rows, threshold)
        rep.stale = stale_memories(rows, days=days, now=now)
        rep.chains = chain_problems(rows)
        for r in rows:
            if r["location"] == "repo" and (r["scope"] == "personal" or r["visibility"] == "private"):
                kind = "personal" if r["scope"] == "personal" else "private"
                rep.personal_in_repo.append({"id": r["id"], "path": r["path"], "kind": kind})
            if r["location"] == "repo" and same_person(r["approved_by"], r["proposed_by"]) and not r["solo"]:
                rep.self_approved.append({"id": r["id"], "path": r["path"], "by": r["approved_by"]})
            claim = model.claim_beyond(r["location"], r["review_state"], r["standing"])
            if claim and not (r["solo"] and r["location"] == "outbox" and claim == "approved"):
                why = ("a draft on this machine; submit records it as proposed" if r["location"] in ("outbox", "private")
                       else "no review step in its review_history; `git memex promote` records each step")
                rep.unreviewed_claims.append({"id": r["id"], "path": r["path"], "location": r["location"],
                                              "claims": claim, "standing": r["standing"] or "draft", "why": why})
        _unbacked(st.ctx, rows, rep)
        _approvers(st.ctx, rows, rep)
        _drift(st, rows, rep)
        (rep.contradictions, rep.contradictions_left_out, rep.contradictions_unchecked,
         rep.contradictions_silenced) = _contradictions(st, rows, now)
    return rep


def _approvers(ctx: Context, rows: list[dict[str, Any]], rep: AuditReport) -> None:
    """Rules whose file names an approver (`approved_by`) other than the person their approval
    record names (`approver_mismatch`): a name typed into the file, or by `--by` in versions that
    took it, is data; the record holds git's identity. Such a rule is also judged self-approved
    by the record's approver when that person proposed it."""
    from git_memex.agents import approval_record
    from git_memex.core.person import same_person

    listed = {a["id"] for a in rep.self_approved}
    for r in rows:
        g = r.get("gate_row")
        if g is None or r["location"] not in ("repo", "personal"):
            continue
        if r["location"] == "repo":
            if ctx.repo is None:
                continue
            path = ctx.repo.work_tree / approval_record.repo_rel(ctx, r["id"])
        else:
            path = approval_record.personal_path(ctx, r["id"])
        try:
            rec = approval_record.parse(path.read_bytes(), r["id"])
        except OSError:
            continue  # no record: `unbacked_approvals` says so
        if not isinstance(rec, dict):
            continue
        name, email = str(rec["approver"].get("name") or ""), str(rec["approver"].get("email") or "")
        names = [x for x in (email, name) if x]
        shown = f"{name} <{email}>" if name else email
        if not any(same_person(r["approved_by"], x) for x in names):
            rep.approver_mismatch.append({"id": r["id"], "path": r["path"], "approved_by": r["approved_by"] or "",
                                          "approver": str(_masked(shown) or "")})
        if (r["location"] == "repo" and any(same_person(r["proposed_by"], x) for x in names) and not r["solo"]
                and r["id"] not in listed):
            rep.self_approved.append({"id": r["id"], "path": r["path"], "by": str(_masked(f"local:{email}") or "")})


def _contradictions(st: Stores, rows: list[dict[str, Any]], now: float | None,
                    ) -> tuple[list[dict[str, Any]], int, int, list[dict[str, Any]]]:
    """Active memories that disagree (`review.contradictions`): this context's files, and the
    subscribed org and remote memories as their indexes hold them (not this context's files, but
    what agents here are shown beside them)."""
    import time

    from git_memex.core.model import parse_time
    from git_memex.review.contradictions import ROW_COLUMNS, bounded, unresolved

    at = time.time() if now is None else now

    def live(r: Any) -> bool:
        exp = parse_time(r["expires_at"]) if r["expires_at"] else None
        return exp is None or exp > at

    mine: list[Any] = [r for r in rows if r["status"] == "active" and live(r)]
    theirs = st.rows("(m.location LIKE 'org:%' OR m.location LIKE 'remote:%') AND m.status = 'active'",
                     columns=ROW_COLUMNS + ", m.expires_ts AS expires_at")
    theirs = [r for r in theirs if r["expires_at"] is None or r["expires_at"] > at]
    from git_memex.review.compatible import silenced

    stats: dict[str, int] = {}
    quiet: list[dict[str, Any]] = []
    shown, left_out = bounded(unresolved(st.ctx, [*mine, *theirs], stats, quiet))
    who = [silenced(st.ctx, r) for r in quiet[:100]] + [{"a": r["a"], "b": r["b"]} for r in quiet[100:]]
    return [c.to_json() for c in shown], left_out, stats.get("unchecked", 0), who


def _unbacked(ctx: Context, rows: list[dict[str, Any]], rep: AuditReport) -> None:
    """Repository and personal rules whose file says approved but that the instruction gate does
    not serve (no approval record for this content, a record nobody credible committed, an edit
    since approval, fields that fail): a file's claim is data (docs/agents.md)."""
    claimed = [r["gate_row"] for r in rows if r.get("gate_row") is not None]
    if not claimed:
        return
    from git_memex.agents.gate import repo_verdicts, why_not
    from git_memex.core.person import person

    verdicts = repo_verdicts(ctx, [g for g in claimed if g["location"] == "repo"])
    user = person(ctx)
    for g in claimed:
        why = why_not(ctx, g, user, verdicts)
        if why is not None:
            rep.unbacked_approvals.append({"id": g["id"], "path": g["path"], "location": g["location"], "why": why})

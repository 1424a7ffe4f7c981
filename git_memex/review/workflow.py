"""Team review: knowledge moves personal → outbox → repository only by explicit steps.

propose copies personal memories into the project outbox; submit moves drafts into
the repository in one commit of their own; promote moves a file up the review
ladder. Every step that changes review_state appends to review_history.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.files import (
    atomic_write_text,
    crash_point,
    delete_file,
    read_memory,
    write_memory,
)
from git_memex.core.model import Memory
from git_memex.core.paths import Context
from git_memex.core.record import field, record
from git_memex.errors import MemexError, NotFound, UsageError
from git_memex.index.stores import Stores, opened

LADDER = ("draft", "proposed", "approved", "published")


def user_name(ctx: Context) -> str:
    return ctx.config.get("user.name") or ctx.config.get("user.email") or os.environ.get("USER") or "unknown"


def _history(m: Memory, frm: str | None, to: str, by: str, note: str | None = None,
             field: str | None = None) -> None:  # fmt: skip
    """Append a review_history entry; `field` names what changed when it is not review_state."""
    entry: dict[str, Any] = {"at": model.now(), "by": by, "from": frm, "to": to, "note": note}
    if field:
        entry["field"] = field
    hist = m.fm.get("review_history")
    if not isinstance(hist, list):
        hist = []
    hist.append(entry)
    m.fm["review_history"] = hist


# ------------------------------------------------------------------ propose
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
                                     "only personal memories are proposed", 1)  # fmt: skip
                m = read_memory(found.path)
                if m.status not in ("active", "deprecated"):
                    raise MemexError(f"{m.id} is {m.status}; only active memories can be proposed", 1)
                originals.append(m)
            out = []
            outbox = st.source("outbox")
            me = user_name(ctx)
            for orig in originals:
                existing = st.first("m.derived_from = ? AND m.location = 'outbox' AND m.project_key = ?",
                                    (orig.id, ctx.project_key), columns="m.id, m.review_state")  # fmt: skip
                if existing:
                    out.append({"source": orig.id, "id": existing[0], "review_state": existing[1], "existing": True})
                    continue
                red = redact(orig.body)
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
                if local_approve:
                    copy.fm["review_state"] = "approved"
                    copy.fm["approved_by"] = me
                    _history(copy, "draft", "approved", me, "local approve (solo mode)")
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


# ------------------------------------------------------------------ submit
@record
class SubmitResult:
    submitted: list[dict[str, Any]] = field(default_factory=list)
    skipped_identical: list[str] = field(default_factory=list)
    committed: bool = False
    commit: str | None = None
    branch: str = ""
    base: str = ""
    push_command: str = ""
    pr_command: str = ""
    note: str = ""
    resumed: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.__dict__


def _journal_path(ctx: Context) -> Path:
    return ctx.data_root / "journal" / f"submit-{ctx.project_key}.json"


def _branch_exists(repo: Any, name: str) -> bool:
    return name in repo.branches.local


def _pick_branch(repo: Any, wanted: str) -> str:
    name, n = wanted, 2
    while _branch_exists(repo, name):
        name = f"{wanted}-{n}"
        n += 1
    return name


def _default_base(ctx: Context, fallback: str) -> str:
    r = subprocess.run(["git", "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"],
                       cwd=ctx.repo.work_tree if ctx.repo else None, capture_output=True, text=True, check=False)  # fmt: skip
    if r.returncode == 0 and r.stdout.strip():
        return r.stdout.strip().split("/", 1)[-1]
    return fallback


def _plan(ctx: Context, st: Stores, ids: list[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """Final repo texts for each draft (rel path → text), the outbox files they come from,
    and the ids already in the repository (skipped)."""
    from git_memex.core import frontmatter

    files: dict[str, str] = {}
    origins: list[str] = []
    already: list[str] = []
    me = user_name(ctx)
    for mid in ids:
        found = st.find(mid)
        # an outbox copy wins over a repository file of the same id: that is what is being submitted
        copies = {f.row["location"]: f for f in st.find_all(found.row["id"])}
        found = copies.get("outbox") or copies.get("private") or found
        loc = found.row["location"]
        if loc == "personal":
            raise MemexError(f"{found.row['id']} is a personal memory and never enters a repository; "
                             "`git memex propose` copies it into the project outbox first", 1)  # fmt: skip
        if loc == "private":
            raise MemexError(f"{found.row['id']} is private (visibility: private) and never leaves this machine", 1)
        if loc == "repo":
            already.append(found.row["id"])
            continue
        m = read_memory(found.path)
        if m.fm.get("scope") == "personal" or m.fm.get("visibility") == "private":
            raise MemexError(f"{m.id} is personal or private and never enters a repository", 1)
        state = m.fm.get("review_state") or "draft"
        if state in ("draft", None):
            m.fm["review_state"] = "proposed"
            _history(m, "draft", "proposed", me)
        if not m.fm.get("proposed_by"):
            m.fm["proposed_by"] = me
        rel = f"{ctx.memory_dir_rel}/{m.id}.md"
        files[rel] = frontmatter.serialize(m.fm, m.body)
        origins.append(str(found.path))
    return files, origins, already


def _branch_name_problem(name: str, cwd: Path) -> str | None:
    """Why git would refuse `name` as a branch name, or None when it is a valid one."""
    if not name or name.startswith("-") or name == "@":
        return "is not a valid git branch name"
    r = subprocess.run(["git", "check-ref-format", "--branch", name], cwd=cwd, capture_output=True, text=True,
                       check=False)  # fmt: skip
    # --branch also expands @{-1} and friends: only a name that is itself valid is accepted
    if r.returncode != 0 or r.stdout.strip() != name:
        return "is not a valid git branch name (see `git check-ref-format --help`)"
    return None


def _ref_clash(repo: Any, name: str) -> str | None:
    """An existing branch that `name` cannot live beside (git keeps refs as files: a/b needs a to be a folder)."""
    for other in repo.branches.local:
        if other != name and (other.startswith(name + "/") or name.startswith(other + "/")):
            return other
    return None


def _check_base(repo: Any, base: str, cwd: Path) -> None:
    why = _branch_name_problem(base, cwd)
    if why:
        raise UsageError(f"--base {shlex.quote(base)} {why}; nothing was changed")
    if _branch_exists(repo, base):
        return
    if any(r.split("/", 1)[-1] == base for r in repo.branches.remote if "/" in r):
        return
    raise UsageError(f"--base {shlex.quote(base)} is neither a local branch nor a branch of a remote this clone "
                     "knows (`git fetch` first?); nothing was changed")  # fmt: skip


def _set_aside(journal: Path) -> Path:
    """Move a journal that cannot be completed out of the way, keeping it for a human to read."""
    dest = journal.with_name(journal.name + ".failed")
    n = 2
    while dest.exists():
        dest = journal.with_name(f"{journal.name}.{n}.failed")
        n += 1
    os.replace(journal, dest)
    return dest


def plan_problem(ctx: Context, repo: Any, plan: Any) -> str | None:
    """Why a journaled submit plan cannot be completed as written, or None when it can.

    A plan is replayed only when every part of it is still possible: its shape, its branch name,
    its files (memory files of this repository, no secret in them) and its origins (outbox files
    on this machine, the only files a replay deletes).
    """
    from git_memex.core import frontmatter
    from git_memex.secrets.checks import check_text

    assert ctx.repo is not None
    if not isinstance(plan, dict):
        return "the journal is not a submit plan"
    files, origins, branch = plan.get("files"), plan.get("origins"), plan.get("branch")
    if not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            and isinstance(origins, list) and all(isinstance(o, str) for o in origins)
            and isinstance(branch, str) and isinstance(plan.get("start"), str)
            and isinstance(plan.get("new_branch"), bool) and isinstance(plan.get("ids"), list)
            and all(isinstance(i, str) for i in plan["ids"])
            and (plan.get("base") is None or isinstance(plan.get("base"), str))):  # fmt: skip
        return "the journal is missing parts of a submit plan"
    prefix = ctx.memory_dir_rel.rstrip("/") + "/"
    for rel, text in files.items():
        stem = rel[len(prefix):-3] if rel.startswith(prefix) and rel.endswith(".md") else ""
        if not model.is_valid_id(stem):
            return f"{rel} is not a memory file of this repository"
        try:
            frontmatter.parse(text)
        except frontmatter.FrontmatterError:
            return f"the planned text of {rel} is not a readable memory file"
        findings = check_text(rel, text)
        if findings:
            return f"the planned text of {rel} would commit a problem ({findings[0].rule})"
    outbox = (ctx.data_root / "memories" / "outbox").resolve()
    for origin in origins:
        o = Path(origin).resolve()
        if o.suffix != ".md" or outbox not in o.parents:
            return f"{origin} is not an outbox draft"
    if plan["new_branch"]:
        why = _branch_name_problem(branch, ctx.repo.work_tree)
        if why:
            return f"its branch {shlex.quote(branch)} {why}"
        clash = _ref_clash(repo, branch)
        if clash:
            return f"its branch {shlex.quote(branch)} clashes with the existing branch {shlex.quote(clash)}"
        if not _branch_exists(repo, branch) and repo.head_is_unborn:
            return f"its branch {shlex.quote(branch)} would start from a repository without commits"
    return None


def submit(ctx: Context, ids: list[str], *, branch: str | None = None, base: str | None = None,
           stores: Stores | None = None) -> SubmitResult:  # fmt: skip
    """Move named outbox drafts into the repository in one commit holding only them.

    Everything is checked before the journal is written (ids, branch and base names, secrets,
    files already in the repository), so a journal holds only a plan that can be completed.
    Crash-safe through that journal: a rerun after a kill at any point completes the same plan
    (same texts, same branch) exactly once. A journal whose plan cannot be completed (edited by
    hand, or the repository changed under it) is set aside as `<journal>.failed`, never replayed.
    """
    from git_memex.git import pygit
    from git_memex.secrets.checks import check_text

    repo_info = ctx.require_repo("submit")
    if not ids:
        raise UsageError("name at least one outbox draft id to submit")
    repo = pygit.open_repo(repo_info.work_tree)
    if repo.state() != 0:
        raise MemexError("a merge, rebase or cherry-pick is in progress; finish it before submitting", 2)
    res = SubmitResult()
    with opened(ctx, stores) as st:
            journal = _journal_path(ctx)
            plan: Any = None
            if journal.exists():
                try:
                    plan = json.loads(journal.read_text(encoding="utf-8"))
                    why = plan_problem(ctx, repo, plan)
                except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                    why = "the journal is not readable JSON"
                if why:
                    aside = _set_aside(journal)
                    res.warnings.append(f"an interrupted submit could not be finished ({why}); "
                                        f"its plan was set aside as {aside}")  # fmt: skip
                    plan = None
                else:
                    res.resumed = True
            if plan is None:
                st.refresh()
                if branch is not None:
                    why = _branch_name_problem(branch, repo_info.work_tree)
                    if why:
                        raise UsageError(f"--branch {shlex.quote(branch)} {why}; nothing was changed")
                if base is not None:
                    _check_base(repo, base, repo_info.work_tree)
                files, origins, already = _plan(ctx, st, ids)
                res.skipped_identical.extend(already)
                for rel, text in files.items():
                    findings = check_text(rel, text)
                    if findings:
                        raise MemexError(f"{findings[0]}: refusing to submit (nothing was changed); fix the memory first", 2)
                start_branch = pygit.current_branch(repo) or "HEAD"
                target = _pick_branch(repo, branch) if branch else start_branch
                if branch:
                    clash = _ref_clash(repo, target)
                    if clash:
                        raise UsageError(f"--branch {shlex.quote(target)} cannot coexist with the existing branch "
                                         f"{shlex.quote(clash)} (one name would be a folder of the other); pick "
                                         "another name; nothing was changed")  # fmt: skip
                    if repo.head_is_unborn:
                        raise MemexError("this repository has no commits yet, so there is nothing to start "
                                         f"--branch {shlex.quote(target)} from; commit once first (nothing was changed)", 2)  # fmt: skip
                plan = {"ids": ids, "files": files, "origins": origins, "branch": target, "start": start_branch,
                        "new_branch": bool(branch), "base": base}  # fmt: skip
                # the same id with different content already in the repository: a human decides
                head = _head_files(repo, list(files))
                for rel, text in files.items():
                    wt = repo_info.work_tree / rel
                    if rel in head and head[rel] != text:
                        raise MemexError(f"{rel} is already in the repository with different content; nothing was "
                                         "changed (supersede it, or edit the file yourself)", 2)  # fmt: skip
                    if rel not in head and wt.is_dir():
                        raise MemexError(f"{rel} is a folder in the work tree; nothing was changed", 2)
                    if rel not in head and wt.exists() and wt.read_text(encoding="utf-8") != text:
                        raise MemexError(f"{rel} already exists in the work tree with different content; nothing was changed", 2)
                atomic_write_text(journal, json.dumps(plan, ensure_ascii=False))
            crash_point("submit.after_journal")
            files = plan["files"]
            target = plan["branch"]
            started = False  # whether anything outside the journal has changed yet
            try:
                if plan["new_branch"] and pygit.current_branch(repo) != target:
                    if not _branch_exists(repo, target):
                        repo.branches.local.create(target, repo.head.peel())
                    # like `git switch -c`: the new branch is HEAD's commit, so the work tree and the
                    # user's staged changes stay exactly as they are; only HEAD moves to the branch
                    started = True
                    repo.set_head(f"refs/heads/{target}")
                res.branch = target
                for rel, text in files.items():
                    started = True
                    atomic_write_text(repo_info.work_tree / rel, text)
                crash_point("submit.after_files")
                head = _head_files(repo, list(files))
                to_commit = {rel: text.encode("utf-8") for rel, text in files.items() if head.get(rel) != text}
                # a memory these drafts supersede changed status in the work tree: commit that too
                to_commit.update(_superseded_companions(ctx, repo, [Path(r).stem for r in files]))
                if to_commit:
                    n = len(files)
                    lines = [f"memex: submit {n} memor{'y' if n == 1 else 'ies'} for review", ""]
                    for rel in files:
                        body = files[rel].split("---\n", 2)[-1].strip().splitlines() or [""]
                        lines.append(f"- {Path(rel).stem} {body[0][:60]}")
                    res.commit = pygit.commit_files(repo, to_commit, "\n".join(lines) + "\n")
                    res.committed = True
            except Exception as exc:  # noqa: BLE001 - never leave a journal that fails the same way forever
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                if not started and not res.resumed:
                    delete_file(journal)
                    raise MemexError(f"submit failed ({detail}); nothing was changed", 2) from None
                aside = _set_aside(journal)
                raise MemexError(f"submit could not finish ({detail}); the drafts are still in the outbox and its plan "
                                 f"was set aside as {aside} (`git memex doctor` shows it)", 2) from None  # fmt: skip
            res.skipped_identical.extend(Path(r).stem for r in files if head.get(r) == files[r])
            crash_point("submit.after_commit")
            from git_memex.index.refresh import Source

            repo_src = Source("repo", repo_info.work_tree / ctx.memory_dir_rel, ctx.project_key)
            for origin in plan["origins"]:
                p = Path(origin)
                delete_file(p)
                st.home.remove(p)
            if st.repo is not None:
                st.repo.apply_paths(repo_src, [repo_info.work_tree / r for r in files], trigger="submit")
            for rel in files:
                m = read_memory(repo_info.work_tree / rel)
                res.submitted.append({"id": m.id, "review_state": m.fm.get("review_state"), "path": rel})
            delete_file(journal)
            if res.resumed:
                done = {Path(r).stem for r in files}
                rest = [i for i in ids if not any(d.startswith(i.strip().upper()) for d in done)]
                if rest:
                    more = submit(ctx, rest, branch=None, base=base, stores=st)
                    res.submitted.extend(more.submitted)
                    res.skipped_identical.extend(more.skipped_identical)
                    res.committed = res.committed or more.committed
                    res.commit = more.commit or res.commit
                    res.warnings.extend(more.warnings)
            return _finish(ctx, res, plan)


def _finish(ctx: Context, res: SubmitResult, plan: dict[str, Any]) -> SubmitResult:
    """The push and PR commands to print, shell-quoted; never a PR from a branch into itself."""
    target = plan["branch"]
    res.branch = target
    start = plan["start"] if plan["start"] != "HEAD" else ""  # "HEAD": submit started on a detached HEAD
    res.base = plan.get("base") or (start if plan["new_branch"] and start else _default_base(ctx, start))
    n = len(plan["files"])
    if target == "HEAD":
        res.note = ("HEAD is detached: create a branch for this commit (`git switch -c memex/review`) "
                    "before pushing it")  # fmt: skip
        return res
    q = shlex.quote
    res.push_command = f"git push -u origin {q(target)}"
    if not res.base:
        res.note = "submit started on a detached HEAD, so the pull request's base is unknown; submit with --base BRANCH"
        return res
    if res.base == target:
        res.note = (f"the commit is on {target} itself, so there is no pull request to open; to have memories "
                    "reviewed in one, submit them with --branch NAME (e.g. --branch memex/review)")  # fmt: skip
        return res
    title = f"memex: {n} memor{'y' if n == 1 else 'ies'} for review"
    res.pr_command = (f"gh pr create --base {q(res.base)} --head {q(target)} --title {q(title)} "
                      f"--body {q('Memory files only; reviewers: is it true, durable, safe to share?')}")  # fmt: skip
    return res


def _head_files(repo: Any, rels: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        tree = repo.head.peel().tree
    except Exception:  # noqa: BLE001 - unborn HEAD
        return out
    for rel in rels:
        try:
            out[rel] = repo[tree[rel].id].data.decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
    return out


def _superseded_companions(ctx: Context, repo: Any, ids: list[str]) -> dict[str, bytes]:
    """Repo files marked superseded by one of these ids in the work tree but not yet committed."""
    from git_memex.core import frontmatter

    out: dict[str, bytes] = {}
    assert ctx.memory_dir is not None
    wanted = set(ids)
    for path in ctx.memory_dir.glob("*.md"):
        rel = f"{ctx.memory_dir_rel}/{path.name}"
        if path.stem in wanted:
            continue
        try:
            text = path.read_text(encoding="utf-8")
            fm, _ = frontmatter.parse(text)
        except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
            continue
        if fm.get("superseded_by") in wanted and _head_files(repo, [rel]).get(rel) != text:
            out[rel] = text.encode("utf-8")
    return out


# ------------------------------------------------------------------ promote
def promote(ctx: Context, memory_id: str, *, reject: bool = False, note: str | None = None,
            resubmit: bool = False, by: str | None = None, stores: Stores | None = None) -> dict[str, Any]:  # fmt: skip
    if reject and resubmit:
        raise UsageError("--reject and --resubmit cannot be combined")
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find(memory_id)
        if found.row["location"] != "repo":
            where = found.row["location"]
            hint = "submit it first (`git memex submit ID`)" if where == "outbox" else "only repository memories are reviewed"
            raise MemexError(f"{found.row['id']} is in the {where}, not the repository; {hint}", 1)
        m = read_memory(found.path)
        cur = m.fm.get("review_state") or "draft"
        who = by or user_name(ctx)
        if reject:
            if cur not in ("proposed", "approved"):
                raise MemexError(f"{m.id} is {cur}; only proposed or approved memories can be rejected", 1)
            if not note or not note.strip():
                raise UsageError("a rejection needs a reason: --note \"why\"")
            new = "rejected"
            # a rejected memory has no approver; the key is dropped, never written as `null`
            # (which turned a rejection of a never-approved memory into a needless merge conflict)
            m.fm.pop("approved_by", None)
            m.fm["review_note"] = note.strip()
        elif resubmit:
            if cur != "rejected":
                raise MemexError(f"{m.id} is {cur}; only rejected memories can be resubmitted", 1)
            new = "proposed"
        else:
            if cur == "rejected":
                raise MemexError(f"{m.id} was rejected; revise it, then `git memex promote {m.id} --resubmit`", 1)
            if cur == "published":
                raise MemexError(f"{m.id} is already published", 1)
            if cur == "draft":
                raise MemexError(f"{m.id} is a draft; submit it for review first", 1)
            new = LADDER[LADDER.index(cur) + 1]
            if new == "approved":
                m.fm["approved_by"] = who
        m.fm["review_state"] = new
        _history(m, cur, new, who, note.strip() if note else None)
        model.touch(m)
        write_memory(found.source.folder, m)
        found.index.upsert(m, found.source)
        return {"id": m.id, "from": cur, "to": new, "by": who, "history": m.fm["review_history"]}


# ------------------------------------------------------------------ sync-status
def sync_status(ctx: Context, stores: Stores | None = None) -> dict[str, Any]:
    from git_memex.search.engine import _snippet

    with opened(ctx, stores) as st:
        st.refresh(trigger="sync-status")
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
                         (ctx.project_key,), order_by="m.id")  # fmt: skip
        bodies = safe_bodies(st, [(r["id"], r["body"]) for r in drafts])
        outbox = [{"id": r["id"], "review_state": r["review_state"], "snippet": _snippet(bodies[r["id"]], [])}
                  for r in drafts]  # fmt: skip
        states: dict[str, list[str]] = {s: [] for s in (*LADDER, "rejected")}
        for row in st.rows("m.location = 'repo'", columns="m.id, m.review_state", order_by="m.id"):
            states.setdefault(row[1] or "draft", []).append(row[0])
        uncommitted = []
        if ctx.repo is not None:
            r = subprocess.run(["git", "status", "--porcelain", "--", ctx.memory_dir_rel], cwd=ctx.repo.work_tree,
                               capture_output=True, text=True, check=False)  # fmt: skip
            uncommitted = [line[3:] for line in r.stdout.splitlines() if line[3:].endswith(".md")]
        conflicts = contradictions(ctx, stores=st)
        if outbox and ctx.repo is None:
            nxt = ("nothing can be submitted here: submit needs a git repository, and these drafts stay on this "
                   "machine until this folder is one (`git init`, then `git memex submit ID`)")  # fmt: skip
        elif outbox:
            nxt = f"git memex submit {' '.join(o['id'] for o in outbox[:3])}{' …' if len(outbox) > 3 else ''}"
        elif uncommitted:
            nxt = "git add the memory files and commit them (or `git memex scan` first)"
        elif states.get("proposed") or states.get("approved"):
            nxt = "git memex pr-status (or `git memex promote ID` after review)"
        else:
            nxt = "nothing to do"
        return {
            "last_sync": None if last is None else {
                "at": model.epoch_ms_to_rfc3339(last[0] * 1000), "trigger": last[1]},
            "outbox": outbox,
            "repo": {k: v for k, v in states.items()},
            "uncommitted": uncommitted,
            "contradictions": conflicts,
            "next": nxt,
            "git": ctx.repo is not None,
        }  # fmt: skip


# ------------------------------------------------------------------ contradictions
_VALUE_RE = None


def _values(text: str) -> tuple[frozenset[str], bool]:
    """Numbers/versions in a text, and whether it negates: what two takes on one subject differ in."""
    import re

    global _VALUE_RE
    if _VALUE_RE is None:
        _VALUE_RE = (re.compile(r"\d+(?:[.,:]\d+)*"),
                     re.compile(r"(?i)\b(?:not|never|no longer|don't|doesn't|isn't|avoid|instead of)\b|不|没|别|禁止|避免"))
    nums, neg = _VALUE_RE
    return frozenset(nums.findall(text)), bool(neg.search(text))


def contradictions(ctx: Context, *, stores: Stores | None = None, recent: int = 50) -> list[dict[str, Any]]:
    """Pairs of active memories in one scope that look like one subject with different content.

    Surfaced, never resolved (V2-DESIGN §9): both stay active until a human decides. A pair is
    reported when the two are of one type, share most of their words (Jaccard 0.5–0.8; closer
    is a duplicate) and differ in a value (a number or version) or in negation. Only the most
    recently changed memories are checked against the rest, which keeps this cheap after a pull.
    """
    from git_memex.core.textproc import jaccard
    from git_memex.search.engine import search

    with opened(ctx, stores) as st:
        rows = st.rows("m.status = 'active'", columns="m.id, m.body, m.type, m.location, m.supersedes, m.superseded_by,"
                       " m.updated_ts", order_by="m.updated_ts DESC", limit=recent)  # fmt: skip
        rows.sort(key=lambda r: -(r["updated_ts"] or 0))
        seen: set[tuple[str, str]] = set()
        out = []
        for r in rows[:recent]:
            scope = "personal" if r["location"] == "personal" else "project"
            res = search(st, r["body"], scope=scope, type=r["type"], limit=3, refresh=False)
            for h in res.hits:
                if h.id == r["id"] or h.status != "active":
                    continue
                key = (min(h.id, r["id"]), max(h.id, r["id"]))
                if key in seen or r["supersedes"] == h.id or r["superseded_by"] == h.id:
                    continue
                seen.add(key)
                row = st.one(h.id, "m.body", scoped=False)
                if row is None:
                    continue
                other = row[0]
                sim = jaccard(r["body"], other)
                if not 0.5 <= sim < 0.8:
                    continue
                (va, na), (vb, nb) = _values(r["body"]), _values(other)
                if va != vb or na != nb:
                    out.append({"a": key[0], "b": key[1], "similarity": round(sim, 3)})
        return out


# ------------------------------------------------------------------ pr-status
def pr_label(number: Any) -> str:
    """`PR #7`, or `the PR` when gh gave no number (never `PR #None`, in a message or a file)."""
    return f"PR #{number}" if isinstance(number, int) and not isinstance(number, bool) else "the PR"


def _gh(args: list[str], cwd: Path) -> dict[str, Any]:
    try:
        r = subprocess.run(["gh", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    except FileNotFoundError:
        raise MemexError("the GitHub CLI `gh` is not installed or not on PATH; install it and run `gh auth login`", 2) from None
    except subprocess.TimeoutExpired:
        raise MemexError("`gh` did not answer within two minutes; nothing was changed", 2) from None
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["unknown error"])[-1]
        if "no pull requests found" in r.stderr.lower():
            raise MemexError("this branch has no pull request; open one with the `gh pr create` command submit printed", 2)
        raise MemexError(f"`gh pr view` failed ({msg}); nothing was changed", 2)
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise MemexError("`gh pr view` printed something that is not JSON; nothing was changed", 2) from None
    if not isinstance(data, dict):
        raise MemexError("`gh pr view` printed unexpected JSON; nothing was changed", 2)
    return data


def pr_status(ctx: Context, *, apply: bool = False, stores: Stores | None = None) -> dict[str, Any]:
    repo_info = ctx.require_repo("pr-status")
    pr = _gh(["pr", "view", "--json", "number,url,state,reviewDecision,reviews,files,mergedAt"], repo_info.work_tree)
    files = [f.get("path", "") for f in pr.get("files") or [] if isinstance(f, dict)]
    prefix = ctx.memory_dir_rel.rstrip("/") + "/"
    ids = [Path(p).stem for p in files if p.startswith(prefix) and p.endswith(".md")]
    approvers = [rv.get("author", {}).get("login") for rv in pr.get("reviews") or []
                 if isinstance(rv, dict) and rv.get("state") == "APPROVED"]  # fmt: skip
    approver = next((a for a in reversed(approvers) if a), None)
    decision = pr.get("reviewDecision") or ""
    state = pr.get("state") or ""
    with opened(ctx, stores) as st:
        st.refresh()
        items = []
        for mid in ids:
            try:
                found = st.find(mid)
            except (NotFound, MemexError):
                items.append({"id": mid, "current": None, "target": None, "action": "not in this work tree"})
                continue
            cur = found.row["review_state"] or "draft"
            target, action = None, "nothing to do"
            if cur == "rejected":
                action = "rejected by a human; a PR signal never overrides that"
            elif state == "MERGED":
                target = "published" if cur != "published" else None
            elif decision == "APPROVED" and cur in ("draft", "proposed"):
                target = "approved"
            elif decision == "CHANGES_REQUESTED":
                action = "changes requested: edit the file, commit and push (state stays proposed)"
            if target:
                action = f"{cur} → {target}"
            items.append({"id": mid, "current": cur, "target": target, "action": action})
        applied = []
        if apply:
            for it in items:
                if not it["target"]:
                    continue
                found = st.find(it["id"])
                m = read_memory(found.path)
                cur = it["current"]
                by = f"github:{approver}" if it["target"] == "approved" and approver else "github:pr"
                if it["target"] == "published" and cur in ("draft", "proposed"):
                    _history(m, cur, "approved", by, f"{pr_label(pr.get('number'))} approved")
                    m.fm["approved_by"] = m.fm.get("approved_by") or (f"github:{approver}" if approver else by)
                    cur = "approved"
                if it["target"] == "approved":
                    m.fm["approved_by"] = by
                m.fm["review_state"] = it["target"]
                _history(m, cur, it["target"], by, f"{pr_label(pr.get('number'))} {state.lower() or decision.lower()}".rstrip())
                model.touch(m)
                write_memory(found.source.folder, m)
                found.index.upsert(m, found.source)
                applied.append({"id": m.id, "from": it["current"], "to": it["target"], "by": by})
        return {"pr": {"number": pr.get("number"), "url": pr.get("url"), "state": state, "review_decision": decision},
                "memories": items, "applied": applied}  # fmt: skip


# ------------------------------------------------------------------ log
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
        if ctx.repo is not None:
            from git_memex.git import pygit

            repo = pygit.open_repo(ctx.repo.work_tree)
            for cid in chain:
                rel = f"{ctx.memory_dir_rel}/{cid}.md"
                for c in pygit.path_history(repo, rel):
                    at = model.epoch_ms_to_rfc3339(c.commit_time * 1000)
                    events.append({"at": at, "kind": "commit", "id": cid, "commit": str(c.id)[:10],
                                   "by": c.author.name, "what": c.message.splitlines()[0] if c.message else ""})  # fmt: skip
        for cid in chain:
            try:
                mm = m if cid == m.id else read_memory(st.find(cid).path)
            except (NotFound, MemexError, ValueError):
                continue
            for h in mm.fm.get("review_history") or []:
                if isinstance(h, dict):
                    events.append({"at": str(h.get("at", "")), "kind": "review", "id": cid, "by": h.get("by"),
                                   "what": f"{h.get('from') or '(none)'} → {h.get('to') or '(none)'}" + (f": {h['note']}" if h.get("note") else "")})  # fmt: skip
            events.append({"at": str(mm.fm.get("created_at", "")), "kind": "created", "id": cid,
                           "by": mm.fm.get("created_by"), "what": "created" + (f" (supersedes {mm.fm['supersedes']})" if mm.fm.get("supersedes") else "")})  # fmt: skip
        events.sort(key=lambda e: (e["at"], {"created": 0, "commit": 1, "review": 2}[e["kind"]]))
        return {"id": m.id, "chain": chain, "events": events}


# ------------------------------------------------------------------ distill
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
                       order_by="m.type, m.id")  # fmt: skip
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

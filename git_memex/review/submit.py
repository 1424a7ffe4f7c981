"""submit: move outbox drafts into the repository in one commit of their own, crash-safe.

The plan (branch, base, ids, target paths) is checked before it is journaled; a journal whose
plan cannot complete is set aside as `.failed`, never replayed (docs/git.md). The commit is made
with pygit2, so no hook runs: every file it holds, each draft and each memory a draft supersedes
(`_superseded_companions`, taken only as the supersede marking), passes the pre-commit hook's
own check, `secrets.scan.commit_problems`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.files import (
    UnreadableMemory,
    atomic_write_text,
    crash_point,
    delete_file,
    read_bytes,
    read_memory,
)
from git_memex.core.person import actor
from git_memex.core.record import field, record
from git_memex.errors import FAILED, USAGE, MemexError, UsageError
from git_memex.index.stores import Stores, opened
from git_memex.review.branch_names import (
    check_base,
    new_branch_problem,
    ref_clash,
)
from git_memex.review.log import record_step

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pygit2


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
    checkout: str = ""
    """The branch the user's checkout is on afterwards ("HEAD" when detached): with --branch it is
    the branch they started on, never the one the commit went to."""

    def to_json(self) -> dict[str, Any]:
        return self.__dict__


def _journal_path(ctx: Context) -> Path:
    return ctx.data_root / "journal" / f"submit-{ctx.project_key}.json"


def _branch_exists(repo: pygit2.Repository, name: str) -> bool:
    return name in repo.branches.local


def _pick_branch(repo: pygit2.Repository, wanted: str) -> str:
    name, n = wanted, 2
    while _branch_exists(repo, name):
        name = f"{wanted}-{n}"
        n += 1
    return name


def _default_base(ctx: Context, fallback: str) -> str:
    from git_memex.core.gitcmd import git_text

    r = git_text(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"],
                 ctx.repo.work_tree if ctx.repo else None, timeout=30)
    if r is not None and r.returncode == 0 and r.stdout.strip():
        return r.stdout.strip().split("/", 1)[-1]
    return fallback


def _plan(ctx: Context, st: Stores, ids: list[str], warnings: list[str] | None = None,
          ) -> tuple[dict[str, str], list[str], list[str]]:
    """Final repo texts for each draft (rel path → text), the outbox files they come from,
    and the ids already in the repository (skipped).

    Submit is the step to `proposed` (docs/curating.md): each draft enters the repository as
    proposed, its step recorded, whatever its file says. The one exception is a solo-mode approval
    (`propose --local-approve`, recorded in its history as such), which stays approved. Any other
    claim (a hand-edited `review_state: published`, an `approved_by` nobody recorded) is rewritten
    to proposed, the claim named in the step's note and in `warnings`: a draft never carries a
    review into the repository that no one did."""
    from git_memex.core import frontmatter

    files: dict[str, str] = {}
    origins: list[str] = []
    already: list[str] = []
    me = actor(ctx)
    for mid in ids:
        found = st.find(mid)
        # an outbox copy wins over a repository file of the same id: that is what is being submitted
        copies = {f.row["location"]: f for f in st.find_all(found.row["id"])}
        found = copies.get("outbox") or copies.get("private") or found
        loc = found.row["location"]
        if loc == "personal":
            raise MemexError(f"{found.row['id']} is a personal memory and never enters a repository; only the "
                             f"person can copy it into the project, with `git memex propose {found.row['id']}`", USAGE)
        if loc == "private":
            raise MemexError(f"{found.row['id']} is private (visibility: private) and never leaves this machine", USAGE)
        if loc == "repo":
            already.append(found.row["id"])
            continue
        m = read_memory(found.path)
        if m.fm.get("scope") == "personal" or m.fm.get("visibility") == "private":
            raise MemexError(f"{m.id} is personal or private and never enters a repository", USAGE)
        state = m.fm.get("review_state") or "draft"
        if not _solo_approval(m.fm):
            note = None
            if state not in ("draft", "proposed") or any(m.fm.get(k) for k in _REVIEW_CLAIMS):
                note = f"submitted as proposed; the draft claimed {state}, which no review here recorded"
                if warnings is not None:
                    warnings.append(f"{m.id}: its file claimed review_state {state}; submit records it as proposed "
                                    "(a review is recorded by `git memex promote`)")
                for k in _REVIEW_CLAIMS:
                    m.fm.pop(k, None)
            if state != "proposed" or note is not None or not model.review_recorded(m.fm, "proposed"):
                m.fm["review_state"] = "proposed"
                record_step(m, "draft", "proposed", me, note)
        if not m.fm.get("proposed_by"):
            m.fm["proposed_by"] = me
        model.stamp_reference(m.fm, ctx.reference_keys)  # so the reference tool sees it too
        rel = f"{ctx.memory_dir_rel}/{m.id}.md"
        files[rel] = frontmatter.serialize(m.fm, m.body)
        origins.append(str(found.path))
    return files, origins, already


_REVIEW_CLAIMS = ("approved_by", "promoted_by", "review_note")
"""What a review writes beside `review_state`: a draft's file holding them claims a review."""


def _solo_approval(fm: dict[str, Any]) -> bool:
    """Whether a draft is approved by `propose --local-approve` (solo mode): review_state approved,
    its last review step the one that local approve records."""
    if fm.get("review_state") != "approved" or not model.review_recorded(fm, "approved"):
        return False
    steps = [h for h in fm.get("review_history") or [] if isinstance(h, dict) and h.get("field") in (None, "review_state")]
    return "local approve" in str(steps[-1].get("note") or "")


def _set_aside(journal: Path) -> Path:
    """Move a journal that cannot be completed out of the way, keeping it for a human to read."""
    dest = journal.with_name(journal.name + ".failed")
    n = 2
    while dest.exists():
        dest = journal.with_name(f"{journal.name}.{n}.failed")
        n += 1
    os.replace(journal, dest)
    return dest


def plan_problem(ctx: Context, repo: pygit2.Repository, plan: Any) -> str | None:
    """Why a journaled submit plan cannot be completed as written, or None when it can.

    A plan is replayed only when every part of it is still possible: its shape, its branch name,
    its files (memory files of this repository, no secret in them) and its origins (outbox files
    on this machine, the only files a replay deletes).
    """
    from git_memex.core import frontmatter
    from git_memex.secrets.scan import commit_problems, companion_problem

    assert ctx.repo is not None
    if not isinstance(plan, dict):
        return "the journal is not a submit plan"
    files, origins, branch = plan.get("files"), plan.get("origins"), plan.get("branch")
    companions = plan.get("companions", {})
    if not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            and isinstance(companions, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in companions.items())
            and isinstance(origins, list) and all(isinstance(o, str) for o in origins)
            and isinstance(branch, str) and isinstance(plan.get("start"), str)
            and isinstance(plan.get("new_branch"), bool) and isinstance(plan.get("ids"), list)
            and all(isinstance(i, str) for i in plan["ids"])
            and (plan.get("base") is None or isinstance(plan.get("base"), str))):
        return "the journal is missing parts of a submit plan"
    prefix = ctx.memory_dir_rel.rstrip("/") + "/"
    for rel, text in {**files, **companions}.items():
        stem = rel[len(prefix):-3] if rel.startswith(prefix) and rel.endswith(".md") else ""
        if not model.is_valid_id(stem) or "/" in stem:
            return f"{rel} is not a memory file of this repository"
        try:
            frontmatter.parse(text)
        except frontmatter.FrontmatterError:
            return f"the planned text of {rel} is not a readable memory file"
        findings = commit_problems(rel, text.encode("utf-8"), ctx.redact_patterns)
        if findings:
            return f"the planned text of {rel} would commit a problem ({findings[0].rule})"
    head = _head_blobs(repo, list(companions))
    successors = {Path(r).stem for r in files}
    for rel, text in companions.items():
        if rel in files:
            return f"{rel} is planned both as a draft and beside the drafts"
        data = text.encode("utf-8")
        why = None if head.get(rel) == data else companion_problem(
            rel, head.get(rel), data, successors, patterns=ctx.redact_patterns, reference_keys=ctx.reference_keys)
        if why:
            return f"{rel}, planned beside the drafts, {why}"
    outbox = (ctx.data_root / "memories" / "outbox").resolve()
    for origin in origins:
        o = Path(origin).resolve()
        if o.suffix != ".md" or outbox not in o.parents:
            return f"{origin} is not an outbox draft"
    if plan.get("start_commit") is not None and not isinstance(plan["start_commit"], str):
        return "the journal is missing parts of a submit plan"
    if plan["new_branch"]:
        why = new_branch_problem(ctx, repo, branch)
        if why:
            return f"its branch {shlex.quote(branch)} {why}"
        clash = ref_clash(repo, branch)
        if clash:
            return f"its branch {shlex.quote(branch)} clashes with the existing branch {shlex.quote(clash)}"
        if not _branch_exists(repo, branch) and repo.head_is_unborn:
            return f"its branch {shlex.quote(branch)} would start from a repository without commits"
    return None


def _refuse_linked_folder(work_tree: Path, memory_dir_rel: str) -> None:
    """Submit writes into the memory folder only when it is a real folder of the work tree: no
    part of its path a symbolic link (a committed `.ai/open-memex -> /tmp/elsewhere` made submit
    write outside the tree), its resolved path inside the work tree (docs/security.md, row 25)."""
    from git_memex.core.files import inside

    here = work_tree
    for part in Path(memory_dir_rel).parts:
        here = here / part
        if here.is_symlink():
            raise MemexError(f"{here.relative_to(work_tree)} is a symbolic link; submit writes memory files only "
                             "into a real folder of the work tree (replace the link with a folder; nothing was "
                             "changed)", FAILED)
    if not inside(work_tree / memory_dir_rel, work_tree):
        raise MemexError(f"the memory folder {memory_dir_rel} lies outside the work tree; nothing was changed", FAILED)


def submit(ctx: Context, ids: list[str], *, branch: str | None = None, base: str | None = None,
           stores: Stores | None = None, _onto: str | None = None) -> SubmitResult:
    """Move named outbox drafts into the repository in one commit holding only them.

    With `branch`, a new branch is made from HEAD's commit and the commit goes there alone: the
    user's HEAD, index and work tree are left exactly as they were (`_onto`: an existing branch,
    for the rest of a resumed run). Without it, the commit is on the current branch and its files
    land in the work tree and the index.

    Everything is checked before the journal is written (ids, branch and base names, secrets,
    files already in the repository), so a journal holds only a plan that can be completed.
    Crash-safe through that journal: a rerun after a kill at any point completes the same plan
    (same texts, same branch) exactly once. A journal whose plan cannot be completed (edited by
    hand, or the repository changed under it) is set aside as `<journal>.failed`, never replayed.
    """
    from git_memex.git import pygit
    from git_memex.secrets.scan import commit_problems

    repo_info = ctx.require_repo("submit")
    if not ids:
        raise UsageError("name at least one outbox draft id to submit")
    repo = pygit.open_repo(repo_info.work_tree)
    if repo.state() != 0:
        raise MemexError("a merge, rebase or cherry-pick is in progress; finish it before submitting", FAILED)
    _refuse_linked_folder(repo_info.work_tree, ctx.memory_dir_rel)
    # who commits, asked of git before anything is written: when git knows no person nothing changes
    from git_memex.core.person import NO_PERSON, commit_ident

    author, committer = commit_ident(ctx, "AUTHOR"), commit_ident(ctx, "COMMITTER")
    if author is None or committer is None:
        raise MemexError(f"{NO_PERSON}, then submit again (nothing was changed)", FAILED)
    res = SubmitResult()
    with opened(ctx, stores) as st:
            journal = _journal_path(ctx)
            plan: Any = None
            if journal.exists():
                try:
                    from git_memex.core.files import read_private

                    plan = json.loads(read_private(ctx.data_root, journal).decode("utf-8"))
                    why = plan_problem(ctx, repo, plan)
                except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                    why = "the journal is not readable JSON"
                if why:
                    aside = _set_aside(journal)
                    res.warnings.append(f"an interrupted submit could not be finished ({why}); "
                                        f"its plan was set aside as {aside}")
                    plan = None
                else:
                    res.resumed = True
            if plan is None:
                st.refresh()
                if branch is not None:
                    why = new_branch_problem(ctx, repo, branch)
                    if why:
                        raise UsageError(f"--branch {shlex.quote(branch)} {why}; nothing was changed")
                if base is not None:
                    check_base(repo, base, repo_info.work_tree)
                files, origins, already = _plan(ctx, st, ids, res.warnings)
                res.skipped_identical.extend(already)
                for rel, text in files.items():  # what the pre-commit hook would refuse: pygit2 runs no hooks
                    findings = commit_problems(rel, text.encode("utf-8"), ctx.redact_patterns)
                    if findings:
                        raise MemexError(f"{findings[0]}: refusing to submit (nothing was changed); fix the memory first", FAILED)
                _check_successors(ctx, repo, files)
                _check_local_links(st, files)
                companions = _superseded_companions(ctx, repo, [Path(r).stem for r in files], res.warnings)
                start_branch = pygit.current_branch(repo) or "HEAD"
                target = _onto or (_pick_branch(repo, branch) if branch else start_branch)
                if branch or _onto:
                    clash = ref_clash(repo, target)
                    if clash:
                        raise UsageError(f"--branch {shlex.quote(target)} cannot coexist with the existing branch "
                                         f"{shlex.quote(clash)} (one name would be a folder of the other); pick "
                                         "another name; nothing was changed")
                    if repo.head_is_unborn:
                        raise MemexError("this repository has no commits yet, so there is nothing to start "
                                         f"--branch {shlex.quote(target)} from; commit once first (nothing was changed)", FAILED)
                    if target != branch:  # the suffixed name is checked as the asked one was
                        why = new_branch_problem(ctx, repo, target)
                        if why:
                            raise UsageError(f"--branch {shlex.quote(target)} {why}; nothing was changed")
                plan = {"ids": ids, "files": files, "origins": origins, "branch": target, "start": start_branch,
                        "new_branch": bool(branch or _onto), "base": base, "companions": companions,
                        "start_commit": None if repo.head_is_unborn else str(repo.head.target)}
                # the same id with different content already in the repository: a human decides
                head = _head_files(repo, list(files))
                for rel, text in files.items():
                    wt = repo_info.work_tree / rel
                    if rel in head and head[rel] != text:
                        raise MemexError(f"{rel} is already in the repository with different content; nothing was "
                                         "changed (supersede it, or edit the file yourself)", FAILED)
                    if rel not in head and wt.is_dir():
                        raise MemexError(f"{rel} is a folder in the work tree; nothing was changed", FAILED)
                    if rel not in head and wt.exists() and wt.read_text(encoding="utf-8") != text:
                        raise MemexError(f"{rel} already exists in the work tree with different content; nothing was changed", FAILED)
                atomic_write_text(journal, json.dumps(plan, ensure_ascii=False))
            crash_point("submit.after_journal")
            files = plan["files"]
            target = plan["branch"]
            # --branch: the commit is made on that branch alone; the user's HEAD, index and work tree
            # stay exactly as they were (before, HEAD moved to the branch and the next `add` and
            # commit happened there). Without it, on the current branch, the files land in the work
            # tree and the index as committed.
            aside = plan["new_branch"] and pygit.current_branch(repo) != target
            started = False  # whether anything outside the journal has changed yet
            made: str | None = None  # the branch this run created, removed again if nothing was committed on it
            try:
                if aside and not _branch_exists(repo, target):
                    start = _start_commit(repo, plan.get("start_commit"))
                    repo.branches.local.create(target, start)
                    made = target
                res.branch = target
                if not aside:
                    for rel, text in files.items():
                        started = True
                        atomic_write_text(repo_info.work_tree / rel, text)
                crash_point("submit.after_files")
                tip = f"refs/heads/{target}" if aside else "HEAD"
                head = _head_files(repo, list(files), tip)
                to_commit = {rel: text.encode("utf-8") for rel, text in files.items() if head.get(rel) != text}
                # a memory these drafts supersede, marked so in the work tree: its marking, checked before
                # the journal was written (`_superseded_companions`), is committed with them
                extra = plan.get("companions", {})
                head.update(_head_files(repo, list(extra), tip))
                to_commit.update({rel: text.encode("utf-8") for rel, text in extra.items() if head.get(rel) != text})
                if to_commit:
                    n = len(files)
                    lines = [f"memex: submit {n} memor{'y' if n == 1 else 'ies'} for review", ""]
                    for rel in files:
                        body = files[rel].split("---\n", 2)[-1].strip().splitlines() or [""]
                        lines.append(f"- {Path(rel).stem} {body[0][:60]}")
                    res.commit = pygit.commit_files(repo, to_commit, "\n".join(lines) + "\n",
                                                    branch=target if aside else None,
                                                    author=author, committer=committer)
                    res.committed = True
                    started = True
            except Exception as exc:  # noqa: BLE001 - never leave a journal that fails the same way forever
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                if made is not None and not res.committed:
                    with contextlib.suppress(Exception):
                        repo.branches.local.delete(made)
                if not started and not res.resumed:
                    delete_file(journal)
                    raise MemexError(f"submit failed ({detail}); nothing was changed", FAILED) from None
                aside = _set_aside(journal)
                raise MemexError(f"submit could not finish ({detail}); the drafts are still in the outbox and its plan "
                                 f"was set aside as {aside} (`git memex doctor` shows it)", FAILED) from None
            res.skipped_identical.extend(Path(r).stem for r in files if head.get(r) == files[r])
            crash_point("submit.after_commit")
            from git_memex.core import frontmatter
            from git_memex.index.database import Source

            repo_src = Source("repo", repo_info.work_tree / ctx.memory_dir_rel, ctx.project_key)
            for origin in plan["origins"]:
                p = Path(origin)
                delete_file(p)
                st.home.remove(p)
            if st.repo is not None and not aside:
                st.repo.apply_paths(repo_src, [repo_info.work_tree / r for r in files], trigger="submit")
            for rel, text in files.items():
                fm, _body = frontmatter.parse(text)  # what was committed (on --branch, not in the work tree)
                res.submitted.append({"id": fm.get("id") or Path(rel).stem, "review_state": fm.get("review_state"),
                                      "path": rel})
            res.checkout = pygit.current_branch(repo) or "HEAD"
            delete_file(journal)
            if res.resumed:
                done = {Path(r).stem for r in files}
                rest = [i for i in ids if not any(d.startswith(i.strip().upper()) for d in done)]
                if rest:  # the rest of what was asked joins the finished plan's commit's branch
                    onto = plan["branch"] if plan["new_branch"] and _branch_exists(repo, plan["branch"]) else None
                    more = submit(ctx, rest, branch=None, base=base, stores=st, _onto=onto)
                    res.submitted.extend(more.submitted)
                    res.skipped_identical.extend(more.skipped_identical)
                    res.committed = res.committed or more.committed
                    res.commit = more.commit or res.commit
                    res.warnings.extend(more.warnings)
            return _finish(ctx, res, plan)


def _check_successors(ctx: Context, repo: pygit2.Repository, files: dict[str, str]) -> None:
    """What the pre-commit hook refuses, for this commit (pygit2 runs no hooks): a submitted
    memory whose `superseded_by` names a memory neither submitted with it nor in HEAD."""
    from git_memex.secrets.scan import successor_named

    for rel, text in files.items():
        found = successor_named(text)
        if found is None:
            continue
        succ = f"{ctx.memory_dir_rel}/{found[0]}.md"
        if succ not in files and not _head_files(repo, [succ]):
            me = Path(rel).stem
            raise MemexError(f"{me} names {found[0]} as its successor (superseded_by), which would not be in the "
                             f"repository; submit both (`git memex submit {me} {found[0]}`); nothing was changed", FAILED)


def _check_local_links(st: Stores, files: dict[str, str]) -> None:
    """A submitted memory never names a personal or private memory (`ops.local_link`), even
    after a hand edit of the draft: the repository would get that id."""
    from git_memex.core import frontmatter
    from git_memex.ops import local_link

    for rel, text in files.items():
        try:
            fm, _body = frontmatter.parse(text)
        except frontmatter.FrontmatterError:
            continue  # the plan read it already; an unreadable file is refused there
        hit = local_link(st, fm)
        if hit is not None:
            key, mid, loc = hit
            raise MemexError(f"{Path(rel).stem} names {loc} memory {mid} in {key}, which would put its id in the "
                             "repository; remove it from the draft; nothing was changed", FAILED)


def _push_line(ctx: Context, branch: str) -> str:
    """The push that publishes `branch`, as `git memex push` would run it: `git push REMOTE
    BRANCH[:UPSTREAM]` when it has an upstream, else `git push -u REMOTE BRANCH`; "" when the
    repository has no remote."""
    from git_memex.core.gitcmd import git_text

    work = ctx.repo.work_tree if ctx.repo else None

    def get(*args: str) -> str:
        r = git_text(list(args), work, timeout=30)
        return r.stdout.strip() if r is not None and r.returncode == 0 else ""

    remotes = get("remote").split()
    if not remotes:
        return ""
    remote = get("config", "--get", f"branch.{branch}.remote")
    merge = get("config", "--get", f"branch.{branch}.merge")
    if remote in remotes and merge.startswith("refs/heads/"):  # as `git memex push` would push it
        upstream = merge.removeprefix("refs/heads/")
        return f"git push {shlex.quote(remote)} {shlex.quote(branch if upstream == branch else f'{branch}:{upstream}')}"
    return f"git push -u {shlex.quote('origin' if 'origin' in remotes else remotes[0])} {shlex.quote(branch)}"


def _finish(ctx: Context, res: SubmitResult, plan: dict[str, Any]) -> SubmitResult:
    """The push and PR commands to print, shell-quoted; never a PR from a branch into itself."""
    target = plan["branch"]
    res.branch = target
    start = plan["start"] if plan["start"] != "HEAD" else ""  # "HEAD": submit started on a detached HEAD
    res.base = plan.get("base") or (start if plan["new_branch"] and start else _default_base(ctx, start))
    n = len(plan["files"])
    if target == "HEAD":
        res.note = ("HEAD is detached: create a branch for this commit (`git switch -c memex/review`) "
                    "before pushing it")
        return res
    q = shlex.quote
    res.push_command = _push_line(ctx, target)
    if not res.push_command:
        _finish_pr(res, target, n)
        res.note = (f"this repository has no remote, so there is nothing to push to yet: add one with "
                    f"`git remote add origin URL`, then `git push -u origin {q(target)}`"
                    + (f"; {res.note}" if res.note else ""))
        return res
    return _finish_pr(res, target, n)


def _finish_pr(res: SubmitResult, target: str, n: int) -> SubmitResult:
    q = shlex.quote
    if not res.base:
        res.note = "submit started on a detached HEAD, so the pull request's base is unknown; submit with --base BRANCH"
        return res
    if res.base == target:
        res.note = (f"the commit is on {target} itself, so there is no pull request to open; to have memories "
                    "reviewed in one, submit them with --branch NAME (e.g. --branch memex/review)")
        return res
    title = f"memex: {n} memor{'y' if n == 1 else 'ies'} for review"
    res.pr_command = (f"gh pr create --base {q(res.base)} --head {q(target)} --title {q(title)} "
                      f"--body {q('Memory files only; reviewers: is it true, durable, safe to share?')}")
    return res


def _start_commit(repo: pygit2.Repository, start: Any) -> pygit2.Commit:
    """The commit a new --branch starts from: the one HEAD named when the plan was made (a replay
    after a crash starts where the first run would have), else HEAD's."""
    import pygit2

    if isinstance(start, str):
        try:
            obj = repo.revparse_single(start)
            if isinstance(obj, pygit2.Commit):
                return obj
        except (KeyError, ValueError, pygit2.GitError):
            pass
    return repo.head.peel(pygit2.Commit)


def _head_files(repo: pygit2.Repository, rels: list[str], ref: str = "HEAD") -> dict[str, str]:
    """`_head_blobs` as text (a blob that is not UTF-8 is left out)."""
    out: dict[str, str] = {}
    for rel, data in _head_blobs(repo, rels, ref).items():
        try:
            out[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


def _head_blobs(repo: pygit2.Repository, rels: list[str], ref: str = "HEAD") -> dict[str, bytes]:
    """What HEAD (or the branch `ref`) holds at each of `rels` (a path it lacks, or an unborn
    HEAD: left out)."""
    out: dict[str, bytes] = {}
    try:
        tree = (repo.head if ref == "HEAD" else repo.references[ref]).peel().tree
    except Exception:  # noqa: BLE001 - unborn HEAD
        return out
    for rel in rels:
        try:
            obj = repo[tree[rel].id]
        except KeyError:
            continue
        data = getattr(obj, "data", None)
        if isinstance(data, bytes):
            out[rel] = data
    return out


def _superseded_companions(ctx: Context, repo: pygit2.Repository, ids: list[str],
                           warnings: list[str]) -> dict[str, str]:
    """The work tree's memory files, beside the drafts `ids`, that name one of them in
    `superseded_by` and differ from HEAD: rel path → text to commit with the drafts.

    Each is taken only as the supersede marking of a committed memory, checked as the pre-commit
    hook checks a staged file (`scan.companion_problem`, which runs `scan.commit_problems`); one
    that fails refuses the whole submit in one sentence (exit 1, nothing changed). A file HEAD
    does not hold (untracked, or new) is never taken: it is named in `warnings`. A link, a FIFO or
    an unreadable file is never read (`read_bytes`)."""
    from git_memex.core import frontmatter
    from git_memex.secrets.scan import companion_problem, successor_named

    assert ctx.memory_dir is not None
    wanted = set(ids)
    named: dict[str, tuple[bytes, str]] = {}
    for path in sorted(ctx.memory_dir.glob("*.md")):
        if path.stem in wanted:
            continue
        try:
            raw = read_bytes(path, root=ctx.memory_dir)
        except UnreadableMemory:
            continue
        text = raw.decode("utf-8", "replace")
        found = successor_named(text)
        succ = found[0] if found else None
        if succ not in wanted:
            try:
                succ = frontmatter.parse(text)[0].get("superseded_by")
            except frontmatter.FrontmatterError:
                continue
        if isinstance(succ, str) and succ in wanted:
            named[f"{ctx.memory_dir_rel}/{path.name}"] = (raw, succ)
    head = _head_blobs(repo, list(named))
    out: dict[str, str] = {}
    for rel, (raw, succ) in named.items():
        if head.get(rel) == raw:
            continue
        if rel not in head:
            warnings.append(f"{rel} names {succ} in superseded_by but is not in the repository, so submit left it out")
            continue
        why = companion_problem(rel, head[rel], raw, wanted, patterns=ctx.redact_patterns,
                                reference_keys=ctx.reference_keys)
        if why:
            raise MemexError(f"{rel}, which names {succ} in superseded_by and would be committed with it, {why}; "
                             "refusing to submit (nothing was changed)", FAILED)
        out[rel] = raw.decode("utf-8")
    return out

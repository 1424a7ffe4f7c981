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
import shlex
from pathlib import Path
from typing import Any

from git_memex.core import frontmatter, model
from git_memex.core.context import Context
from git_memex.core.files import (
    UnreadableMemory,
    atomic_write_text,
    crash_point,
    delete_file,
    pause_point,
    read_bytes,
    read_memory,
)
from git_memex.core.person import actor
from git_memex.core.record import field, record
from git_memex.errors import FAILED, USAGE, MemexError, UsageError
from git_memex.index.stores import Stores, opened
from git_memex.review.branch_names import (
    check_base,
    name_shape_problem,
    new_branch_problem,
    ref_clash,
)
from git_memex.review.log import record_step
from git_memex.review.submit_replay import head_blobs as _head_blobs
from git_memex.review.submit_replay import head_files as _head_files
from git_memex.review.submit_replay import journal_path as _journal_path
from git_memex.review.submit_replay import plan_problem
from git_memex.review.submit_replay import set_aside as _set_aside

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
    not_submitted: list[str] = field(default_factory=list)
    """Ids this run was given but did not submit: a rerun that finds an interrupted submit finishes
    that plan alone (`resumed`), and says which of the ids asked for it left for the next run."""
    warnings: list[str] = field(default_factory=list)
    checkout: str = ""
    """The branch the user's checkout is on afterwards ("HEAD" when detached): with --branch it is
    the branch they started on, never the one the commit went to."""

    def to_json(self) -> dict[str, Any]:
        return self.__dict__


def _branch_exists(repo: pygit2.Repository, name: str) -> bool:
    return name in repo.branches.local


def _pick_branch(repo: pygit2.Repository, wanted: str) -> str:
    """`wanted`, or `wanted-N` when a branch of that name exists (in any case: a case-insensitive
    file system keeps `Review` and `review` in one file)."""
    taken = {b.casefold() for b in repo.branches.local}
    name, n = wanted, 2
    while name.casefold() in taken:
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
           stores: Stores | None = None) -> SubmitResult:
    """Move named outbox drafts into the repository in one commit holding only them.

    With `branch`, a new branch is made from HEAD's commit and the commit goes there alone: the
    user's HEAD, index and work tree are left exactly as they were. Without it, the commit is on
    the current branch (its first commit too, on a branch without commits) and its files land in
    the work tree and the index.

    Everything is checked before the journal is written (ids, branch and base names, secrets,
    files already in the repository), so a journal holds only a plan that can be completed.
    One submit of a project runs at a time (`submit_replay.submit_lock`), so a journal found is
    one a killed process left. Crash-safe through that journal: a rerun completes the same plan
    (same texts, same branch, same parent) exactly once, and only that plan: ids it did not hold
    are named in `not_submitted`, never joined to its branch. A plan that no longer fits (its
    branch moved, is checked out in another worktree, this checkout is on another branch) is a
    refusal (exit 2) and is set aside; one that cannot be completed at all (edited by hand) is set
    aside as `<journal>.failed` with a warning and this submit goes on. Exit codes are true: a run
    that fails before its commit removes what it wrote (exit 2, nothing changed); once the commit
    is made, the run succeeds, and a failure to tidy up after it is a warning.
    """
    from git_memex.git import pygit
    from git_memex.review.submit_replay import refusal, replay_state, submit_lock

    repo_info = ctx.require_repo("submit")
    if not ids:
        raise UsageError("name at least one outbox draft id to submit")
    if branch is not None:  # the cheap checks of the name come before any lock or git call
        why = name_shape_problem(branch)
        if why:
            raise UsageError(f"--branch {shlex.quote(branch) if branch.isascii() else repr(branch)} {why}; "
                             "nothing was changed")
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
    with opened(ctx, stores) as st, submit_lock(ctx):
            journal = _journal_path(ctx)
            plan: Any = None
            done: str | None = None  # the commit a killed run already made for the plan
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
                    state, detail = replay_state(ctx, repo, plan)
                    if state == "refused":
                        raise MemexError(refusal(plan, detail or "", _set_aside(journal)), FAILED)
                    done = detail if state == "done" else None
                    res.resumed = True
            if plan is None:
                plan = _new_plan(ctx, st, repo, ids, branch, base, res)
                atomic_write_text(journal, json.dumps(plan, ensure_ascii=False))
            crash_point("submit.after_journal")
            pause_point("submit.after_journal")
            files = plan["files"]
            target = plan["branch"]
            # --branch: the commit is made on that branch alone; the user's HEAD, index and work tree
            # stay exactly as they were. Without it, on the current branch, the files land in the
            # work tree and the index as committed.
            aside = plan["new_branch"] and pygit.current_branch(repo) != target
            written: list[Path] = []  # files this run put into the work tree where there were none
            made: str | None = None  # the branch this run created, removed again if nothing was committed on it
            tip = f"refs/heads/{target}" if aside else "HEAD"
            head: dict[str, str] = {}
            try:
                if done is None and aside and not _branch_exists(repo, target):
                    repo.branches.local.create(target, _start_commit(repo, plan.get("start_commit")))
                    made = target
                res.branch = target
                if done is None and not aside:
                    for rel, text in files.items():
                        path = repo_info.work_tree / rel
                        new = not path.exists()
                        atomic_write_text(path, text)
                        if new:
                            written.append(path)
                crash_point("submit.after_files")
                pause_point("submit.after_files")
                head = _head_files(repo, list(files), tip)
                to_commit = {rel: text.encode("utf-8") for rel, text in files.items() if head.get(rel) != text}
                # a memory these drafts supersede, marked so in the work tree: its marking, checked before
                # the journal was written (`_superseded_companions`), is committed with them
                extra = plan.get("companions", {})
                head.update(_head_files(repo, list(extra), tip))
                to_commit.update({rel: text.encode("utf-8") for rel, text in extra.items() if head.get(rel) != text})
                if to_commit and done is None:
                    try:
                        res.commit = pygit.commit_files(repo, to_commit, _message(files),
                                                        branch=target if aside else None,
                                                        author=author, committer=committer)
                    except pygit.IndexNotUpdated as exc:  # the commit stands: say how to line the index up
                        res.commit = exc.commit
                        paths = " ".join(shlex.quote(p) for p in exc.paths)
                        res.warnings.append(f"the commit is made, but the index could not be updated ({exc.why}), "
                                            f"so git shows its files as staged changes; `git reset -q -- {paths}` "
                                            "lines the index up with it")
                    res.committed = True
            except Exception as exc:  # noqa: BLE001 - never leave a journal that fails the same way forever
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                for path in written:  # what this run wrote goes again: "nothing was changed" stays true
                    with contextlib.suppress(OSError):
                        delete_file(path)
                if made is not None:
                    with contextlib.suppress(Exception):
                        repo.branches.local.delete(made)
                if not res.resumed:
                    delete_file(journal)
                    raise MemexError(f"submit failed ({detail}); nothing was changed", FAILED) from None
                aside_as = _set_aside(journal)
                raise MemexError(f"submit could not finish ({detail}); nothing was changed: the drafts are still in "
                                 f"the outbox and its plan was set aside as {aside_as} (`git memex doctor` shows it)",
                                 FAILED) from None
            if done is not None:
                res.commit = done
            res.skipped_identical.extend(Path(r).stem for r in files if head.get(r) == files[r] and done is None)
            crash_point("submit.after_commit")
            _tidy(ctx, st, plan, files, aside, res)
            for rel, text in files.items():
                fm, _body = frontmatter.parse(text)  # what was committed (on --branch, not in the work tree)
                res.submitted.append({"id": fm.get("id") or Path(rel).stem, "review_state": fm.get("review_state"),
                                      "path": rel})
            res.checkout = pygit.current_branch(repo) or "HEAD"
            if res.resumed:
                planned = {Path(r).stem for r in files}
                res.not_submitted = [i for i in ids if not any(d.startswith(i.strip().upper()) for d in planned)]
                if res.not_submitted:
                    res.warnings.append(
                        f"this run finished an interrupted submit of {', '.join(sorted(planned))} on {target} and "
                        f"nothing else; {', '.join(res.not_submitted)} "
                        f"{'was' if len(res.not_submitted) == 1 else 'were'} not submitted: run "
                        f"`git memex submit {' '.join(shlex.quote(i) for i in res.not_submitted)}` again")
            return _finish(ctx, res, plan)


def _message(files: dict[str, str]) -> str:
    n = len(files)
    lines = [f"memex: submit {n} memor{'y' if n == 1 else 'ies'} for review", ""]
    for rel in files:
        body = files[rel].split("---\n", 2)[-1].strip().splitlines() or [""]
        lines.append(f"- {Path(rel).stem} {body[0][:60]}")
    return "\n".join(lines) + "\n"


def _tidy(ctx: Context, st: Stores, plan: dict[str, Any], files: dict[str, str], aside: bool,
          res: SubmitResult) -> None:
    """After the commit: the outbox drafts go, the index learns the files, the journal goes last.
    The commit is made, so a failure here is a warning (the journal stays; a rerun finishes it)."""
    from git_memex.index.database import Source

    assert ctx.repo is not None
    work = ctx.repo.work_tree
    try:
        for origin in plan["origins"]:
            p = Path(origin)
            delete_file(p)
            st.home.remove(p)
        if st.repo is not None and not aside:
            st.repo.apply_paths(Source("repo", work / ctx.memory_dir_rel, ctx.project_key),
                                [work / r for r in files], trigger="submit")
        delete_file(_journal_path(ctx))
    except Exception as exc:  # noqa: BLE001 - the commit stands; say what is left to do
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        ids = " ".join(Path(r).stem for r in files)
        res.warnings.append(f"the commit is made, but tidying up after it failed ({detail}); run "
                            f"`git memex submit {ids}` again to finish")


def _new_plan(ctx: Context, st: Stores, repo: pygit2.Repository, ids: list[str], branch: str | None,
              base: str | None, res: SubmitResult) -> dict[str, Any]:
    """The plan of a new submit, every part checked (ids, branch and base names, secrets, the
    target files); raises before anything is written."""
    from git_memex.git import pygit
    from git_memex.review.submit_replay import git_dir_of
    from git_memex.secrets.scan import commit_problems

    assert ctx.repo is not None
    work = ctx.repo.work_tree
    st.refresh()
    if branch is not None:
        why = new_branch_problem(ctx, repo, branch)
        if why:
            raise UsageError(f"--branch {shlex.quote(branch)} {why}; nothing was changed")
    if base is not None:
        check_base(repo, base, work)
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
    target = _pick_branch(repo, branch) if branch else start_branch
    if branch:
        clash = ref_clash(repo, target)
        if clash:
            raise UsageError(f"--branch {shlex.quote(target)} cannot coexist with the existing branch "
                             f"{shlex.quote(clash)} (one name would be a folder of the other); pick "
                             "another name; nothing was changed")
        if repo.head_is_unborn:
            where = (f"the current branch {shlex.quote(start_branch)} has no commits yet" if list(repo.branches.local)
                     else "this repository has no commits yet")
            raise MemexError(f"{where}, so there is nothing to start --branch {shlex.quote(target)} from; commit "
                             "once first, or submit without --branch to make that first commit (nothing was changed)",
                             FAILED)
        if target != branch:  # the suffixed name is checked as the asked one was
            why = new_branch_problem(ctx, repo, target)
            if why:
                raise UsageError(f"--branch {shlex.quote(target)} {why}; nothing was changed")
    plan = {"ids": ids, "files": files, "origins": origins, "branch": target, "start": start_branch,
            "new_branch": bool(branch), "base": base, "companions": companions,
            "start_commit": None if repo.head_is_unborn else str(repo.head.target), "git_dir": git_dir_of(ctx)}
    # the same id with different content already in the repository: a human decides
    head = _head_files(repo, list(files))
    for rel, text in files.items():
        wt = work / rel
        if rel in head and head[rel] != text:
            raise MemexError(f"{rel} is already in the repository with different content; nothing was "
                             "changed (supersede it, or edit the file yourself)", FAILED)
        if rel not in head and wt.is_dir():
            raise MemexError(f"{rel} is a folder in the work tree; nothing was changed", FAILED)
        if rel not in head and wt.exists() and wt.read_text(encoding="utf-8") != text:
            raise MemexError(f"{rel} already exists in the work tree with different content; nothing was changed", FAILED)
    return plan


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
    """The push that publishes `branch`, exactly as `git memex push` would run it
    (`sync.push_args`: full refspecs, `-u` with an empty lease the first time); "" when the
    repository has no remote."""
    from git_memex.core.gitcmd import git_text
    from git_memex.git.sync import push_args

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
        args = push_args(remote, branch, merge.removeprefix("refs/heads/"))
    else:
        args = push_args("origin" if "origin" in remotes else remotes[0], branch, None)
    return "git " + " ".join(shlex.quote(a) for a in args)


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

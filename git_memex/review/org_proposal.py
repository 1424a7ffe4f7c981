"""Promotion upward: `propose ID --to org NAME` and `pr-status --org NAME` (docs/org.md).

A published project memory is copied, as an ordinary v0.2 file with `scope: org`, a new id and
`derived_from` naming the project memory, onto a new branch of the local org clone
(`<data root>/org/NAME`), in one commit holding only that file. The push and PR commands are
printed, never run.

Invariant: the clone's work tree, its index and HEAD are never touched (they are what git-memex
indexes, and they change only through `org pull`). The commit is built with plumbing on the tip
of the branch the subscription follows (`refs/remotes/origin/<branch>`, not HEAD): the blob with
`hash-object`, the tree in a temporary index (GIT_INDEX_FILE) read from that tip, `commit-tree`
on top of it, and `update-ref` creating the branch, which refuses when the branch
already exists. Every check runs before the first object is written; a failure after it leaves
at most unreachable objects (git's gc removes them), never a branch or a changed file.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.settings import DEFAULT_MEMORY_DIR
from git_memex.errors import FAILED, USAGE, MemexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.model import Memory
    from git_memex.index.stores import Stores

SUBJECT = "memex: org proposal"  # the first words of every proposal commit (pr-status finds branches by it)
GIT_TIMEOUT_S = 300
# what a child git must not inherit here: it would point the plumbing at another repository or index
_NOT_INHERITED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                  "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")


def _git(clone: Path, args: list[str], *, input: bytes | None = None,
         index: Path | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `git --git-dir CLONE/.git ARGS`; (-1, "", why) when git could not run."""
    from git_memex.core.gitcmd import run_git

    env: dict[str, str | None] = {k: None for k in _NOT_INHERITED}
    env["GIT_TERMINAL_PROMPT"] = "0"
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    # umask 077: what the plumbing writes (objects, refs, logs) stays owner-only, as the whole data root
    r = run_git(["--git-dir", str(clone / ".git"), *args], clone, input=input, timeout=GIT_TIMEOUT_S, env=env,
                umask=0o077)
    if r is None:
        return -1, "", "git could not be run or did not finish in time"
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def _why(err: str) -> str:
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    return (lines[-1].removeprefix("fatal:").strip() if lines else "") or "no message from git"


def subscribed_clone(ctx: Context, name: str) -> Path:
    """The clone of org `name`: a usage error (exit 1) when it is not subscribed here, exit 2 when
    its clone was deleted by hand."""
    from git_memex.git.org import NAME_RE

    if not NAME_RE.match(name):
        raise UsageError(f"{name!r} is not a valid org name; `git memex org list` shows the subscriptions")
    if name not in ctx.org_names():
        raise MemexError(f"org {name} is not subscribed here; `git memex org list` shows the subscriptions "
                         "(nothing was changed)", USAGE)
    clone = ctx.org_clone(name)
    from git_memex.index.stores import org_folders

    if not org_folders(clone) or not (clone / ".git").is_dir():
        raise MemexError(f"the clone of org {name} is missing ({clone}, deleted by hand?); run "
                         f"`git memex org remove {name}` then `git memex org add {name} URL`; nothing was changed", FAILED)
    return clone


def _branches(clone: Path) -> dict[str, str]:
    """Local branch name → the subject of its tip commit."""
    code, out, err = _git(clone, ["for-each-ref", "--format=%(refname:short)%09%(contents:subject)", "refs/heads/"])
    if code != 0:
        raise MemexError(f"git cannot list the branches of {clone} ({_why(err)}); nothing was changed", FAILED)
    rows = (ln.split("\t", 1) for ln in out.split("\n") if ln)  # git output: only \n ends a line
    return {r[0]: (r[1] if len(r) > 1 else "") for r in rows}


def _check_branch(clone: Path, branch: str) -> None:
    from git_memex.review.branch_names import branch_name_problem

    why = branch_name_problem(branch, clone)
    if why:
        raise UsageError(f"--branch {shlex.quote(branch)} {why}; nothing was changed")
    existing = _branches(clone)
    if branch in existing:
        raise MemexError(f"the clone of the org already has a branch {shlex.quote(branch)} (an earlier proposal?); "
                         "pick another name with --branch, or delete it with "
                         f"`git -C {shlex.quote(str(clone))} branch -D {shlex.quote(branch)}`; nothing was changed", USAGE)
    for other in existing:
        if other.startswith(branch + "/") or branch.startswith(other + "/"):
            raise UsageError(f"--branch {shlex.quote(branch)} cannot coexist with the branch {shlex.quote(other)} of "
                             "the org clone (one name would be a folder of the other); nothing was changed")


def _already_in_org(ctx: Context, st: Stores, clone: Path, name: str, project_id: str) -> str | None:
    """Where the org already holds this project memory (its id, or a memory derived from it):
    in the clone's HEAD (read from the org index), or in a commit of another branch or a remote
    branch that HEAD does not hold (the followed branch's tip too, when HEAD is behind it); None
    when nowhere."""
    from git_memex.index.stores import ORG_PREFIX

    row = st.first("m.location = ? AND (m.id = ? OR m.derived_from = ?)", (ORG_PREFIX + name, project_id, project_id),
                   columns="m.id")
    if row is not None:
        return f"is already in org {name} as {row[0]}"
    rx = f"^(id|derived_from):[ \t]*['\"]?{re.escape(project_id)}['\"]?[ \t]*$"
    code, out, err = _git(clone, ["log", "--branches", "--remotes", "--not", "HEAD", "--source", "--format=%S",
                                  "-G", rx, "--", DEFAULT_MEMORY_DIR + "/"])
    if code != 0:
        raise MemexError(f"git cannot search the branches of the org clone ({_why(err)}); nothing was changed", FAILED)
    refs = [ln.strip() for ln in out.split("\n") if ln.strip()]
    if refs:
        where = refs[0].removeprefix("refs/heads/").removeprefix("refs/remotes/")
        return f"was already proposed to org {name} (on branch {where})"
    return None


def _org_file(ctx: Context, orig: Memory, name: str, me: str) -> tuple[Memory, str, tuple[str, ...]]:
    """The org memory for `orig` and the exact text of its file, through the write path's rules
    (secret masking, validation, the index's reader, the pre-commit checks)."""
    from git_memex.core import model
    from git_memex.core.files import file_text
    from git_memex.review.log import record_step
    from git_memex.secrets.admission import admit, tag_holds_secret
    from git_memex.secrets.redact import redact
    from git_memex.secrets.scan import check_text

    red = redact(orig.body, ctx.redact_patterns)
    fm = orig.fm
    copy = model.create(
        red.text,
        scope="org",
        type=orig.type if orig.type in model.TYPES else "fact",
        tags=orig.tags,
        importance=str(fm.get("importance") or "normal"),
        role=str(fm.get("role") or "knowledge"),
        source=str(fm.get("source")) if fm.get("source") in model.SOURCES else "user",
        visibility="shared" if fm.get("visibility") == "shared" else "internal",
        review_state="proposed",
        confidence=fm.get("confidence") if fm.get("confidence") in model.CONFIDENCES else None,
        created_by=fm.get("created_by"),
        via="cli",
        repo_id=ctx.repo_id,  # with derived_from, names the original across machines
        language=fm.get("language") if isinstance(fm.get("language"), str) else None,
        paths=[],  # globs of the project's files mean nothing in another project
        extra={"promoted_by": me, "derived_from": orig.id, "proposed_by": me},
        tags_as_given=tag_holds_secret,  # a tag read for secrets as written, as `add` reads it
    )
    admit(copy, ctx.redact_patterns, body=False, values=red.values)  # tags and every other field, like the body
    record_step(copy, "draft", "proposed", me, f"proposed to org {name} from project memory {orig.id}")
    rel = f"{DEFAULT_MEMORY_DIR}/{copy.id}.md"
    try:
        text = file_text(copy, ctx.org_clone(name) / rel)
    except model.ValidationError as exc:
        raise MemexError(f"{orig.id} cannot be written as an org memory ({exc}); nothing was changed", USAGE) from None
    findings = check_text(rel, text, patterns=ctx.redact_patterns)
    if findings:
        raise MemexError(f"{findings[0]}: refusing to propose {orig.id} to org {name} (nothing was changed); "
                         "fix the project memory first", FAILED)
    return copy, text, red.masked


def _source_memory(ctx: Context, st: Stores, memory_id: str, name: str) -> Memory:
    from git_memex.core import model
    from git_memex.core.files import read_memory
    from git_memex.index.stores import ORG_PREFIX

    found = st.find(memory_id)
    copies = {f.row["location"]: f for f in st.find_all(found.row["id"])}
    found = copies.get("repo") or found
    loc, mid = found.row["location"], found.row["id"]
    if loc == "personal":
        raise MemexError(f"{mid} is a personal memory and never leaves this machine; nothing was changed", USAGE)
    if loc == "private":
        raise MemexError(f"{mid} is private (visibility: private) and never leaves this machine; nothing was changed", USAGE)
    if loc.startswith(ORG_PREFIX):
        raise MemexError(f"{mid} is already an org memory (org {loc[len(ORG_PREFIX):]}); nothing was changed", USAGE)
    if loc != "repo":
        raise MemexError(f"{mid} is a draft in the {loc}, not a published project memory; submit it and have it "
                         f"reviewed first (docs/curating.md); nothing was changed", USAGE)
    m = read_memory(found.path)
    if m.scope == "personal" or m.fm.get("visibility") == "private":
        raise MemexError(f"{mid} is personal or private and never leaves this machine; nothing was changed", USAGE)
    state = model.standing("repo", m.fm) or "draft"  # published as its review history records, not as claimed
    if state != "published":
        raise MemexError(f"{mid} is {state}, not published; only a published project memory is proposed to org "
                         f"{name} (`git memex promote {mid}` until it is); nothing was changed", USAGE)
    if m.status != "active":
        raise MemexError(f"{mid} is {m.status}; only active memories are proposed to an org; nothing was changed", USAGE)
    return m


def propose_to_org(ctx: Context, memory_id: str, name: str, *, branch: str | None = None,
                   stores: Stores | None = None) -> dict[str, Any]:
    """Copy the published project memory `memory_id` onto a new branch of org `name`'s clone, one
    commit holding only that file. Returns what was made and the commands to share it."""
    from git_memex.core.person import actor
    from git_memex.index.stores import opened

    ctx.require_repo("propose --to org")
    clone = subscribed_clone(ctx, name)
    if not (clone / DEFAULT_MEMORY_DIR).is_dir():
        raise MemexError(f"org {name} keeps its memories in the seed's layout (category folders at its root, no "
                         f"{DEFAULT_MEMORY_DIR}/ folder); a proposal is not built for it: add the file in a checkout "
                         "of the org repository; nothing was changed", USAGE)
    with opened(ctx, stores) as st:
        st.refresh()
        orig = _source_memory(ctx, st, memory_id, name)
        target = branch if branch is not None else f"memex/promote-{orig.id}"
        _check_branch(clone, target)
        pr_base = _pr_base(ctx, name, clone)
        # the tip of the branch the subscription follows, as last fetched: not HEAD, which a user
        # may have moved onto another proposal's branch (the new one would then hold both)
        code, out, err = _git(clone, ["rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{pr_base}^{{commit}}"])
        base = out.strip()
        if code != 0 or not base:
            raise MemexError(f"the clone of org {name} has no origin/{pr_base} to start a branch from (run "
                             f"`git memex org pull {name}`); nothing was changed", FAILED)
        where = _already_in_org(ctx, st, clone, name, orig.id)
        if where:
            raise MemexError(f"{orig.id} {where}; nothing was changed", USAGE)
        me = actor(ctx)
        copy, text, masked = _org_file(ctx, orig, name, me)
    rel = f"{DEFAULT_MEMORY_DIR}/{copy.id}.md"
    commit = _commit_one_file(clone, base, rel, text.encode("utf-8"), _message(ctx, orig, copy, name))
    code, _, err = _git(clone, ["update-ref", "-m", f"{SUBJECT} {copy.id}", f"refs/heads/{target}", commit, ""])
    if code != 0:
        raise MemexError(f"git could not create the branch {shlex.quote(target)} in the org clone ({_why(err)}); "
                         "nothing was changed", FAILED)
    q = shlex.quote
    title = f"memex: promote {orig.id} to org memory"
    body = (f"One org memory ({rel}) derived from project memory {orig.id} of {ctx.project_name}. "
            "Reviewers: is it true across projects, durable, safe to share?")
    return {"source": orig.id, "id": copy.id, "org": name, "clone": str(clone), "path": rel, "branch": target,
            "base": pr_base, "commit": commit, "masked": list(masked),
            "push_command": f"git -C {q(str(clone))} push -u origin {q(target)}",
            "pr_command": (f"cd {q(str(clone))} && gh pr create --base {q(pr_base)} --head {q(target)} "
                           f"--title {q(title)} --body {q(body)}")}


def _message(ctx: Context, orig: Memory, copy: Memory, name: str) -> str:
    first = (copy.body.strip().splitlines() or [""])[0][:72]
    return (f"{SUBJECT} {copy.id}\n\n{first}\n\nDerived from project memory {orig.id} "
            f"({ctx.project_name}, {ctx.repo_id}); proposed to org {name} by `git memex propose --to org`.\n")


def _commit_one_file(clone: Path, base: str, rel: str, data: bytes, message: str) -> str:
    """A commit on top of `base` that adds the one file `rel`, built without touching the clone's
    index, work tree or HEAD (a temporary index in the clone's git dir, removed afterwards)."""
    def step(args: list[str], *, input: bytes | None = None, index: Path | None = None) -> str:
        code, out, err = _git(clone, args, input=input, index=index)
        if code != 0:
            raise MemexError(f"git could not build the org commit ({_why(err)}); nothing was changed", FAILED)
        return out.strip()

    blob = step(["hash-object", "-w", "--no-filters", "--stdin"], input=data)
    tmp = clone / ".git" / f"memex-propose-{os.getpid()}.index"
    try:
        step(["read-tree", base], index=tmp)
        step(["update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}"], index=tmp)
        tree = step(["write-tree"], index=tmp)
    finally:
        tmp.unlink(missing_ok=True)
    commit = step(["commit-tree", tree, "-p", base, "-F", "-"], input=message.encode("utf-8"))
    changed = step(["diff-tree", "--no-commit-id", "--name-only", "-r", "-z", base, commit]).strip("\0").split("\0")
    if changed != [rel]:  # never more than the one file, whatever git did
        raise MemexError(f"the org commit would change {len(changed)} files, not only {rel}; nothing was changed", FAILED)
    return commit


def _pr_base(ctx: Context, name: str, clone: Path) -> str:
    """The branch the subscription follows on the org's remote (the proposal's base and the pull
    request's): `memex.org.NAME.branch`, else origin's default branch; whatever HEAD is on."""
    from git_memex.git.org import followed_branch

    followed = followed_branch(ctx, name)
    if followed:
        return followed
    code, out, _ = _git(clone, ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "HEAD@{upstream}"])
    if code == 0 and "/" in out.strip():
        return out.strip().split("/", 1)[1]
    return "main"


# ------------------------------------------------------------------ pr-status --org
def _proposal_branch(clone: Path, name: str, branch: str | None) -> str:
    branches = _branches(clone)
    if branch is not None:
        if branch not in branches:
            raise MemexError(f"the clone of org {name} has no branch {shlex.quote(branch)}; nothing was changed", USAGE)
        return branch
    found = sorted(b for b, subject in branches.items() if subject.startswith(SUBJECT))
    if not found:
        raise MemexError(f"the clone of org {name} has no proposal branch; `git memex propose ID --to org {name}` "
                         "makes one", USAGE)
    if len(found) > 1:
        raise UsageError(f"the clone of org {name} has {len(found)} proposal branches ({', '.join(found)}); "
                         "name one with --branch")
    return found[0]


def org_pr_status(ctx: Context, name: str, *, branch: str | None = None) -> dict[str, Any]:
    """The pull request of an org proposal branch (read with `gh pr view BRANCH` in the org clone),
    mapped onto the review state of each memory file on that branch. Reports only: the org file's
    review state is the org repository's to change (its curators, docs/curating.md)."""
    from git_memex.core import frontmatter
    from git_memex.review.pr_status import _gh

    clone = subscribed_clone(ctx, name)
    target = _proposal_branch(clone, name, branch)
    try:
        pr = _gh(["pr", "view", target, "--json", "number,url,state,reviewDecision,reviews,files,mergedAt"], clone)
    except MemexError as exc:
        if "no pull request" in exc.message:
            raise MemexError(f"the branch {target} of org {name} has no pull request; open one with the "
                             "`gh pr create` command `propose --to org` printed", FAILED) from None
        raise MemexError(f"{exc.message}; following an org proposal needs GitHub's `gh` (install it and run "
                         "`gh auth login`); nothing was changed", FAILED) from None
    files = [f.get("path", "") for f in pr.get("files") or [] if isinstance(f, dict)]
    prefix = DEFAULT_MEMORY_DIR + "/"
    state, decision = pr.get("state") or "", pr.get("reviewDecision") or ""
    items: list[dict[str, Any]] = []
    for path in files:
        if not (isinstance(path, str) and path.startswith(prefix) and path.endswith(".md")):
            continue
        mid = Path(path).stem
        code, out, _ = _git(clone, ["show", f"refs/heads/{target}:{path}"])
        try:
            fm = frontmatter.parse(out)[0] if code == 0 else None
        except frontmatter.FrontmatterError:
            fm = None
        if fm is None:
            items.append({"id": mid, "current": None, "target": None, "action": f"not on branch {target}"})
            continue
        cur = str(fm.get("review_state") or "draft")
        tgt, action = None, "nothing to do"
        if cur == "rejected":
            action = "rejected by a human; a PR signal never overrides that"
        elif state == "MERGED":
            tgt = "published" if cur != "published" else None
            action = f"merged into org {name}: `git memex org pull {name}` brings it in"
        elif decision == "APPROVED" and cur in ("draft", "proposed"):
            tgt = "approved"
            action = "approved; the org's curators merge it"
        elif decision == "CHANGES_REQUESTED":
            action = "changes requested: revise the project memory and propose it again on a new branch"
        items.append({"id": mid, "current": cur, "target": tgt, "action": action})
    return {"org": name, "branch": target, "clone": str(clone),
            "pr": {"number": pr.get("number"), "url": pr.get("url"), "state": state, "review_decision": decision},
            "memories": items, "applied": []}

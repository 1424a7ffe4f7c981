"""pr-status: map a merge review onto the memories it reviewed.

Two sources, the same ladder (docs/git.md, "pr-status without GitHub"):

- **gh**: the current branch's GitHub pull request through the user's `gh` (merged → published,
  approved → approved by the GitHub reviewer, changes requested → a suggestion only). Used when
  `gh` is on PATH and finds a pull request for the branch.
- **git**: otherwise (no `gh`, a GitLab or Gitea origin, a local `git merge`, gh finding no pull
  request): each repository memory still in review (draft, proposed or approved) is published
  when the default branch's first-parent history shows that a **merge commit** brought its file,
  byte for byte as the merged branch held it, and the work tree's file is that same blob. The
  reviewer recorded is that merge commit's author (`local:<email>`). A file that reached the
  branch without a merge commit (a fast-forward, a squash, a direct push), was changed in the
  merge commit itself, or was merged by its own proposer is reported and never published: git
  shows no second person there.

Invariants: names come from GitHub or from git's commits, never from the caller; a human
rejection is never overridden; reports by default, applies only when asked, never pushes; what
`--apply` writes is staged. Publishing changes `review_state` and `approved_by`, never
`trust_level` or `instruction_state`: a rule still reaches agents only through its approval
record (docs/agents.md).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.files import (
    read_memory,
    write_memory,
)
from git_memex.errors import FAILED, MemexError, NotFound
from git_memex.index.stores import Stores, opened
from git_memex.review.log import record_step


def pr_label(number: Any) -> str:
    """`PR #7`, or `the PR` when gh gave no number (never `PR #None`, in a message or a file)."""
    return f"PR #{number}" if isinstance(number, int) and not isinstance(number, bool) else "the PR"


class NoPullRequest(MemexError):
    """`gh` cannot say which pull request reviewed this branch (not installed, no pull request, an
    origin that is not GitHub, a failure): pr-status reads git's history instead."""


def _gh(args: list[str], cwd: Path) -> dict[str, Any]:
    try:
        r = subprocess.run(["gh", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    except FileNotFoundError:
        raise NoPullRequest("the GitHub CLI `gh` is not installed or not on PATH", FAILED) from None
    except subprocess.TimeoutExpired:
        raise MemexError("`gh` did not answer within two minutes; nothing was changed", FAILED) from None
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["unknown error"])[-1]
        if "no pull requests found" in r.stderr.lower():
            raise NoPullRequest("`gh` found no pull request for this branch", FAILED)
        raise NoPullRequest(f"`gh pr view` failed ({msg})", FAILED)
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise MemexError("`gh pr view` printed something that is not JSON; nothing was changed", FAILED) from None
    if not isinstance(data, dict):
        raise MemexError("`gh pr view` printed unexpected JSON; nothing was changed", FAILED)
    return data


def _in_folder(path: Path | None, folder: Path | None) -> bool:
    """Whether `path` is a file of the repository's memory folder (a PR's file names are matched by
    id, and an id may also name a personal or private memory: those a PR never changes)."""
    from git_memex.core.files import inside

    return path is not None and folder is not None and inside(path, folder)


def step_line(it: dict[str, Any]) -> str:
    """How a step is shown to a person (`ID: ACTION`): the action names the transition and, on the
    git road, the merge commit and its author. `shown` (below) is a set of these lines."""
    return f"{it['id']}: {it['action']}"


def pr_status(ctx: Context, *, apply: bool = False, stores: Stores | None = None,
              shown: set[str] | None = None) -> dict[str, Any]:
    """The report, and with `apply` its transitions performed and staged. `shown`: the steps a
    person was shown and accepted (`step_line`); only a step that is still exactly one of them is
    applied, and every other one is listed in `not_applied` (a merge or pull while the question
    was open must not add a step nobody saw)."""
    repo_info = ctx.require_repo("pr-status")
    try:
        pr = _gh(["pr", "view", "--json", "number,url,state,reviewDecision,reviews,files,mergedAt"],
                 repo_info.work_tree)
    except NoPullRequest as exc:
        return merged_status(ctx, apply=apply, stores=stores, note=f"{exc.message}: merges read from git", shown=shown)
    files = [f.get("path", "") for f in pr.get("files") or [] if isinstance(f, dict)]
    prefix = ctx.memory_dir_rel.rstrip("/") + "/"
    ids = [Path(p).stem for p in files if p.startswith(prefix) and p.endswith(".md")]
    approvers = [rv.get("author", {}).get("login") for rv in pr.get("reviews") or []
                 if isinstance(rv, dict) and rv.get("state") == "APPROVED"]
    approver = next((a for a in reversed(approvers) if a), None)
    decision = pr.get("reviewDecision") or ""
    state = pr.get("state") or ""
    with opened(ctx, stores) as st:
        st.refresh()
        items: list[dict[str, Any]] = []
        for mid in ids:
            try:
                found = st.find(mid)
            except (NotFound, MemexError):
                items.append({"id": mid, "current": None, "target": None, "action": "not in this work tree"})
                continue
            cur = found.row["standing"] or "draft"  # as it stands: an unrecorded claim is in review
            target, action = None, "nothing to do"
            if not _in_folder(found.path, ctx.memory_dir):
                items.append({"id": mid, "current": cur, "target": None,
                              "action": "not a memory of this repository's folder; a PR never changes it"})
                continue
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
        unseen: list[str] = []
        if apply:
            for it in items:
                if not it["target"]:
                    continue
                if shown is not None and step_line(it) not in shown:
                    unseen.append(it["id"])
                    continue
                found = st.find(it["id"])
                m = read_memory(found.path)
                cur = it["current"]
                by = f"github:{approver}" if it["target"] == "approved" and approver else "github:pr"
                if it["target"] == "published" and cur in ("draft", "proposed"):
                    record_step(m, cur, "approved", by, f"{pr_label(pr.get('number'))} approved")
                    m.fm["approved_by"] = m.fm.get("approved_by") or (f"github:{approver}" if approver else by)
                    cur = "approved"
                if it["target"] == "approved":
                    m.fm["approved_by"] = by
                if it["target"] == "published":
                    m.fm["promoted_by"] = by  # the merged PR published it (docs/format.md)
                m.fm["review_state"] = it["target"]
                record_step(m, cur, it["target"], by, f"{pr_label(pr.get('number'))} {state.lower() or decision.lower()}".rstrip())
                model.touch(m)
                model.stamp_reference(m.fm, ctx.reference_keys)
                write_memory(found.source.folder, m)
                found.index.upsert(m, found.source)
                applied.append({"id": m.id, "from": it["current"], "to": it["target"], "by": by, "path": str(found.path)})
        from git_memex.git.sync import stage, staged_fields

        staged = stage(ctx, [Path(a.pop("path")) for a in applied], "the review steps") if applied else []
        return {"source": "gh",
                "pr": {"number": pr.get("number"), "url": pr.get("url"), "state": state, "review_decision": decision},
                "memories": items, "applied": applied, **staged_fields(staged),
                **({"not_applied": unseen} if unseen else {})}


# ------------------------------------------------------------------ git alone
def merged_status(ctx: Context, *, apply: bool = False, stores: Stores | None = None,
                  note: str | None = None, shown: set[str] | None = None) -> dict[str, Any]:
    """The git road (module docstring): each repository memory in review, judged by the merge
    commit that brought its file to the default branch."""
    from git_memex.agents.gate import default_branch, unknown_branch

    ref = default_branch(ctx)
    if ref is None:
        raise MemexError(f"no merge into the default branch can be found: {unknown_branch(ctx)}; nothing was changed",
                         FAILED)
    assert ctx.repo is not None
    work = ctx.repo.work_tree
    with opened(ctx, stores) as st:
        st.refresh()
        rows = st.by_id("m.location = 'repo' AND COALESCE(m.review_state, 'draft') IN ('draft', 'proposed', 'approved')",
                        columns="m.id, m.path, m.review_state", order_by="m.id")
        paths = {mid: Path(r["path"]) for mid, r in rows.items() if _in_folder(Path(r["path"]), ctx.memory_dir)}
        rels = {mid: p.relative_to(work).as_posix() for mid, p in paths.items()}
        found = _merges(work, ref.ref, rels)
        same = _as_merged(work, rels, found)
        items: list[dict[str, Any]] = []
        for mid in paths:
            cur = str(rows[mid]["review_state"] or "draft")
            items.append({"id": mid, "current": cur,
                          **_verdict(mid, cur, found.get(mid), mid in same, ref.branch)})
        applied = []
        unseen: list[str] = []
        if apply:
            for it in items:
                if it["target"] != "published":
                    continue
                if shown is not None and step_line(it) not in shown:
                    unseen.append(it["id"])
                    continue
                f = st.find(it["id"])
                m = read_memory(f.path)
                merge = it["merge"]
                by, cur = merge["by"], it["current"]
                said = f"merged into {ref.branch} in {merge['commit'][:10]} by {merge['author']}"
                if cur in ("draft", "proposed"):
                    record_step(m, cur, "approved", by, said)
                    cur = "approved"
                m.fm["approved_by"] = m.fm.get("approved_by") or by
                m.fm["review_state"] = "published"
                record_step(m, cur, "published", by, said)
                model.touch(m)
                model.stamp_reference(m.fm, ctx.reference_keys)
                write_memory(f.source.folder, m)
                f.index.upsert(m, f.source)
                applied.append({"id": m.id, "from": it["current"], "to": "published", "by": by, "path": str(f.path)})
        from git_memex.git.sync import stage, staged_fields

        staged = stage(ctx, [Path(a.pop("path")) for a in applied], "the review steps") if applied else []
        out: dict[str, Any] = {"source": "git", "branch": ref.branch, "ref": ref.ref,
                               "pr": {"number": None, "url": None, "state": None, "review_decision": None},
                               "memories": items, "applied": applied, **staged_fields(staged)}
        if unseen:
            out["not_applied"] = unseen
        if note:
            out["note"] = note
        from git_memex.secrets.admission import mask_value

        return dict(mask_value(out, ctx.redact_patterns)[0])  # names and messages come from commits


def _as_merged(work: Path, rels: dict[str, str], found: dict[str, dict[str, Any]]) -> set[str]:
    """The ids whose work tree file is the blob the default branch holds, compared as git compares
    them (`gate.same_as_committed`: a checkout's line-end conversion is no change)."""
    from git_memex.agents.gate import same_as_committed

    files: dict[str, tuple[bytes, str]] = {}
    for mid, ev in found.items():
        try:
            files[rels[mid]] = ((work / rels[mid]).read_bytes(), ev["blob_id"])
        except OSError:
            continue
    same = same_as_committed(work, files)
    return {mid for mid in found if rels[mid] in same}


_INTO_RE = re.compile(r"\binto\s+'?\"?([^'\"\s]+)['\"]?\s*$")
"""The branch a merge commit's subject says it merged into: git's own "Merge branch 'x' into dev"
(git leaves it out for the branch it treats as the default), GitLab's "… into 'main'", Gitea's
"… from x into main"."""


def _merged_into(subject: str) -> str | None:
    m = _INTO_RE.search(subject)
    if m is None:
        return None
    target = m.group(1)
    for prefix in ("refs/heads/", "refs/remotes/origin/", "origin/"):
        target = target.removeprefix(prefix)
    return target


def _verdict(mid: str, cur: str, ev: dict[str, Any] | None, same: bool, branch: str) -> dict[str, Any]:
    """`target` ("published" or None), `action` (what was found, one phrase) and `merge`.

    Who proposed the memory comes from git, never from the file's own text (`proposed_by`,
    `created_by`: the branch being merged can write anything there): the authors of every commit
    that changed the file on the merged side (`merged_by_proposers`), and of each commit that
    added it. The merge commit's author is compared with them as one person is
    (`person.same_person`: case folded)."""
    def no(action: str) -> dict[str, Any]:
        return {"target": None, "action": action, "merge": None}

    if ev is None:
        return no(f"not on {branch} yet (as last fetched: `git fetch` brings a newer {branch})")
    if not same:
        return no(f"this work tree's file differs from the one on {branch}: pull (or commit) first")
    who = f"{ev['name']} <{ev['email']}>"
    if len(ev["parents"]) < 2:
        return no(f"reached {branch} in {ev['commit'][:10]} by {who} without a merge commit (a fast-forward, squash "
                  f"or direct push): git shows no review; a reviewer runs `git memex promote {mid}`")
    if not ev["brought"]:
        return no(f"changed in merge commit {ev['commit'][:10]} itself, not as the merged branch proposed it; a "
                  f"reviewer runs `git memex promote {mid}`")
    into = _merged_into(ev["subject"])
    if into is not None and into != branch:
        return no(f"merge commit {ev['commit'][:10]} by {who} says it merged into {into}, not {branch}; it reached "
                  f"{branch} later without a merge into it (a fast-forward or direct push): git shows no review for "
                  f"{branch}; a reviewer runs `git memex promote {mid}`")
    from git_memex.core.frontmatter import FrontmatterError, parse

    try:
        meta = parse(ev["blob"].decode("utf-8"))[0]
    except (UnicodeDecodeError, FrontmatterError, ValueError):
        return no(f"the file on {branch} cannot be read")
    if meta.get("review_state") == "rejected":
        return no("rejected by a human; a merge never overrides that")
    from git_memex.core.person import same_person

    if ev["proposers"] is None:
        return no(f"git could not say who proposed it on the branch merged in {ev['commit'][:10]}; a reviewer runs "
                  f"`git memex promote {mid}`")
    if any(same_person(ev["email"], e) or (not ev["email"] and same_person(ev["name"], n))
           for n, e in ev["proposers"]):
        return no(f"merged into {branch} by its own proposer ({who}) in {ev['commit'][:10]}: git shows no second "
                  f"person; a reviewer runs `git memex promote {mid}`")
    by = f"local:{ev['email'] or ev['name']}"
    return {"target": "published", "action": f"{cur} → published (merged into {branch} in {ev['commit'][:10]} by {who})",
            "merge": {"commit": ev["commit"], "author": who, "by": by}}


def _merges(work: Path, ref: str, rels: dict[str, str]) -> dict[str, dict[str, Any]]:
    """For each memory id whose file `rel` is on `ref`: the newest commit of `ref`'s first-parent
    history that changed it (`commit`, `parents`, author `name` and `email`, `subject`), the
    file's blob id (`blob_id`) and bytes (`blob`) on `ref`, whether that commit is a merge that
    brought the file as one of its other parents held it (`brought`), and for such a merge who
    proposed it (`proposers`: (name, email) of every author git shows for the file on the merged
    side, `_proposers`; None when git cannot say). Read with replace objects and grafts off
    (`TRUSTED_HISTORY`), through the one history parser (`gitcmd.log_changes`: paths as git
    holds them, whatever their characters)."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, log_changes

    by_rel = {rel: mid for mid, rel in rels.items()}
    newest: dict[str, dict[str, Any]] = {}
    todo = sorted(by_rel)
    for i in range(0, len(todo), 200):  # pathspecs in chunks: a command line has a limit
        log = log_changes(["--first-parent", ref, "--", *todo[i:i + 200]], work, fields=("%an", "%ae", "%s"),
                          timeout=120, env=TRUSTED_HISTORY)
        if log is None:
            raise MemexError(f"git could not read the history of {ref}; nothing was changed", FAILED)
        for commit, parents, (name, email, subject), changes in log:
            for status, blob, path in changes:
                if path in by_rel and path not in newest:
                    newest[path] = {"commit": commit, "parents": parents, "name": name, "email": email,
                                    "subject": subject, "blob_id": "" if status == "D" else blob}
    newest = {rel: ev for rel, ev in newest.items() if ev["blob_id"]}  # the newest change deleted it: not there
    if not newest:
        return {}
    specs: list[str] = []
    for rel, ev in newest.items():
        specs += [ev["blob_id"]] + [f"{p}:{rel}" for p in ev["parents"][1:]]
    blobs = _blobs(work, specs)
    out: dict[str, dict[str, Any]] = {}
    at = 0
    for rel, ev in newest.items():
        mine, others = blobs[at], blobs[at + 1:at + len(ev["parents"])]
        at += len(ev["parents"])
        if mine is None:
            continue
        brought = any(o == mine for o in others)
        proposers = _proposers(work, ev["commit"], ev["parents"], rel) if brought else []
        out[by_rel[rel]] = {**ev, "blob": mine, "brought": brought, "proposers": proposers}
    return out


def _proposers(work: Path, merge: str, parents: list[str], rel: str) -> list[tuple[str, str]] | None:
    """(name, email) of everyone git shows proposing `rel` in `merge`: the author of every commit
    that changed it on a merged side (``FIRST..OTHER``: what the default branch did not have), and
    of every commit in the merge's history that added it. None when git fails."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, log_changes

    found: list[tuple[str, str]] = []
    for args in [[other, f"^{parents[0]}", "--", rel] for other in parents[1:]] + [
            ["--diff-filter=A", merge, "--", rel]]:
        log = log_changes(args, work, fields=("%an", "%ae"), timeout=120, env=TRUSTED_HISTORY)
        if log is None:
            return None
        found += [(name, email) for _c, _p, (name, email), changes in log if changes]
    return list(dict.fromkeys(found))


def _blobs(work: Path, specs: list[str]) -> list[bytes | None]:
    """`git cat-file --batch` of each `commit:path` (None: no such blob), replace objects off."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, run_git

    proc = run_git(["cat-file", "--batch"], work, input="".join(s + "\n" for s in specs).encode("utf-8"),
                   timeout=60, env=TRUSTED_HISTORY)
    if proc is None or proc.returncode != 0:
        raise MemexError("git could not read the merged files; nothing was changed", FAILED)
    data, pos, got = proc.stdout, 0, []
    for _ in specs:
        end = data.find(b"\n", pos)
        header = data[pos:end].split() if end >= 0 else []
        pos = end + 1
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            got.append(data[pos:pos + size] if header[1] == b"blob" else None)
            pos += size + 1
        else:
            got.append(None)
    return got



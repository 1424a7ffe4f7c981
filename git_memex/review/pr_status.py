"""pr-status: map the current branch's GitHub pull request onto its memories' review states.

Reads the PR through the user's `gh`; reports by default, applies only when asked, never pushes.
"""

from __future__ import annotations

import json
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


def _gh(args: list[str], cwd: Path) -> dict[str, Any]:
    try:
        r = subprocess.run(["gh", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    except FileNotFoundError:
        raise MemexError("the GitHub CLI `gh` is not installed or not on PATH; install it and run `gh auth login`", FAILED) from None
    except subprocess.TimeoutExpired:
        raise MemexError("`gh` did not answer within two minutes; nothing was changed", FAILED) from None
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["unknown error"])[-1]
        if "no pull requests found" in r.stderr.lower():
            raise MemexError("this branch has no pull request; open one with the `gh pr create` command submit printed", FAILED)
        raise MemexError(f"`gh pr view` failed ({msg}); nothing was changed", FAILED)
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


def pr_status(ctx: Context, *, apply: bool = False, stores: Stores | None = None) -> dict[str, Any]:
    repo_info = ctx.require_repo("pr-status")
    pr = _gh(["pr", "view", "--json", "number,url,state,reviewDecision,reviews,files,mergedAt"], repo_info.work_tree)
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
        if apply:
            for it in items:
                if not it["target"]:
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
                applied.append({"id": m.id, "from": it["current"], "to": it["target"], "by": by})
        return {"pr": {"number": pr.get("number"), "url": pr.get("url"), "state": state, "review_decision": decision},
                "memories": items, "applied": applied}



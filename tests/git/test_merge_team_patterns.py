"""The merge driver under a real `git merge` masks a team's own secret format (memex.redactPattern)."""

from __future__ import annotations

from pathlib import Path

from test_merge_driver_git import BODY, REL, branches, memory, mrepo

from conftest import git

PATTERN = r"ACME-[A-Z0-9]{16}"
TOKEN = "ACME-7Q2W9E4R1T6Y3U8I"  # no built-in rule knows this format


# ------------------------------------------------------------------ the merge driver under real git
def test_a_real_git_merge_masks_a_team_secret_one_side_carried(repo: Path) -> None:
    work = mrepo.__wrapped__(repo)  # type: ignore[attr-defined]
    git("config", "--add", "memex.redactPattern", PATTERN, cwd=work)
    theirs = memory(BODY.replace("Rollbacks run in CI.", f"Rollbacks run in CI with {TOKEN}."), tags=["db", "ci"])
    branches(work, memory(tags=["db", "postgres", "sqitch"]), theirs)
    r = git("merge", "-q", "--no-edit", "feature", cwd=work, check=False)
    assert r.returncode == 0, r.stderr
    merged = (work / REL).read_text()
    assert TOKEN not in merged and "x" * len(TOKEN) in merged and "ACME" not in merged and "sqitch" in merged

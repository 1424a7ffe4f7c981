"""What a review command writes into the repository is staged whole, so a plain `git commit -m`
(no `-a`) records all of it (issue 32, item 4): real clones of a bare origin, hooks installed by
`init`, the real git binary.

The commands: `instruction approve` and `revoke` (the rule's file and its approval or revocation
record), `promote` and `status`/`forget` of a repository memory (the file). A teammate's clone then
pulls and gets exactly what was meant.
"""

from __future__ import annotations

import json
from pathlib import Path

from git_memex.core import frontmatter

from conftest import git, run_cli, two_clones

FOLDER = ".ai/open-memex"


def cli(*args: str, cwd: Path) -> dict:
    r = run_cli(*args, "--json", cwd=cwd)
    assert r.code == 0, r.err
    return r.json()


def served(cwd: Path) -> list[str]:
    return [i["id"] for i in cli("context", cwd=cwd)["instructions"]]


def unstaged(cwd: Path) -> list[str]:
    """Paths of the memory folder that a plain `git commit` would leave behind."""
    lines = git("status", "--porcelain", "--untracked-files=all", "--", FOLDER, cwd=cwd).stdout.splitlines()
    return [ln for ln in lines if ln[1] != " "]  # the work tree column: changed, deleted or untracked


def fm_on_main(cwd: Path, mid: str) -> dict:
    return frontmatter.parse(git("show", f"origin/main:{FOLDER}/{mid}.md", cwd=cwd).stdout)[0]


def submitted_rule(cwd: Path, text: str) -> str:
    mid = cli("add", text, "--role", "instruction", "--type", "workflow", cwd=cwd)["id"]
    assert run_cli("submit", mid, cwd=cwd).code == 0
    return mid


def plain_commit_and_push(cwd: Path, message: str) -> None:
    git("commit", "-q", "-m", message, cwd=cwd)  # no -a: only what the command staged
    git("push", "-q", "origin", "main", cwd=cwd)


def test_approve_then_a_plain_commit_serves_the_rule_in_a_teammates_clone(tmp_path: Path) -> None:
    mine, theirs = two_clones(tmp_path)
    mid = submitted_rule(mine, "Run make lint before pushing")
    git("push", "-q", "origin", "main", cwd=mine)
    r = run_cli("instruction", "approve", mid, cwd=mine)
    assert r.code == 0, r.err
    assert unstaged(mine) == []
    assert f"{FOLDER}/{mid}.md" in r.err and f"{FOLDER}/.approvals/{mid}.json" in r.err  # says what it staged
    plain_commit_and_push(mine, "approve the lint rule")
    assert served(mine) == [mid]
    listed = cli("instruction", "list", cwd=mine)["approved"]
    assert [(i["id"], i["served"]) for i in listed] == [(mid, True)]

    git("pull", "-q", "--ff-only", cwd=theirs)
    assert served(theirs) == [mid]
    assert fm_on_main(theirs, mid)["instruction_state"] == "approved"


def test_revoke_then_a_plain_commit_switches_the_rule_off_for_the_team(tmp_path: Path) -> None:
    mine, theirs = two_clones(tmp_path)
    mid = submitted_rule(mine, "Squash every pull request")
    assert run_cli("instruction", "approve", mid, cwd=mine).code == 0
    plain_commit_and_push(mine, "approve")
    git("pull", "-q", "--ff-only", cwd=theirs)
    assert served(theirs) == [mid]

    assert run_cli("instruction", "revoke", mid, "--note", "CI squashes now", cwd=mine).code == 0
    assert unstaged(mine) == []
    plain_commit_and_push(mine, "revoke")
    git("pull", "-q", "--ff-only", cwd=theirs)
    assert served(theirs) == []
    assert fm_on_main(theirs, mid)["instruction_state"] == "revoked"  # the file says so too, not only the record
    revoked = json.loads((theirs / FOLDER / ".approvals" / f"{mid}.revoked.json").read_text("utf-8"))
    assert revoked["id"] == mid


def test_promote_status_and_forget_stage_the_file_they_change(tmp_path: Path) -> None:
    mine, _theirs = two_clones(tmp_path)
    a = cli("add", "the nightly job prunes old artifacts", cwd=mine)["id"]
    b = cli("add", "staging runs on the second cluster", cwd=mine)["id"]
    c = cli("add", "the old dashboard lives on port 8080", cwd=mine)["id"]
    assert run_cli("submit", a, b, c, cwd=mine).code == 0
    git("push", "-q", "origin", "main", cwd=mine)

    assert run_cli("promote", a, cwd=mine).code == 0
    assert unstaged(mine) == []
    plain_commit_and_push(mine, "approve a")
    assert fm_on_main(mine, a)["review_state"] == "approved"

    assert run_cli("status", b, "deprecated", cwd=mine).code == 0
    assert run_cli("forget", c, cwd=mine).code == 0
    assert unstaged(mine) == []
    plain_commit_and_push(mine, "deprecate b, forget c")
    assert fm_on_main(mine, b)["status"] == "deprecated"
    assert git("cat-file", "-e", f"origin/main:{FOLDER}/{c}.md", cwd=mine, check=False).returncode != 0


def test_status_and_forget_say_what_they_staged(tmp_path: Path) -> None:
    mine, _theirs = two_clones(tmp_path)
    a = cli("add", "the build cache lives in /var/cache/ci", cwd=mine)["id"]
    b = cli("add", "the old VPN is still needed for the lab", cwd=mine)["id"]
    assert run_cli("submit", a, b, cwd=mine).code == 0
    r = run_cli("status", a, "deprecated", cwd=mine)
    assert r.code == 0 and f"staged for commit: {FOLDER}/{a}.md" in r.err, r.err
    assert cli("status", a, "archived", cwd=mine)["staged"] == [f"{FOLDER}/{a}.md"]
    r = run_cli("forget", b, cwd=mine)
    assert r.code == 0 and f"staged for commit: {FOLDER}/{b}.md" in r.err, r.err
    assert unstaged(mine) == []


def test_approve_stages_its_record_past_a_gitignore_rule(tmp_path: Path) -> None:
    """A `.gitignore` that ignores `*.json` would leave the approval record behind (the rule is then
    not served): approve stages it with `git add -f` and says so; the plain commit serves it."""
    mine, theirs = two_clones(tmp_path)
    (mine / ".gitignore").write_text("*.json\n")
    git("add", ".gitignore", cwd=mine)
    git("commit", "-qm", "ignore json", cwd=mine)
    mid = submitted_rule(mine, "Every API change updates the OpenAPI file")
    r = run_cli("instruction", "approve", mid, cwd=mine)
    assert r.code == 0, r.err
    assert f"a .gitignore rule ignores {FOLDER}/.approvals/{mid}.json" in r.err and "git add -f" in r.err
    out = cli("instruction", "approve", mid, cwd=mine)
    assert out["changed"] is False
    plain_commit_and_push(mine, "approve")
    assert served(mine) == [mid]
    git("pull", "-q", "--ff-only", cwd=theirs)
    assert served(theirs) == [mid]

"""`git memex resolve ID --ours|--theirs` (issue 32, item 6): under a real `git merge` with the
merge driver `init` registered, a conflicting memory file takes one side for each conflicting
field and body hunk and keeps both sides' other changes; `git add`/`git commit` (hooks installed)
then succeeds. `git checkout --theirs` would drop our side's merged fields; this keeps them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from git_memex.core import frontmatter

from conftest import git, run_cli

FOLDER = Path(".ai") / "open-memex"


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def edit(path: Path, body: str | None = None, **changes: object) -> None:
    meta, old = frontmatter.parse(path.read_text("utf-8"))
    for k, v in changes.items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    path.write_text(frontmatter.serialize(meta, old if body is None else body), encoding="utf-8")


def read(path: Path) -> tuple[dict, str]:
    return frontmatter.parse(path.read_text("utf-8"))


def conflicted(work: Path, *extra: str) -> tuple[str, Path]:
    """A submitted memory edited differently on `feature` and on main, merged: the driver reports a
    conflict (body line and `importance`), while tags, `confidence` and `aliases` merged cleanly."""
    mid = add("Use sqitch for migrations", "--tags", "db", *extra)
    assert run_cli("submit", mid).code == 0
    path = work / FOLDER / f"{mid}.md"
    git("checkout", "-q", "-b", "feature", cwd=work)
    edit(path, body="Use flyway for migrations\n", importance="high", tags=["db", "flyway"], confidence="high")
    git("commit", "-q", "-am", "theirs: flyway", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    edit(path, body="Use liquibase for migrations\n", importance="low", tags=["db", "java"], aliases=["schema changes"])
    git("commit", "-q", "-am", "ours: liquibase", cwd=work)
    merge = git("merge", "feature", "-m", "merge feature", cwd=work, check=False)
    assert merge.returncode != 0 and "CONFLICT" in merge.stdout
    assert "<<<<<<<" in path.read_text("utf-8")  # the driver wrote both sides, nothing lost
    return mid, path


def test_resolve_theirs_keeps_both_sides_merged_fields_and_the_commit_succeeds(ready: Path) -> None:
    mid, path = conflicted(ready)
    r = run_cli("resolve", mid, "--theirs")
    assert r.code == 0, r.err
    assert "theirs for" in r.out and "importance" in r.out and "body" in r.out
    meta, body = read(path)
    assert body.strip() == "Use flyway for migrations" and meta["importance"] == "high"  # their side
    assert set(meta["tags"]) == {"db", "flyway", "java"}  # both sides' tags
    assert meta["confidence"] == "high" and meta["aliases"] == ["schema changes"]  # theirs' and ours' own changes
    assert "<<<<<<<" not in path.read_text("utf-8")
    assert git("diff", "--name-only", "--diff-filter=U", cwd=ready).stdout == ""  # no conflict left in the index
    git("add", str(path), cwd=ready)
    commit = git("commit", "-q", "--no-edit", cwd=ready, check=False)  # the pre-commit hook checks the file
    assert commit.returncode == 0, commit.stderr
    committed = frontmatter.parse(git("show", f"HEAD:{FOLDER.as_posix()}/{mid}.md", cwd=ready).stdout)[0]
    assert committed["aliases"] == ["schema changes"] and committed["confidence"] == "high"
    assert len(git("log", "-1", "--format=%P", cwd=ready).stdout.split()) == 2  # a real merge commit
    hits = run_cli("search", "flyway", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [mid]  # the index follows the resolution


def test_resolve_ours_and_json(ready: Path) -> None:
    mid, path = conflicted(ready)
    r = run_cli("resolve", mid, "--ours", "--json")
    assert r.code == 0, r.err
    out = r.json()
    assert out["clean"] and out["side"] == "ours" and set(out["taken"]) == {"importance", "body"}
    meta, body = read(path)
    assert body.strip() == "Use liquibase for migrations" and meta["importance"] == "low"
    assert meta["confidence"] == "high" and set(meta["tags"]) == {"db", "flyway", "java"}
    assert git("commit", "-q", "--no-edit", cwd=ready, check=False).returncode == 0


def test_resolve_without_a_side_still_reports_and_names_the_sides(ready: Path) -> None:
    mid, path = conflicted(ready)
    before = path.read_bytes()
    r = run_cli("resolve", mid)
    assert r.code == 3 and f"resolve {FOLDER.as_posix()}/{mid}.md --ours" in r.out
    assert path.read_bytes() == before
    r = run_cli("resolve", "--theirs")
    assert r.code == 1 and "--theirs needs the ID" in r.err
    r = run_cli("resolve", mid, "--ours", "--theirs")
    assert r.code != 0 and path.read_bytes() == before


def test_a_side_that_deleted_the_memory_removes_it(ready: Path) -> None:
    mid = add("The cache warms up at boot")
    assert run_cli("submit", mid).code == 0
    rel = f"{FOLDER.as_posix()}/{mid}.md"
    git("checkout", "-q", "-b", "feature", cwd=ready)
    git("rm", "-q", rel, cwd=ready)
    git("commit", "-q", "-m", "theirs: forget it", cwd=ready)
    git("checkout", "-q", "main", cwd=ready)
    edit(ready / rel, body="The cache warms up at boot, in about 40 seconds\n")
    git("commit", "-q", "-am", "ours: more precise", cwd=ready)
    assert git("merge", "feature", "-m", "merge", cwd=ready, check=False).returncode != 0
    r = run_cli("resolve", mid)
    assert r.code == 3 and "--ours" in r.err
    r = run_cli("resolve", mid, "--theirs")
    assert r.code == 0 and "removed" in r.out, r.err
    assert not (ready / rel).exists()
    assert git("commit", "-q", "--no-edit", cwd=ready, check=False).returncode == 0
    assert git("cat-file", "-e", f"HEAD:{rel}", cwd=ready, check=False).returncode != 0


def test_a_side_that_would_not_pass_the_pre_commit_check_writes_nothing(ready: Path) -> None:
    mid, path = conflicted(ready)
    git("merge", "--abort", cwd=ready)
    git("checkout", "-q", "feature", cwd=ready)
    edit(path, scope="personal")  # their side: a personal memory, which never enters git
    git("commit", "-q", "--no-verify", "-am", "theirs: personal", cwd=ready)
    git("checkout", "-q", "main", cwd=ready)
    assert git("merge", "feature", "-m", "merge", cwd=ready, check=False).returncode != 0
    before = path.read_bytes()
    r = run_cli("resolve", mid, "--theirs")
    assert r.code == 3 and "pre-commit check" in r.err and "personal" in r.err, r.err
    assert path.read_bytes() == before
    assert git("diff", "--name-only", "--diff-filter=U", cwd=ready).stdout.strip()  # still conflicted
    r = run_cli("resolve", mid, "--ours")
    assert r.code == 0, r.err
    assert read(path)[0]["scope"] == "project"
    assert git("commit", "-q", "--no-edit", cwd=ready, check=False).returncode == 0


# ------------------------------------------------------------------ the agent's road: MCP memory_resolve
def test_an_agent_may_take_a_side_for_knowledge(ready: Path) -> None:
    from mcp_client import ok

    mid, path = conflicted(ready)
    out = ok("memory_resolve", {"target": mid, "side": "theirs"})
    assert out["clean"] and out["side"] == "theirs" and set(out["taken"]) == {"importance", "body"}
    meta, body = read(path)
    assert body.strip() == "Use flyway for migrations" and meta["aliases"] == ["schema changes"]
    assert git("commit", "-q", "--no-edit", cwd=ready, check=False).returncode == 0


def test_an_agent_takes_a_side_in_a_rule_only_with_the_person(ready: Path) -> None:
    from mcp_client import Person, err, ok

    mid = add("Run the migrations by hand", "--role", "instruction", "--type", "workflow")
    assert run_cli("submit", mid).code == 0
    assert run_cli("instruction", "approve", mid).code == 0
    git("commit", "-q", "-m", "approve", cwd=ready)
    path = ready / FOLDER / f"{mid}.md"
    git("checkout", "-q", "-b", "feature", cwd=ready)
    edit(path, body="Never run the migrations by hand\n", status="deprecated")  # their side switches it off
    git("commit", "-q", "-am", "theirs", cwd=ready)
    git("checkout", "-q", "main", cwd=ready)
    edit(path, body="Run the migrations by hand, after a backup\n")
    git("commit", "-q", "-am", "ours", cwd=ready)
    assert git("merge", "feature", "-m", "merge", cwd=ready, check=False).returncode != 0
    before = path.read_bytes()

    msg = err("memory_resolve", {"target": mid, "side": "theirs"})  # a client that cannot ask
    assert f"git memex resolve {FOLDER.as_posix()}/{mid}.md --theirs" in msg and "cannot ask the user" in msg
    assert path.read_bytes() == before
    no = Person(False)
    assert "did not confirm" in err("memory_resolve", {"target": mid, "side": "theirs"}, person=no)
    assert "Never run the migrations by hand" in no.asked[0] and "a rule" in no.asked[0]
    assert "status: deprecated" in no.asked[0]  # the person sees that the result switches it off
    assert path.read_bytes() == before

    out = ok("memory_resolve", {"target": mid, "side": "ours"}, person=Person(True))
    assert out["clean"] and out["side"] == "ours"
    assert read(path)[1].strip() == "Run the migrations by hand, after a backup"
    assert "Invalid arguments" in err("memory_resolve", {"side": "ours"})


def test_a_lifecycle_conflict_takes_the_whole_chain_from_one_side() -> None:
    from git_memex.git.merge import merge_texts

    fm = {"id": "01JHFQ8PMWKVX6KGZH2MXR6QJA", "schema_version": 2, "scope": "project", "type": "fact",
          "status": "active", "created_at": "2026-03-01T09:00:00Z", "updated_at": "2026-03-01T09:00:00Z"}
    base = frontmatter.serialize(fm, "The cache warms up at boot\n")
    ours = frontmatter.serialize({**fm, "status": "superseded", "superseded_by": "01JHFQ8PMWKVX6KGZH2MXR6QJB"},
                                 "The cache warms up at boot\n")
    theirs = frontmatter.serialize({**fm, "status": "deprecated", "tags": ["cache"]}, "The cache warms up at boot\n")
    assert not merge_texts(base, ours, theirs).clean
    got = merge_texts(base, ours, theirs, prefer="theirs")
    meta = frontmatter.parse(got.text)[0]
    assert got.clean and got.taken == ("status",)
    assert meta["status"] == "deprecated" and "superseded_by" not in meta  # not ours' link beside their status
    assert meta["tags"] == ["cache"]
    meta = frontmatter.parse(merge_texts(base, ours, theirs, prefer="ours").text)[0]
    assert meta["status"] == "superseded" and meta["superseded_by"] == "01JHFQ8PMWKVX6KGZH2MXR6QJB"
    assert meta["tags"] == ["cache"]


def test_a_file_against_a_symbolic_link_is_left_to_the_person(ready: Path) -> None:
    """Theirs replaced the memory file by a symbolic link while ours edited it: git records ours as
    `ID.md~HEAD`. Taking a side refuses (exit 3, one sentence naming that file) and changes nothing,
    rather than deleting the memory as if ours had deleted it."""
    mid = add("Cache keys include the tenant id")
    assert run_cli("submit", mid).code == 0
    path = ready / FOLDER / f"{mid}.md"
    git("checkout", "-q", "-b", "feature", cwd=ready)
    path.unlink()
    path.symlink_to("../../README.md")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "theirs: a link", cwd=ready)
    git("checkout", "-q", "main", cwd=ready)
    edit(path, body="Cache keys include the tenant id and the region\n")
    git("commit", "-q", "-am", "ours: the region", cwd=ready)
    merge = git("merge", "feature", "-m", "merge feature", cwd=ready, check=False)
    assert merge.returncode != 0
    moved = ready / FOLDER / f"{mid}.md~HEAD"
    assert moved.exists()
    before = git("ls-files", "-s", cwd=ready).stdout
    for side in ("--ours", "--theirs"):
        r = run_cli("resolve", mid, side)
        assert r.code == 3, r.out + r.err
        assert f"{mid}.md~HEAD" in r.err and "symbolic link" in r.err and "Traceback" not in r.err
        assert len(r.err.strip().splitlines()) == 1
    assert git("ls-files", "-s", cwd=ready).stdout == before  # nothing staged, nothing removed
    assert "the region" in moved.read_text("utf-8")


def test_two_approvals_on_parallel_branches_are_settled_not_committed_with_markers(tmp_path: Path) -> None:
    """Bob approves a rule and pushes; I approve it too and pull: the approval record conflicts
    (add/add). Committing it with its markers is refused by the pre-commit hook; `resolve` names
    the ways out and takes one approval whole; the rule is then served under that approval."""
    from conftest import two_clones

    mine, theirs = two_clones(tmp_path)
    r = run_cli("add", "Pin every CI action to a commit", "--role", "instruction", "--json", cwd=mine)
    mid = r.json()["id"]
    assert run_cli("submit", mid, cwd=mine).code == 0
    git("push", "-q", "origin", "main", cwd=mine)
    git("pull", "-q", "--ff-only", cwd=theirs)
    bob = {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com",
           "GIT_COMMITTER_NAME": "Bob", "GIT_COMMITTER_EMAIL": "bob@example.com"}
    assert run_cli("instruction", "approve", mid, cwd=theirs, env=bob).code == 0
    subprocess.run(["git", "commit", "-q", "-m", "approve (bob)"], cwd=theirs, check=True,
                   env={**os.environ, **bob})
    git("push", "-q", "origin", "main", cwd=theirs)
    assert run_cli("instruction", "approve", mid, cwd=mine).code == 0
    git("commit", "-q", "-m", "approve (me)", cwd=mine)
    assert git("pull", "-q", "--no-rebase", "origin", "main", cwd=mine, check=False).returncode != 0
    record = f"{FOLDER.as_posix()}/.approvals/{mid}.json"
    assert "<<<<<<<" in (mine / record).read_text("utf-8")

    md = f"{FOLDER.as_posix()}/{mid}.md"
    if md in [c["path"] for c in run_cli("resolve", "--json", cwd=mine).json()["conflicts"]]:
        assert run_cli("resolve", md, "--theirs", cwd=mine).code == 0
    git("add", record, cwd=mine)  # what a person tries first
    refused = git("commit", "-q", "--no-edit", cwd=mine, check=False)
    assert refused.returncode != 0 and "conflict markers in a rule's approval record" in refused.stderr, refused.stderr
    git("checkout", "-m", "--", record, cwd=mine)  # back to the conflict

    listed = run_cli("resolve", "--json", cwd=mine).json()
    assert record in [c["path"] for c in listed["conflicts"]]
    r = run_cli("resolve", record, cwd=mine)
    assert r.code == 3 and "--ours" in r.err and "approve the rule again" in r.err and "Traceback" not in r.err
    r = run_cli("resolve", record, "--theirs", cwd=mine)
    assert r.code == 0, r.err
    assert json.loads((mine / record).read_text("utf-8"))["approver"]["email"] == "bob@example.com"
    assert run_cli("resolve", "--json", cwd=mine).json()["conflicts"] == []
    git("commit", "-q", "--no-edit", cwd=mine)
    git("push", "-q", "origin", "main", cwd=mine)
    served = [i["id"] for i in run_cli("context", "--json", cwd=mine).json()["instructions"]]
    assert served == [mid]

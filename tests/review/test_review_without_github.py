"""The review loop without GitHub (issue 32, item 5): two clones and a bare origin, no `gh` on
PATH. The author submits and pushes a branch; the maintainer, in a plain clone that never ran
`git memex init` (as a hosting site's merge button or GitLab/Gitea would), merges it with plain
git and pushes; the author runs `pr-status --apply` and the memory is published with the
maintainer, the merge commit's author, as the reviewer. What git cannot prove (a fast-forward, a
squash, a self-merge, a merge that changed the file) is reported and never published.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memex.core import frontmatter

from conftest import run_cli

FOLDER = ".ai/open-memex"


def person(name: str, email: str) -> dict[str, str]:
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email}


ADA = person("Ada Lovelace", "ada@example.com")  # the author
BOB = person("Bob Maintainer", "bob@example.com")  # the maintainer


def git(*args: str, cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check,
                          env={**os.environ, **env})


def cli(*args: str, cwd: Path, env: dict[str, str] = ADA) -> dict:
    r = run_cli(*args, "--json", cwd=cwd, env=env)
    assert r.code == 0, r.err
    return r.json()


def path_without_gh(tmp_path: Path) -> str:
    """PATH as it is, except that a folder holding `gh` is replaced by a copy of links to everything
    else in it: no `gh` at all, whatever the machine has installed."""
    out = []
    for i, folder in enumerate(os.environ["PATH"].split(os.pathsep)):
        if not folder or not (Path(folder) / "gh").exists():
            out.append(folder)
            continue
        shadow = tmp_path / f"path-{i}"
        shadow.mkdir()
        for entry in Path(folder).iterdir():
            if entry.name != "gh":
                (shadow / entry.name).symlink_to(entry)
        out.append(str(shadow))
    return os.pathsep.join(out)


@pytest.fixture
def no_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_without_gh(tmp_path))
    assert shutil.which("gh") is None


def team(tmp_path: Path, folder: str | None = None) -> tuple[Path, Path]:
    """(author, maintainer): the author's clone set up by `git memex init` (hooks, driver), its
    set-up pushed; the maintainer's a plain clone of the bare origin, never `init`-ed. `folder`:
    the memory folder (`memex.memoryDir`, committed in `.gitmemex`)."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path, env=ADA)
    author, maintainer = tmp_path / "ada", tmp_path / "bob"
    git("clone", "-q", str(bare), str(author), cwd=tmp_path, env=ADA)
    (author / "README.md").write_text("the service\n")
    git("add", "README.md", cwd=author, env=ADA)
    git("commit", "-qm", "init", cwd=author, env=ADA)
    if folder is not None:
        assert run_cli("config", "set", "memex.memoryDir", folder, cwd=author, env=ADA).code == 0
    assert run_cli("init", "--yes", cwd=author, env=ADA).code == 0
    git("add", "-A", cwd=author, env=ADA)
    git("commit", "-qm", "set up git-memex", cwd=author, env=ADA)
    git("push", "-q", "-u", "origin", "main", cwd=author, env=ADA)
    git("clone", "-q", str(bare), str(maintainer), cwd=tmp_path, env=BOB)
    assert not (maintainer / ".git" / "hooks" / "pre-commit").exists()  # no git-memex there
    return author, maintainer


def proposed_on_a_branch(author: Path, text: str, branch: str) -> str:
    """A memory added, submitted on `branch` and that branch pushed (the author is back on main)."""
    mid = cli("add", text, "--type", "decision", cwd=author)["id"]
    r = run_cli("submit", mid, "--branch", branch, cwd=author, env=ADA)
    assert r.code == 0, r.err
    git("push", "-q", "-u", "origin", branch, cwd=author, env=ADA)
    git("checkout", "-q", "main", cwd=author, env=ADA)
    return mid


def maintainer_merges(maintainer: Path, branch: str, *how: str) -> str:
    """The maintainer merges origin's `branch` into main with plain git (`how`: git merge's options)
    and pushes; returns the new main."""
    git("fetch", "-q", "origin", cwd=maintainer, env=BOB)
    git("checkout", "-q", "main", cwd=maintainer, env=BOB)
    git("pull", "-q", "--ff-only", cwd=maintainer, env=BOB)
    git("merge", "-q", *how, f"origin/{branch}", "-m", f"Merge branch '{branch}'", cwd=maintainer, env=BOB)
    git("push", "-q", "origin", "main", cwd=maintainer, env=BOB)
    return git("rev-parse", "HEAD", cwd=maintainer, env=BOB).stdout.strip()


def fm(work: Path, mid: str) -> dict:
    return frontmatter.parse((work / FOLDER / f"{mid}.md").read_text("utf-8"))[0]


def test_the_review_loop_without_github(tmp_path: Path, no_gh: None) -> None:
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "We deploy with blue-green on Fridays", "memex/deploys")
    merge = maintainer_merges(maintainer, "memex/deploys", "--no-ff")
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    assert fm(author, mid)["review_state"] == "proposed"

    report = cli("pr-status", cwd=author)
    assert report["source"] == "git" and report["branch"] == "main" and "gh" in report["note"]
    (item,) = [m for m in report["memories"] if m["id"] == mid]
    assert item["target"] == "published" and item["merge"]["commit"] == merge
    assert "Bob Maintainer <bob@example.com>" in item["action"]
    assert fm(author, mid)["review_state"] == "proposed"  # a report changes nothing

    r = run_cli("pr-status", "--apply", cwd=author, env=ADA)
    assert r.code == 0, r.err
    assert f"applied {mid}: proposed → published (by local:bob@example.com)" in r.out
    got = fm(author, mid)
    assert got["review_state"] == "published" and got["approved_by"] == "local:bob@example.com"
    steps = [(h["from"], h["to"], h["by"]) for h in got["review_history"]]
    assert steps[-2:] == [("proposed", "approved", "local:bob@example.com"),
                          ("approved", "published", "local:bob@example.com")]
    assert merge[:10] in got["review_history"][-1]["note"]
    assert got["trust_level"] != "trusted" and got.get("instruction_state") in (None, "draft")

    # staged: a plain commit records it, and the team sees it
    git("commit", "-q", "-m", "publish the deploy decision", cwd=author, env=ADA)
    assert git("status", "--porcelain", cwd=author, env=ADA).stdout == ""
    git("push", "-q", "origin", "main", cwd=author, env=ADA)
    git("pull", "-q", "--ff-only", cwd=maintainer, env=BOB)
    assert fm(maintainer, mid)["review_state"] == "published"
    hits = cli("search", "blue-green", cwd=author)["hits"]
    assert [(h["id"], h["review_state"]) for h in hits] == [(mid, "published")]
    assert cli("pr-status", "--apply", cwd=author)["applied"] == []  # nothing left to do


@pytest.mark.parametrize("how", ["fast-forward", "squash"])
def test_what_reached_main_without_a_merge_commit_is_reported_not_published(
        tmp_path: Path, no_gh: None, how: str) -> None:
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Retries use exponential backoff with jitter", "memex/retries")
    if how == "fast-forward":
        maintainer_merges(maintainer, "memex/retries", "--ff-only")
    else:
        git("fetch", "-q", "origin", cwd=maintainer, env=BOB)
        git("merge", "-q", "--squash", "origin/memex/retries", cwd=maintainer, env=BOB)
        git("commit", "-q", "-m", "Squashed memex/retries", cwd=maintainer, env=BOB)
        git("push", "-q", "origin", "main", cwd=maintainer, env=BOB)
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    out = cli("pr-status", "--apply", cwd=author)
    (item,) = [m for m in out["memories"] if m["id"] == mid]
    assert item["target"] is None and "without a merge commit" in item["action"]
    assert f"git memex promote {mid}" in item["action"]
    assert out["applied"] == [] and fm(author, mid)["review_state"] == "proposed"


def test_a_self_merge_or_a_merge_that_changed_the_file_is_no_review(tmp_path: Path, no_gh: None) -> None:
    author, maintainer = team(tmp_path)
    mine = proposed_on_a_branch(author, "The cache is warmed at boot", "memex/cache")
    git("merge", "-q", "--no-ff", "memex/cache", "-m", "merge my own branch", cwd=author, env=ADA)
    git("push", "-q", "origin", "main", cwd=author, env=ADA)
    edited = proposed_on_a_branch(author, "Logs are kept for 14 days", "memex/logs")
    git("fetch", "-q", "origin", cwd=maintainer, env=BOB)
    git("pull", "-q", "--ff-only", cwd=maintainer, env=BOB)
    git("merge", "-q", "--no-ff", "--no-commit", "origin/memex/logs", cwd=maintainer, env=BOB)
    path = maintainer / FOLDER / f"{edited}.md"
    path.write_text(path.read_text("utf-8").replace("14 days", "90 days"), encoding="utf-8")
    git("add", str(path), cwd=maintainer, env=BOB)
    git("commit", "-q", "-m", "merge, with a change", cwd=maintainer, env=BOB)
    git("push", "-q", "origin", "main", cwd=maintainer, env=BOB)
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    out = cli("pr-status", "--apply", cwd=author)
    items = {m["id"]: m for m in out["memories"]}
    assert items[mine]["target"] is None and "own proposer" in items[mine]["action"]
    assert items[edited]["target"] is None and "changed in merge commit" in items[edited]["action"]
    assert out["applied"] == []


def test_only_what_was_fetched_and_is_in_the_work_tree_as_merged_counts(tmp_path: Path, no_gh: None) -> None:
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Feature flags live in LaunchDarkly", "memex/flags")
    git("checkout", "-q", "memex/flags", cwd=author, env=ADA)  # the author is still on the proposed branch
    maintainer_merges(maintainer, "memex/flags", "--no-ff")

    def item() -> dict:
        (it,) = [m for m in cli("pr-status", cwd=author)["memories"] if m["id"] == mid]
        return it

    first = item()  # origin/main as last fetched does not hold it yet
    assert first["target"] is None and "not on main yet" in first["action"] and "git fetch" in first["action"]
    git("fetch", "-q", "origin", cwd=author, env=ADA)
    assert item()["target"] == "published"  # the branch's file is the merged one, byte for byte
    path = author / FOLDER / f"{mid}.md"
    path.write_text(path.read_text("utf-8").replace("LaunchDarkly", "Unleash"), encoding="utf-8")
    later = item()
    assert later["target"] is None and "differs from the one on main" in later["action"]


def test_gh_that_finds_no_pull_request_leaves_it_to_git(tmp_path: Path, no_gh: None) -> None:
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Migrations run before the deploy", "memex/migrations")
    maintainer_merges(maintainer, "memex/migrations", "--no-ff")
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    bindir = tmp_path / "fake-gh"
    bindir.mkdir()
    gh = bindir / "gh"
    gh.write_text("#!/bin/sh\necho 'no pull requests found for branch \"main\"' >&2\nexit 1\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    env = {**ADA, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    r = run_cli("pr-status", "--apply", "--json", cwd=author, env=env)
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["source"] == "git" and "no pull request" in out["note"]
    assert [a["id"] for a in out["applied"]] == [mid]


def test_an_agent_applies_git_s_merges_only_with_the_person(tmp_path: Path, no_gh: None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_client import Person, call, err, text

    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Every service exposes /healthz", "memex/health")
    maintainer_merges(maintainer, "memex/health", "--no-ff")
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    for k, v in ADA.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(author)
    report = call("memory_pr_status", {}, cwd=author)
    assert not report.is_error and "published" in text(report) and "bob@example.com" in text(report)
    msg = err("memory_pr_status", {"apply": True})  # a client that cannot ask the person
    assert "git memex pr-status --apply" in msg and fm(author, mid)["review_state"] == "proposed"
    assert "Unknown argument" in err("memory_pr_status", {"apply": True, "by": "local:ada@example.com"})
    yes = Person(True)
    done = call("memory_pr_status", {"apply": True}, cwd=author, person=yes)
    assert not done.is_error, text(done)
    assert "Bob Maintainer" in yes.asked[0]
    got = fm(author, mid)
    assert got["review_state"] == "published" and got["approved_by"] == "local:bob@example.com"  # from git, not the agent


def item_of(author: Path, mid: str) -> dict:
    (it,) = [m for m in cli("pr-status", cwd=author)["memories"] if m["id"] == mid]
    return it


@pytest.mark.parametrize("how", ["proposed_by deleted", "e-mail in capitals"])
def test_the_proposer_comes_from_git_not_from_the_file(tmp_path: Path, no_gh: None, how: str) -> None:
    """A proposer who merges their own memory is no review, whatever the file says about who
    proposed it (the branch may delete or rewrite `proposed_by`/`created_by`) and however the
    merge commit spells their e-mail."""
    author, _maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Releases are cut on Tuesdays", "memex/releases")
    env = ADA
    if how == "proposed_by deleted":
        git("checkout", "-q", "memex/releases", cwd=author, env=ADA)
        path = author / FOLDER / f"{mid}.md"
        meta, body = frontmatter.parse(path.read_text("utf-8"))
        meta.pop("proposed_by", None)
        meta.pop("created_by", None)
        path.write_text(frontmatter.serialize(meta, body), encoding="utf-8")
        git("commit", "-qam", "tidy the frontmatter", cwd=author, env=ADA)
        git("checkout", "-q", "main", cwd=author, env=ADA)
    else:
        env = {**ADA, "GIT_AUTHOR_EMAIL": "ADA@Example.COM", "GIT_COMMITTER_EMAIL": "ADA@Example.COM"}
    git("merge", "-q", "--no-ff", "memex/releases", "-m", "Merge branch 'memex/releases'", cwd=author, env=env)
    git("push", "-q", "origin", "main", cwd=author, env=ADA)
    it = item_of(author, mid)
    assert it["target"] is None and "own proposer" in it["action"], it["action"]
    assert cli("pr-status", "--apply", cwd=author)["applied"] == []


def test_a_merge_into_another_branch_fast_forwarded_into_main_is_no_review(tmp_path: Path, no_gh: None) -> None:
    """The maintainer merges the proposal into `dev` (git's message: "Merge branch … into dev");
    the author then fast-forwards main to dev and pushes: nobody merged it into main."""
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Database backups run nightly", "memex/backups")
    git("fetch", "-q", "origin", cwd=maintainer, env=BOB)
    git("checkout", "-q", "-b", "dev", "origin/main", cwd=maintainer, env=BOB)
    git("merge", "-q", "--no-ff", "--no-edit", "origin/memex/backups", cwd=maintainer, env=BOB)
    assert "into dev" in git("log", "-1", "--format=%s", cwd=maintainer, env=BOB).stdout
    git("push", "-q", "origin", "dev", cwd=maintainer, env=BOB)
    git("fetch", "-q", "origin", cwd=author, env=ADA)
    git("merge", "-q", "--ff-only", "origin/dev", cwd=author, env=ADA)
    git("push", "-q", "origin", "main", cwd=author, env=ADA)
    it = item_of(author, mid)
    assert it["target"] is None and "merged into dev, not main" in it["action"], it["action"]


def test_a_memory_folder_with_a_non_ascii_name_is_followed(tmp_path: Path, no_gh: None) -> None:
    """`memex.memoryDir = mémoire`: git quotes such paths unless asked not to; the merge is found."""
    author, maintainer = team(tmp_path, folder="mémoire")
    mid = proposed_on_a_branch(author, "Runbooks live in the wiki", "memex/runbooks")
    maintainer_merges(maintainer, "memex/runbooks", "--no-ff")
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    assert (author / "mémoire" / f"{mid}.md").exists()
    it = item_of(author, mid)
    assert it["target"] == "published", it["action"]


def test_an_author_name_with_a_unicode_line_separator_is_one_name(tmp_path: Path, no_gh: None) -> None:
    """git output is read by NUL (and line feed) only: a U+2028 in the merger's name is part of it."""
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Alerts page the on-call engineer", "memex/alerts")
    odd = {**BOB, "GIT_AUTHOR_NAME": "Bob\u2028Maintainer"}
    git("fetch", "-q", "origin", cwd=maintainer, env=odd)
    git("merge", "-q", "--no-ff", "origin/memex/alerts", "-m", "Merge branch 'memex/alerts'", cwd=maintainer, env=odd)
    git("push", "-q", "origin", "main", cwd=maintainer, env=odd)
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    it = item_of(author, mid)
    assert it["target"] == "published" and it["merge"]["by"] == "local:bob@example.com", it["action"]


def test_a_checkout_with_crlf_line_ends_is_the_merged_file(tmp_path: Path, no_gh: None) -> None:
    """`core.autocrlf=true` writes CRLF into the work tree; git reads that file as unchanged, and
    so does pr-status."""
    author, maintainer = team(tmp_path)
    mid = proposed_on_a_branch(author, "Timeouts are 30 seconds by default", "memex/timeouts")
    maintainer_merges(maintainer, "memex/timeouts", "--no-ff")
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    git("config", "core.autocrlf", "true", cwd=author, env=ADA)
    path = author / FOLDER / f"{mid}.md"
    path.unlink()
    git("checkout", "--", str(path), cwd=author, env=ADA)
    assert b"\r\n" in path.read_bytes()
    assert git("status", "--porcelain", cwd=author, env=ADA).stdout == ""
    it = item_of(author, mid)
    assert it["target"] == "published", it["action"]


def test_an_agent_applies_exactly_the_steps_the_person_was_shown(tmp_path: Path, no_gh: None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """While the person reads the question (K1 published), a second merge arrives and is pulled
    (K2): the answer applies K1 only, and K2 is reported as not shown."""
    from mcp_client import Person, call, text

    author, maintainer = team(tmp_path)
    k1 = proposed_on_a_branch(author, "Every service has a runbook", "memex/one")
    k2 = proposed_on_a_branch(author, "Every runbook names an owner", "memex/two")
    maintainer_merges(maintainer, "memex/one", "--no-ff")
    git("pull", "-q", "--ff-only", cwd=author, env=ADA)
    for k, v in ADA.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(author)

    class Meanwhile(Person):
        async def __call__(self, context: Any, params: Any) -> Any:
            maintainer_merges(maintainer, "memex/two", "--no-ff")
            git("pull", "-q", "--ff-only", cwd=author, env=ADA)
            return await super().__call__(context, params)

    yes = Meanwhile(True)
    done = call("memory_pr_status", {"apply": True}, cwd=author, person=yes)
    assert not done.is_error, text(done)
    assert k1 in yes.asked[0] and k2 not in yes.asked[0]
    assert fm(author, k1)["review_state"] == "published"
    assert fm(author, k2)["review_state"] == "proposed"
    data = done.structured_content
    assert [a["id"] for a in data["applied"]] == [k1] and data["not_applied"] == [k2]
    assert f"not applied {k2}" in text(done)


def test_a_default_branch_renamed_on_origin_without_an_origin_head_says_so(tmp_path: Path, no_gh: None) -> None:
    """A clone of an empty origin has no origin/HEAD, so the branch comes from `memex.initBranch`
    (main); main renamed on origin and pruned here: `instruction list` says that ref does not exist
    and names `git remote set-head origin -a`."""
    author, _maintainer = team(tmp_path)
    rule = cli("add", "Every hotfix gets a follow-up ticket", "--role", "instruction", cwd=author)["id"]
    assert run_cli("submit", rule, cwd=author, env=ADA).code == 0
    assert run_cli("instruction", "approve", rule, cwd=author, env=ADA).code == 0
    git("commit", "-qm", "approve", cwd=author, env=ADA)
    git("push", "-q", "origin", "main", cwd=author, env=ADA)
    bare = tmp_path / "origin.git"
    git("branch", "-m", "main", "trunk", cwd=bare, env=ADA)
    git("symbolic-ref", "HEAD", "refs/heads/trunk", cwd=bare, env=ADA)
    git("fetch", "-q", "--prune", "origin", cwd=author, env=ADA)
    (listed,) = cli("instruction", "list", cwd=author)["approved"]
    assert "refs/remotes/origin/main does not exist here" in listed["why_not"], listed
    assert "git remote set-head origin -a" in listed["why_not"]


def test_a_default_branch_renamed_on_origin_is_named_with_its_fix(tmp_path: Path, no_gh: None) -> None:
    """origin's main renamed to trunk, then `git fetch --prune`: origin/HEAD still names main, which
    is gone. Every reader says so and names `git remote set-head origin -a` (instruction list, the
    session block, pr-status, doctor), instead of "not committed as it is on main" or an empty
    block; after it, the rule is served from trunk."""
    author, _maintainer = team(tmp_path)
    git("remote", "set-head", "origin", "-a", cwd=author, env=ADA)  # as a clone of a non-empty origin has it
    rule = cli("add", "Every release has a changelog entry", "--role", "instruction", cwd=author)["id"]
    assert run_cli("submit", rule, cwd=author, env=ADA).code == 0
    assert run_cli("instruction", "approve", rule, cwd=author, env=ADA).code == 0
    git("commit", "-qm", "approve", cwd=author, env=ADA)
    git("push", "-q", "origin", "main", cwd=author, env=ADA)
    assert [i["id"] for i in cli("context", cwd=author)["instructions"]] == [rule]

    bare = tmp_path / "origin.git"
    git("branch", "-m", "main", "trunk", cwd=bare, env=ADA)
    git("symbolic-ref", "HEAD", "refs/heads/trunk", cwd=bare, env=ADA)
    git("fetch", "-q", "--prune", "origin", cwd=author, env=ADA)
    assert not (author / ".git" / "refs" / "remotes" / "origin" / "main").exists()

    (listed,) = cli("instruction", "list", cwd=author)["approved"]
    assert not listed["served"] and "git remote set-head origin -a" in listed["why_not"], listed
    assert "not committed" not in listed["why_not"]
    block = cli("context", cwd=author)
    assert block["instructions"] == [] and "git remote set-head origin -a" in block["text"]
    r = run_cli("pr-status", cwd=author, env=ADA)
    assert r.code == 2 and "git remote set-head origin -a" in r.err and "could not read" not in r.err, r.err
    doctor = run_cli("doctor", "--json", cwd=author, env=ADA).json()
    (check,) = [c for c in doctor["checks"] if c["name"] == "default branch"]
    assert check["level"] == "fail" and "set-head" in check["detail"]

    git("remote", "set-head", "origin", "-a", cwd=author, env=ADA)
    assert [i["id"] for i in cli("context", cwd=author)["instructions"]] == [rule]
    doctor = run_cli("doctor", "--json", cwd=author, env=ADA).json()
    (check,) = [c for c in doctor["checks"] if c["name"] == "default branch"]
    assert check["level"] == "ok" and "trunk" in check["detail"]


def test_doctor_names_a_default_branch_set_here_that_is_not_init_s(tmp_path: Path) -> None:
    """A clone of an empty origin has no origin/HEAD; a `memex.defaultBranch` set in this clone then
    decides which rules are served. doctor says so, naming both branches and the fix."""
    bare = tmp_path / "empty.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path, env=ADA)
    work = tmp_path / "work"
    git("clone", "-q", str(bare), str(work), cwd=tmp_path, env=ADA)
    (work / "README.md").write_text("x\n")
    git("add", "README.md", cwd=work, env=ADA)
    git("commit", "-qm", "init", cwd=work, env=ADA)
    assert run_cli("init", "--yes", cwd=work, env=ADA).code == 0
    git("add", "-A", cwd=work, env=ADA)
    git("commit", "-qm", "set up", cwd=work, env=ADA)
    git("push", "-q", "-u", "origin", "main", cwd=work, env=ADA)
    assert not (work / ".git" / "refs" / "remotes" / "origin" / "HEAD").exists()

    def check() -> dict:
        (c,) = [c for c in run_cli("doctor", "--json", cwd=work, env=ADA).json()["checks"]
                if c["name"] == "default branch"]
        return c

    first = check()
    assert first["level"] == "warn" and "origin has no HEAD" in first["detail"] and "set-head" in first["detail"]
    git("config", "memex.defaultBranch", "exp", cwd=work, env=ADA)
    later = check()
    assert later["level"] == "warn" and "exp (memex.defaultBranch), not from main" in later["detail"], later

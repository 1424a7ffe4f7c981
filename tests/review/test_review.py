"""Team review with real repositories: propose, submit, promote, sync-status, pr-status, log, distill."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from git_memex.core import frontmatter

from conftest import git, run_cli, run_cli_process
from mcp_client import err

MEM = ".ai/open-memex"


def add(*args: str, **kw) -> str:
    r = run_cli("add", *args, "--json", **kw)
    assert r.code == 0, r.err
    return r.json()["id"]


def outbox_files(isolated_env: Path) -> list[Path]:
    return sorted((isolated_env / "data" / "memories" / "outbox").rglob("*.md"))


def fm_of(path: Path) -> dict:
    return frontmatter.parse(path.read_text())[0]


# ------------------------------------------------------------------ propose
def test_propose_copies_personal_memory_into_the_outbox(ready: Path, isolated_env: Path):
    p = add("the retry budget for flaky network tests is three", "--scope", "personal", "--tags", "testing")
    r = run_cli("propose", p, "--json")
    assert r.code == 0, r.err
    (item,) = r.json()["proposed"]
    assert item["source"] == p and item["id"] != p and item["review_state"] == "draft"
    (draft,) = outbox_files(isolated_env)
    fm = fm_of(draft)
    assert fm["derived_from"] == p and fm["proposed_by"] == "local:test@example.com"
    assert fm["visibility"] == "internal" and fm["scope"] == "project" and fm["tags"] == ["testing"]
    assert run_cli("show", p, "--json").json()["frontmatter"]["scope"] == "personal"  # original stays
    again = run_cli("propose", p, "--json").json()["proposed"][0]
    assert again["id"] == item["id"] and again["existing"] is True
    assert len(outbox_files(isolated_env)) == 1


def test_propose_is_all_or_nothing(ready: Path, isolated_env: Path):
    p = add("personal note one about vim", "--scope", "personal")
    r = run_cli("propose", p, "01JZZZZZZZZZZZZZZZZZZZZZZZ")
    assert r.code == 1 and "no memory" in r.err
    assert outbox_files(isolated_env) == []
    proj = add("a project draft, not personal")
    r = run_cli("propose", p, proj)
    assert r.code == 1 and "not a personal memory" in r.err
    assert [f.stem for f in outbox_files(isolated_env)] == [proj]


def test_propose_local_approve(ready: Path, isolated_env: Path):
    p = add("solo projects skip the PR", "--scope", "personal")
    item = run_cli("propose", p, "--local-approve", "--json").json()["proposed"][0]
    assert item["review_state"] == "approved"
    fm = fm_of(outbox_files(isolated_env)[0])
    assert fm["approved_by"] == "local:test@example.com"
    assert fm["review_history"][-1]["to"] == "approved"


# ------------------------------------------------------------------ submit
def test_submit_commits_only_memory_files_and_leaves_other_changes(ready: Path, isolated_env: Path):
    d1 = add("the payments service retries webhooks five times")
    d2 = add("staging uses a separate stripe account")
    (ready / "staged.txt").write_text("staged\n")
    git("add", "staged.txt", cwd=ready)
    (ready / "README.md").write_text("demo\nunstaged edit\n")
    status_before = git("status", "--porcelain", cwd=ready).stdout
    r = run_cli("submit", d1, d2, "--json")
    assert r.code == 0, r.err
    res = r.json()
    assert res["committed"] and {s["id"] for s in res["submitted"]} == {d1, d2}
    assert all(s["review_state"] == "proposed" for s in res["submitted"])
    assert res["push_command"] == "" and "git remote add origin URL" in res["note"]  # no remote yet
    # committed onto main itself: no pull request from main into main
    assert res["pr_command"] == "" and "--branch" in res["note"]
    changed = git("show", "--name-only", "--format=", "HEAD", cwd=ready).stdout.split()
    assert sorted(changed) == sorted([f"{MEM}/{d1}.md", f"{MEM}/{d2}.md"])
    # the user's staged and unstaged work is exactly as it was
    assert git("status", "--porcelain", cwd=ready).stdout == status_before.replace(f"?? {MEM}/\n", "")
    assert "A  staged.txt" in git("status", "--porcelain", cwd=ready).stdout
    assert " M README.md" in git("status", "--porcelain", cwd=ready).stdout
    assert outbox_files(isolated_env) == []
    fm = fm_of(ready / MEM / f"{d1}.md")
    assert fm["review_state"] == "proposed" and fm["review_history"][-1]["from"] == "draft"
    hits = run_cli("search", "payments webhooks", "--json").json()["hits"]
    assert hits[0]["id"] == d1 and hits[0]["location"] == "repo"
    # idempotent
    again = run_cli("submit", d1, "--json").json()
    assert again["committed"] is False and again["skipped_identical"] == [d1]


def test_submit_keeps_approved_and_refuses_personal_and_private(ready: Path, isolated_env: Path):
    p = add("only mine", "--scope", "personal")
    r = run_cli("submit", p)
    assert r.code == 1 and "personal memory and never enters a repository" in r.err
    q = add("our vpn password rotates monthly", "--visibility", "private")
    r = run_cli("submit", q)
    assert r.code == 1 and "private" in r.err
    p2 = add("solo approved thing about caching layers", "--scope", "personal")
    a = run_cli("propose", p2, "--local-approve", "--json").json()["proposed"][0]["id"]
    res = run_cli("submit", a, "--json").json()
    assert res["submitted"][0]["review_state"] == "approved"
    assert git("rev-list", "--count", "HEAD", cwd=ready).stdout.strip() == "3"


def test_submit_refuses_a_secret_in_a_hand_edited_draft(ready: Path, isolated_env: Path):
    d = add("deploys need the release token")
    (draft,) = outbox_files(isolated_env)
    draft.write_text(draft.read_text().replace("release token", "release token glpat-abcdefghij0123456789"))
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    r = run_cli("submit", d)
    assert r.code == 2 and "gitlab" in r.err and "glpat-abcdefghij" not in r.err
    assert git("rev-parse", "HEAD", cwd=ready).stdout == head
    assert draft.exists()


def test_submit_aborts_on_same_id_with_different_content(ready: Path, isolated_env: Path):
    d = add("the cdn purges on every release")
    (draft,) = outbox_files(isolated_env)
    other = draft.read_text().replace("every release", "every hour")
    (ready / MEM / f"{d}.md").write_text(other)
    git("add", "-A", cwd=ready)
    git("commit", "-q", "-m", "someone else's version", cwd=ready)
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    r = run_cli("submit", d)
    assert r.code == 2 and "different content" in r.err
    assert git("rev-parse", "HEAD", cwd=ready).stdout == head
    assert draft.exists()


def test_submit_on_a_new_branch_with_suffix_on_clash(ready: Path, isolated_env: Path):
    git("branch", "memex/review", cwd=ready)
    d = add("feature toggles are read at startup only")
    res = run_cli("submit", d, "--branch", "memex/review", "--json").json()
    assert res["branch"] == "memex/review-2" and res["checkout"] == "main"
    assert git("symbolic-ref", "--short", "HEAD", cwd=ready).stdout.strip() == "main"  # never switched
    assert res["base"] == "main"
    assert "--base main --head memex/review-2" in res["pr_command"]
    assert git("rev-list", "--count", "main", cwd=ready).stdout.strip() == "2"
    assert git("rev-list", "--count", "memex/review-2", cwd=ready).stdout.strip() == "3"


@pytest.mark.parametrize("point", ["submit.after_journal", "submit.after_files", "submit.after_commit",
                                   "store.before_rename"])
def test_submit_killed_at_any_point_then_rerun_leaves_exactly_one_copy(ready: Path, isolated_env: Path, point: str):
    d = add("queue consumers must be idempotent")
    r = run_cli_process("submit", d, env={"GIT_MEMEX_CRASH_AT": point})
    assert r.code == 137
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    assert outbox_files(isolated_env) == []
    assert (ready / MEM / f"{d}.md").exists()
    log = git("log", "--format=%H", "--", f"{MEM}/{d}.md", cwd=ready).stdout.split()
    assert len(log) == 1
    assert fm_of(ready / MEM / f"{d}.md")["review_state"] == "proposed"
    assert not list((isolated_env / "data" / "journal").glob("*.json"))
    assert [h["id"] for h in run_cli("search", "idempotent consumers", "--json").json()["hits"]] == [d]


def journal_dir(isolated_env: Path) -> Path:
    return isolated_env / "data" / "journal"


@pytest.mark.parametrize("bad", ["bad..name", "-x", "has space", "x.lock", "HEAD", "@{-1}"])
def test_submit_with_a_bad_branch_name_changes_nothing_and_the_next_submit_works(
        ready: Path, isolated_env: Path, bad: str):
    d = add("the build runs on python 3.12")
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    r = run_cli("submit", d, f"--branch={bad}")
    assert r.code == 1 and "not a valid git branch name" in r.err and "nothing was changed" in r.err
    assert len(r.err.strip().splitlines()) == 1 and "internal error" not in r.err
    assert not list(journal_dir(isolated_env).glob("*")) if journal_dir(isolated_env).exists() else True
    assert git("rev-parse", "HEAD", cwd=ready).stdout == head and len(outbox_files(isolated_env)) == 1
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    assert [s["id"] for s in r.json()["submitted"]] == [d]


def test_submit_refuses_a_branch_inside_an_existing_one_and_an_unknown_base(ready: Path, isolated_env: Path):
    git("branch", "feat", cwd=ready)
    d = add("caches are warmed at deploy time")
    r = run_cli("submit", d, "--branch", "feat/memex")
    assert r.code == 1 and "cannot coexist with the existing branch feat" in r.err
    r = run_cli("submit", d, "--base", "no-such-branch")
    assert r.code == 1 and "neither a local branch nor a branch of a remote" in r.err
    assert git("branch", "--list", "feat/*", cwd=ready).stdout == ""
    assert len(outbox_files(isolated_env)) == 1
    assert run_cli("submit", d, "--branch", "memex/review", "--base", "feat").code == 0


def test_submit_to_the_default_branch_name_is_refused_in_one_sentence(ready: Path, isolated_env: Path):
    d = add("the release notes live in docs/changes")
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    git("switch", "-q", "-c", "topic", cwd=ready)  # even from another branch, `main` is never made `main-2`
    r = run_cli("submit", d, "--branch", "main")
    assert r.code == 1 and "is the project's default branch" in r.err and "nothing was changed" in r.err
    assert len(r.err.strip().splitlines()) == 1
    msg = err("memory_submit", {"ids": [d], "branch": "main"})
    assert "is the project's default branch" in msg
    assert git("branch", "--list", "main-*", cwd=ready).stdout == ""
    assert git("rev-parse", "main", cwd=ready).stdout == head and len(outbox_files(isolated_env)) == 1
    assert run_cli("submit", d, "--branch", "memex/review").code == 0


def _crashed_submit(ready: Path, isolated_env: Path, text: str) -> tuple[str, Path]:
    d = add(text)
    assert run_cli_process("submit", d, env={"GIT_MEMEX_CRASH_AT": "submit.after_journal"}).code == 137
    (journal,) = journal_dir(isolated_env).glob("submit-*.json")
    return d, journal


@pytest.mark.parametrize("spoil", ["branch", "origin", "json"])
def test_a_journal_that_cannot_be_completed_is_set_aside_and_submit_proceeds(
        ready: Path, isolated_env: Path, spoil: str):
    d, journal = _crashed_submit(ready, isolated_env, "the api gateway times out after 30 seconds")
    plan = json.loads(journal.read_text())
    if spoil == "branch":
        plan.update(new_branch=True, branch="bad..name")
    elif spoil == "origin":  # a replay deletes its origins: only outbox drafts, never this README
        plan["origins"].append(str(ready / "README.md"))
    journal.write_text("{not json" if spoil == "json" else json.dumps(plan))
    doc = run_cli("doctor", "--json").json()["checks"]
    assert any(c["name"] == "submit journal" and c["level"] == "warn" and "cannot be completed" in c["detail"]
               for c in doc)
    other = add("the web tier autoscales on cpu")
    r = run_cli("submit", other, "--json")
    assert r.code == 0, r.err
    (line,) = r.err.strip().splitlines()
    assert "could not be finished" in line and ".failed" in line
    assert [s["id"] for s in r.json()["submitted"]] == [other]
    assert not journal.exists() and journal.with_name(journal.name + ".failed").exists()
    assert (ready / "README.md").exists()
    assert git("symbolic-ref", "--short", "HEAD", cwd=ready).stdout.strip() == "main"
    # the set-aside plan's draft is still in the outbox, and submits normally
    assert [f.stem for f in outbox_files(isolated_env)] == [d]
    assert run_cli("submit", d).code == 0
    doc = run_cli("doctor", "--json").json()["checks"]
    assert any(c["name"] == "submit journal" and "set aside" in c["detail"] for c in doc)


def test_doctor_reports_an_interrupted_submit_until_it_is_finished(ready: Path, isolated_env: Path):
    ok = [c for c in run_cli("doctor", "--json").json()["checks"] if c["name"] == "submit journal"]
    assert [c["level"] for c in ok] == ["ok"]
    d, journal = _crashed_submit(ready, isolated_env, "migrations run before the new code starts")
    (c,) = [c for c in run_cli("doctor", "--json").json()["checks"] if c["name"] == "submit journal"]
    assert c["level"] == "warn" and "interrupted submit" in c["detail"] and "git memex submit" in c["detail"]
    assert run_cli("submit", d).code == 0
    (c,) = [c for c in run_cli("doctor", "--json").json()["checks"] if c["name"] == "submit journal"]
    assert c["level"] == "ok"


def test_a_replay_that_fails_midway_is_set_aside_not_retried_forever(ready: Path, isolated_env: Path):
    d, journal = _crashed_submit(ready, isolated_env, "log lines are json with a trace id")
    target = ready / MEM / f"{d}.md"
    target.mkdir()  # the plan's file cannot be written now
    r = run_cli("submit", d)
    assert r.code == 2 and "could not finish" in r.err and ".failed" in r.err
    assert len(r.err.strip().splitlines()) == 1 and "internal error" not in r.err
    assert not journal.exists() and len(outbox_files(isolated_env)) == 1
    target.rmdir()
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    assert [s["id"] for s in r.json()["submitted"]] == [d]


def test_printed_commands_are_shell_quoted_and_work_as_printed(ready: Path, isolated_env: Path, tmp_path: Path):
    import shlex
    import subprocess

    name = "feat/it's-$(touch${IFS}pwned);x&y"
    assert git("check-ref-format", "--branch", name).stdout.strip() == name  # git accepts it
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote))
    git("remote", "add", "origin", str(remote), cwd=ready)
    d = add("the search index is rebuilt nightly")
    res = run_cli("submit", d, "--branch", name, "--json").json()
    assert res["branch"] == name
    words = shlex.split(res["pr_command"])
    assert words[words.index("--head") + 1] == name and words[words.index("--base") + 1] == "main"
    assert words[words.index("--title") + 1] == "memex: 1 memory for review"
    subprocess.run(["sh", "-c", res["push_command"]], cwd=ready, check=True, capture_output=True)
    assert not (ready / "pwned").exists()
    assert git("rev-parse", f"refs/heads/{name}", cwd=remote).stdout == git("rev-parse", f"refs/heads/{name}",
                                                                            cwd=ready).stdout
    # a second submit on that branch (checked out now), with origin's default branch known: a PR into main
    git("push", "-q", "origin", "main", cwd=ready)
    git("remote", "set-head", "origin", "main", cwd=ready)
    git("switch", "-q", name, cwd=ready)
    text = run_cli("submit", add("second memory on that branch")).out
    spec = f"refs/heads/{name}:refs/heads/{name}"
    assert f"git push origin {shlex.quote(spec)}" in text and "gh pr create" in text  # its upstream is set
    assert "push -u" not in text


def test_submit_from_a_detached_head_never_prints_a_pr_into_head(ready: Path, isolated_env: Path):
    git("switch", "-q", "--detach", cwd=ready)
    res = run_cli("submit", add("detached heads lose commits"), "--json").json()
    assert res["committed"] and res["push_command"] == "" and res["pr_command"] == ""
    assert "git switch -c" in res["note"]
    git("switch", "-q", "--detach", "main", cwd=ready)
    res = run_cli("submit", add("submitted onto a new branch from a detached head"), "--branch", "memex/r",
                  "--json").json()
    assert res["push_command"] == "" and res["pr_command"] == ""  # no remote: the note says what to do
    assert "git push -u origin memex/r" in res["note"]
    assert "--base" in res["note"] and "HEAD" not in res["base"]
    res = run_cli("submit", add("and with a base given"), "--branch", "memex/s", "--base", "main", "--json").json()
    assert "--base main --head memex/s" in res["pr_command"]


def test_submit_onto_the_default_branch_prints_no_self_pull_request(ready: Path, isolated_env: Path):
    r = run_cli("submit", add("releases are tagged from main"))
    assert r.code == 0, r.err
    assert "git push -u origin main" in r.out and "gh pr create" not in r.out  # after adding a remote
    assert "no pull request" in r.out and "--branch" in r.out


# ------------------------------------------------------------------ promote
def submitted(ready: Path, text: str) -> str:
    d = add(text)
    assert run_cli("submit", d).code == 0
    return d


def as_person(name: str) -> dict[str, str]:
    """The environment of a command run by another person: git's identity is theirs."""
    email = f"{name.lower()}@example.com"
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email}


def test_promote_ladder_reject_and_resubmit(ready: Path):
    d = submitted(ready, "integration tests run against a real postgres")
    assert run_cli("promote", d, env=as_person("Alice")).code == 0
    fm = fm_of(ready / MEM / f"{d}.md")
    assert fm["review_state"] == "approved" and fm["approved_by"] == "local:alice@example.com"
    r = run_cli("promote", d, "--reject")
    assert r.code == 1 and "--note" in r.err
    assert run_cli("promote", d, "--reject", "--note", "needs a source", env=as_person("Bob")).code == 0
    fm = fm_of(ready / MEM / f"{d}.md")
    assert fm["review_state"] == "rejected" and "approved_by" not in fm
    assert (ready / MEM / f"{d}.md").exists()  # never deleted
    r = run_cli("promote", d)
    assert r.code == 1 and "--resubmit" in r.err
    assert run_cli("promote", d, "--resubmit").code == 0
    assert run_cli("promote", d).code == 0
    assert run_cli("promote", d).code == 0
    fm = fm_of(ready / MEM / f"{d}.md")
    assert fm["review_state"] == "published"
    steps = [(h["from"], h["to"]) for h in fm["review_history"]]
    assert steps == [("draft", "proposed"), ("proposed", "approved"), ("approved", "rejected"),
                     ("rejected", "proposed"), ("proposed", "approved"), ("approved", "published")]
    assert all(set(h) == {"at", "by", "from", "to", "note"} for h in fm["review_history"])
    assert fm["review_history"][2]["note"] == "needs a source" and fm["review_history"][2]["by"] == "local:bob@example.com"
    assert run_cli("promote", d).code == 1


def test_rejecting_writes_no_empty_approver(ready: Path):
    d = submitted(ready, "the nightly job prunes old artifacts")
    path = ready / MEM / f"{d}.md"
    assert "approved_by" not in path.read_text()
    assert run_cli("promote", d, "--reject", "--note", "which job?").code == 0
    text = path.read_text()
    assert "review_state: rejected" in text and "approved_by" not in text


def test_promote_refuses_outbox_drafts(ready: Path):
    d = add("not yet submitted")
    r = run_cli("promote", d)
    assert r.code == 1 and "submit it first" in r.err


def test_reviewed_knowledge_ranks_above_drafts(ready: Path):
    draft = add("the build cache lives in s3 bucket alpha")
    pub = submitted(ready, "the build cache lives in s3 bucket beta")
    run_cli("promote", pub)
    run_cli("promote", pub)
    hits = run_cli("search", "build cache s3 bucket", "--json").json()["hits"]
    assert [h["id"] for h in hits[:2]] == [pub, draft]


# ------------------------------------------------------------------ sync-status
def test_sync_status_reports_the_pipeline(ready: Path):
    d1 = add("draft waiting in the outbox about logging")
    d2 = submitted(ready, "proposed memory about tracing")
    run_cli("promote", d2)
    r = run_cli("sync-status", "--json")
    assert r.code == 0, r.err
    s = r.json()
    assert [o["id"] for o in s["outbox"]] == [d1]
    assert s["repo"]["approved"] == [d2]
    assert s["uncommitted"] == [f"{MEM}/{d2}.md"]
    assert s["last_sync"]["trigger"] != "sync-status"  # looking is not syncing
    assert s["next"].startswith("git memex submit")


def _hand_written_memory(mid: str, body: str) -> str:
    return (f"---\nid: {mid}\nschema_version: 2\nrevision: 1\nscope: project\nvisibility: internal\n"
            "type: fact\nrole: knowledge\nimportance: normal\nstatus: active\nreview_state: published\n"
            "source: cli\ncreated_at: '2026-01-10T09:00:00Z'\nupdated_at: '2026-01-10T09:00:00Z'\n"
            f"---\n\n{body}\n")


def test_sync_status_names_what_last_synced_the_index_never_itself(ready: Path, tmp_path: Path):
    """The trigger of the last sync is the command, hook or session start that brought the index
    in line with the files (on the old code every sync-status named itself)."""
    add("the release checklist lives in docs/release.md")
    outside = ready / MEM / "01JAAAAAAAAAAAAAAAAAAAAAAA.md"
    outside.write_text(_hand_written_memory("01JAAAAAAAAAAAAAAAAAAAAAAA", "written by hand in an editor"),
                       encoding="utf-8")
    assert run_cli("search", "editor", "--json").code == 0  # this search reads the new file
    first = run_cli("sync-status", "--json").json()["last_sync"]
    assert first["trigger"] == "git memex search"
    assert run_cli("sync-status", "--json").json()["last_sync"] == first  # nothing changed: not itself
    outside.write_text(_hand_written_memory("01JAAAAAAAAAAAAAAAAAAAAAAA", "edited by hand again"), encoding="utf-8")
    hook = run_cli("context", "--hook", "claude", input=json.dumps({"hook_event_name": "SessionStart",
                                                                    "cwd": str(ready)}))
    assert hook.code == 0, hook.err
    assert run_cli("sync-status", "--json").json()["last_sync"]["trigger"] == "session start"
    assert "(session start)" in run_cli("sync-status").out


def test_sync_status_outside_a_repository_does_not_suggest_submit(nogit: Path):
    import shutil

    # `add` refuses a project memory outside a repository; a draft filed while this folder was one
    # (or by an older version) is still there when the repository is gone
    git("init", "-q", "-b", "main", cwd=nogit)
    d = add("a draft written while this folder was a repository")
    shutil.rmtree(nogit / ".git")
    r = run_cli("sync-status")
    assert r.code == 0, r.err
    assert d in r.out and "repository: none" in r.out
    (nxt,) = [line for line in r.out.splitlines() if line.startswith("next:")]
    assert "git init" in nxt and not nxt.startswith("next: git memex submit")
    # what it says works: this folder becomes a repository, and the draft submits from there
    git("init", "-q", "-b", "main", cwd=nogit)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=nogit)
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    assert [s["id"] for s in r.json()["submitted"]] == [d]


def test_contradictions_are_surfaced_not_resolved(ready: Path):
    a = add("the api rate limit is 100 requests per minute per token", "--type", "constraint")
    b = add("the api rate limit is 500 requests per minute per token", "--type", "constraint")
    # a qualifier makes two statements compatible: not raised
    add("the upload limit is 10 MB for free accounts", "--type", "constraint")
    add("the upload limit is 50 MB for paid accounts", "--type", "constraint")
    s = run_cli("sync-status", "--json").json()
    assert [(c["a"], c["b"]) for c in s["contradictions"]] == [(min(a, b), max(a, b))]
    assert s["contradictions"][0]["values"] in (["100 requests", "500 requests"], ["500 requests", "100 requests"])
    out = run_cli("sync-status").out
    assert len([line for line in out.splitlines() if "disagree" in line]) == 1  # one line
    d = run_cli("doctor", "--json").json()
    (check,) = [c for c in d["checks"] if c["name"] == "contradictions"]
    assert check["level"] == "warn" and a in check["detail"] and b in check["detail"] and "\n" not in check["detail"]
    for mid in (a, b):
        assert run_cli("show", mid, "--json").json()["frontmatter"]["status"] == "active"


# ------------------------------------------------------------------ pr-status with a fake gh
def fake_gh(tmp_path: Path, payload: dict | None, exit_code: int = 0, stderr: str = "") -> dict:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    gh = bindir / "gh"
    data = json.dumps(payload) if payload is not None else ""
    gh.write_text(f"#!/bin/sh\ncat <<'EOF'\n{data}\nEOF\necho '{stderr}' >&2\nexit {exit_code}\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bindir}:{os.environ['PATH']}"}


def test_pr_status_maps_review_states(ready: Path, tmp_path: Path):
    a = submitted(ready, "first memory in the pr about queues")
    b = submitted(ready, "second memory in the pr about caches")
    c = submitted(ready, "third memory rejected by a human")
    run_cli("promote", c, "--reject", "--note", "wrong")
    files = [{"path": f"{MEM}/{m}.md"} for m in (a, b, c)] + [{"path": "src/app.py"}]
    env = fake_gh(tmp_path, {"number": 7, "url": "https://x/pr/7", "state": "OPEN", "reviewDecision": "APPROVED",
                             "reviews": [{"author": {"login": "carol"}, "state": "APPROVED"}], "files": files})
    r = run_cli("pr-status", "--json", env=env)
    assert r.code == 0, r.err
    items = {m["id"]: m for m in r.json()["memories"]}
    assert items[a]["target"] == "approved" and items[c]["target"] is None
    assert "never overrides" in items[c]["action"]
    assert fm_of(ready / MEM / f"{a}.md")["review_state"] == "proposed"  # report only
    r = run_cli("pr-status", "--apply", "--json", env=env)
    assert {x["id"] for x in r.json()["applied"]} == {a, b}
    fm = fm_of(ready / MEM / f"{a}.md")
    assert fm["review_state"] == "approved" and fm["approved_by"] == "github:carol"
    assert fm_of(ready / MEM / f"{c}.md")["review_state"] == "rejected"
    env = fake_gh(tmp_path, {"number": 7, "state": "MERGED", "reviewDecision": "APPROVED", "reviews": [], "files": files})
    run_cli("pr-status", "--apply", env=env)
    assert fm_of(ready / MEM / f"{a}.md")["review_state"] == "published"
    assert fm_of(ready / MEM / f"{c}.md")["review_state"] == "rejected"


def test_pr_status_changes_requested_is_only_a_suggestion(ready: Path, tmp_path: Path):
    a = submitted(ready, "memory under review with changes requested")
    env = fake_gh(tmp_path, {"number": 8, "state": "OPEN", "reviewDecision": "CHANGES_REQUESTED", "reviews": [],
                             "files": [{"path": f"{MEM}/{a}.md"}]})
    r = run_cli("pr-status", "--apply", "--json", env=env)
    assert r.json()["applied"] == []
    assert "changes requested" in r.json()["memories"][0]["action"]
    assert fm_of(ready / MEM / f"{a}.md")["review_state"] == "proposed"


def test_pr_status_without_gh_or_without_pr_reads_git(ready: Path, tmp_path: Path):
    """No GitHub pull request to read: git's own history answers (tests/review/test_review_without_github.py)."""
    a = submitted(ready, "a memory submitted straight onto main")
    r = run_cli("pr-status", env={"PATH": str(tmp_path / "empty-bin") + ":/usr/bin:/bin"})
    assert r.code == 0 and "merges read from git" in r.err, r.err
    assert f"{a}: reached main in" in r.out and "without a merge commit" in r.out
    env = fake_gh(tmp_path, None, exit_code=1, stderr='no pull requests found for branch "main"')
    r = run_cli("pr-status", "--json", env=env)
    assert r.code == 0 and "no pull request" in r.json()["note"] and r.json()["source"] == "git"


def test_no_message_or_file_says_none_for_a_missing_value(ready: Path, tmp_path: Path, isolated_env: Path):
    a = submitted(ready, "the pr without a number approves this")
    files = [{"path": f"{MEM}/{a}.md"}]
    env = fake_gh(tmp_path, {"state": "OPEN", "reviewDecision": "APPROVED", "reviews": [], "files": files})
    r = run_cli("pr-status", "--apply", env=env)
    assert r.code == 0, r.err
    assert "None" not in r.out and r.out.startswith("the PR OPEN APPROVED")
    text = (ready / MEM / f"{a}.md").read_text()
    assert "None" not in text and "note: the PR open" in text
    # a review_history entry written by another tool with `from: null`, and a draft without review_state
    (ready / MEM / f"{a}.md").write_text(text.replace("from: proposed", "from: null"))
    r = run_cli("log", a)
    assert r.code == 0, r.err
    assert "None" not in r.out and "(none) → approved" in r.out
    d = add("a hand-made draft without a review state")
    (draft,) = outbox_files(isolated_env)
    draft.write_text(draft.read_text().replace("review_state: draft\n", ""))
    r = run_cli("sync-status")
    assert r.code == 0, r.err
    assert f"{d} [draft]" in r.out and "None" not in r.out


# ------------------------------------------------------------------ log and distill
def test_log_merges_commits_and_review_history(ready: Path):
    d = submitted(ready, "the auth service signs tokens with ed25519")
    run_cli("promote", d, env=as_person("Alice"))
    git("add", "-A", cwd=ready)
    git("commit", "-q", "-m", "approve memory", cwd=ready)
    r = run_cli("supersede", d, "the auth service signs tokens with ed25519, rotated yearly", "--json")
    new = r.json()["id"]
    r = run_cli("log", d, "--json")
    assert r.code == 0, r.err
    events = r.json()["events"]
    kinds = [e["kind"] for e in events]
    assert kinds.count("commit") == 2 and kinds[0] == "created"
    assert any(e["kind"] == "review" and "proposed → approved" in e["what"] and e["by"] == "local:alice@example.com"
               for e in events)
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    chain = run_cli("log", new, "--json").json()
    assert chain["chain"] == [d, new]


def _instruction(ready: Path, text: str, *, confidence: str = "high", source: str = "user", scope: str = "project") -> str:
    if scope == "personal":
        return add(text, "--scope", "personal", "--role", "instruction")
    d = add(text, "--role", "instruction", "--confidence", confidence, "--source", source)
    assert run_cli("submit", d).code == 0
    assert run_cli("promote", d).code == 0  # proposed → approved
    if source == "inference":  # `instruction approve` refuses it: claim the approval by hand
        path = ready / MEM / f"{d}.md"
        fm, body = frontmatter.parse(path.read_text())
        fm.update(instruction_state="approved", trust_level="reviewed")
        path.write_text(frontmatter.serialize(fm, body))
    else:
        assert run_cli("instruction", "approve", d).code == 0
    git("commit", "-qam", f"approve {d}", cwd=ready)  # on the default branch: reviewed
    return d


def test_distill_proposes_only_approved_high_confidence_instructions(ready: Path, tmp_path: Path):
    good = _instruction(ready, "Run make lint before every push")
    low = _instruction(ready, "Maybe prefer small PRs", confidence="medium")
    inferred = _instruction(ready, "The agent thinks tabs are better", source="inference")
    personal = _instruction(ready, "I like emacs keybindings", scope="personal")
    unmerged = add("Squash every merge", "--role", "instruction", "--confidence", "high")
    assert run_cli("submit", unmerged).code == 0 and run_cli("promote", unmerged).code == 0
    assert run_cli("instruction", "approve", unmerged).code == 0  # approved, but not committed
    r = run_cli("distill", "--json")
    assert r.code == 0, r.err
    out = r.json()
    ids = {it["id"] for items in out["groups"].values() for it in items}
    assert ids == {good}
    assert low not in out["markdown"] and inferred not in out["markdown"] and personal not in out["markdown"]
    target = tmp_path / "AGENTS.candidates.md"
    assert run_cli("distill", "--out", str(target)).code == 0
    assert f"<!-- memex:{good} -->" in target.read_text()
    assert not (ready / "AGENTS.candidates.md").exists()


@pytest.mark.parametrize("link", [".ai/open-memex", ".ai"])
def test_submit_never_writes_through_a_linked_memory_folder(repo: Path, tmp_path: Path, link: str):
    """A committed `.ai/open-memex -> /tmp/victim` (or `.ai` a link) made submit write the memory
    file outside the work tree (the attack on the merged main)."""
    victim = tmp_path / "victim"
    (victim / "open-memex").mkdir(parents=True)
    target = victim / "open-memex" if link == ".ai/open-memex" else victim
    (repo / ".ai").mkdir(exist_ok=True) if link == ".ai/open-memex" else None
    (repo / link).symlink_to(target, target_is_directory=True)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "a linked memory folder", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo).stdout
    d = add("a draft that must stay where it is")
    r = run_cli("submit", d)
    assert r.code == 2 and "symbolic link" in r.err and "Traceback" not in r.err, r.err
    assert list(victim.rglob("*.md")) == []
    assert git("rev-parse", "HEAD", cwd=repo).stdout == head and git("status", "--porcelain", cwd=repo).stdout == ""
    assert d in [m["id"] for m in run_cli("list", "--json").json()["memories"]]  # still in the outbox

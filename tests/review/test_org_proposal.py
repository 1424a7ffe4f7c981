"""Promotion upward (docs/org.md, "Promotion upward"): `propose ID --to org NAME` with a real bare
org remote, a subscribed org clone and a project clone; `pr-status --org` with a fake `gh`."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from git_memex.core import frontmatter

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
DEPLOY = "01JORG00000000000000DEPLOY"
# a well-known example key (AWS documentation); the scanners must mask it
SECRET = "AKIAIOSFODNN7EXAMPLE"
TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"  # a GitHub token's shape, lower case (as tags are)


# a reviewer other than the author: git's identity is what `promote` records
BOB = {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_COMMITTER_NAME": "Bob",
       "GIT_COMMITTER_EMAIL": "bob@example.com"}

def data_root() -> Path:
    return Path(os.environ["GIT_MEMEX_HOME"])


def clone_of(name: str = "acme") -> Path:
    return data_root() / "org" / name


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project clone (of a bare project remote) set up by `init`, subscribed to org `acme`
    (a bare org remote holding one org memory); the cwd is the project."""
    org_remote, seed = bare_and_clone(tmp_path)
    (seed / MEM).mkdir(parents=True)
    (seed / MEM / f"{DEPLOY}.md").write_text(
        f"---\nid: {DEPLOY}\nschema_version: 2\nscope: org\ntype: decision\nstatus: active\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n"
        "Deploys go through the blue green pipeline, never by hand.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "one org memory", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    proj_remote = tmp_path / "shop.git"
    git("init", "-q", "--bare", "-b", "main", str(proj_remote))
    work = tmp_path / "shop"
    git("clone", "-q", str(proj_remote), str(work))
    (work / "README.md").write_text("shop\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "init", cwd=work)
    monkeypatch.chdir(work)
    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "set up git-memex", cwd=work)
    r = run_cli("org", "add", "acme", str(org_remote))
    assert r.code == 0, r.err
    return work


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def published(text: str, *extra: str) -> str:
    mid = add(text, *extra)
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        r = run_cli("promote", mid, env=BOB)
        assert r.code == 0, r.err
    git("commit", "-q", "-am", f"publish {mid}")
    return mid


def snapshot(clone: Path) -> tuple[str, str, str, bytes, list[str]]:
    """What git-memex indexes and the user sees of the clone: HEAD, its ref, status, the index file, the branches."""
    return (git("rev-parse", "HEAD", cwd=clone).stdout, git("symbolic-ref", "HEAD", cwd=clone).stdout,
            git("status", "--porcelain", "--untracked-files=all", "--ignored", cwd=clone).stdout,
            (clone / ".git" / "index").read_bytes(),
            git("for-each-ref", "--format=%(refname)", cwd=clone).stdout.split())


def propose(mid: str, *args: str, org: str = "acme"):
    return run_cli("propose", mid, "--to", "org", org, *args)


# ------------------------------------------------------------------ the one-file commit
def test_propose_to_org_makes_one_file_commit_on_a_branch(world: Path) -> None:
    mid = published("Retries need jitter and a cap, or they stampede the upstream", "--type", "lesson",
                    "--tags", "http,retries")
    clone = clone_of()
    before = snapshot(clone)
    r = propose(mid, "--json")
    assert r.code == 0, r.err
    res = r.json()
    branch = f"memex/promote-{mid}"
    assert (res["source"], res["org"], res["branch"], res["base"]) == (mid, "acme", branch, "main")
    new = res["id"]
    assert new != mid and res["path"] == f"{MEM}/{new}.md"
    # one commit on top of the clone's HEAD, holding exactly that one added file
    head = before[0].strip()
    assert git("rev-parse", f"{branch}^", cwd=clone).stdout.strip() == head
    assert git("rev-list", "--count", f"{head}..{branch}", cwd=clone).stdout.strip() == "1"
    shown = git("show", "--stat", "--format=%s", branch, cwd=clone).stdout
    assert f"{MEM}/{new}.md" in shown and "1 file changed, " in shown and "insertion" in shown
    assert git("diff-tree", "--no-commit-id", "--name-status", "-r", head, branch, cwd=clone).stdout == f"A\t{MEM}/{new}.md\n"
    # the clone's HEAD, index, work tree and other refs are untouched: only the new branch exists
    after = snapshot(clone)
    assert after[:4] == before[:4]
    assert sorted(after[4]) == sorted([*before[4], f"refs/heads/{branch}"])
    assert not (clone / MEM / f"{new}.md").exists()
    assert not list((clone / ".git").glob("memex-propose-*"))  # the temporary index is gone
    # the file: an ordinary v0.2 org memory, derived_from pointing back, through the write path
    text = git("show", f"{branch}:{MEM}/{new}.md", cwd=clone).stdout
    fm, body = frontmatter.parse(text)
    assert (fm["id"], fm["scope"], fm["schema_version"], fm["derived_from"]) == (new, "org", 2, mid)
    assert fm["review_state"] == "proposed" and fm["visibility"] == "internal"
    assert fm["type"] == "lesson" and fm["tags"] == ["http", "retries"] and fm["paths"] == []
    assert fm["proposed_by"] == fm["promoted_by"] == "local:test@example.com"
    assert fm["repo_id"] == run_cli("where", "--json").json()["repo_id"]
    assert fm["review_history"][-1]["to"] == "proposed" and mid in fm["review_history"][-1]["note"]
    assert body.strip() == "Retries need jitter and a cap, or they stampede the upstream"
    # the project memory is unchanged, and the org memory is not searchable before the merge and pull
    assert run_cli("show", mid, "--json").json()["frontmatter"]["scope"] == "project"
    assert run_cli("search", "jitter", "--scope", "org", "--json").json()["hits"] == []
    assert git("status", "--porcelain", cwd=world).stdout == ""
    # the printed commands, never run: the bare remote has no such branch
    assert res["push_command"] == f"git -C {clone} push -u origin {branch}"
    assert res["pr_command"].startswith(f"cd {clone} && gh pr create --base main --head {branch} --title ")
    remote = git("config", "--get", "remote.origin.url", cwd=clone).stdout.strip()
    assert git("ls-remote", "--heads", remote, cwd=clone).stdout.count("refs/heads/") == 1
    text_out = run_cli("propose", published("Keep HTTP timeouts under the load balancer's idle timeout"),
                       "--to", "org", "acme").out
    assert "To share it (not run for you):" in text_out and "  git -C " in text_out and "gh pr create" in text_out


def test_a_proposal_checked_out_by_hand_is_not_the_base_of_the_next(world: Path) -> None:
    """After `propose X`, the user checks out X's branch in the clone: `propose Y` still starts from
    origin/main (the branch the subscription follows) and names it as the PR base, and doctor says
    to check main out again, never to reset (which would drop X)."""
    x = published("Retries need jitter and a cap, or they stampede the upstream")
    y = published("Keep HTTP timeouts under the load balancer's idle timeout")
    clone = clone_of()
    main = git("rev-parse", "origin/main", cwd=clone).stdout.strip()
    assert propose(x).code == 0
    git("checkout", "-q", f"memex/promote-{x}", cwd=clone)
    r = propose(y, "--json")
    assert r.code == 0, r.err
    res = r.json()
    assert res["base"] == "main" and "--base main " in res["pr_command"]
    assert git("rev-parse", f"memex/promote-{y}^", cwd=clone).stdout.strip() == main
    lines = [ln for ln in run_cli("doctor").out.splitlines() if "org acme" in ln]
    assert any(ln.startswith("fail") and f"on branch memex/promote-{x}, not on main" in ln
               and f"git -C {clone} checkout main" in ln for ln in lines), lines
    assert not any("reset" in ln or "set-upstream" in ln for ln in lines), lines


def test_merged_proposal_reaches_org_search_after_org_pull(world: Path, tmp_path: Path) -> None:
    mid = published("Feature flags are removed within two releases of full rollout")
    res = propose(mid, "--json").json()
    clone = clone_of()
    # what the user would do with the printed commands, and the org curator's merge
    assert git("-C", str(clone), "push", "-q", "-u", "origin", res["branch"]).returncode == 0
    remote = git("config", "--get", "remote.origin.url", cwd=clone).stdout.strip()
    other = tmp_path / "curator"
    git("clone", "-q", remote, str(other))
    git("merge", "-q", "--no-ff", "-m", "merge the proposal", f"origin/{res['branch']}", cwd=other)
    git("push", "-q", "origin", "main", cwd=other)
    assert run_cli("org", "pull", "acme").code == 0
    hit = run_cli("search", "feature", "flags", "--scope", "org", "--json").json()["hits"]
    assert [(h["id"], h["org"]) for h in hit] == [(res["id"], "acme")]
    # proposing it again is refused: it is in the org now
    r = propose(mid, "--branch", "memex/again")
    assert r.code == 1 and f"already in org acme as {res['id']}" in r.err


# ------------------------------------------------------------------ secrets never enter the org commit
def test_a_secret_in_the_project_file_is_masked_in_the_org_commit(world: Path) -> None:
    mid = published("The deploy bot reads its key from the vault")
    path = world / MEM / f"{mid}.md"
    path.write_text(path.read_text().replace("from the vault", f"from the vault, key {SECRET}"))  # a hand edit
    r = propose(mid, "--json")
    assert r.code == 0, r.err
    res = r.json()
    text = git("show", f"{res['branch']}:{res['path']}", cwd=clone_of()).stdout
    assert SECRET not in text and "key " in text and res["masked"]
    log = git("log", "-p", "--all", cwd=clone_of()).stdout
    assert SECRET not in log


def test_a_teams_own_secret_format_is_masked_in_the_org_commit(world: Path) -> None:
    team_token = "ACME-7Q2W9E4R1T6Y3U8I"  # no built-in rule knows this format
    mid = published(f"The billing sandbox takes the key {team_token} for now")
    git("config", "--add", "memex.redactPattern", r"ACME-[A-Z0-9]{16}", cwd=world)  # set after it was published
    res = propose(mid, "--json").json()
    text = git("show", f"{res['branch']}:{res['path']}", cwd=clone_of()).stdout
    assert team_token not in text and "The billing sandbox takes the key" in text
    assert team_token not in git("log", "-p", "--all", cwd=clone_of()).stdout


def test_a_secret_in_a_tag_is_masked_in_the_proposal(world: Path) -> None:
    """A secret outside the body is masked like one in it (secrets.admission), never copied."""
    mid = published("The staging database is rebuilt every night")
    path = world / MEM / f"{mid}.md"
    path.write_text(path.read_text().replace("tags: []", f"tags:\n- {TOKEN}"))  # a secret outside the body
    clone = clone_of()
    r = propose(mid)
    assert r.code == 0, r.err
    assert TOKEN not in r.out + r.err
    assert TOKEN not in git("log", "-p", "--all", cwd=clone).stdout
    assert all(TOKEN not in p.read_text() for p in clone.rglob("*.md"))


def test_a_tag_is_read_as_written_and_a_body_secrets_copies_are_masked(world: Path) -> None:
    """As `add` admits a memory (issue 31): a tag is read for secrets before it is lower-cased
    (``AKIA…`` lower-cased is no key to the detector), and a value found in the body is masked
    where a tag repeats it."""
    mid = published("The staging database is rebuilt every night")
    path = world / MEM / f"{mid}.md"
    value = "Wq3mZ8xK2pL4"
    text = path.read_text().replace("tags: []", f"tags:\n- {SECRET}\n- {value}")
    path.write_text(text.replace("every night", f"every night, db.password={value}"))  # hand edits
    r = propose(mid, "--json")
    assert r.code == 0, r.err
    res = r.json()
    stored = git("show", f"{res['branch']}:{res['path']}", cwd=clone_of()).stdout
    assert "rebuilt every night" in stored, stored
    assert SECRET.lower() not in stored.lower() and value.lower() not in stored.lower(), stored


# ------------------------------------------------------------------ refusals: one sentence, nothing changed
def refused(r, code: int, words: str, clone: Path, before: tuple) -> None:
    assert r.code == code, (r.code, r.out, r.err)
    assert words in r.err and "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert r.out == ""
    assert snapshot(clone) == before


def test_refusals(world: Path) -> None:
    clone = clone_of()
    good = published("Service names are lowercase with dashes")
    before = snapshot(clone)
    personal = add("I prefer tabs in my own scratch files", "--scope", "personal")
    refused(propose(personal), 1, "personal memory and never leaves this machine", clone, before)
    private = add("our internal hostname list", "--visibility", "private")
    refused(propose(private), 1, "never leaves this machine", clone, before)
    draft = add("an unpublished project draft about caches")
    refused(propose(draft), 1, "not a published project memory", clone, before)
    submitted = add("a submitted but unreviewed memory about queues")
    assert run_cli("submit", submitted).code == 0
    refused(propose(submitted), 1, "is proposed, not published", clone, before)
    refused(propose(DEPLOY), 1, "already an org memory", clone, before)
    refused(propose(good, org="nope"), 1, "org nope is not subscribed here", clone, before)
    refused(propose(good, org="Bad_Name"), 1, "not a valid org name", clone, before)
    refused(run_cli("propose", good, "--to", "org"), 1, "--to takes `org NAME`", clone, before)
    refused(run_cli("propose", good, "--to", "org", "acme", "--local-approve"), 1, "--local-approve", clone, before)
    refused(run_cli("propose", good, draft, "--to", "org", "acme"), 1, "takes one memory id", clone, before)
    refused(propose(good, "--branch", "bad..name"), 1, "not a valid git branch name", clone, before)
    git("branch", "taken", cwd=clone)
    before = snapshot(clone)
    refused(propose(good, "--branch", "taken"), 1, "already has a branch taken", clone, before)
    refused(propose(good, "--branch", "taken/sub"), 1, "cannot coexist", clone, before)
    # a pending proposal on another branch: proposing the same memory again is refused
    assert propose(good).code == 0
    before = snapshot(clone)
    refused(propose(good), 1, f"already has a branch memex/promote-{good}", clone, before)
    refused(propose(good, "--branch", "memex/second"), 1, f"already proposed to org acme (on branch memex/promote-{good})",
            clone, before)
    # the project memory's id already present in the org repo (copied there by hand)
    hand = published("Logs are kept for thirty days")
    seedlike = clone.parent / "hand"
    git("clone", "-q", git("config", "--get", "remote.origin.url", cwd=clone).stdout.strip(), str(seedlike))
    shutil.copy(world / MEM / f"{hand}.md", seedlike / MEM / f"{hand}.md")
    git("add", "-A", cwd=seedlike)
    git("commit", "-q", "-m", "copied by hand", cwd=seedlike)
    git("push", "-q", "origin", "main", cwd=seedlike)
    assert run_cli("org", "pull", "acme").code == 0
    before = snapshot(clone)
    refused(propose(hand), 1, f"{hand} is already in org acme as {hand}", clone, before)


def test_a_clone_deleted_by_hand_is_refused(world: Path) -> None:
    good = published("Every queue has a dead letter queue")
    shutil.rmtree(clone_of())
    r = propose(good)
    assert r.code == 2 and "the clone of org acme is missing" in r.err and len(r.err.strip().splitlines()) == 1
    assert not clone_of().exists()
    r = run_cli("pr-status", "--org", "acme")
    assert r.code == 2 and "the clone of org acme is missing" in r.err


def test_outside_a_repository_is_refused(world: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    r = run_cli("propose", "01JORG00000000000000DEPLOY", "--to", "org", "acme", cwd=plain)
    assert r.code == 1 and "propose --to org needs a git repository" in r.err and len(r.err.strip().splitlines()) == 1


# ------------------------------------------------------------------ pr-status --org with a fake gh
def fake_gh(tmp_path: Path, payload: dict | None, exit_code: int = 0, stderr: str = "") -> dict:
    """`gh` on PATH that records where it ran and with what, then prints `payload`."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    gh = bindir / "gh"
    data = json.dumps(payload) if payload is not None else ""
    log = tmp_path / "gh.log"
    gh.write_text(f"#!/bin/sh\necho \"$PWD|$*\" >> '{log}'\ncat <<'EOF'\n{data}\nEOF\necho '{stderr}' >&2\n"
                  f"exit {exit_code}\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bindir}:{os.environ['PATH']}"}


def test_pr_status_follows_an_org_proposal(world: Path, tmp_path: Path) -> None:
    mid = published("Secrets rotate every ninety days")
    res = propose(mid, "--json").json()
    files = [{"path": res["path"]}]
    env = fake_gh(tmp_path, {"number": 12, "url": "https://x/org/pull/12", "state": "OPEN", "reviewDecision": "APPROVED",
                             "reviews": [{"author": {"login": "carol"}, "state": "APPROVED"}], "files": files})
    clone = clone_of()
    before = snapshot(clone)
    r = run_cli("pr-status", "--org", "acme", "--json", env=env)
    assert r.code == 0, r.err
    out = r.json()
    assert (out["org"], out["branch"], out["pr"]["number"]) == ("acme", res["branch"], 12)
    (item,) = out["memories"]
    assert (item["id"], item["current"], item["target"]) == (res["id"], "proposed", "approved")
    where, args = (tmp_path / "gh.log").read_text().splitlines()[-1].split("|", 1)
    assert Path(where).resolve() == clone.resolve() and args.startswith(f"pr view {res['branch']} --json ")
    assert snapshot(clone) == before  # report only
    text = run_cli("pr-status", "--org", "acme", "--branch", res["branch"], env=env).out
    assert text.startswith(f"org acme {res['branch']}: PR #12 OPEN APPROVED") and res["id"] in text
    env = fake_gh(tmp_path, {"number": 12, "state": "MERGED", "reviewDecision": "APPROVED", "reviews": [], "files": files})
    item = run_cli("pr-status", "--org", "acme", "--json", env=env).json()["memories"][0]
    assert item["target"] == "published" and "git memex org pull acme" in item["action"]
    r = run_cli("pr-status", "--org", "acme", "--apply", env=env)
    assert r.code == 1 and "--apply does not change an org proposal" in r.err
    assert snapshot(clone) == before


def test_pr_status_org_refusals(world: Path, tmp_path: Path) -> None:
    env = fake_gh(tmp_path, None, exit_code=1, stderr='no pull requests found for branch "x"')
    r = run_cli("pr-status", "--org", "acme", env=env)
    assert r.code == 1 and "has no proposal branch" in r.err
    r = run_cli("pr-status", "--org", "nope", env=env)
    assert r.code == 1 and "org nope is not subscribed here" in r.err
    r = run_cli("pr-status", "--branch", "x", env=env)
    assert r.code == 1 and "--branch goes with --org" in r.err
    a = propose(published("Error budgets are reviewed monthly")).code
    b = propose(published("Runbooks live next to the service code")).code
    assert (a, b) == (0, 0)
    r = run_cli("pr-status", "--org", "acme", env=env)
    assert r.code == 1 and "2 proposal branches" in r.err
    r = run_cli("pr-status", "--org", "acme", "--branch", "nope", env=env)
    assert r.code == 1 and "has no branch nope" in r.err
    branch = [b for b in git("for-each-ref", "--format=%(refname:short)", "refs/heads/", cwd=clone_of()).stdout.split()
              if b.startswith("memex/")][0]
    r = run_cli("pr-status", "--org", "acme", "--branch", branch, env=env)
    assert r.code == 2 and "has no pull request" in r.err and "propose --to org" in r.err


def test_org_remove_refuses_to_delete_unpushed_proposal_branches(world: Path) -> None:
    """Issue 20.16: `org remove` deleted the clone, and with it a `propose --to org` branch that
    existed nowhere else, without a word. Now it is refused (exit 1, nothing changed) naming the
    branch, until it is pushed or `--force` is given."""
    first = published("Retries need jitter and a cap, or they stampede the upstream")
    assert propose(first).code == 0
    clone = clone_of()
    branch = f"memex/promote-{first}"
    r = run_cli("org", "remove", "acme")
    assert r.code == 1, (r.code, r.err)
    assert branch in r.err and "--force" in r.err and "push origin" in r.err and len(r.err.strip().splitlines()) == 1
    assert clone.is_dir() and git("rev-parse", "--verify", branch, cwd=clone).returncode == 0
    assert [o["name"] for o in run_cli("org", "list", "--json").json()["orgs"]] == ["acme"]
    git("push", "-q", "origin", branch, cwd=clone)  # pushed: it exists elsewhere now
    second = published("Keep HTTP timeouts under the load balancer's idle timeout")
    assert propose(second).code == 0
    r = run_cli("org", "remove", "acme", "--json")
    assert r.code == 1 and f"memex/promote-{second}" in r.err and branch not in r.err
    r = run_cli("org", "remove", "acme", "--force", "--json")
    assert r.code == 0, r.err
    assert r.json()["deleted_unpushed"] == [f"memex/promote-{second}"] and not clone.exists()


def test_org_remove_refuses_to_delete_uncommitted_edits_or_stashes(world: Path) -> None:
    """The attack on the merged main: hand edits in the org clone (docs/org.md describes them) and
    stashes were deleted without a word; only unpushed branches were checked."""
    clone = clone_of()
    note = clone / MEM / "01JORG00000000000000EDIT1.md"
    note.write_text("---\nid: 01JORG00000000000000EDIT1\nschema_version: 2\nscope: org\ntype: fact\n"
                    "status: active\n---\nA curator's edit in progress.\n")
    r = run_cli("org", "remove", "acme")
    assert r.code == 1 and "1 uncommitted change" in r.err and "--force" in r.err, r.err
    assert note.exists()
    git("add", "-A", cwd=clone)
    git("stash", "-q", cwd=clone)
    r = run_cli("org", "remove", "acme")
    assert r.code == 1 and "1 stash" in r.err, r.err
    assert clone.is_dir()
    assert run_cli("org", "remove", "acme", "--force").code == 0 and not clone.exists()


def test_org_clone_stays_owner_only_after_a_proposal_and_a_pull(world: Path, tmp_path: Path) -> None:
    """docs/security.md promises owner-only files in the data root: the git objects, refs and logs
    a proposal writes into the org clone, and the files an `org pull` brings, are no exception."""
    import stat as st_

    assert propose(published("Retries need jitter and a cap, or they stampede the upstream")).code == 0
    remote = git("config", "--get", "remote.origin.url", cwd=clone_of()).stdout.strip()
    other = tmp_path / "org-other"
    git("clone", "-q", remote, str(other))
    (other / MEM / "01JORG0000000000000000PULL.md").write_text(
        "---\nid: 01JORG0000000000000000PULL\nschema_version: 2\nscope: org\ntype: fact\nstatus: active\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\nPulled org fact.\n")
    git("add", "-A", cwd=other)
    git("commit", "-q", "-m", "another org memory", cwd=other)
    git("push", "-q", "origin", "main", cwd=other)
    assert run_cli("org", "pull", "acme").code == 0
    loose = []
    for here, dirs, files in os.walk(clone_of()):
        for name in [*dirs, *files]:
            mode = st_.S_IMODE(os.lstat(os.path.join(here, name)).st_mode)
            if mode & 0o077:
                loose.append((os.path.join(here, name), oct(mode)))
    assert loose == []

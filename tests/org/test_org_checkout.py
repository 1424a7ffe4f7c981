"""Inside the org memory repo itself, and the seed's org layout (docs/org.md, "The org repository";
docs/curating.md, "Org review"): a checkout's own index reads the memory folder's subfolders
(engineering/, decisions/…), so `search`, `show` and `promote` work there; `org add` takes a
repository that keeps its memories in category folders at its root, with no .ai/open-memex/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
PROPOSED = "01JCHECKOUT000000000000001"
LESSON = "01JCHECKOUT000000000000002"
OUTSIDE = "01JCHECKOUT00000000OUTSIDE"
HIDDEN = "01JCHECKOUT000000000HIDDEN"


# a reviewer other than the author: git's identity is what `promote` records
BOB = {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_COMMITTER_NAME": "Bob",
       "GIT_COMMITTER_EMAIL": "bob@example.com"}


def memory_text(mid: str, body: str, type_: str = "decision", extra: str = "") -> str:
    return (f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: {type_}\nstatus: active\n{extra}"
            f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{body}\n")


def put(folder: Path, mid: str, body: str, type_: str = "decision", extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{mid}.md"
    path.write_text(memory_text(mid, body, type_, extra))
    return path


def ids(res: dict) -> list[str]:
    return [h["id"] for h in res["hits"]]


@pytest.fixture
def checkout(ready: Path) -> Path:
    """A checkout of an org memory repo (set up by `git memex init`): a proposed memory in
    engineering/ and a lesson two folders down, committed."""
    put(ready / MEM / "engineering", PROPOSED, "Every service exposes a readiness probe on port 8081.",
        extra="review_state: proposed\nproposed_by: local:bob@example.com\n")
    put(ready / MEM / "lessons" / "incidents", LESSON, "A cache stampede follows every cold deploy.", "lesson")
    git("add", "-A", cwd=ready)
    r = git("commit", "-q", "-m", "org memories", cwd=ready, check=False)
    assert r.returncode == 0, r.stderr
    return ready


def test_search_show_and_promote_inside_the_org_checkout(checkout: Path) -> None:
    r = run_cli("search", "readiness probe", "--json")
    assert r.code == 0, r.err
    assert ids(r.json()) == [PROPOSED]
    assert run_cli("search", "stampede", "--json").json()["hits"][0]["id"] == LESSON  # two folders down
    r = run_cli("show", PROPOSED)
    assert r.code == 0 and "readiness probe on port 8081" in r.out, r.err
    listed = run_cli("list", "--json").json()
    assert {PROPOSED, LESSON} <= {m["id"] for m in listed["memories"]}

    rel = f"{MEM}/engineering/{PROPOSED}.md"
    r = run_cli("promote", PROPOSED, "--json")  # the curator's step (docs/curating.md)
    assert r.code == 0, r.err
    assert (r.json()["from"], r.json()["to"]) == ("proposed", "approved")
    text = (checkout / rel).read_text()
    assert "review_state: approved" in text and "approved_by: local:test@example.com" in text
    # the file was changed where it lies: no copy at the top of the memory folder
    assert not (checkout / MEM / f"{PROPOSED}.md").exists()
    assert git("status", "--porcelain", cwd=checkout).stdout.splitlines() == [f"M  {rel}"]  # staged, where it lies
    assert run_cli("search", "readiness", "--json").json()["hits"][0]["id"] == PROPOSED
    r = run_cli("promote", PROPOSED, "--json")
    assert r.code == 0 and r.json()["to"] == "published", r.err


def test_a_subfolder_deleted_takes_its_memories_out(checkout: Path) -> None:
    assert ids(run_cli("search", "stampede", "--json").json()) == [LESSON]
    git("rm", "-q", "-r", f"{MEM}/lessons", cwd=checkout)
    assert not (checkout / MEM / "lessons").exists()
    assert ids(run_cli("search", "stampede", "--json").json()) == []
    r = run_cli("show", LESSON)
    assert r.code == 1 and "no memory with id" in r.err


def settle(folder: Path) -> None:
    """Date every folder under `folder` an hour back: older than the racy window, so the walk
    that sees them is recorded (`index.stores.known_tree`)."""
    old = os.stat(folder).st_mtime - 3600
    for here, _dirs, _files in os.walk(folder):
        os.utime(here, (old, old))


def recorded_tree(checkout: Path) -> list[str]:
    import json
    import sqlite3

    with sqlite3.connect(checkout / ".git" / "memex" / "index.db") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key LIKE 'tree:%'").fetchone()
    return [] if row is None else [Path(f[0]).name for f in json.loads(row[0])]


def test_the_recorded_folder_tree_notices_new_and_deleted_subfolders(checkout: Path) -> None:
    settle(checkout / MEM)
    assert ids(run_cli("search", "readiness", "--json").json()) == [PROPOSED]
    assert recorded_tree(checkout) == ["open-memex", "engineering", "lessons", "incidents"]
    new = "01JCHECKOUT00000000000NEW1"
    put(checkout / MEM / "architecture", new, "Queues carry idempotency keys.")  # a new top subfolder
    assert ids(run_cli("search", "idempotency", "--json").json()) == [new]
    settle(checkout / MEM)
    assert run_cli("search", "idempotency").code == 0
    deeper = "01JCHECKOUT00000000000NEW2"
    put(checkout / MEM / "lessons" / "incidents" / "2026", deeper, "Failover drills run monthly.")  # three down
    assert ids(run_cli("search", "failover", "--json").json()) == [deeper]
    settle(checkout / MEM)
    assert run_cli("search", "failover").code == 0
    shutil.rmtree(checkout / MEM / "lessons")
    assert ids(run_cli("search", "failover", "--json").json()) == []
    assert ids(run_cli("search", "stampede", "--json").json()) == []
    assert ids(run_cli("search", "idempotency", "--json").json()) == [new]


@pytest.mark.parametrize("where", ["out of the clone", "elsewhere in the work tree"])
def test_a_linked_subfolder_and_a_hidden_one_are_not_read(checkout: Path, tmp_path: Path, where: str) -> None:
    elsewhere = tmp_path / "elsewhere" if where == "out of the clone" else checkout / "notes"
    put(elsewhere, OUTSIDE, "The payroll export runs at midnight.")
    os.symlink(elsewhere, checkout / MEM / "linked")
    put(checkout / MEM / ".drafts", HIDDEN, "The payroll export is hidden.")
    r = run_cli("search", "payroll", "--json")
    assert r.code == 0 and ids(r.json()) == [] and "warnings" not in r.json(), r.out  # skipped, as the org walk skips it
    for mid in (OUTSIDE, HIDDEN):
        r = run_cli("show", mid)
        assert r.code == 1 and "no memory with id" in r.err, r.out
    r = run_cli("reindex", "--full")
    assert r.code == 0, r.err
    assert ids(run_cli("search", "payroll", "--json").json()) == []
    # the subfolders beside them still are
    assert ids(run_cli("search", "readiness", "--json").json()) == [PROPOSED]


# ------------------------------------------------------------------ the seed's layout
SEED_A = "01JSEEDLAYOUT0000000000001"
SEED_B = "01JSEEDLAYOUT0000000000002"
SEED_C = "01JSEEDLAYOUT0000000000003"


@pytest.fixture
def company_memory(tmp_path: Path) -> Path:
    """A bare `company-memory` remote in the seed's layout (V2-DESIGN §6): category folders at
    its root, a README beside them, a docs/ folder that is not memory, no .ai/open-memex/."""
    remote, seed = bare_and_clone(tmp_path, "company-memory")
    put(seed / "engineering", SEED_A, "Services log structured JSON with a request id.", "constraint")
    put(seed / "decisions" / "2026", SEED_B, "Deploys go through the blue green pipeline.")
    (seed / "README.md").write_text("# company memory\n\nNot a memory file.\n")
    (seed / "docs").mkdir()
    (seed / "docs" / "howto.md").write_text("How to add a memory.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "seed layout", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    return remote


def test_org_add_takes_the_seed_layout(repo: Path, company_memory: Path, tmp_path: Path) -> None:
    r = run_cli("org", "add", "acme", str(company_memory), "--json")
    assert r.code == 0, r.err
    assert r.json()["memories"] == 2 and "warnings" not in r.json() and r.json()["quarantined"] == 0
    res = run_cli("search", "request id", "--scope", "org", "--json").json()
    assert ids(res) == [SEED_A] and res["hits"][0]["org"] == "acme"
    assert ids(run_cli("search", "blue green", "--scope", "org", "--json").json()) == [SEED_B]
    listed = run_cli("org", "list", "--json").json()["orgs"]
    assert [(o["name"], o["state"], o["memories"]) for o in listed] == [("acme", "ok", 2)]
    checks = [c for c in run_cli("doctor", "--json").json()["checks"] if c["name"].startswith("org acme")]
    assert [c["level"] for c in checks] == ["ok"], checks

    # a pull brings a new category folder's memory, read from the diff
    seed = tmp_path / "company-memory"
    put(seed / "lessons", SEED_C, "Cold caches stampede after a deploy.", "lesson")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "a lesson", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "pull", "--json")
    assert r.code == 0, r.err
    got = r.json()["orgs"][0]
    assert got["changed"] == [f"lessons/{SEED_C}.md"] and got["reindexed"]["memories"] == 3
    assert ids(run_cli("search", "stampede", "--scope", "org", "--json").json()) == [SEED_C]


def test_org_add_refuses_a_repository_whose_category_folders_hold_no_memory(repo: Path, tmp_path: Path) -> None:
    remote, seed = bare_and_clone(tmp_path, "notes")
    (seed / "engineering").mkdir()
    (seed / "engineering" / "onboarding.md").write_text("# Onboarding\n\nAsk for a laptop.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "notes", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "add", "notes", str(remote))
    assert r.code == 2 and "is not a memory repository" in r.err and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert not (Path(os.environ["GIT_MEMEX_HOME"]) / "org" / "notes").exists()
    assert git("config", "--get", "memex.org.notes.url", cwd=repo, check=False).returncode == 1


def test_a_pull_into_the_checkout_indexes_and_checks_subfolder_files(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Two curators' checkouts of one org repo: the post-merge hook `git pull --ff-only` runs
    re-reads the memory files in subfolders the pull brought, and names one holding a secret."""
    remote, mine = bare_and_clone(tmp_path, "mine")
    (mine / "README.md").write_text("org memory\n")
    assert run_cli("init", "--yes", cwd=mine).code == 0
    git("add", "-A", cwd=mine)
    git("commit", "-q", "-m", "set up", cwd=mine)
    git("push", "-q", "-u", "origin", "main", cwd=mine)
    theirs = tmp_path / "theirs"
    git("clone", "-q", str(remote), str(theirs))
    assert run_cli("init", "--yes", cwd=theirs).code == 0
    assert run_cli("list", cwd=mine).code == 0  # the index exists
    put(theirs / MEM / "engineering", PROPOSED, "Every service exposes a readiness probe.")
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    put(theirs / MEM / "policies", LESSON, f"The deploy bot logs in with {token}.")
    git("add", "-A", cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "two in subfolders", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)
    r = git("pull", "-q", "--ff-only", cwd=mine)
    assert "index updated (2 added" in r.stderr, r.stderr
    assert f"{MEM}/policies/{LESSON}.md" in r.stderr and token not in r.stderr
    monkeypatch.chdir(mine)
    assert ids(run_cli("search", "readiness", "--json").json()) == [PROPOSED]


def test_propose_to_a_seed_layout_org_is_refused_in_one_sentence(ready: Path, company_memory: Path) -> None:
    assert run_cli("org", "add", "acme", str(company_memory)).code == 0
    r = run_cli("add", "Retries need jitter and a cap", "--json")
    assert r.code == 0, r.err
    mid = r.json()["id"]
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        assert run_cli("promote", mid, env=BOB).code == 0
    git("commit", "-q", "-am", f"publish {mid}", cwd=ready)
    clone = Path(os.environ["GIT_MEMEX_HOME"]) / "org" / "acme"
    before = (git("rev-parse", "HEAD", cwd=clone).stdout, git("branch", "--list", cwd=clone).stdout)
    r = run_cli("propose", mid, "--to", "org", "acme")
    assert r.code == 1 and "seed's layout" in r.err and "Traceback" not in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1
    assert (git("rev-parse", "HEAD", cwd=clone).stdout, git("branch", "--list", cwd=clone).stdout) == before
    assert not (clone / MEM).exists()
    assert git("status", "--porcelain", cwd=clone).stdout == ""


def test_audit_in_a_subscribed_checkout_finds_no_drift(checkout: Path, company_memory: Path) -> None:
    assert run_cli("org", "add", "acme", str(company_memory)).code == 0
    assert run_cli("reindex").code == 0  # audit itself never refreshes: drift is one of its findings
    r = run_cli("audit", "--json")
    assert r.code == 0, r.err
    res = r.json()
    assert res["index_drift"] == [] and res["unreadable"] == [], res
    assert res["scanned"] >= 2  # the checkout's subfolders are read from disk, as the index reads them

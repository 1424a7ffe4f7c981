"""`git memex audit` (read-only) through the real CLI, its finders as plain functions, and the
pre-commit hook refusing a dangling `superseded_by` under real `git commit` (docs/curating.md)."""

from __future__ import annotations

import random
from pathlib import Path

from git_memex.core import frontmatter, model
from git_memex.core.textproc import jaccard
from git_memex.upkeep.audit import near_duplicate_pairs, stale_memories

from conftest import git, run_cli

MEM = ".ai/open-memex"


def add(*args: str, **kw) -> str:
    r = run_cli("add", *args, "--json", **kw)
    assert r.code == 0, r.err
    return r.json()["id"]


def audit(*args: str) -> dict:
    r = run_cli("audit", *args, "--json")
    assert r.code == 0, r.err
    return r.json()


def snapshot(*roots: Path) -> dict[str, tuple[int, bytes]]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and "index" not in p.name and not p.name.endswith((".db", "-wal", "-shm", ".lock")):
                out[str(p)] = (p.stat().st_mtime_ns, p.read_bytes())
    return out


def committed(text: str) -> str:
    mid = add(text)
    r = run_cli("submit", mid)
    assert r.code == 0, r.err
    return mid


def write_memory_file(folder: Path, body: str, **fm) -> str:
    m = model.create(body, scope=fm.pop("scope", "project"), review_state=fm.pop("review_state", "proposed"))
    m.fm.update(fm)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    return m.id


# ------------------------------------------------------------------ the finders as functions
def test_near_duplicate_pairs_equal_brute_force():
    rng = random.Random(7)
    words = ["deploy", "release", "tag", "branch", "main", "tuesday", "friday", "build", "cache", "docker", "image", "test", "lint", "ruff"]
    rows = []
    for i in range(120):
        body = " ".join(rng.sample(words, rng.randint(3, 8)))
        rows.append({"id": f"M{i:03d}", "body": body, "status": "active",
                     "location": "personal" if i % 5 == 0 else "outbox"})
    for t in (0.5, 0.8, 1.0):
        got = {(p.a, p.b) for p in near_duplicate_pairs(rows, t)}
        want = {tuple(sorted((a["id"], b["id"]))) for i, a in enumerate(rows) for b in rows[i + 1:]
                if (a["location"] == "personal") == (b["location"] == "personal") and jaccard(a["body"], b["body"]) >= t}
        assert got == want and want  # the filter misses no pair and invents none


def test_stale_memories_by_days():
    rows = [
        {"id": "OLD", "status": "active", "location": "repo", "type": "fact",
         "updated_at": "2026-01-01T00:00:00Z", "created_at": "2025-12-01T00:00:00Z"},
        {"id": "NEW", "status": "active", "location": "repo", "type": "fact",
         "updated_at": "2026-11-30T00:00:00Z", "created_at": "2026-11-30T00:00:00Z"},
        {"id": "GONE", "status": "retracted", "location": "repo", "type": "fact",
         "updated_at": "2020-01-01T00:00:00Z", "created_at": None},
    ]
    now = model.parse_time("2026-12-01T00:00:00Z")
    got = stale_memories(rows, days=90, now=now)
    assert [(s.id, s.days) for s in got] == [("OLD", 334)]
    assert [s.id for s in stale_memories(rows, days=400, now=now)] == []


# ------------------------------------------------------------------ the command
def test_audit_lists_near_duplicates_and_stale_memories(repo: Path, isolated_env: Path):
    a = add("Releases are tagged from the main branch every Tuesday")
    b = add("Releases are tagged from the main branch every Tuesday morning")
    add("Ruff is the linter")
    old = write_memory_file(isolated_env / "data" / "memories" / "personal", "I used to prefer tabs",
                            scope="personal", review_state=None, visibility="private",
                            updated_at="2025-01-01T00:00:00Z", created_at="2025-01-01T00:00:00Z")
    res = audit()
    assert [(d["a"], d["b"]) for d in res["near_duplicates"]] == [tuple(sorted((a, b)))]
    assert [s["id"] for s in res["stale"]] == [old] and res["stale"][0]["days"] >= 90
    assert res["clean"] is False
    text = run_cli("audit")
    assert text.code == 0 and "near-duplicates" in text.out and "stale" in text.out and old in text.out
    assert audit("--days", "100000")["stale"] == []
    bad = run_cli("audit", "--days", "0")
    assert bad.code == 1 and "Traceback" not in bad.err


def test_audit_reports_dangling_and_unsubmitted_chains(ready: Path):
    folder = ready / MEM
    a = committed("Releases are tagged from main")
    hidden = write_memory_file(folder, "CI runs on every push", status="superseded",
                               superseded_by="01ZZZZZZZZZZZZZZZZZZZZZZZZ")
    new = run_cli("supersede", a, "Releases are tagged from release branches", "--json").json()["id"]
    res = audit()
    kinds = {(c["id"], c["kind"], c["other"]) for c in res["chains"]}
    assert (hidden, "dangling", "01ZZZZZZZZZZZZZZZZZZZZZZZZ") in kinds
    assert (a, "unsubmitted", new) in kinds
    assert "fail" in {c["level"] for c in res["chains"] if c["id"] == hidden}


def test_audit_reports_personal_files_in_the_repo_and_index_drift_and_changes_nothing(ready: Path, isolated_env: Path):
    folder = ready / MEM
    committed("Releases are tagged from main")
    p = write_memory_file(folder, "I prefer rebase", scope="personal", review_state=None, visibility="private")
    d = add("Deploys happen on Tuesdays")
    assert run_cli("list").code == 0  # indexes everything as it is now
    outbox = next((isolated_env / "data" / "memories" / "outbox").rglob(f"{d}.md"))
    outbox.write_text(outbox.read_text().replace("Tuesdays", "Fridays"))
    before = snapshot(ready, isolated_env / "data")
    res = audit()
    assert [x["id"] for x in res["personal_in_repo"]] == [p]
    assert [(Path(x["path"]).stem, x["problem"]) for x in res["index_drift"]] == [(d, "changed since it was indexed")]
    assert audit()["index_drift"] == res["index_drift"]  # audit did not refresh the index
    assert snapshot(ready, isolated_env / "data") == before  # nor touch a file
    assert run_cli("reindex").code == 0
    assert audit()["index_drift"] == []


def test_audit_flags_a_self_approved_memory_in_team_mode(ready: Path):
    mid = committed("Docker images are built in CI only")
    assert run_cli("promote", mid).code == 0  # proposed → approved by the proposer
    res = audit()
    assert [x["id"] for x in res["self_approved"]] == [mid]
    solo = add("I keep notes in the wiki", "--scope", "personal")
    copy = run_cli("propose", solo, "--local-approve", "--json")
    assert copy.code == 0, copy.err
    cid = copy.json()[0]["id"] if isinstance(copy.json(), list) else copy.json()["proposed"][0]["id"]
    assert run_cli("submit", cid).code == 0
    assert cid not in [x["id"] for x in audit()["self_approved"]]  # solo mode says so in its history


def test_a_clean_store_audits_clean(ready: Path):
    committed("Releases are tagged from main")
    res = audit()
    assert res["clean"] is True and res["scanned"] == 1
    assert run_cli("audit").out.splitlines()[-1] == "nothing to tend"


# ------------------------------------------------------------------ the pre-commit hook
def commit(work: Path, *args: str):
    return git("commit", "-q", *args, cwd=work, check=False)


def test_commit_a_refuses_a_superseded_by_whose_successor_is_not_committed(ready: Path):
    a = committed("Releases are tagged from main")
    new = run_cli("supersede", a, "Releases are tagged from release branches", "--json").json()["id"]
    r = commit(ready, "-am", "supersede by hand")
    assert r.returncode != 0
    assert f"{MEM}/{a}.md:" in r.stderr and "dangling-superseded-by" in r.stderr and new in r.stderr
    assert git("rev-list", "--count", "HEAD", cwd=ready).stdout.strip() == "3"  # nothing committed
    git("add", "-A", cwd=ready)
    scan = run_cli("scan", "--staged")  # what the pre-commit framework's hook runs
    assert scan.code == 1 and "dangling-superseded-by" in scan.out
    git("reset", "-q", cwd=ready)
    # the way the message names: submit commits the successor with the memory it replaces
    assert run_cli("submit", new).code == 0
    assert git("status", "--porcelain", cwd=ready).stdout == ""
    assert audit()["chains"] == []


def test_plain_commit_refuses_a_hand_written_dangling_pointer(ready: Path):
    folder = ready / MEM
    a = committed("CI runs on every push")
    path = folder / f"{a}.md"
    path.write_text(path.read_text().replace("superseded_by: null", "superseded_by: 01ZZZZZZZZZZZZZZZZZZZZZZZZ")
                    .replace("status: active", "status: superseded"))
    git("add", str(path), cwd=ready)
    r = commit(ready, "-m", "x")
    assert r.returncode != 0 and "dangling-superseded-by" in r.stderr and "01ZZZZZZZZZZZZZZZZZZZZZZZZ" in r.stderr
    # the successor committed with it: accepted
    succ = write_memory_file(folder, "CI runs on every push and nightly")
    path.write_text(path.read_text().replace("01ZZZZZZZZZZZZZZZZZZZZZZZZ", succ))
    git("add", "-A", cwd=ready)
    r = commit(ready, "-m", "x")
    assert r.returncode == 0, r.stderr


def test_deleting_a_successor_that_a_committed_memory_names_is_refused(ready: Path):
    a = committed("Releases are tagged from main")
    new = run_cli("supersede", a, "Releases are tagged from release branches", "--json").json()["id"]
    assert run_cli("submit", new).code == 0
    git("rm", "-q", f"{MEM}/{new}.md", cwd=ready)
    r = commit(ready, "-m", "drop it")
    assert r.returncode != 0 and f"{MEM}/{a}.md:" in r.stderr and f"deletes {new}" in r.stderr
    git("reset", "-q", "--hard", cwd=ready)
    (ready / MEM / f"{new}.md").unlink()
    r = commit(ready, "-am", "drop it with -a")
    assert r.returncode != 0 and "dangling-superseded-by" in r.stderr


def test_the_finders_take_index_rows_as_inventory_does(repo: Path):
    """`inventory` reuses the finders on index rows (sqlite3.Row of `SELECT m.* FROM memories m`)."""
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores

    a = add("Releases are tagged from the main branch every Tuesday")
    b = add("Releases are tagged from the main branch every Tuesday morning")
    with Stores(load_context()) as st:
        st.refresh()
        rows = [r for index, where, params in st.dbs()
                for r in index.conn.execute(f"SELECT m.* FROM memories m WHERE {where}", params)]
        assert [(p.a, p.b) for p in near_duplicate_pairs(rows)] == [tuple(sorted((a, b)))]
        assert stale_memories(rows) == [] and len(stale_memories(rows, days=1, now=4e9)) == 2
        from git_memex.upkeep.audit import chain_problems

        assert chain_problems(rows) == []


def test_doctor_warns_about_a_dangling_successor(ready: Path):
    hidden = write_memory_file(ready / MEM, "CI runs on every push", status="superseded",
                               superseded_by="01ZZZZZZZZZZZZZZZZZZZZZZZZ")
    r = run_cli("doctor", "--json")
    msgs = [c["detail"] for c in r.json()["checks"] if c["name"] == "supersede chain"]
    assert any(hidden in m and "does not exist" in m for m in msgs), msgs


def test_submit_refuses_a_draft_whose_successor_stays_behind(ready: Path):
    """submit commits through libgit2, which runs no hooks: it makes the hook's check itself."""
    a = add("Releases are tagged from main")
    b = run_cli("supersede", a, "Releases are tagged from release branches", "--json").json()["id"]
    before = git("rev-parse", "HEAD", cwd=ready).stdout
    r = run_cli("submit", a)
    assert r.code == 2 and f"submit {a} {b}" in r.err and "Traceback" not in r.err
    assert git("rev-parse", "HEAD", cwd=ready).stdout == before and not (ready / MEM / f"{a}.md").exists()
    r = run_cli("submit", a, b)
    assert r.code == 0, r.err
    assert audit()["chains"] == []

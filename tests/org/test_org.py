"""Org memory (docs/org.md): a real bare org remote, a seed clone that pushes org memory files,
two project clones that subscribe with `git memex org add`, search across scopes, `org pull`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
LOGS = "01JORG0000000000000000LOGS"
DEPLOY = "01JORG00000000000000DEPLOY"
RETRY = "01JORG000000000000000RETRY"


def org_file(folder: Path, mid: str, type_: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{mid}.md").write_text(
        f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: {type_}\nstatus: active\n"
        f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{body}\n")


@pytest.fixture
def org(tmp_path: Path) -> tuple[Path, Path]:
    """(bare org remote, seed clone): two org memories pushed, one flat and one in engineering/."""
    remote, seed = bare_and_clone(tmp_path)
    org_file(seed / MEM / "engineering", LOGS, "constraint", "Every service logs structured JSON with a request id.")
    org_file(seed / MEM, DEPLOY, "decision", "Deploys go through the blue green pipeline, never by hand.")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "two org memories", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    return remote, seed


def project(tmp_path: Path, name: str) -> Path:
    work = tmp_path / name
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "README.md").write_text(f"{name}\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "init", cwd=work)
    return work


@pytest.fixture
def two(tmp_path: Path, org: tuple[Path, Path]) -> tuple[Path, Path, Path, Path]:
    """(project a, project b, org remote, org seed); a subscribes to the org, b does not yet."""
    remote, seed = org
    a, b = project(tmp_path, "a"), project(tmp_path, "b")
    r = run_cli("org", "add", "acme", str(remote), cwd=a)
    assert r.code == 0, r.err
    return a, b, remote, seed


def data_root() -> Path:
    return Path(os.environ["GIT_MEMEX_HOME"])


def ids(res: dict, key: str = "hits") -> list[str]:
    return [h["id"] for h in res[key]]


def test_add_clones_records_and_indexes(two: tuple[Path, Path, Path, Path]) -> None:
    a, b, remote, _ = two
    clone = data_root() / "org" / "acme"
    assert git("rev-parse", "--is-inside-work-tree", cwd=clone).stdout.strip() == "true"  # a normal clone
    assert (clone / MEM / "engineering" / f"{LOGS}.md").is_file()
    assert git("config", "--local", "--get", "memex.org.acme.url", cwd=a).stdout.strip() == str(remote)
    assert git("config", "--global", "--get", "memex.org.acme.url", check=False).returncode == 1  # repo-local
    listed = run_cli("org", "list", "--json", cwd=a).json()["orgs"]
    assert [(o["name"], o["url"], o["state"], o["memories"]) for o in listed] == [("acme", str(remote), "ok", 2)]
    assert run_cli("org", "list", "--json", cwd=b).json()["orgs"] == []  # b never subscribed


def test_search_across_scopes_with_the_org_label(two: tuple[Path, Path, Path, Path]) -> None:
    a, b, _, _ = two
    assert run_cli("add", "Our service logs JSON to stdout for the collector", "--json", cwd=a).code == 0
    every = run_cli("search", "logs", "JSON", "--json", cwd=a).json()
    assert LOGS in ids(every) and len(every["hits"]) == 2  # the default (all) takes in the org
    hit = next(h for h in every["hits"] if h["id"] == LOGS)
    assert (hit["org"], hit["location"], hit["scope"]) == ("acme", "org:acme", "org")
    assert ids(run_cli("search", "logs", "JSON", "--scope", "org", "--json", cwd=a).json()) == [LOGS]
    assert ids(run_cli("search", "deploys", "--scope", "all", "--json", cwd=a).json()) == [DEPLOY]
    for scope in ("both", "project", "personal"):
        res = run_cli("search", "logs", "JSON", "--scope", scope, "--json", cwd=a).json()
        assert LOGS not in ids(res), scope
    text = run_cli("search", "request", "id", cwd=a).out
    assert "org acme/constraint" in text
    listed = run_cli("list", "--scope", "org", "--json", cwd=a).json()
    assert sorted(ids(listed, "memories")) == sorted([LOGS, DEPLOY])
    assert {m["org"] for m in listed["memories"]} == {"acme"}
    assert "Org:" in run_cli("list", cwd=a).out
    assert ids(run_cli("search", "deploys", "--json", cwd=b).json()) == []  # b is not subscribed
    shown = run_cli("show", DEPLOY, "--json", cwd=a).json()
    assert shown["path"] == str(data_root() / "org" / "acme" / MEM / f"{DEPLOY}.md")
    # b subscribes too: the clone in the data root is shared, both see it
    assert run_cli("org", "add", "acme", str(two[2]), cwd=b).code == 0
    assert ids(run_cli("search", "deploys", "--json", cwd=b).json()) == [DEPLOY]


def test_mcp_tools_see_org_memories(two: tuple[Path, Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio
    import mcp

    from git_memex.agents.mcp_server import build_server

    a = two[0]
    monkeypatch.chdir(a)

    def call(tool: str, args: dict) -> dict:
        async def main() -> dict:
            async with mcp.Client(build_server(a)) as client:
                res = await client.call_tool(tool, args)
                assert not res.is_error and isinstance(res.structured_content, dict)
                return res.structured_content
        return anyio.run(main)

    found = call("memory_search", {"query": "blue green pipeline"})
    assert [(h["id"], h.get("org")) for h in found["hits"]] == [(DEPLOY, "acme")]
    assert call("memory_search", {"query": "blue green pipeline", "scope": "both"})["hits"] == []
    listed = call("memory_list", {"scope": "org"})
    assert sorted(m["id"] for m in listed["memories"]) == sorted([LOGS, DEPLOY])


def test_org_pull_brings_a_new_org_memory(two: tuple[Path, Path, Path, Path]) -> None:
    a, _, _, seed = two
    assert ids(run_cli("search", "retries", "--json", cwd=a).json()) == []
    up = run_cli("org", "pull", "--json", cwd=a).json()["orgs"]
    assert [(r["name"], r["state"]) for r in up] == [("acme", "up-to-date")]
    org_file(seed / MEM / "lessons", RETRY, "lesson", "Retries need jitter and a cap, or they stampede.")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "a lesson", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "pull", "acme", cwd=a)
    assert r.code == 0, r.err
    assert "org acme: fast-forward" in r.out and "(1 memory file changed)" in r.out
    hit = run_cli("search", "retries", "--json", cwd=a).json()["hits"]
    assert [(h["id"], h["org"]) for h in hit] == [(RETRY, "acme")]
    assert run_cli("org", "list", "--json", cwd=a).json()["orgs"][0]["memories"] == 3


def test_org_pull_refuses_a_diverged_clone(two: tuple[Path, Path, Path, Path]) -> None:
    a, _, _, seed = two
    clone = data_root() / "org" / "acme"
    (clone / "local.txt").write_text("x\n")
    git("add", "local.txt", cwd=clone)
    git("commit", "-q", "-m", "local", cwd=clone)
    (seed / "other.txt").write_text("y\n")
    git("add", "other.txt", cwd=seed)
    git("commit", "-q", "-m", "other", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    head = git("rev-parse", "HEAD", cwd=clone).stdout
    r = run_cli("org", "pull", cwd=a)
    assert r.code == 2 and "diverged" in r.err and "Traceback" not in r.err
    assert git("rev-parse", "HEAD", cwd=clone).stdout == head


def test_org_pull_of_a_clone_only_ahead_says_local_commits(two: tuple[Path, Path, Path, Path]) -> None:
    a = two[0]
    clone = data_root() / "org" / "acme"
    (clone / "local.txt").write_text("x\n")
    git("add", "local.txt", cwd=clone)
    git("commit", "-q", "-m", "local", cwd=clone)
    head = git("rev-parse", "HEAD", cwd=clone).stdout
    r = run_cli("org", "pull", cwd=a)
    assert r.code == 2 and "has local commits that origin/main lacks" in r.err and "diverged" not in r.err, r.err
    assert git("rev-parse", "HEAD", cwd=clone).stdout == head


def test_global_subscription_and_remove(org: tuple[Path, Path], tmp_path: Path) -> None:
    remote, _ = org
    a, b = project(tmp_path, "a"), project(tmp_path, "b")
    r = run_cli("org", "add", "acme", str(remote), "--global", "--branch", "main", cwd=a)
    assert r.code == 0, r.err
    assert git("config", "--global", "--get", "memex.org.acme.branch").stdout.strip() == "main"
    assert ids(run_cli("search", "deploys", "--json", cwd=b).json()) == [DEPLOY]  # every project
    r = run_cli("org", "remove", "acme", cwd=b)
    assert r.code == 0, r.err
    assert not (data_root() / "org" / "acme").exists()
    assert git("config", "--global", "--get", "memex.org.acme.url", check=False).returncode == 1
    assert ids(run_cli("search", "deploys", "--json", cwd=a).json()) == []
    r = run_cli("org", "remove", "acme", cwd=a)
    assert r.code == 1 and "not subscribed" in r.err


def test_remove_in_one_project_keeps_the_clone_another_uses(two: tuple[Path, Path, Path, Path]) -> None:
    """Two projects subscribed repo-locally share the clone in the data root: removing it in one
    deleted it under the other, which then found the clone missing."""
    a, b, remote, _ = two
    assert run_cli("org", "add", "acme", str(remote), cwd=b).code == 0  # reuses a's clone
    clone = data_root() / "org" / "acme"
    git("switch", "-q", "-c", "memex/promote-x", cwd=clone)  # a's unpushed branch: kept, so not refused
    git("commit", "-q", "--allow-empty", "-m", "not yet pushed", cwd=clone)
    r = run_cli("org", "remove", "acme", "--json", cwd=a)
    assert r.code == 0, r.err
    res = r.json()
    assert res["clone_removed"] is False and res["kept_for"] == [str(b / ".git" / "config")]
    assert git("config", "--local", "--get", "memex.org.acme.url", cwd=a, check=False).returncode == 1
    assert ids(run_cli("search", "deploys", "--json", cwd=b).json()) == [DEPLOY]  # b still reads it
    assert ids(run_cli("search", "deploys", "--json", cwd=a).json()) == []
    assert git("status", "--porcelain", cwd=clone).stdout == ""  # the record is in the git dir
    git("switch", "-q", "main", cwd=clone)
    git("branch", "-q", "-D", "memex/promote-x", cwd=clone)
    r = run_cli("org", "remove", "acme", cwd=b)  # the last user: the clone goes
    assert r.code == 0 and f"deleted {clone}" in r.out, r.err
    assert not clone.exists()


def test_a_project_that_dropped_its_org_by_hand_does_not_keep_the_clone(two: tuple[Path, Path, Path, Path]) -> None:
    a, b, remote, _ = two
    assert run_cli("org", "add", "acme", str(remote), cwd=b).code == 0
    git("config", "--remove-section", "memex.org.acme", cwd=b)
    r = run_cli("org", "remove", "acme", "--json", cwd=a)
    assert r.code == 0 and r.json()["clone_removed"] is True and r.json()["kept_for"] == [], r.err
    assert not (data_root() / "org" / "acme").exists()


def test_a_subscription_made_before_the_record_is_counted_after_its_next_pull(
        two: tuple[Path, Path, Path, Path]) -> None:
    a, b, remote, _ = two
    assert run_cli("org", "add", "acme", str(remote), cwd=b).code == 0
    record = data_root() / "org" / "acme" / ".git" / "memex" / "users.json"
    record.unlink()  # as a clone subscribed to with an earlier version has none
    assert run_cli("org", "pull", cwd=b).code == 0
    r = run_cli("org", "remove", "acme", "--json", cwd=a)
    assert r.code == 0 and r.json()["kept_for"] == [str(b / ".git" / "config")], r.err
    assert oct(record.stat().st_mode & 0o777) == "0o600"


def _unchanged(work: Path) -> tuple[str, list[str]]:
    cfg = git("config", "--get-regexp", r"^memex\.org\.", cwd=work, check=False).stdout
    folder = data_root() / "org"
    return cfg, sorted(os.listdir(folder)) if folder.is_dir() else []


@pytest.mark.parametrize(("args", "code", "words"), [
    (("org", "add", "Acme!", "URL"), 1, "is not a valid org name"),
    (("org", "add", "other", "/nowhere/org.git"), 2, "cannot clone /nowhere/org.git"),
    (("org", "add", "plain", "PLAIN"), 2, "is not a memory repository"),
    (("org", "add", "acme", "REMOTE"), 1, "already subscribed"),
    (("org", "pull", "nosuch"), 1, "is not subscribed"),
    (("org", "remove", "nosuch"), 1, "is not subscribed"),
])
def test_bad_input_is_one_sentence_and_changes_nothing(two: tuple[Path, Path, Path, Path], tmp_path: Path,
                                                       args: tuple[str, ...], code: int, words: str) -> None:
    a, _, remote, _ = two
    plain = project(tmp_path, "plain")  # a git repository without a memory folder
    args = tuple(str(plain) if x == "PLAIN" else str(remote) if x == "REMOTE" else x for x in args)
    before = _unchanged(a)
    r = run_cli(*args, cwd=a)
    assert r.code == code, (r.code, r.err)
    assert words in r.err and "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1
    assert _unchanged(a) == before


def test_a_clone_deleted_by_hand(two: tuple[Path, Path, Path, Path]) -> None:
    a = two[0]
    shutil.rmtree(data_root() / "org" / "acme")
    r = run_cli("org", "pull", cwd=a)
    assert r.code == 2 and "the clone of org acme is missing" in r.err and len(r.err.strip().splitlines()) == 1
    s = run_cli("search", "deploys", "--json", cwd=a)
    assert s.code == 0 and s.json()["hits"] == []
    assert any("clone of org acme is missing" in w for w in s.json().get("warnings", []))
    assert run_cli("org", "list", "--json", cwd=a).json()["orgs"][0]["state"] == "missing"
    assert run_cli("org", "remove", "acme", cwd=a).code == 0  # the way out
    assert run_cli("org", "list", "--json", cwd=a).json()["orgs"] == []


def test_a_name_clash_with_another_clone_in_the_data_root(two: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    _, b, _, _ = two
    other = tmp_path / "other.git"
    git("init", "-q", "--bare", "-b", "main", str(other))
    r = run_cli("org", "add", "acme", str(other), cwd=b)  # acme in the data root is a's other org
    assert r.code == 1 and "already holds another clone" in r.err
    assert git("config", "--get-regexp", r"^memex\.org\.", cwd=b, check=False).stdout == ""


def test_a_second_project_asking_for_another_branch_is_refused(two: tuple[Path, Path, Path, Path]) -> None:
    """The clone in the data root follows main (a's subscription): b asking for dev is refused with
    one sentence naming that branch, not silently given main; asking for main reuses it."""
    _, b, remote, seed = two
    git("push", "-q", "origin", "main:dev", cwd=seed)
    r = run_cli("org", "add", "acme", str(remote), "--branch", "dev", cwd=b)
    assert r.code == 1 and "follows branch main, not dev" in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert git("config", "--get-regexp", r"^memex\.org\.", cwd=b, check=False).stdout == ""
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=data_root() / "org" / "acme").stdout.strip() == "main"
    r = run_cli("org", "add", "acme", str(remote), "--branch", "main", "--json", cwd=b)
    assert r.code == 0 and r.json()["reused_clone"] is True, r.err


def test_an_org_instruction_never_passes_the_gate(two: tuple[Path, Path, Path, Path]) -> None:
    """No OWNERS file in this org repo: an org rule claiming approved + trusted is not served as one
    (owners: tests/agents/test_owners_org_gate.py)."""
    a, _, _, seed = two
    rule = "01JORG0000000000000000RULE"
    (seed / MEM / f"{rule}.md").write_text(
        f"---\nid: {rule}\nschema_version: 2\nscope: org\ntype: constraint\nrole: instruction\n"
        "instruction_state: approved\ntrust_level: trusted\nstatus: active\nimportance: high\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n"
        "Always run the linter before pushing any service code.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "an org rule", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    assert run_cli("org", "pull", cwd=a).code == 0
    assert [h["id"] for h in run_cli("search", "linter", "--json", cwd=a).json()["hits"]] == [rule]  # indexed
    block = run_cli("context", "-q", "linter before pushing", "--json", cwd=a).json()
    assert block["instructions"] == [] and rule not in block["text"]
    assert any(i["location"] == "org:acme" for i in block["items"])  # org knowledge does reach it


@pytest.mark.parametrize("args", [("forget", DEPLOY), ("supersede", DEPLOY, "Deploys are manual now."),
                                  ("forget", DEPLOY, "--soft"), ("status", DEPLOY, "archived"),
                                  ("instruction", "approve", DEPLOY)])
def test_org_memories_are_not_changed_from_a_project(two: tuple[Path, Path, Path, Path], args: tuple[str, ...]) -> None:
    a = two[0]
    clone = data_root() / "org" / "acme"
    before = (clone / MEM / f"{DEPLOY}.md").read_bytes()
    r = run_cli(*args, cwd=a)
    assert r.code == 1 and "is an org memory" in r.err and len(r.err.strip().splitlines()) == 1
    assert (clone / MEM / f"{DEPLOY}.md").read_bytes() == before
    assert git("status", "--porcelain", cwd=clone).stdout == ""


def test_org_index_freshness_follows_the_clone_commit(two: tuple[Path, Path, Path, Path]) -> None:
    """A search checks an org index by its clone's HEAD, not a stat of every file: a hand edit in the
    clone is not seen until `reindex` (or an `org pull` that moves HEAD) looks at the files."""
    a = two[0]
    clone = data_root() / "org" / "acme"
    org_file(clone / MEM / "lessons", RETRY, "lesson", "Retries need jitter and a cap, or they stampede.")
    assert ids(run_cli("search", "retries", "--json", cwd=a).json()) == []
    r = run_cli("reindex", "--json", cwd=a)
    assert r.code == 0 and r.json()["added"] == 1
    assert ids(run_cli("search", "retries", "--json", cwd=a).json()) == [RETRY]


def test_org_pull_of_changed_files_in_subfolders(two: tuple[Path, Path, Path, Path]) -> None:
    """Nested folders are separate sources of one index: a file just changed in engineering/ (racy,
    its stat too recent to trust) is read once, by its own folder, not also by the parent's."""
    a, _, _, seed = two
    org_file(seed / MEM / "engineering", LOGS, "constraint", "Every service logs structured JSON with a trace id.")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "one changed, the top folder unchanged", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0, r.err
    assert r.json()["orgs"][0]["reindexed"]["changed"] == 1
    assert ids(run_cli("search", "trace", "--json", cwd=a).json()) == [LOGS]
    assert run_cli("reindex", cwd=a).code == 0
    assert run_cli("org", "list", "--json", cwd=a).json()["orgs"][0]["memories"] == 2


def push(seed: Path, message: str) -> None:
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", message, cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)


def org_index_state() -> dict[str, list[tuple]]:
    """What org acme's index holds, without row numbers: every memory row with its search text,
    and every file row (path, content hash, quarantine reason)."""
    import sqlite3

    con = sqlite3.connect(data_root() / "org" / "acme" / ".git" / "memex" / "index.db")
    try:
        cols = [r[1] for r in con.execute("PRAGMA table_info(memories)") if r[1] != "rid"]
        fts = [r[1] for r in con.execute("PRAGMA table_info(memories_fts)")]
        memories = con.execute(f"SELECT {', '.join('m.' + c for c in cols)}, {', '.join('f.' + c for c in fts)} "
                               "FROM memories m JOIN memories_fts f ON f.rowid = m.rid ORDER BY m.path").fetchall()
        files = con.execute("SELECT path, sha, error FROM files ORDER BY path").fetchall()
        counts = con.execute("SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM memories_fts)").fetchall()
        return {"memories": memories, "files": files, "counts": counts}
    finally:
        con.close()


def test_org_pull_leaves_the_index_equal_to_a_full_reindex(two: tuple[Path, Path, Path, Path]) -> None:
    """A pull reads only the files its diff names: changed, added and deleted files, a whole deleted
    subfolder, a new one, a quarantined file, hidden and non-memory files; the index it leaves is
    the one `reindex --full` builds from scratch."""
    a, _, _, seed = two
    org_file(seed / MEM / "decisions", "01JORG00000000000000000OLD", "decision", "Old decision about queues.")
    org_file(seed / MEM / "decisions", "01JORG0000000000000000OLD2", "decision", "Another old queue decision.")
    push(seed, "a folder that goes next")
    assert run_cli("org", "pull", cwd=a).code == 0
    org_file(seed / MEM / "engineering", LOGS, "constraint", "Every service logs structured JSON with a trace id.")
    (seed / MEM / f"{DEPLOY}.md").unlink()
    shutil.rmtree(seed / MEM / "decisions")
    org_file(seed / MEM / "lessons" / "deep", RETRY, "lesson", "Retries need jitter and a cap, or they stampede.")
    (seed / MEM / "lessons" / "01JORG00000000000000BROKEN.md").write_text("---\nid: [unclosed\n---\nbody\n")
    org_file(seed / MEM / ".drafts", "01JORG0000000000000000DRAFT", "fact", "A hidden draft about jitter.")
    (seed / MEM / "lessons" / ".01JORG00000000000000HIDDEN.md").write_text("hidden\n")
    (seed / MEM / "lessons" / "notes.txt").write_text("not a memory\n")
    push(seed, "changed, added, deleted")
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0, r.err
    got = r.json()["orgs"][0]
    assert not any("/." in p or not p.endswith(".md") for p in got["changed"]), got["changed"]
    assert len(got["changed"]) == 6  # LOGS, DEPLOY, OLD, OLD2, RETRY, BROKEN changed; not the hidden ones
    assert {k: got["reindexed"][k] for k in ("added", "changed", "removed", "quarantined", "memories")} == \
        {"added": 1, "changed": 1, "removed": 3, "quarantined": 1, "memories": 2}
    after_pull = org_index_state()
    assert [row[0] for row in after_pull["memories"]] == [LOGS, RETRY]
    assert run_cli("reindex", "--full", cwd=a).code == 0
    assert org_index_state() == after_pull
    assert ids(run_cli("search", "jitter", "--json", cwd=a).json()) == [RETRY]
    assert ids(run_cli("search", "queue", "decision", "--json", cwd=a).json()) == []


def test_org_pull_reads_only_the_files_its_diff_names(two: tuple[Path, Path, Path, Path]) -> None:
    """A pull does not re-list the clone's folders: a file added to the clone by hand is not seen by
    the pull (only `reindex` looks at every file); an index not built from the pull's starting
    commit is checked in full."""
    import sqlite3

    a, _, _, seed = two
    clone = data_root() / "org" / "acme"
    org_file(clone / MEM / "engineering", RETRY, "lesson", "Retries need jitter and a cap, or they stampede.")
    org_file(seed / MEM, "01JORG0000000000000000NEWS", "fact", "The status page lives at status.example.")
    push(seed, "one more")
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0, r.err
    assert r.json()["orgs"][0]["reindexed"]["added"] == 1
    assert ids(run_cli("search", "status", "page", "--json", cwd=a).json()) == ["01JORG0000000000000000NEWS"]
    assert ids(run_cli("search", "jitter", "--json", cwd=a).json()) == []  # the hand-made file: not read
    # an index that does not record the commit the pull starts from is checked file by file
    con = sqlite3.connect(clone / ".git" / "memex" / "index.db")
    con.execute("DELETE FROM meta WHERE key = 'org_commit'")
    con.commit()
    con.close()
    org_file(seed / MEM, "01JORG0000000000000000MORE", "fact", "Another fact about the status page.")
    push(seed, "and another")
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0, r.err
    assert r.json()["orgs"][0]["reindexed"]["added"] == 2
    assert ids(run_cli("search", "jitter", "--json", cwd=a).json()) == [RETRY]


def test_reindex_drops_the_memories_of_a_subfolder_deleted_by_hand(two: tuple[Path, Path, Path, Path]) -> None:
    """A deleted subfolder is no source any more; `reindex` (which checks every file) drops its rows."""
    a = two[0]
    shutil.rmtree(data_root() / "org" / "acme" / MEM / "engineering")
    r = run_cli("reindex", "--json", cwd=a)
    assert r.code == 0 and r.json()["removed"] == 1, r.out
    assert ids(run_cli("search", "structured", "JSON", "--json", cwd=a).json()) == []
    assert run_cli("org", "list", "--json", cwd=a).json()["orgs"][0]["memories"] == 1


def test_org_pull_never_overwrites_a_local_change_in_the_clone(two: tuple[Path, Path, Path, Path]) -> None:
    """The fast-forward rewrites only what differs between the two commits and refuses (exit 2,
    clone and index as they were) when one of those files was changed by hand in the clone."""
    a, _, _, seed = two
    clone = data_root() / "org" / "acme"
    mine = clone / MEM / f"{DEPLOY}.md"
    mine.write_text(mine.read_text() + "A local note.\n")
    org_file(seed / MEM, DEPLOY, "decision", "Deploys go through the canary pipeline, never by hand.")
    push(seed, "upstream changes the same file")
    head = git("rev-parse", "HEAD", cwd=clone).stdout
    r = run_cli("org", "pull", cwd=a)
    assert r.code == 2 and "cannot fast-forward org acme" in r.err and "Traceback" not in r.err, r.err
    assert git("rev-parse", "HEAD", cwd=clone).stdout == head
    assert mine.read_text().endswith("A local note.\n")
    assert ids(run_cli("search", "canary", "--json", cwd=a).json()) == []


def test_a_linked_folder_in_the_org_repo_is_not_read(two: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    """A link to a folder is stored by git as a link: a pull's diff cannot name what is behind it,
    so `reindex` does not read it either (it may point out of the clone, or at another folder)."""
    a, _, _, seed = two
    outside = tmp_path / "outside"
    org_file(outside, RETRY, "lesson", "Retries need jitter and a cap, or they stampede.")
    (seed / MEM / "linked").symlink_to(outside, target_is_directory=True)
    (seed / MEM / "again").symlink_to("engineering", target_is_directory=True)
    push(seed, "two linked folders")
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0, r.err
    after_pull = org_index_state()
    assert run_cli("reindex", cwd=a).code == 0
    assert org_index_state() == after_pull
    assert [row[0] for row in after_pull["memories"]] == [DEPLOY, LOGS]
    assert ids(run_cli("search", "jitter", "--json", cwd=a).json()) == []


def test_a_folder_or_file_whose_name_is_not_utf8_is_left_out_with_a_warning(two: tuple[Path, Path, Path, Path]) -> None:
    """A non-UTF-8 name in the org repo (the index keys files by path, as text): the folder or file
    is left out with a warning by `org pull` and by a full scan alike; nothing else breaks."""
    a, _, _, seed = two
    mem = os.fsencode(seed / MEM)
    bad_dir = os.fsdecode(mem + b"/caf\xe9")
    org_file(Path(bad_dir), RETRY, "lesson", "Retries need jitter and a cap, or they stampede.")
    org_file(seed / MEM / "lessons", "01JORG0000000000000000NEWS", "fact", "The status page lives at status.example.")
    Path(os.fsdecode(os.fsencode(seed / MEM / "lessons") + b"/na\xefve.md")).write_text("---\nid: x\n---\nx\n")
    push(seed, "names that are not UTF-8")
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0, r.err
    assert "Traceback" not in r.err and "not valid UTF-8" in r.err, r.err
    got = r.json()["orgs"][0]
    assert got["changed"] == [f"{MEM}/lessons/01JORG0000000000000000NEWS.md"]
    assert got["reindexed"]["added"] == 1
    after_pull = org_index_state()
    for args in (("reindex",), ("search", "jitter"), ("list",), ("doctor",)):
        r = run_cli(*args, cwd=a)
        assert r.code in (0, 1) and "internal error" not in r.err and "Traceback" not in r.err, (args, r.err)
    r = run_cli("reindex", "--full", cwd=a)
    assert r.code == 0 and "caf\\xe9" in r.err and "na\\xefve.md" in r.err, r.err
    assert org_index_state() == after_pull
    assert ids(run_cli("search", "status", "page", "--json", cwd=a).json()) == ["01JORG0000000000000000NEWS"]
    assert ids(run_cli("search", "jitter", "--json", cwd=a).json()) == []

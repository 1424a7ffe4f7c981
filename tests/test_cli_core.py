"""The everyday CLI through real processes: add, show, list, search, supersede, status, forget."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from conftest import git, run_cli, run_cli_process

ULID_LEN = 26


def add(*args: str, **kw) -> dict:
    r = run_cli("add", *args, "--json", **kw)
    assert r.code == 0, r.err
    return r.json()


def test_add_project_memory_lands_in_outbox_not_repo(repo: Path, isolated_env: Path):
    res = add("We deploy with blue-green on Fridays", "--tags", "deploy,ops", "--type", "decision")
    assert len(res["id"]) == ULID_LEN
    assert res["scope"] == "project" and res["review_state"] == "draft"
    assert res["duplicate_of"] is None and res["near_duplicates"] == [] and res["masked"] == []
    assert not (repo / ".ai").exists()  # never in the work tree
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    files = list((isolated_env / "data" / "memories" / "outbox").rglob("*.md"))
    assert [f.stem for f in files] == [res["id"]]
    shown = run_cli("show", res["id"], "--json").json()
    assert shown["frontmatter"]["tags"] == ["deploy", "ops"]
    assert shown["body"] == "We deploy with blue-green on Fridays"


def test_personal_and_private_memories_stay_out_of_the_work_tree(repo: Path, isolated_env: Path):
    p = add("I prefer short commit messages", "--scope", "personal")
    q = add("our staging box is 10.1.2.3", "--visibility", "private")
    data = isolated_env / "data" / "memories"
    assert (data / "personal" / f"{p['id']}.md").exists()
    assert list((data / "private").rglob(f"{q['id']}.md"))
    assert git("status", "--porcelain", "--ignored", cwd=repo).stdout == ""
    mode = os.stat(data / "personal" / f"{p['id']}.md").st_mode & 0o777
    assert mode == 0o600


def test_search_json_shape_and_lanes(repo: Path):
    a = add("PostgreSQL 16 is the billing database", "--tags", "db")
    add("Use ruff for linting Python code")
    r = run_cli("search", "billing database", "--json")
    assert r.code == 0, r.err
    res = r.json()
    assert res["query"] == "billing database"
    hit = res["hits"][0]
    assert hit["id"] == a["id"]
    for key in ("id", "scope", "type", "status", "review_state", "snippet", "score", "lanes"):
        assert key in hit
    assert "bm25" in hit["lanes"]  # "database" also expands to the synonym "db" (a tag here)
    assert len(res["hits"]) == 1  # OR semantics but nothing else matches


def test_search_finds_two_character_chinese_word(repo: Path):
    a = add("数据库迁移之前一定要先备份生产环境", "--type", "lesson")
    add("前端构建使用 vite")
    res = run_cli("search", "备份", "--json").json()
    assert [h["id"] for h in res["hits"]] == [a["id"]]
    assert "cjk" in res["hits"][0]["lanes"]
    mixed = run_cli("search", "vite 构建", "--json").json()
    assert mixed["hits"] and "vite" in mixed["hits"][0]["snippet"]


def test_explain_shows_expression_and_reasons(repo: Path):
    add("Redis is the session store", "--importance", "high")
    r = run_cli("search", "session store", "--explain")
    assert r.code == 0
    assert "fts:" in r.out and '"session"*' in r.out
    assert "bm25" in r.out and "importance×1.1" in r.out


def test_fts_syntax_in_user_text_never_errors(repo: Path):
    add("quotes and stars are fine")
    for q in ['"', '*', 'NEAR(a b', 'a:b', 'AND OR NOT', '(((', "'; DROP TABLE memories; --", "\\"]:
        r = run_cli("search", q, "--json")
        assert r.code == 0, (q, r.err)
        assert "hits" in r.json()


def test_identical_content_is_not_written_twice(repo: Path):
    a = add("Always run make lint before pushing")
    b = add("Always   run make lint\nbefore pushing")
    assert b["id"] == a["id"] and b["duplicate_of"] == a["id"]  # docs/decisions.md, exit codes: `id` names it too
    assert b["review_state"] == "draft" and b["path"] == a["path"]
    c = add("Always run make lint before pushing", "--scope", "personal")  # other scope: written
    assert c["id"]


def test_near_duplicates_are_reported_but_saved(repo: Path):
    a = add("the integration tests need docker compose running locally first")
    b = add("the integration tests need docker compose running locally first!")
    assert b["id"] and b["id"] != a["id"]
    assert b["near_duplicates"] == [a["id"]]


def test_supersede_chain_and_search_shows_only_newest(repo: Path):
    a = add("Node 18 is our runtime")
    r = run_cli("supersede", a["id"], "Node 22 is our runtime", "--json")
    assert r.code == 0, r.err
    new = r.json()
    assert new["supersedes"] == a["id"]
    old = run_cli("show", a["id"], "--json").json()["frontmatter"]
    assert old["status"] == "superseded" and old["superseded_by"] == new["id"]
    assert run_cli("show", new["id"], "--json").json()["frontmatter"]["supersedes"] == a["id"]
    hits = run_cli("search", "runtime", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [new["id"]]
    listed = run_cli("list", "--json").json()
    assert [m["id"] for m in listed["memories"]] == [new["id"]]
    assert run_cli("list", "--include", "all", "--json").json()["total"] == 2
    again = run_cli("supersede", a["id"], "Node 24")
    assert again.code == 2 and "superseded" in again.err


def test_hand_broken_chain_is_repaired_on_read(repo: Path, isolated_env: Path):
    a = add("the API base URL is /v1")
    b = add("the API base URL is /v2 since March")
    # hand-edit: b claims to replace a, a knows nothing
    path = next((isolated_env / "data").rglob(f"{b['id']}.md"))
    text = path.read_text().replace("supersedes: null", f"supersedes: {a['id']}")
    path.write_text(text)
    hits = run_cli("search", "API base URL", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [b["id"]]
    r = run_cli("show", a["id"])
    assert r.code == 0
    assert "superseded" in r.err and b["id"] in r.err
    # doctor names the half-written chain, reindex completes the older side, doctor is then clean
    checks = run_cli("doctor", "--json").json()["checks"]
    broken = [c for c in checks if c["name"] == "supersede chain"]
    assert broken and broken[0]["level"] == "fail" and a["id"] in broken[0]["detail"]
    r = run_cli("reindex", "--json")
    assert r.code == 0 and any(a["id"] in line for line in r.json()["repaired"])
    old = run_cli("show", a["id"], "--json").json()["frontmatter"]
    assert old["status"] == "superseded" and old["superseded_by"] == b["id"]
    checks = run_cli("doctor", "--json").json()["checks"]
    assert not [c for c in checks if c["name"] == "supersede chain"]
    assert any(c["name"] == "supersede chains" and c["level"] == "ok" for c in checks)


def test_a_retracted_replacement_replaces_nothing(repo: Path, isolated_env: Path):
    a = add("the cache TTL is 60 seconds")
    b = add("the cache TTL is 300 seconds")
    path = next((isolated_env / "data").rglob(f"{b['id']}.md"))
    path.write_text(path.read_text().replace("supersedes: null", f"supersedes: {a['id']}"))
    assert [h["id"] for h in run_cli("search", "cache TTL", "--json").json()["hits"]] == [b["id"]]
    assert run_cli("status", b["id"], "retracted").code == 0
    assert [h["id"] for h in run_cli("search", "cache TTL", "--json").json()["hits"]] == [a["id"]]
    # nothing for reindex to complete, so doctor reports no broken chain (before and after reindex)
    for _ in range(2):
        checks = run_cli("doctor", "--json").json()["checks"]
        assert not [c for c in checks if c["name"] == "supersede chain"], checks
        assert run_cli("reindex").code == 0


def test_status_rules(repo: Path):
    a = add("jest is flaky on CI with --watch")
    assert run_cli("status", a["id"], "deprecated").code == 0
    hits = run_cli("search", "jest flaky", "--json").json()["hits"]
    assert hits[0]["status"] == "deprecated"
    assert run_cli("status", a["id"], "retracted").code == 0
    assert run_cli("search", "jest flaky", "--json").json()["hits"] == []
    r = run_cli("status", a["id"], "active")
    assert r.code == 2 and "retracted" in r.err
    r = run_cli("status", a["id"], "superseded")
    assert r.code == 1 and "supersede" in r.err


def test_deprecated_ranks_last(repo: Path):
    a = add("celery workers use the redis broker")
    b = add("celery beat schedule lives in redis broker config redis")
    run_cli("status", b["id"], "deprecated")
    hits = run_cli("search", "redis broker celery", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [a["id"], b["id"]]


def test_forget_hard_and_soft(repo: Path, isolated_env: Path):
    a = add("temporary note about the build cache")
    b = add("another note about the deploy cache")
    assert run_cli("forget", a["id"]).code == 0
    assert not list((isolated_env / "data").rglob(f"{a['id']}.md"))
    assert run_cli("show", a["id"]).code == 1
    assert run_cli("forget", b["id"], "--soft").code == 0
    fm = run_cli("show", b["id"], "--json").json()["frontmatter"]
    assert fm["status"] == "retracted"
    assert run_cli("search", "cache", "--json").json()["hits"] == []


def test_id_prefix_lookup_and_bad_ids(repo: Path):
    a = add("use pnpm, not npm")
    assert run_cli("show", a["id"][:12], "--json").json()["id"] == a["id"]
    for bad in ("../../etc/passwd", "01J/..", ""):
        r = run_cli("show", bad)
        assert r.code == 1
        assert "Traceback" not in r.err and r.err.count("\n") == 1


def test_an_id_another_tool_wrote_in_lower_case_is_found_whole_and_by_prefix(repo: Path):
    """Ids that are not ULIDs (`kestrel-note-one`, written by another tool) were upper-cased
    before the lookup, so neither the whole id nor the prefix `list` printed found the memory."""
    a = add("the kestrel proxy timeout is 45 seconds", "--scope", "personal")
    old = Path(run_cli("show", a["id"], "--json").json()["path"])
    new = old.with_name("kestrel-note-one.md")
    new.write_text(old.read_text(encoding="utf-8").replace(a["id"], "kestrel-note-one"), encoding="utf-8")
    old.unlink()
    printed = [line.split()[0] for line in run_cli("list").out.splitlines() if line.startswith("  ")]
    assert printed == ["kestrel"]
    for typed in ("kestrel-note-one", "kestrel-n", printed[0]):
        r = run_cli("show", typed, "--json")
        assert r.code == 0 and r.json()["id"] == "kestrel-note-one", (typed, r.err)
    assert run_cli("show", "kestrel-note-two").code == 1


def test_bad_input_is_one_sentence_with_documented_exit_code(repo: Path):
    cases = [
        (("add", ""), 1, "empty"),
        (("add", "x y z", "--type", "note"), 1, "invalid choice"),
        (("add", "x y z", "--scope", "team"), 1, "invalid choice"),
        (("show", "01JZZZZZZZZZZZZZZZZZZZZZZZ"), 1, "no memory"),
        (("status", "01JZZZZZZZZZZZZZZZZZZZZZZZ", "active"), 1, "no memory"),
        (("search", "   "), 1, "query"),
        (("frobnicate",), 1, "invalid choice"),
    ]
    for args, code, words in cases:
        r = run_cli(*args)
        assert r.code == code, (args, r.code, r.err)
        assert words in r.err, (args, r.err)
        assert "Traceback" not in r.err
        assert len(r.err.strip().splitlines()) == 1, r.err


def test_unreadable_data_root_is_one_sentence(repo: Path, tmp_path: Path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    r = run_cli("add", "hello there world", env={"GIT_MEMEX_HOME": str(blocker / "sub")})
    assert r.code == 2
    assert "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1


def test_works_without_git(nogit: Path):
    a = add("no git here but memories still work", "--scope", "personal")
    hits = run_cli("search", "memories", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [a["id"]]
    w = run_cli("where", "--json").json()
    assert w["memory_dir"] is None and w["repo_id"].startswith("path-sha256:")


def test_list_newest_first_and_filters(repo: Path):
    ids = [add(f"memory number {i} about topic {i}", "--type", "fact" if i % 2 else "lesson")["id"] for i in range(4)]
    res = run_cli("list", "--json").json()
    assert [m["id"] for m in res["memories"]] == list(reversed(ids))
    assert res["total"] == 4
    lessons = run_cli("list", "--type", "lesson", "--json").json()
    assert {m["id"] for m in lessons["memories"]} == {ids[0], ids[2]}
    assert run_cli("list", "--limit", "1", "--json").json()["total"] == 4


def test_corrupt_index_is_rebuilt(repo: Path, isolated_env: Path):
    a = add("the cache key includes the lockfile hash")
    db = isolated_env / "data" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    hits = run_cli("search", "lockfile", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [a["id"]]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# ------------------------------------------------------------------ refusals and human output
def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_search_limit_zero_and_an_overlong_query_are_refused(repo: Path):
    run_cli("add", "the deploy needs approval")
    r = run_cli("search", "deploy", "--limit", "0")
    assert r.code == 1 and r.out == "" and "at least 1" in _one_line(r.err)
    r = run_cli("search", "deploy " * 300)
    assert r.code == 1 and "2,000" in _one_line(r.err)


def test_show_forget_status_on_a_quarantined_file_say_why(repo: Path, isolated_env: Path):
    mid = run_cli("add", "a memory about to be broken by hand", "--json").json()["id"]
    path = next((isolated_env / "data" / "memories").rglob(f"{mid}.md"))
    path.write_bytes(b"---\nid: " + mid.encode() + b"\nx: [\n---\n\nbroken\n")
    for args in (("show", mid), ("show", mid[:10]), ("forget", mid), ("status", mid, "archived")):
        r = run_cli(*args)
        msg = _one_line(r.err)
        assert r.code == 2 and "unreadable" in msg and "not valid YAML" in msg and "no memory" not in msg, (args, msg)
    assert path.exists()
    r = run_cli("show", "01JHFQ8PMWKVX6KGZH2MXR6QJA")
    assert r.code == 1 and "no memory with id" in r.err


def test_human_search_scores_are_relative_to_the_top_hit(repo: Path):
    run_cli("add", "deploy uses blue green switching")
    run_cli("add", "deploy needs approval")
    r = run_cli("search", "deploy", "blue")
    assert r.code == 0
    lines = r.out.splitlines()
    assert len(lines) == 2 and "0.000" not in r.out
    assert "  1.00  " in lines[0]
    assert isinstance(run_cli("search", "deploy", "--json").json()["hits"][0]["score"], float)


def test_an_unknown_option_points_at_the_subcommand_help(repo: Path):
    for args, name in ((("add", "x", "--bogus"), "add"), (("search", "x", "--bogus"), "search"),
                       (("add", "x", "y"), "add")):
        r = run_cli(*args)
        assert r.code == 1 and f"`git memex {name} --help`" in _one_line(r.err), r.err


def test_related_is_set_by_add_and_listed_by_show_and_canonical_ref_resolved(repo: Path):
    """`add --related ID` (a unique prefix is enough) links memories; `show` lists each link and
    says whether the document `canonical_ref` names exists (never outside the work tree)."""
    a = add("the cache is warmed by the nightly job")["id"]
    b = add("cache misses spike after deploys", "--related", a[:12])["id"]
    r = run_cli("show", b, "--json")
    assert r.code == 0, r.err
    doc = r.json()
    assert doc["frontmatter"]["related"] == [a]
    assert doc["related"] == [{"id": a, "found": True, "status": "active",
                               "snippet": "the cache is warmed by the nightly job"}]
    text = run_cli("show", b).out
    assert f"#   related {a}: the cache is warmed by the nightly job" in text
    bad = run_cli("add", "linked to nothing", "--related", "01ZZZZZZZZZZ")
    assert bad.code == 1 and "no memory with id" in bad.err and "Traceback" not in bad.err
    assert "linked to nothing" not in run_cli("list").out  # refused before anything was written
    # canonical_ref: a path in the work tree, present or not; a path leading out is never looked at
    (repo / "docs").mkdir()
    (repo / "docs" / "cache.md").write_text("# cache\n")
    path = Path(doc["path"])
    for ref, want in (("docs/cache.md", "exists"), ("docs/gone.md", "missing"),
                      ("../../etc/passwd", "outside the work tree, not checked"),
                      ("https://wiki.example.com/cache", "a URL, not checked")):
        text_now = path.read_text(encoding="utf-8").replace("\nrelated:", f"\ncanonical_ref: {ref}\nrelated:", 1)
        path.write_text(text_now, encoding="utf-8")
        shown = run_cli("show", b)
        assert shown.code == 0, shown.err
        assert f"#   canonical_ref {ref}: {want}" in shown.out, shown.out
        path.write_text(text_now.replace(f"canonical_ref: {ref}\n", ""), encoding="utf-8")


def _set_expiry(path: Path, when: str) -> None:
    text = path.read_text(encoding="utf-8")
    import re

    path.write_text(re.sub(r"(?m)^expires_at: .*$", f"expires_at: '{when}'", text), encoding="utf-8")


def test_an_expired_memory_leaves_search_list_and_context_at_once(repo: Path):
    import time
    from datetime import UTC, datetime

    mid = add("the staging freeze lasts until the audit ends", "--expires", "1h", "--scope", "personal")["id"]
    keep = add("the staging cluster runs in eu-west-1", "--scope", "personal")["id"]
    path = Path(run_cli("show", mid, "--json").json()["path"])
    assert "expires_at: '20" in path.read_text(encoding="utf-8")

    def seen() -> tuple[bool, bool, bool]:
        hits = [h["id"] for h in run_cli("search", "staging", "--json").json()["hits"]]
        listed = [m["id"] for m in run_cli("list", "--json").json()["memories"]]
        block = run_cli("context", "--json").json()["text"]
        assert keep in hits and keep in listed
        return mid in hits, mid in listed, "staging freeze" in block

    # The first look must end before the expiry; on a stalled machine it is taken again with
    # a longer window instead of reading a late look as a failure.
    for window in (3, 15, 60):
        soon = int(time.time()) + window
        _set_expiry(path, datetime.fromtimestamp(soon, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        before = seen()
        if time.time() < soon - 0.5:
            break
    assert before == (True, True, True)
    time.sleep(max(0.0, soon - time.time()) + 1.2)
    assert seen() == (False, False, False)  # no reindex, no file change: the clock alone
    assert mid in [m["id"] for m in run_cli("list", "--include", "all", "--json").json()["memories"]]
    assert run_cli("show", mid).code == 0  # still there to look at, until it is collected


def test_expires_refuses_a_bad_or_past_time_in_one_sentence(repo: Path):
    for when, words in (("yesterday", "is not a time"), ("2001-01-01", "is in the past"),
                        ("2027-01-31T10:00:00", "is not a time"), ("999999w", "after 9999-12-31")):
        r = run_cli("add", f"expiring {when}", "--expires", when)
        assert r.code == 1 and words in r.err and "Traceback" not in r.err, (when, r.err)
        assert len(r.err.strip().splitlines()) == 1
    assert run_cli("list", "--json").json()["memories"] == []  # nothing was written
    ok = add("valid through the end of that day", "--expires", "2099-01-31")
    fm = run_cli("show", ok["id"], "--json").json()["frontmatter"]
    assert fm["expires_at"] == "2099-01-31T23:59:59Z"


@pytest.mark.parametrize("when", ["\uff11d", "\u0661d", "\u0967w", "1\uff10h", "\uff12\uff10\uff19\uff19-01-31",
                                  "2099-01-31T18:00:00\uff3a"])
def test_expires_takes_only_ascii_digits(repo: Path, when: str):
    """Full-width (１d), Arabic-Indic (١d) or Devanagari digits were read as 1 day: refused now,
    one sentence, exit 1 (usage), nothing written."""
    r = run_cli_process("add", "a fact that should not expire by accident", "--expires", when, cwd=repo)
    assert r.code == 1 and r.out == "" and "Traceback" not in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and "ASCII" in r.err
    assert run_cli("list", "--json").json()["memories"] == []


def test_forget_expired_deletes_local_files_and_lists_committed_ones(repo: Path):
    personal = add("an expired personal note", "--scope", "personal", "--expires", "1h")["id"]
    draft = add("an expired project draft", "--expires", "1h")["id"]
    committed = add("an expired committed memory", "--expires", "1h")["id"]
    alive = add("a memory that never expires", "--scope", "personal")["id"]
    assert run_cli("submit", committed).code == 0
    paths = {m: Path(run_cli("show", m, "--json").json()["path"]) for m in (personal, draft, committed)}
    for p in paths.values():
        _set_expiry(p, "2020-01-01T00:00:00Z")
    dry = run_cli("forget", "--expired", "--dry-run", "--json").json()
    assert sorted(d["id"] for d in dry["deleted"]) == sorted([personal, draft]) and dry["in_repository"] == [committed]
    assert all(p.exists() for p in paths.values())
    r = run_cli("forget", "--expired")
    assert r.code == 0, r.err
    assert f"deleted {personal}" in r.out and f"deleted {draft}" in r.out and committed in r.out
    assert not paths[personal].exists() and not paths[draft].exists() and paths[committed].exists()
    assert run_cli("show", alive).code == 0
    assert "no expired local memories" in run_cli("forget", "--expired").out
    both = run_cli("forget", alive, "--expired")
    assert both.code == 1 and "no id" in both.err


def test_list_confidence_low_is_the_regret_window(repo: Path):
    low = add("the flaky test is probably a timing issue", "--confidence", "low", "--source", "inference")["id"]
    add("the build uses make", "--confidence", "high")
    plain = add("the docs live in docs/")["id"]  # no confidence given: medium
    r = run_cli("list", "--confidence", "low", "--json")
    assert r.code == 0, r.err
    assert [m["id"] for m in r.json()["memories"]] == [low]
    assert [m["id"] for m in run_cli("list", "--confidence", "medium", "--json").json()["memories"]] == [plain]
    bad = run_cli("list", "--confidence", "sure")
    assert bad.code != 0 and "invalid choice" in bad.err


def test_search_and_list_say_when_the_limit_cut_the_results(repo: Path):
    for i in range(3):
        add(f"the cache layer note number {i} about warming", "--scope", "personal")
    low = add("the cache may be cold on mondays", "--scope", "personal", "--confidence", "low")["id"]
    r = run_cli("search", "cache", "--limit", "2")
    assert r.code == 0 and "(2 shown; more memories matched: --limit N shows more)" in r.out
    j = run_cli("search", "cache", "--limit", "2", "--json").json()
    assert j["more"] is True and j["limit"] == 2 and len(j["hits"]) == 2
    full = run_cli("search", "cache", "--limit", "10", "--json").json()
    assert full["more"] is False and "more memories matched" not in run_cli("search", "cache", "--limit", "10").out
    lj = run_cli("list", "--limit", "2", "--json").json()
    assert lj["more"] is True and lj["total"] == 4 and lj["limit"] == 2
    only = run_cli("search", "cache", "--confidence", "low", "--json").json()
    assert [h["id"] for h in only["hits"]] == [low] and only["hits"][0]["confidence"] == "low"
    assert "default 8" in run_cli("search", "--help").out
# ------------------------------------------------------------------ ids as people type them
TOGETHER = ("01JCAB1234ABCDEFGHJKMNPQRS", "01JCAB1234ABCDEFGHJKMNPQRT", "01JCAB1234ZZZZZZZZZZZZZZZZ")


def _made_together(repo: Path) -> None:
    """Three memories whose ids share the ULID's time part (made in the same millisecond, as an
    import or a batch of an agent's adds makes them), written as files in the memory folder."""
    folder = repo / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)
    for n, mid in enumerate(TOGETHER):
        (folder / f"{mid}.md").write_text(
            f"---\nid: {mid}\nschema_version: 2\nscope: project\ntype: fact\nstatus: active\n"
            f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:0{n}Z'\n---\n"
            f"The kestrel proxy timeout for service {n} is {30 + n} seconds\n", encoding="utf-8")


def test_a_full_id_in_lower_case_names_its_memory(repo: Path):
    a = add("use pnpm, not npm")
    for typed in (a["id"].lower(), a["id"][:25].lower(), a["id"].lower()[:8]):
        r = run_cli("show", typed, "--json")
        assert r.code == 0, r.err
        assert r.json()["id"] == a["id"]


def test_list_and_search_print_the_shortest_prefix_that_names_one_memory(repo: Path):
    _made_together(repo)
    alone = add("use pnpm, not npm")["id"]
    listed = run_cli("list", "--scope", "all", "--limit", "10").out
    printed = {line.split()[0] for line in listed.splitlines() if line.startswith("  ")}
    # the two that differ only in their last character need all 26; the third parts at 11; the
    # memory made alone needs no more than git's 7
    assert printed == {TOGETHER[0], TOGETHER[1], TOGETHER[2][:11], alone[:7]}
    found = run_cli("search", "kestrel proxy timeout").out
    assert {line.split()[0] for line in found.splitlines()} == {TOGETHER[0], TOGETHER[1], TOGETHER[2][:11]}
    for prefix in printed:  # each printed prefix is taken back, in any case
        for typed in (prefix, prefix.lower()):
            r = run_cli("show", typed, "--json")
            assert r.code == 0, r.err
    short = {h["id"]: h["short_id"] for h in run_cli("search", "kestrel", "--json").json()["hits"]}
    assert short[TOGETHER[2]] == TOGETHER[2][:11]


def test_an_ambiguous_prefix_is_one_sentence(repo: Path):
    _made_together(repo)
    r = run_cli("show", TOGETHER[0][:10].lower())
    assert r.code == 1 and r.out == ""
    assert r.err.count("\n") == 1 and "ambiguous (3 memories)" in r.err and "Traceback" not in r.err


def test_a_too_short_prefix_says_so_everywhere(repo: Path):
    """A 4-character prefix said "no memory with id …" although memories start with it: every
    road that takes an id (show, forget, status, supersede, log, MCP memory_get) now says it is too
    short, exit 1, nothing changed; a short string no id starts with is still "no memory"."""
    from mcp_client import call, text

    a = add("use pnpm, not npm")
    short = a["id"][:4]
    for args in (("show", short), ("forget", short), ("status", short, "archived"),
                 ("supersede", short, "use bun"), ("log", short)):
        r = run_cli_process(*args, cwd=repo)
        assert r.code == 1 and r.out == "", (args, r.err)
        assert r.err.count("\n") == 1 and "too short" in r.err and "at least 6" in r.err, (args, r.err)
        assert "no memory" not in r.err and "Traceback" not in r.err
    got = call("memory_get", {"id": short})
    assert got.is_error and "too short" in text(got) and "at least 6" in text(got)
    assert run_cli("show", a["id"], "--json").json()["frontmatter"]["status"] == "active"  # nothing changed
    r = run_cli("show", "ZZZZ")
    assert r.code == 1 and "no memory with id ZZZZ" in r.err


def test_explain_shows_an_authoritative_document_a_memory_cites(repo: Path):
    """`canonical_ref` to a document whose own frontmatter says `authoritative: true`: `--explain`
    puts the document in the chain's authoritative-docs tier, above the memory (V2-DESIGN §7)."""
    mid = add("deploys go out on tuesdays after the freeze", "--scope", "personal")["id"]
    path = Path(run_cli("show", mid, "--json").json()["path"])
    path.write_text(path.read_text(encoding="utf-8").replace("\nrelated:", "\ncanonical_ref: docs/deploy.md\nrelated:", 1),
                    encoding="utf-8")
    (repo / "docs").mkdir()
    doc = repo / "docs" / "deploy.md"
    doc.write_text("---\nauthoritative: true\n---\n# Deploys\n\nDeploys go out on wednesdays.\n", encoding="utf-8")
    hit = run_cli("search", "deploys tuesdays", "--explain", "--json").json()["hits"][0]
    assert hit["id"] == mid and hit["canonical_ref"] == "docs/deploy.md"
    cites = hit["explain"]["precedence"]["cites"]
    assert cites == {"ref": "docs/deploy.md", "exists": True, "authoritative": True, "tier": "authoritative-docs",
                     "rank": 2, "of": 7}
    assert hit["explain"]["precedence"]["tier"] == "personal"  # the memory itself stays where it lives
    out = run_cli("search", "deploys tuesdays", "--explain").out
    assert "cites docs/deploy.md, an authoritative document (tier 2 of 7): where they disagree, the document wins" in out
    doc.write_text("# Deploys\n\nno frontmatter, so not authoritative\n", encoding="utf-8")
    cites = run_cli("search", "deploys tuesdays", "--explain", "--json").json()["hits"][0]["explain"]["precedence"]["cites"]
    assert cites == {"ref": "docs/deploy.md", "exists": True, "authoritative": False}


def test_an_unreadable_expires_at_is_quarantined_not_kept_forever(repo: Path):
    """A time the clock can never pass (`99999-01-01…`) was read and never expired."""
    mid = add("a memory whose expiry is nonsense", "--scope", "personal", "--expires", "1h")["id"]
    path = Path(run_cli("show", mid, "--json").json()["path"])
    _set_expiry(path, "99999-01-01T00:00:00Z")
    assert mid not in [m["id"] for m in run_cli("list", "--include", "all", "--json").json()["memories"]]
    doc = run_cli("doctor")
    assert "expires_at" in doc.out + doc.err and "RFC 3339" in doc.out + doc.err


def test_a_file_with_a_reserved_scope_is_quarantined_by_the_reader(repo: Path):
    """docs/format.md: `scope: team|public` are refused; the attack on the merged main found the
    reader serving such a committed file as `team/fact` in search, MCP and the session block."""
    folder = repo / ".ai" / "open-memex"
    folder.mkdir(parents=True)
    for mid, scope in (("01JAAAAAAAAAAAAAAAAAAAAAAB", "team"), ("01JAAAAAAAAAAAAAAAAAAAAAAC", "public")):
        (folder / f"{mid}.md").write_text(f"---\nid: {mid}\nschema_version: 2\nscope: {scope}\ntype: fact\n"
                                          f"status: active\n---\nquuxwidget {scope} memory\n", encoding="utf-8")
    assert run_cli("search", "quuxwidget", "--json").json()["hits"] == []
    assert "quuxwidget" not in run_cli("context", "--json").json()["text"]
    doc = run_cli("doctor")
    assert "scope 'team' is reserved" in doc.out + doc.err and "scope 'public' is reserved" in doc.out + doc.err

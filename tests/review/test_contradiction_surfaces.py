"""Memories that disagree, where people and agents look (issue 33, items 2 and 3): search and
list hits name each other (`contradicts`) and carry their precedence `tier`, search puts the one
precedence prefers first, the session block shows the pair together under "these disagree; a
person decides", the official MCP client over stdio sees the same, and a person's way out
(`git memex compatible`) is recorded where it belongs, for those two texts only. Real git
repositories, the real CLI and hooks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from git_memex.core import frontmatter, model

from conftest import git, run_cli

MEM = ".ai/open-memex"
PROJECT = "The API rate limit is 100 requests per minute."
PERSONAL = "The API rate limit is 500 requests per minute per token."


def committed(work: Path, body: str, recorded: bool = True, **fm: Any) -> str:
    """A published repository memory, written as a file and committed with git; with `recorded`,
    its history records the review step (else it only claims it, and the pre-commit hook, where
    installed, refuses it)."""
    state = fm.pop("review_state", "published")
    m = model.create(body, scope="project", review_state=state)
    if recorded and state in model.REVIEWED_STATES:  # a review the history records, as promote writes it
        m.fm["review_history"] = [{"at": m.fm["created_at"], "by": "local:maintainer@example.com",
                                   "from": "proposed", "to": state, "note": "reviewed"}]
    m.fm.update(fm)
    folder = work / MEM
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    git("add", "-A", cwd=work)
    git("commit", "-qm", f"memory {m.id}", cwd=work)
    return m.id


def add(*args: str, cwd: Path | None = None) -> str:
    r = run_cli("add", *args, "--json", cwd=cwd)
    assert r.code == 0, r.err
    return r.json()["id"]


def pair(work: Path) -> tuple[str, str]:
    """A published project memory and a personal one that disagrees with it (the personal one
    holds more of the query's words, so it ranks first by words alone)."""
    return committed(work, PROJECT), add(PERSONAL, "--scope", "personal", cwd=work)


# ------------------------------------------------------------------ search, list
def test_search_names_the_other_hit_and_puts_the_preferred_first(repo: Path):
    proj, mine = pair(repo)
    plain = run_cli("search", "api rate limit token", "--json").json()
    hits = plain["hits"]
    assert [h["id"] for h in hits] == [proj, mine]  # project outranks personal for facts, though it holds fewer words
    assert hits[0]["contradicts"] == [mine] and hits[1]["contradicts"] == [proj]
    assert hits[0]["tier"] == {"kind": "fact", "tier": "project", "rank": 5, "of": 7}
    assert hits[1]["tier"]["tier"] == "personal"
    (d,) = plain["disagreements"]
    assert d["ids"] == [proj, mine] and d["preferred"] == proj and d["kind"] == "number"
    assert d["values"] == ["100 requests", "500 requests"] and "project outranks personal" in d["why"]
    text = run_cli("search", "api rate limit token").out
    assert text.count("disagrees with") == 2 and "a person decides" in text
    # nothing is resolved: both stay active, both are shown
    for mid in (proj, mine):
        assert run_cli("show", mid, "--json").json()["frontmatter"]["status"] == "active"


def test_a_hit_alone_names_nobody_and_every_hit_has_a_tier(repo: Path):
    proj, _mine = pair(repo)
    other = committed(repo, "Deploys go out on Tuesdays after the standup.")
    hits = run_cli("search", "deploys tuesdays", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [other]
    assert hits[0]["contradicts"] == [] and hits[0]["tier"]["tier"] == "project"
    listed = {m["id"]: m for m in run_cli("list", "--json").json()["memories"]}
    assert listed[proj]["contradicts"] == [_mine] and listed[other]["contradicts"] == []
    assert "disagrees with" in run_cli("list").out


def test_preferences_put_the_persons_own_first(repo: Path):
    proj = committed(repo, "Indent shell scripts with tabs.", type="preference")
    mine = add("Indent shell scripts with spaces.", "--scope", "personal", "--type", "preference", cwd=repo)
    hits = run_cli("search", "indent shell scripts", "--json").json()["hits"]
    assert [h["id"] for h in hits[:2]] == [mine, proj]
    assert hits[0]["tier"] == {"kind": "preference", "tier": "personal", "rank": 2, "of": 5}


# ------------------------------------------------------------------ the session block
def test_the_session_block_shows_the_pair_together_preferred_first(repo: Path):
    proj, mine = pair(repo)
    block = run_cli("context", "--json").json()
    text = block["text"]
    assert "These disagree; a person decides" in text
    section = text.split("## Memories that disagree", 1)[1]
    assert section.index(proj[:10]) < section.index(mine[:10])
    assert '"100 requests" vs "500 requests"' in section and "project outranks personal" in section
    assert "## Knowledge" not in text  # shown once, in the pair, not again
    assert block["disagreements"][0]["ids"] == [proj, mine]
    items = {i["id"]: i for i in block["items"]}
    assert items[proj]["contradicts"] == [mine] and items[mine]["contradicts"] == [proj]
    assert items[proj]["tier"]["tier"] == "project" and items[mine]["tier"]["tier"] == "personal"


def test_the_budget_keeps_or_cuts_a_pair_whole(repo: Path):
    pair(repo)
    full = run_cli("context", "--json").json()
    one_line = max(len(i["line"]) for i in full["items"])
    # a budget that holds one of the two lines but not both: neither is shown alone
    git("config", "memex.injectMaxTokens", str(full["tokens"] - one_line // 6), cwd=repo)
    cut = run_cli("context", "--json").json()
    assert cut["disagreements"] == [] and cut["items"] == []


# ------------------------------------------------------------------ the official MCP client, stdio
def test_the_agent_sees_tiers_and_disagreements_over_stdio(repo: Path, tmp_path: Path):
    proj, mine = pair(repo)
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(repo))
    errlog = tmp_path / "stderr.txt"

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with errlog.open("w") as log, anyio.fail_after(60):
            async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as s:
                out["init"] = await s.initialize()
                out["tools"] = {t.name for t in (await s.list_tools()).tools}
                out["search"] = await s.call_tool("memory_search", {"query": "api rate limit token"})
                out["list"] = await s.call_tool("memory_list", {})
                out["status"] = await s.call_tool("memory_status", {})
        return out

    out = anyio.run(main)
    res = out["search"]
    assert not res.is_error
    hits = res.structured_content["hits"]
    assert [h["id"] for h in hits] == [proj, mine]
    assert [h["tier"]["tier"] for h in hits] == ["project", "personal"]
    assert hits[0]["contradicts"] == [mine] and hits[1]["contradicts"] == [proj]
    said = "\n".join(getattr(b, "text", "") for b in res.content)
    assert "These disagree; a person decides" in said and f"id={proj} vs id={mine}" in said
    listed = {m["id"]: m for m in out["list"].structured_content["memories"]}
    assert listed[mine]["contradicts"] == [proj]
    assert "disagree" in "\n".join(getattr(b, "text", "") for b in out["status"].content)
    # the handshake's session block shows the pair, the preferred first
    instructions = out["init"].instructions or ""
    assert "These disagree; a person decides" in instructions
    assert instructions.index(proj[:10]) < instructions.index(mine[:10])
    # no tool lets an agent dismiss a disagreement
    assert not {t for t in out["tools"] if "compatible" in t or "contradict" in t or "dismiss" in t}
    assert "Traceback" not in errlog.read_text()


# ------------------------------------------------------------------ a person's way out
def test_marking_two_repository_memories_compatible_travels_with_the_repo(ready: Path):
    a = committed(ready, "Checkout retries a failed payment 3 times.")
    b = committed(ready, "Checkout retries a failed payment 5 times.")
    assert [(c["a"], c["b"]) for c in run_cli("audit", "--json").json()["contradictions"]] == [(min(a, b), max(a, b))]
    assert len(run_cli("sync-status", "--json").json()["contradictions"]) == 1  # computed, and cached
    r = run_cli("compatible", a[:10], b[:10], "--note", "3 for cards, 5 for bank transfers", "--json")
    assert r.code == 0, r.err
    rec_path = ready / MEM / ".compatible" / f"{min(a, b)}-{max(a, b)}.json"
    assert r.json()["path"] == str(rec_path) and r.json()["staged"] is True and r.json()["flagged"] is True
    rec = json.loads(rec_path.read_text("utf-8"))
    assert rec["by"] == "local:test@example.com" and rec["note"] == "3 for cards, 5 for bank transfers"
    assert set(rec["content"]) == {a, b}
    assert f"{MEM}/.compatible/{rec_path.name}" in git("diff", "--cached", "--name-only", cwd=ready).stdout
    done = git("commit", "-qm", "not contradictory", cwd=ready, check=False)  # through the real pre-commit hook
    assert done.returncode == 0, done.stderr
    # not raised again, anywhere
    assert run_cli("audit", "--json").json()["contradictions"] == []
    assert run_cli("sync-status", "--json").json()["contradictions"] == []
    assert all(h["contradicts"] == [] for h in run_cli("search", "checkout retries payment", "--json").json()["hits"])
    assert "disagree" not in run_cli("context").out
    # an edit of either text is a new claim: raised again
    path = ready / MEM / f"{a}.md"
    path.write_text(path.read_text("utf-8").replace("3 times", "4 times"), encoding="utf-8")
    git("commit", "-qam", "edit", cwd=ready)
    again = run_cli("audit", "--json").json()["contradictions"]
    assert [(c["a"], c["b"]) for c in again] == [(min(a, b), max(a, b))]
    again = run_cli("sync-status", "--json").json()["contradictions"]  # its cache follows the change
    assert [(c["a"], c["b"]) for c in again] == [(min(a, b), max(a, b))]
    # and undone
    r = run_cli("compatible", a, b, "--undo")
    assert r.code == 0 and not rec_path.exists()
    assert f"{MEM}/.compatible/{rec_path.name}" in git("diff", "--cached", "--name-only", cwd=ready).stdout


def test_a_personal_memory_is_never_named_in_the_repository(repo: Path):
    proj, mine = pair(repo)
    r = run_cli("compatible", proj, mine, "--json")
    assert r.code == 0, r.err
    assert r.json()["where"] == "this machine" and not (repo / MEM / ".compatible").exists()
    assert Path(r.json()["path"]).is_relative_to(Path(os.environ["GIT_MEMEX_HOME"]))
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    assert run_cli("audit", "--json").json()["contradictions"] == []
    assert run_cli("search", "api rate limit token", "--json").json()["hits"][0]["contradicts"] == []


def test_bad_input_is_one_sentence(repo: Path):
    proj, mine = pair(repo)
    for args in ((proj, proj), (proj, "01ZZZZZZZZ"), (proj, mine, "--undo"), (proj, mine, "--undo", "--note", "x")):
        r = run_cli("compatible", *args)
        assert r.code == 1 and r.out == "" and len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err, args


def test_two_masked_secrets_are_no_disagreement(repo: Path):
    """A file that came in by another road may hold a secret. Two secrets that differ, each masked,
    are no difference a person can compare (and the masks would show part of each side by side):
    no pair, anywhere. A pair that differs elsewhere is found, and its secret stays masked."""
    secret_a, secret_b = "48213377", "99120455"
    committed(repo, f"The staging database password: {secret_a}")
    committed(repo, f"The staging database password: {secret_b}")
    assert run_cli("audit", "--json").json()["contradictions"] == []
    for args in (("audit",), ("sync-status", "--json"), ("sync-status",), ("doctor", "--json"), ("context", "--json"),
                 ("search", "staging database password", "--json"), ("search", "staging database password")):
        out = run_cli(*args).out
        assert secret_a not in out and secret_b not in out and "these disagree" not in out.lower(), args
    hits = run_cli("search", "staging database password", "--json").json()["hits"]
    assert hits and all(h["contradicts"] == [] for h in hits)
    committed(repo, f"The cache host uses port 6379 and password: {secret_a}")
    committed(repo, f"The cache host uses port 6380 and password: {secret_a}")
    found = run_cli("audit", "--json").json()["contradictions"]
    assert [c["values"] for c in found] == [["port 6379", "port 6380"]]
    for args in (("audit",), ("sync-status",), ("search", "cache host port password", "--json")):
        out = run_cli(*args).out
        assert secret_a not in out, args


def stdio_search(repo: Path, tmp_path: Path, query: str) -> Any:
    """memory_search through the official MCP client over stdio."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(repo))

    async def main() -> Any:
        with (tmp_path / "stderr.txt").open("w") as log, anyio.fail_after(60):
            async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await s.call_tool("memory_search", {"query": query})

    return anyio.run(main)


def test_control_characters_in_the_differing_values_are_escaped_over_mcp(repo: Path, tmp_path: Path):
    """A memory's text may hold terminal controls: the notes about a pair show them as escapes."""
    a = committed(repo, "The build cache lives in \x1b[31m/var/cache/alpha\x07 on port 8080.")
    b = committed(repo, "The build cache lives in \x1b[31m/var/cache/alpha\x07 on port 9090.")
    res = stdio_search(repo, tmp_path, "build cache port")
    said = "\n".join(getattr(x, "text", "") for x in res.content)
    assert f"id={min(a, b)}" in said and "These disagree" in said
    assert "\x1b" not in said and "\x07" not in said and "\\u001b" in said


def test_many_memories_that_all_disagree_are_bounded_and_counted(repo: Path, tmp_path: Path):
    """150 memories on one subject, each disagreeing with every other: audit and sync-status list
    at most REPORT_LIMIT pairs and say how many more, and how many memories the finder's bounds
    compared with only some others; an MCP list page bounds its pairs and each hit's ids, and
    names each other by a short label."""
    from git_memex.review.contradictions import ANSWER_LIMIT, CONTRADICTS_LIMIT, REPORT_LIMIT

    folder = repo / MEM
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(150):
        m = model.create(f"The public API rate limit is {i + 1} requests per minute.", scope="project",
                         review_state="published")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "many", cwd=repo)
    audit = run_cli("audit", "--json").json()
    assert len(audit["contradictions"]) == REPORT_LIMIT and audit["contradictions_left_out"] > 0
    assert audit["contradictions_unchecked"] > 0
    status = run_cli("sync-status", "--json").json()
    assert len(status["contradictions"]) == REPORT_LIMIT
    assert status["contradictions_count"] == REPORT_LIMIT + status["contradictions_left_out"]
    assert status["contradictions_unchecked"] > 0
    line = run_cli("sync-status").out
    assert f"{status['contradictions_count']} pairs of memories disagree" in line and "compared with only some" in line
    assert "compared with only some" in run_cli("doctor").out
    text = run_cli("audit").out
    assert f"and {audit['contradictions_left_out']} more pairs" in text and "compared with only some" in text
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(repo))

    async def main() -> Any:
        with (tmp_path / "stderr.txt").open("w") as log, anyio.fail_after(120):
            async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await s.call_tool("memory_list", {"limit": 200})

    res = anyio.run(main)
    data = res.structured_content
    assert len(data["disagreements"]) == ANSWER_LIMIT and data["disagreements_left_out"] > 0
    assert all(len(m["contradicts"]) <= CONTRADICTS_LIMIT for m in data["memories"])
    assert any(m.get("contradicts_left_out") for m in data["memories"])
    said = "\n".join(getattr(b, "text", "") for b in res.content)
    assert f"and {data['disagreements_left_out']} more pairs" in said
    assert 'disagrees with id=' in said and '("The public API rate limit is' in said


def test_precedence_trusts_a_recorded_review_not_a_label(repo: Path, tmp_path: Path):
    """Two published repository memories that disagree: one reached published through review (its
    history records the step and who took it), the other only says so (a hand edit, or a commit
    with --no-verify). Precedence prefers the reviewed one (`precedence.standing`, as ranking
    reads review standing) in audit, search and over MCP; the label alone earns nothing."""
    claimed = committed(repo, "Checkout retries a failed payment 3 times.", recorded=False)
    reviewed = committed(repo, "Checkout retries a failed payment 5 times.", review_history=[
        {"at": "2026-12-01T10:00:00Z", "by": "Rev <rev@example.com>", "from": "approved", "to": "published"}])
    found = run_cli("audit", "--json").json()["contradictions"]
    assert len(found) == 1 and found[0]["preferred"] == reviewed and found[0]["a"] == reviewed
    assert "published outranks proposed" in found[0]["why"]
    hits = run_cli("search", "checkout retries failed payment", "--json").json()
    assert hits["disagreements"][0]["preferred"] == reviewed
    res = stdio_search(repo, tmp_path, "checkout retries failed payment")
    assert res.structured_content["disagreements"][0]["preferred"] == reviewed
    assert claimed in {h["id"] for h in res.structured_content["hits"]}


def test_audit_counts_silenced_pairs_and_names_who_git_says_marked_them(ready: Path):
    """A pair marked not contradictory is not raised again, but audit says how many pairs are
    silenced and who marked each as git knows them (the author of the commit that added the
    record), not the name written inside the record, which any hand could write."""
    a = committed(ready, "Checkout retries a failed payment 3 times.")
    b = committed(ready, "Checkout retries a failed payment 5 times.")
    assert run_cli("compatible", a, b).code == 0
    rec_path = ready / MEM / ".compatible" / f"{min(a, b)}-{max(a, b)}.json"
    rec = json.loads(rec_path.read_text("utf-8"))
    rec["by"] = "local:boss@example.com"  # a hand edit claims someone else
    rec_path.write_text(json.dumps(rec), encoding="utf-8")
    pending = run_cli("audit", "--json").json()
    assert pending["contradictions"] == [] and pending["contradictions_silenced"] == 1
    assert pending["silenced"][0]["committed"] is False and pending["silenced"][0]["by"] is None
    git("add", "-A", cwd=ready)
    done = git("commit", "-qm", "not contradictory", cwd=ready, check=False)
    assert done.returncode == 0, done.stderr
    doc = run_cli("audit", "--json").json()
    assert doc["contradictions"] == [] and doc["contradictions_silenced"] == 1
    s = doc["silenced"][0]
    assert (s["a"], s["b"]) == (min(a, b), max(a, b)) and s["by"] == "Test User <test@example.com>"
    assert s["says"] == "local:boss@example.com"
    text = run_cli("audit").out
    assert "1 pair of memories that disagree, marked not contradictory" in text
    assert "by Test User <test@example.com> (the record says local:boss@example.com)" in text


def test_record_files_are_checked_for_secrets_by_the_hook_and_scan(ready: Path):
    """A `.compatible` or `.approvals` JSON file is text a commit records: the pre-commit hook
    refuses one holding a secret, and `scan` (the work tree, and --staged) reports it."""
    token = "ghp_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5N"
    for folder in (".compatible", ".approvals"):
        path = ready / MEM / folder / "01AAAAAAAAAAAAAAAAAAAAAAAA-01BBBBBBBBBBBBBBBBBBBBBBBB.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"note": f"the deploy token is {token}"}), encoding="utf-8")
        git("add", "-A", cwd=ready)
        refused = git("commit", "-qm", "a record", cwd=ready, check=False)
        assert refused.returncode != 0 and token not in refused.stderr, folder
        assert f"{MEM}/{folder}/" in refused.stderr
        staged = run_cli("scan", "--staged")
        assert staged.code == 1 and f"{folder}/" in staged.out and token not in staged.out
        tree = run_cli("scan")
        assert tree.code == 1 and f"{folder}/" in tree.out and token not in tree.out
        path.unlink()
        git("add", "-A", cwd=ready)
    assert run_cli("scan").code == 0

"""A review level comes from where a memory is and what proves it, never from its file alone
(core.model.standing; docs/search.md, "Reviewed knowledge first").

A draft that only claimed `review_state: published` (an outbox file edited by hand, a private
memory, an uncommitted edit of a repository file) was ranked and labelled reviewed, and `submit`
committed the claim into the repository; a hand-made file claiming published went through the
pre-commit hook; audit said nothing. Now: the outbox and the private folder are drafts whatever
they say; a repository claim of approved or published counts only with the review step recorded
in its history; `submit` records the draft as proposed; the hook refuses a new or raised claim
without its step; audit names each claim. Real CLI, real git with the hooks `init` installs, the
official MCP client over stdio.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_review_order import LONG, add, mcp_search

from git_memex.core import frontmatter

from conftest import bare_and_clone, git, run_cli

MEM = Path(".ai") / "open-memex"


def published(text: str) -> str:
    mid = add(text)
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        r = run_cli("promote", mid)
        assert r.code == 0, r.err
    git("commit", "-q", "-am", f"publish {mid}")
    return mid


def claim(path: Path, state: str, **more: object) -> None:
    """A hand edit: the review fields a file claims, nothing recorded."""
    fm, body = frontmatter.parse(path.read_text(encoding="utf-8"))
    fm["review_state"] = state
    fm.update(more)
    path.write_text(frontmatter.serialize(fm, body), encoding="utf-8")


def file_of(mid: str) -> Path:
    return Path(run_cli("show", mid, "--json").json()["path"])


def hits(*query: str) -> list[dict]:
    r = run_cli("search", *query, "--json")
    assert r.code == 0, r.err
    return r.json()["hits"]


def test_an_outbox_or_private_draft_claiming_published_ranks_and_reads_as_a_draft(ready: Path) -> None:
    pub = published(LONG)
    out = add("zorblax retry budget is five")
    priv = add("zorblax retry budget is six", "--visibility", "private")
    for mid in (out, priv):
        claim(file_of(mid), "published", approved_by="local:someone@example.com")
    got = hits("zorblax", "retry", "budget")
    assert [h["id"] for h in got][0] == pub  # the one people reviewed leads the hits holding the same words
    by_id = {h["id"]: h for h in got}
    for mid in (out, priv):
        assert by_id[mid]["review_state"] == "draft" and by_id[mid]["review_claim"] == "published"
    assert by_id[pub]["review_state"] == "published" and "review_claim" not in by_id[pub]
    text = run_cli("search", "zorblax", "retry", "budget").out
    # the hit's own line (the two drafts now also disagree: five vs six, a line of its own under each)
    assert "[draft; claims published]" in next(ln for ln in text.splitlines()
                                              if "is five" in ln and "disagrees with" not in ln)
    mcp = mcp_search(ready, "zorblax retry budget")
    assert [h["id"] for h in mcp["hits"]][0] == pub
    listed = {m["id"]: m for m in run_cli("list", "--json").json()["memories"]}
    assert listed[out]["review_state"] == "draft" and listed[out]["review_claim"] == "published"
    block = run_cli("context", "--query", "zorblax retry budget", "--json").json()
    line = next(i["line"] for i in block["items"] if i["id"] == out)
    assert ", draft]" in line, line
    claims = {c["id"]: c for c in run_cli("audit", "--json").json()["unreviewed_claims"]}
    assert claims[out]["claims"] == "published" and claims[out]["standing"] == "draft"
    assert pub not in claims


def test_a_repository_claim_without_its_review_step_is_in_review(ready: Path) -> None:
    pub = published(LONG)
    mid = add("zorblax retry budget is three")
    assert run_cli("submit", mid).code == 0
    claim(ready / MEM / f"{mid}.md", "published")  # an uncommitted edit of the work tree
    got = hits("zorblax", "retry", "budget")
    assert [h["id"] for h in got] == [pub, mid]
    assert got[1]["review_state"] == "proposed" and got[1]["review_claim"] == "published"
    [(line)] = [ln for ln in run_cli("search", "zorblax", "retry", "budget").out.splitlines() if "is three" in ln]
    assert "[proposed; claims published]" in line
    refused = git("commit", "-qam", "publish by hand", cwd=ready, check=False)
    assert refused.returncode != 0 and "unreviewed-claim" in refused.stderr, refused.stderr
    assert any(c["id"] == mid for c in run_cli("audit", "--json").json()["unreviewed_claims"])
    # promote starts from where it stands, and records each step: then it is what it says
    step = run_cli("promote", mid, "--json")
    assert step.code == 0 and step.json()["from"] == "proposed" and step.json()["to"] == "approved", step.err
    assert run_cli("promote", mid).code == 0
    git("commit", "-qam", "reviewed", cwd=ready)
    assert {h["id"]: h["review_state"] for h in hits("zorblax", "retry", "budget")}[mid] == "published"
    assert "review_claim" not in {h["id"]: h for h in hits("zorblax", "retry", "budget")}[mid]


def test_submit_records_the_draft_as_proposed_whatever_it_claims(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The team-mode submit onto a review branch (`--branch`) once committed `[published]` with no
    review history and no `promoted_by`."""
    _bare, work = bare_and_clone(tmp_path, "work")
    monkeypatch.chdir(work)
    (work / "README.md").write_text("x\n")
    git("add", "README.md", cwd=work)
    git("commit", "-qm", "init", cwd=work)
    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=work)
    git("commit", "-qm", "set up", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    mid = add("The xyzzy flag defaults to off")
    claim(file_of(mid), "published", approved_by="local:boss@example.com", promoted_by="local:boss@example.com")
    r = run_cli("submit", mid, "--branch", "memex/review")
    assert r.code == 0, r.err
    assert f"{mid}: its file claimed review_state published; submit records it as proposed" in r.err
    assert "[proposed]" in r.out
    fm = frontmatter.parse(git("show", f"memex/review:{MEM}/{mid}.md", cwd=work).stdout)[0]
    assert fm["review_state"] == "proposed" and "approved_by" not in fm and "promoted_by" not in fm
    [step] = fm["review_history"]
    assert step["to"] == "proposed" and "claimed published" in step["note"]


def test_a_solo_mode_approval_is_still_submitted_approved(ready: Path) -> None:
    mine = add("Deploys wait for the canary", "--scope", "personal")
    r = run_cli("propose", mine, "--local-approve", "--json")
    assert r.code == 0, r.err
    copy = r.json()["proposed"][0]["id"]
    assert run_cli("submit", copy).code == 0
    fm = frontmatter.parse((ready / MEM / f"{copy}.md").read_text())[0]
    assert fm["review_state"] == "approved"
    git("commit", "-qam", "x", cwd=ready, check=False)
    assert {h["id"]: h["review_state"] for h in hits("canary")}[copy] == "approved"


def test_the_hook_refuses_a_new_file_claiming_published_and_passes_a_recorded_one(ready: Path) -> None:
    from git_memex.core import model

    fake = model.create("The plugh flag defaults to on", review_state="published")
    (ready / MEM / f"{fake.id}.md").write_text(frontmatter.serialize(fake.fm, fake.body), encoding="utf-8")
    git("add", "-A", cwd=ready)
    refused = git("commit", "-qm", "hand-made, claiming published", cwd=ready, check=False)
    assert refused.returncode != 0 and "unreviewed-claim" in refused.stderr, refused.stderr
    # a file that claimed it before review histories (committed long ago), touched for another
    # reason, is not this commit's claim
    git("commit", "-q", "--no-verify", "-m", "arrived long ago", cwd=ready)
    fm, body = frontmatter.parse((ready / MEM / f"{fake.id}.md").read_text())
    fm["tags"] = ["flags"]
    (ready / MEM / f"{fake.id}.md").write_text(frontmatter.serialize(fm, body), encoding="utf-8")
    ok = git("commit", "-qam", "a tag", cwd=ready, check=False)
    assert ok.returncode == 0, ok.stderr
    assert {h["id"]: h["review_state"] for h in hits("plugh", "flag")}[fake.id] == "proposed"
    # a memory published by promote commits with the hook as always
    assert published("The frobnitz window is Tuesday") in {h["id"] for h in hits("frobnitz", "window")}
    assert json.loads(run_cli("audit", "--json").out)["unreviewed_claims"][0]["id"] == fake.id


@pytest.mark.slow
def test_the_hook_reads_the_claim_as_the_parser_does_in_every_spelling(ready: Path) -> None:
    """A regex over the lines missed four spellings the frontmatter parser reads as the same claim:
    a comment after the value, a `!!str` tag, a quoted key, CRLF line ends. Each is refused under
    a real `git commit`; a file whose review promote recorded commits as always."""
    from git_memex.core import model

    spellings = {
        "comment": lambda t: t.replace("review_state: published", "review_state: published # reviewed"),
        "tag": lambda t: t.replace("review_state: published", "review_state: !!str published"),
        "quoted key": lambda t: t.replace("review_state: published", '"review_state": published'),
        "crlf": lambda t: t.replace("\n", "\r\n"),
    }
    for what, spell in spellings.items():
        fake = model.create(f"The plugh flag defaults to {what}", review_state="published")
        text = spell(frontmatter.serialize(fake.fm, fake.body))
        assert frontmatter.parse(text)[0]["review_state"] == "published", what  # the parser reads the claim
        path = ready / MEM / f"{fake.id}.md"
        path.write_bytes(text.encode("utf-8"))
        git("add", "-A", cwd=ready)
        refused = git("commit", "-qm", f"hand-made, {what}", cwd=ready, check=False)
        assert refused.returncode != 0 and "unreviewed-claim" in refused.stderr, (what, refused.stderr)
        git("rm", "-q", "--cached", str(path), cwd=ready)
        path.unlink()
    # HEAD's blob is read the same way: a claim committed before (quoted key), touched for another
    # reason, is not this commit's claim
    old = model.create("The xyzzy flag defaults to on", review_state="published")
    path = ready / MEM / f"{old.id}.md"
    path.write_text(spellings["quoted key"](frontmatter.serialize(old.fm, old.body)), encoding="utf-8")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "arrived long ago", cwd=ready)
    path.write_text(path.read_text(encoding="utf-8").replace("The xyzzy flag", "The xyzzy flag still"), encoding="utf-8")
    ok = git("commit", "-qam", "a word", cwd=ready, check=False)
    assert ok.returncode == 0, ok.stderr
    # a file promote published, its steps recorded, commits with the hook
    assert published("The frobnitz window is Tuesday") in {h["id"] for h in hits("frobnitz", "window")}

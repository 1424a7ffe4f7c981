"""Reviewing on a remote server, and proposals that crossed (issue 32, item 8), against the real
`git memex remote-server` on 127.0.0.1 in its own process.

- `git memex remote review NAME ID --approve|--reject [--note TEXT]` is the reviewer's command:
  it reviews the revision this machine's cache holds (the one the person read), and the server
  refuses a stale one.
- A proposal based on an older revision than the server's is three-way merged with the merge
  driver's engine (base: the revision this machine's file started from, ours: the file, theirs:
  the server's), or left as a conflict for the person; the other's change is never dropped, also
  when the person pulled between their edit and their proposal (the advice the old 409 gave).
Two people are two clones of one origin, each with a data root of their own (their own cache).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memex.core import frontmatter

from client_support import remote_server
from conftest import git, run_cli, two_clones

FOLDER = Path(".ai") / "open-memex"
BODY = "Deploys happen on Tuesdays.\n\nThe release manager announces them in #deploys.\n\nRollback uses the deploy script.\n"


def people(tmp_path: Path) -> tuple[Path, dict[str, str], Path, dict[str, str]]:
    mine, theirs = two_clones(tmp_path)
    ada = {"GIT_MEMEX_HOME": str(tmp_path / "ada-home"), "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com"}
    ben = {"GIT_MEMEX_HOME": str(tmp_path / "ben-home"), "GIT_AUTHOR_NAME": "Ben", "GIT_AUTHOR_EMAIL": "ben@example.com"}
    return mine, ada, theirs, ben


def cli(*args: str, cwd: Path, env: dict[str, str], code: int = 0) -> dict:
    r = run_cli(*args, "--json", cwd=cwd, env=env)
    assert r.code == code, r.err
    return r.json() if code == 0 else {"err": r.err}


def edit(work: Path, mid: str, body: str | None = None, **changes: object) -> None:
    path = work / FOLDER / f"{mid}.md"
    meta, old = frontmatter.parse(path.read_text("utf-8"))
    meta.update(changes)
    path.write_text(frontmatter.serialize(meta, old if body is None else body), encoding="utf-8")


def shared_memory(tmp_path: Path, srv: object) -> tuple[Path, dict[str, str], Path, dict[str, str], str]:
    """Ada's memory, committed and pulled by Ben, proposed by Ada to the server (revision 1); both
    subscribed with a proposer's token, both caches at revision 1."""
    ada_repo, ada, ben_repo, ben = people(tmp_path)
    token = str(srv.tokens["proposer"])  # type: ignore[attr-defined]
    mid = cli("add", BODY, "--type", "decision", cwd=ada_repo, env=ada)["id"]
    assert run_cli("submit", mid, cwd=ada_repo, env=ada).code == 0
    git("push", "-q", "origin", "main", cwd=ada_repo)
    git("pull", "-q", "--ff-only", cwd=ben_repo)
    cli("remote", "add", "team", srv.url, "--token-file", token, cwd=ada_repo, env=ada)  # type: ignore[attr-defined]
    assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 1
    cli("remote", "add", "team", srv.url, "--token-file", token, cwd=ben_repo, env=ben)  # type: ignore[attr-defined]
    return ada_repo, ada, ben_repo, ben, mid


def on_server(srv: object, mid: str) -> tuple[int, dict, str]:
    doc = srv.call("GET", f"/memories/{mid}", role="reader")  # type: ignore[attr-defined]
    meta, body = frontmatter.parse(doc["file"])
    return doc["revision"], meta, body


def test_a_stale_proposal_is_merged_even_after_a_pull(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        ada_repo, ada, ben_repo, ben, mid = shared_memory(tmp_path, srv)
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Tuesdays and Thursdays"))
        cli("remote", "pull", "team", cwd=ada_repo, env=ada)
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2

        edit(ben_repo, mid, body=BODY.replace("the deploy script", "the deploy script, then page on-call"),
             tags=["deploy"])
        cli("remote", "pull", "team", cwd=ben_repo, env=ben)  # what the old 409 advised: the cache is at 2 now
        r = run_cli("propose", mid, "--to", "remote", "team", "--json", cwd=ben_repo, env=ben)
        assert r.code == 0 and "warning" not in r.err, r.err  # the index takes the merge, nothing left closed
        out = r.json()

        rev, meta, body = on_server(srv, mid)
        assert rev == 3
        assert "on Tuesdays and Thursdays" in body  # Ada's change kept
        assert "then page on-call" in body and meta["tags"] == ["deploy"]  # Ben's change
        assert out["base_revision"] == 2 and out["revision"] == 3 and out["merged_with"]["revision"] == 2
        local = frontmatter.parse((ben_repo / FOLDER / f"{mid}.md").read_text("utf-8"))
        assert local[1] == body and local[0]["tags"] == ["deploy"]  # Ben's file holds the merge too
        assert local[0]["review_state"] == "proposed"  # his own review fields, not the server's

        # and the next proposal of either bases on what each last proposed: no change dropped either way
        edit(ada_repo, mid, body=(ada_repo / FOLDER / f"{mid}.md").read_text("utf-8").split("---\n\n", 1)[1]
             .replace("in #deploys", "in #releases"))
        out = cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)
        assert out["merged_with"]["revision"] == 3 and out["revision"] == 4
        _rev, _meta, body = on_server(srv, mid)
        assert all(s in body for s in ("Tuesdays and Thursdays", "#releases", "then page on-call"))


def test_a_conflict_is_left_for_the_person_and_nothing_is_sent(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        ada_repo, ada, ben_repo, ben, mid = shared_memory(tmp_path, srv)
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Wednesdays"))
        cli("remote", "pull", "team", cwd=ada_repo, env=ada)
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2
        edit(ben_repo, mid, body=BODY.replace("on Tuesdays", "on Thursdays"))
        r = run_cli("propose", mid, "--to", "remote", "team", cwd=ben_repo, env=ben)
        assert r.code == 3 and "revision 2" in r.err and "conflict markers" in r.err and "body" in r.err, r.err
        assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
        assert on_server(srv, mid)[0] == 2  # nothing sent
        text = (ben_repo / FOLDER / f"{mid}.md").read_text("utf-8")
        assert "<<<<<<<" in text and "on Wednesdays" in text and "on Thursdays" in text  # both sides, nothing lost

        again = run_cli("propose", mid, "--to", "remote", "team", cwd=ben_repo, env=ben)
        assert again.code == 3 and "settle the conflict markers" in again.err, again.err

        # the person settles it; the proposal then bases on revision 2, the one merged in
        fm_text = text.split("---\n", 2)[1]
        (ben_repo / FOLDER / f"{mid}.md").write_text(
            "---\n" + fm_text + "---\n\n" + BODY.replace("on Tuesdays", "on Wednesdays and Thursdays"), encoding="utf-8")
        out = cli("propose", mid, "--to", "remote", "team", cwd=ben_repo, env=ben)
        assert out["base_revision"] == 2 and out["revision"] == 3 and "merged_with" not in out
        assert "on Wednesdays and Thursdays" in on_server(srv, mid)[2]


def test_remote_review_approves_rejects_and_refuses_a_stale_revision(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        ada_repo, ada, ben_repo, ben, mid = shared_memory(tmp_path, srv)
        rule = cli("add", "Always tag releases from main", "--role", "instruction", "--type", "workflow",
                   cwd=ada_repo, env=ada)["id"]
        assert run_cli("submit", rule, cwd=ada_repo, env=ada).code == 0
        assert cli("propose", rule, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 1

        # Vera reviews from her own clone, subscribed with a reviewer's token
        vera = {"GIT_MEMEX_HOME": str(tmp_path / "vera-home")}
        cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reviewer"]), cwd=ready, env=vera)
        out = cli("remote", "review", "team", rule, "--approve", "--note", "matches the release doc", cwd=ready,
                  env=vera)
        assert (out["reviewed_revision"], out["revision"], out["review_state"], out["pulled"]) == (1, 2, "approved", True)
        _rev, meta, _body = on_server(srv, rule)
        assert meta["review_state"] == "approved" and meta["approved_by"] == "reviewer1"  # the token's name
        assert meta["review_note"] == "matches the release doc"
        served = [i["id"] for i in cli("context", cwd=ready, env=vera)["instructions"]]
        assert rule in served  # pulled after the review: the approved bytes are cached

        # a revision Vera has not read is refused, and nothing changes on the server
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Mondays"))
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2
        r = run_cli("remote", "review", "team", mid, "--reject", "--note", "no", cwd=ready, env=vera)
        assert r.code == 2 and "revision 2, newer than revision 1 you read" in r.err, r.err
        assert on_server(srv, mid)[1]["review_state"] == "proposed"
        cli("remote", "pull", "team", cwd=ready, env=vera)
        text = run_cli("remote", "review", "team", mid[:10], "--reject", "--note", "Mondays are a freeze",
                       cwd=ready, env=vera)
        assert text.code == 0 and f"{mid} revision 2 rejected" in text.out, text.err
        assert on_server(srv, mid)[1]["review_state"] == "rejected"

        # refusals: a proposer's token, an id the cache lacks, a secret in the note, no decision
        cli("remote", "pull", "team", cwd=ben_repo, env=ben)
        r = run_cli("remote", "review", "team", mid, "--approve", "--read-remote", cwd=ben_repo, env=ben)  # he holds a copy
        assert r.code == 1 and "role is too low" in r.err, r.err
        r = run_cli("remote", "review", "team", "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "--approve", cwd=ready, env=vera)
        assert r.code == 1 and "not in its cache" in r.err
        before = (srv.root / "audit.jsonl").read_text()
        r = run_cli("remote", "review", "team", rule, "--reject", "--note", "token ghp_" + "a1B2" * 9, cwd=ready,
                    env=vera)
        assert r.code == 1 and "secret" in r.err and "ghp_a1B2" not in r.err
        assert (srv.root / "audit.jsonl").read_text() == before
        assert run_cli("remote", "review", "team", rule, cwd=ready, env=vera).code != 0
        assert json.loads(run_cli("remote", "list", "--json", cwd=ready, env=vera).out)["remotes"][0]["memories"] == 2


def body_of(work: Path, mid: str) -> str:
    return frontmatter.parse((work / FOLDER / f"{mid}.md").read_text("utf-8"))[1]


def test_a_new_subscriber_past_the_revision_their_file_holds_drops_nothing(ready: Path, tmp_path: Path) -> None:
    """Ben's file holds revision 1 (from git); he subscribes when the server is at revision 2: his
    cache never saw revision 1, so no version of his file is a revision this machine knows. The
    proposal is a conflict for him to settle (every difference shown), never a silent overwrite."""
    with remote_server(tmp_path) as srv:
        ada_repo, ada, ben_repo, ben = people(tmp_path)
        token = str(srv.tokens["proposer"])
        mid = cli("add", BODY, "--type", "decision", cwd=ada_repo, env=ada)["id"]
        assert run_cli("submit", mid, cwd=ada_repo, env=ada).code == 0
        git("push", "-q", "origin", "main", cwd=ada_repo)
        git("pull", "-q", "--ff-only", cwd=ben_repo)
        cli("remote", "add", "team", srv.url, "--token-file", token, cwd=ada_repo, env=ada)
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 1
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Tuesdays and Thursdays"))
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2

        cli("remote", "add", "team", srv.url, "--token-file", token, cwd=ben_repo, env=ben)  # first pull: revision 2
        edit(ben_repo, mid, body=BODY.replace("the deploy script", "the deploy script, then page on-call"))
        r = run_cli("propose", mid, "--to", "remote", "team", cwd=ben_repo, env=ben)
        assert r.code == 3 and "cannot tell which of its revisions" in r.err, r.err
        rev, _meta, body = on_server(srv, mid)
        assert rev == 2 and "Tuesdays and Thursdays" in body  # nothing sent, Ada's change there
        text = (ben_repo / FOLDER / f"{mid}.md").read_text("utf-8")
        assert "<<<<<<<" in text and "Tuesdays and Thursdays" in text and "then page on-call" in text


def test_two_clones_sharing_a_data_root_each_base_on_their_own_file(ready: Path, tmp_path: Path) -> None:
    """Ada proposes from one clone (revisions 1 and 2), then from a second clone of the same repo with
    the same data root, whose file still holds revision 1: it is merged with revision 2, not taken
    for it."""
    with remote_server(tmp_path) as srv:
        ada_repo, ada, _ben_repo, _ben, mid = shared_memory(tmp_path, srv)
        second = tmp_path / "ada-second"
        git("clone", "-q", str(tmp_path / "origin.git"), str(second))
        assert run_cli("init", "--yes", cwd=second, env=ada).code == 0
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Tuesdays and Thursdays"))
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2
        cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"]), cwd=second, env=ada)
        edit(second, mid, body=BODY.replace("in #deploys", "in #releases"))
        r = run_cli("propose", mid, "--to", "remote", "team", "--json", cwd=second, env=ada)
        assert r.code == 0, r.err
        assert "warning" not in r.err  # no index left closed behind the merge
        out = r.json()
        assert out["base_revision"] == 2 and out["merged_with"]["revision"] == 2 and out["revision"] == 3
        _rev, _meta, body = on_server(srv, mid)
        assert "Tuesdays and Thursdays" in body and "#releases" in body
        assert body_of(second, mid) == body


def test_a_branch_switched_to_after_a_proposal_is_based_on_what_it_holds(ready: Path, tmp_path: Path) -> None:
    """Ada proposes from a feature branch (revision 2), switches back to main, whose file holds
    revision 1, edits and proposes: revision 2's change is kept."""
    with remote_server(tmp_path) as srv:
        ada_repo, ada, _ben_repo, _ben, mid = shared_memory(tmp_path, srv)
        git("checkout", "-q", "-b", "feature", cwd=ada_repo)
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Tuesdays and Thursdays"))
        git("commit", "-qam", "deploy twice a week", cwd=ada_repo)
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2
        git("checkout", "-q", "main", cwd=ada_repo)
        edit(ada_repo, mid, body=BODY.replace("Rollback uses", "Rollback always uses"))
        r = run_cli("propose", mid, "--to", "remote", "team", "--json", cwd=ada_repo, env=ada)
        assert r.code == 0, r.err
        assert r.json()["merged_with"]["revision"] == 2
        _rev, _meta, body = on_server(srv, mid)
        assert "Tuesdays and Thursdays" in body and "Rollback always uses" in body


def test_an_unreadable_base_record_is_never_replaced_by_a_guess(ready: Path, tmp_path: Path) -> None:
    """A `.bases/<id>.json` that cannot be read tells nothing: the cache's newest revision is not
    taken for the one the file started from."""
    with remote_server(tmp_path) as srv:
        ada_repo, ada, ben_repo, ben, mid = shared_memory(tmp_path, srv)
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Tuesdays and Thursdays"))
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2
        cli("remote", "pull", "team", cwd=ben_repo, env=ben)
        record = Path(ben["GIT_MEMEX_HOME"]) / "remote" / "team" / ".bases" / f"{mid}.json"
        assert record.exists()
        record.write_text("{ this is not json")
        edit(ben_repo, mid, body=BODY.replace("the deploy script", "the deploy script, then page on-call"))
        r = run_cli("propose", mid, "--to", "remote", "team", cwd=ben_repo, env=ben)
        assert r.code == 3, r.err
        rev, _meta, body = on_server(srv, mid)
        assert rev == 2 and "Tuesdays and Thursdays" in body
        assert "Tuesdays and Thursdays" in (ben_repo / FOLDER / f"{mid}.md").read_text("utf-8")


def test_a_server_s_current_file_passes_the_admission_barrier_before_a_merge(ready: Path, tmp_path: Path) -> None:
    """On a 409 the server's current file is fetched to merge with: a server that sends one holding a
    secret gets nothing written into the memory file or the data root, and nothing is sent."""
    from client_support import hostile_server, sha

    mid = cli("add", BODY, "--type", "decision", cwd=ready, env={})["id"]
    assert run_cli("submit", mid, cwd=ready).code == 0
    path = ready / FOLDER / f"{mid}.md"
    before = path.read_bytes()
    key = "AKIA" + "IOSFODNN7EXAMPLQ"
    theirs = before.decode("utf-8").replace("on Tuesdays", f"on Tuesdays (key {key})")
    doc = {"id": mid, "revision": 7, "review_state": "proposed", "sha256": sha(theirs), "file": theirs}
    token = tmp_path / "token"
    token.write_text("a-proposer-token-0123456789\n")
    token.chmod(0o600)
    with hostile_server([], memories={mid: doc}) as url:
        cli("remote", "add", "team", url, "--token-file", str(token), cwd=ready, env={})
        r = run_cli("propose", mid, "--to", "remote", "team", cwd=ready)
    assert r.code == 2 and "admission barrier" in r.err and key not in r.err, r.err
    assert path.read_bytes() == before
    home = Path(run_cli("where", "--json").json()["data_root"])
    for f in home.rglob("*"):
        if f.is_file():
            assert key.encode() not in f.read_bytes(), f


def test_the_next_proposal_bases_on_what_this_file_last_sent(ready: Path, tmp_path: Path) -> None:
    """Ada proposes (revision 2) without committing, someone changes the next line on the server
    (revision 3), Ada edits again and proposes: the merge bases on what she sent (revision 2), so
    the two neighbouring changes merge cleanly (from revision 1 they would overlap)."""
    lines = "alpha\nbravo\ncharlie\ndelta\n"
    with remote_server(tmp_path) as srv:
        ada_repo, ada, _ben_repo, _ben = people(tmp_path)
        mid = cli("add", lines, "--type", "decision", cwd=ada_repo, env=ada)["id"]
        assert run_cli("submit", mid, cwd=ada_repo, env=ada).code == 0
        cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"]), cwd=ada_repo, env=ada)
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 1
        edit(ada_repo, mid, body=lines.replace("alpha", "ALPHA"))
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2
        doc = srv.call("GET", f"/memories/{mid}", role="reader")
        theirs = doc["file"].replace("bravo", "BRAVO")
        assert srv.call("POST", "/propose", role="proposer", body={"file": theirs, "base_revision": 2})["revision"] == 3
        edit(ada_repo, mid, body=lines.replace("alpha", "ALPHA").replace("delta", "DELTA"))
        out = cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)
        assert out["merged_with"]["revision"] == 3 and out["revision"] == 4
        assert on_server(srv, mid)[2].strip() == "ALPHA\nBRAVO\ncharlie\nDELTA"


@pytest.mark.slow
def test_a_reviewer_reads_the_revision_they_approve_when_a_copy_is_held_here(ready: Path, tmp_path: Path) -> None:
    """Ada's memory is committed in the repository and proposed to the server (propose keeps the
    id); a teammate proposes a changed body (revision 2). Bob, a reviewer in a fresh clone, reads
    `show ID`: the repository's copy wins there (docs/remote.md), so it is the old text. Before,
    `remote review --approve` then approved revision 2, never shown to him, and nothing said so
    afterwards. Now `show ID` names the differing remote revision, the review is refused (exit 2,
    nothing sent) until `show --remote` was read and `--read-remote` says so, and after the
    approval `show ID` says the server approved a revision that says something else."""
    with remote_server(tmp_path) as srv:
        ada_repo, ada, _ben_repo, _ben, mid = shared_memory(tmp_path, srv)
        edit(ada_repo, mid, body=BODY.replace("on Tuesdays", "on Fridays at 17:00"))  # not committed
        assert cli("propose", mid, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 2

        bob_repo = tmp_path / "bob"
        git("clone", "-q", str(tmp_path / "origin.git"), str(bob_repo))
        bob = {"GIT_MEMEX_HOME": str(tmp_path / "bob-home")}
        assert run_cli("init", "--yes", cwd=bob_repo, env=bob).code == 0
        cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reviewer"]), cwd=bob_repo, env=bob)

        shown = run_cli("show", mid, cwd=bob_repo, env=bob)
        assert shown.code == 0 and "on Tuesdays" in shown.out and "Fridays" not in shown.out  # the local copy
        assert f"remote team holds revision 2 of {mid}, proposed there" in shown.err, shown.err
        assert f"git memex show --remote team {mid}" in shown.err

        before = (srv.root / "audit.jsonl").read_text()
        r = run_cli("remote", "review", "team", mid, "--approve", cwd=bob_repo, env=bob)
        assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err, r.err
        assert f"git memex show --remote team {mid}" in r.err and "--read-remote" in r.err
        assert "nothing was sent" in r.err
        assert (srv.root / "audit.jsonl").read_text() == before and on_server(srv, mid)[1]["review_state"] == "proposed"

        remote = run_cli("show", "--remote", "team", mid, cwd=bob_repo, env=bob)
        assert remote.code == 0 and "on Fridays at 17:00" in remote.out, remote.err
        assert "# remote team, revision 2, proposed there" in remote.out
        doc = cli("show", "--remote", "team", mid[:10], cwd=bob_repo, env=bob)
        assert (doc["id"], doc["revision"], doc["review_state"]) == (mid, 2, "proposed")
        assert "on Fridays at 17:00" in doc["body"]

        out = cli("remote", "review", "team", mid, "--approve", "--read-remote", cwd=bob_repo, env=bob)
        assert (out["reviewed_revision"], out["revision"], out["review_state"]) == (2, 3, "approved")
        shown = run_cli("show", mid, "--json", cwd=bob_repo, env=bob)
        assert shown.code == 0 and shown.json()["remote_revisions"] == [
            {"remote": "team", "revision": 3, "review_state": "approved"}]
        assert any(f"remote team holds revision 3 of {mid}, approved there" in w for w in shown.json()["warnings"])
        note = f"note: remote team holds revision 3 of {mid}, approved there"
        for args in (("search", "deploys", "Tuesdays"), ("list",)):
            listed = run_cli(*args, cwd=bob_repo, env=bob)
            assert listed.code == 0 and mid in listed.out and note in listed.out, (args, listed.out, listed.err)
        got = cli("search", "deploys", "Tuesdays", cwd=bob_repo, env=bob)
        assert [(o["id"], o["revision"], o["review_state"]) for o in got["remote_revisions"]] == [(mid, 3, "approved")]

        # the same text held here and on the server: nothing to say, and the review needs no flag
        rule = cli("add", "Always tag releases from main", "--role", "instruction", "--type", "workflow",
                   cwd=ada_repo, env=ada)["id"]
        assert run_cli("submit", rule, cwd=ada_repo, env=ada).code == 0
        git("push", "-q", "origin", "main", cwd=ada_repo)
        assert cli("propose", rule, "--to", "remote", "team", cwd=ada_repo, env=ada)["revision"] == 1
        git("pull", "-q", "--ff-only", cwd=bob_repo)
        cli("remote", "pull", "team", cwd=bob_repo, env=bob)
        same = run_cli("show", rule, cwd=bob_repo, env=bob)
        assert same.code == 0 and "remote team holds" not in same.err, same.err
        assert cli("remote", "review", "team", rule, "--reject", cwd=bob_repo, env=bob)["review_state"] == "rejected"

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
        out = cli("propose", mid, "--to", "remote", "team", cwd=ben_repo, env=ben)

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
        r = run_cli("remote", "review", "team", mid, "--approve", cwd=ben_repo, env=ben)
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

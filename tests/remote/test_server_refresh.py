"""Hand edits of the served folder are seen without a restart: search, get, pull and history see
an edited, added or removed file at the next request, through the same admission as at start (a
bad hand-edited file is left out, named on stderr, never served)."""

from __future__ import annotations

import json

import httpx

from git_memex.core import frontmatter, model

from server_support import remote_server, wait_for  # noqa: F401  (fixture)

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def memory_text(body: str) -> tuple[str, str]:
    m = model.create(body, type="fact", role="knowledge", tags=["ops"])
    return m.id, frontmatter.serialize(m.fm, m.body)


def _get(s, path: str, **params: str) -> httpx.Response:
    return httpx.get(f"{s.url}/v1{path}", params=params, headers=s.headers("reader"))


def test_a_hand_edit_is_served_at_once_and_pulled_from_the_cursor(remote_server):
    s = remote_server
    mid, text = memory_text("The ingress runs on kubernetes in the eu cluster")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    cursor = _get(s, "/pull").json()["cursor"]
    path = s.root / f"{mid}.md"
    edited = path.read_text().replace("kubernetes in the eu cluster", "nomad in the us cluster")
    path.write_text(edited)  # a reviewer's edit on the server host, in place

    got = _get(s, f"/memories/{mid}").json()
    assert got["file"] == edited
    assert [h["id"] for h in _get(s, "/search", q="nomad").json()["hits"]] == [mid]
    assert _get(s, "/search", q="kubernetes").json()["hits"] == []
    pulled = _get(s, "/pull", since=cursor).json()
    assert [(c["id"], c["file"]) for c in pulled["changes"]] == [(mid, edited)]
    events = _get(s, f"/memories/{mid}/history").json()["events"]
    assert events[-1]["event"] == "edit" and events[-1]["sha256"] == got["sha256"]
    assert _get(s, "/pull", since=pulled["cursor"]).json()["changes"] == []  # seen once

    # a file added by hand in a sub folder is served too
    new_id, new = memory_text("Backups of the billing database run nightly at two")
    (s.root / "ops").mkdir()
    (s.root / "ops" / f"{new_id}.md").write_text(new)
    assert [h["id"] for h in _get(s, "/search", q="billing backups").json()["hits"]] == [new_id]
    assert [c["id"] for c in _get(s, "/pull", since=pulled["cursor"]).json()["changes"]] == [new_id]
    (s.root / "ops" / f"{new_id}.md").unlink()  # removed by hand: no longer served
    assert _get(s, f"/memories/{new_id}").status_code == 404
    assert _get(s, "/search", q="billing backups").json()["hits"] == []


def test_a_bad_hand_edit_is_left_out_and_named_not_served(remote_server):
    s = remote_server
    mid, text = memory_text("The deploy key is kept in the vault under ops")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    cursor = _get(s, "/pull").json()["cursor"]
    path = s.root / f"{mid}.md"
    path.write_text(path.read_text().replace("kept in the vault", f"{GHP} kept in the vault"))
    assert _get(s, f"/memories/{mid}").status_code == 404
    assert _get(s, "/search", q="deploy key vault").json()["hits"] == []
    assert _get(s, "/pull", since=cursor).json()["changes"] == []
    assert mid not in json.dumps(_get(s, "/pull").json())
    err = s.stderr()
    assert f"left out {path}" in err and "holds a secret" in err and GHP not in err and "Traceback" not in err
    # a proposal over the left-out file is refused: the operator's file is never overwritten
    _other, fresh = memory_text("The deploy key is kept in the vault")
    fm, body = frontmatter.parse(fresh)
    fm["id"] = mid
    r = httpx.post(f"{s.url}/v1/propose", json={"file": frontmatter.serialize(fm, body), "base_revision": None},
                   headers=s.headers("proposer"))
    assert r.status_code == 409 and GHP not in r.text
    assert GHP in path.read_text()
    # an unreadable hand edit is left out the same way; the fixed file comes back
    path.write_text("---\nid: broken\n: x\n---\n")
    assert _get(s, f"/memories/{mid}").status_code == 404
    path.write_text(text)
    assert _get(s, f"/memories/{mid}").json()["file"] == text
    assert [c["id"] for c in _get(s, "/pull", since=cursor).json()["changes"]] == [mid]


def test_a_file_added_while_stopped_reaches_an_incremental_pull(remote_server):
    s = remote_server
    _a, a = memory_text("The first memory the server wrote itself")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": a, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    cursor = _get(s, "/pull").json()["cursor"]
    s.stop()
    b_id, b = memory_text("A memory copied into the folder while the server was down")
    (s.root / f"{b_id}.md").write_text(b)
    s.start()
    assert [c["id"] for c in _get(s, "/pull", since=cursor).json()["changes"]] == [b_id]


def test_a_hand_edit_during_a_write_is_never_overwritten(remote_server, tmp_path):
    """A hand edit that lands while a proposal is being written (after the request's stat walk,
    before the rename) makes the proposal 409 with nothing written; the edit stays and is logged."""
    import threading

    s = remote_server
    mid, text = memory_text("The ingress runs on kubernetes in the eu cluster")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    s.stop()
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    s.start(env={"GIT_MEMEX_PAUSE_AT": "remote.after_tmp", "GIT_MEMEX_PAUSE_DIR": str(pauses)})
    path = s.root / f"{mid}.md"
    proposal = path.read_text().replace("kubernetes", "a proposal's kubernetes")
    answers: list[httpx.Response] = []
    t = threading.Thread(target=lambda: answers.append(httpx.post(
        f"{s.url}/v1/propose", json={"file": proposal, "base_revision": 1}, headers=s.headers("proposer"),
        timeout=60)))
    t.start()
    wait_for(pauses / "remote.after_tmp.reached")
    edited = path.read_text().replace("kubernetes in the eu cluster", "nomad in the us cluster")
    path.write_text(edited)  # the hand edit, in the window
    (pauses / "remote.after_tmp.go").touch()
    t.join(timeout=60)
    assert answers and answers[0].status_code == 409, answers[0].text if answers else "no answer"
    assert "hand edit" in answers[0].json()["error"] and "nothing was written" in answers[0].json()["error"]
    assert path.read_text() == edited
    assert _get(s, f"/memories/{mid}").json()["file"] == edited
    events = [json.loads(line) for line in (s.root / "audit.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "edit" and events[-1]["id"] == mid
    assert [e["outcome"] for e in events if e.get("event") == "propose"][-2:] == ["begun", "aborted"]


def test_a_hand_edit_with_a_private_span_is_left_out_as_a_pull_would_refuse_it(remote_server):
    """The server read a hand-edited file with the commit checks only, which know no `<private>`
    span: it served the span to every reader, while each client then quarantined the file. It now
    asks the same question a pulled file is asked (`secrets.admission.refusal`)."""
    s = remote_server
    mid, text = memory_text("The ingress certificate renews on the first of the month")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    path = s.root / f"{mid}.md"
    path.write_text(path.read_text().replace("renews on", "renews <private>from the laptop of kim</private> on"))
    assert _get(s, f"/memories/{mid}").status_code == 404
    assert "laptop of kim" not in json.dumps(_get(s, "/pull").json())
    assert _get(s, "/search", q="ingress certificate").json()["hits"] == []
    err = s.stderr()
    assert f"left out {path}" in err and "span marked private in its text field" in err and "kim" not in err

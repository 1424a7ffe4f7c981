"""Pull in pages: the server's `limit` and `more`, the cursor going on, and the client reading
every page within one `remote pull` (bounded: a cursor that never moves stops it)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from client_support import hostile_server, memory_file, remote_server, run_cli, sha, token_files
from server_support import remote_server as real_server  # noqa: F401  (fixture)


def _seed(s, n: int) -> list[str]:
    ids = []
    for i in range(n):
        mid, text = memory_file(f"Paged memory number {i} about the release train")
        r = httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None}, headers=s.headers("proposer"))
        assert r.status_code == 201
        ids.append(mid)
    return ids


def test_pull_pages_with_a_limit_and_the_cursor_goes_on(real_server):
    s = real_server
    ids = _seed(s, 5)
    seen: list[str] = []
    since = None
    pages = 0
    while True:
        params = {"limit": 2, **({"since": since} if since is not None else {})}
        doc = httpx.get(f"{s.url}/v1/pull", params=params, headers=s.headers("reader")).json()
        pages += 1
        assert len(doc["changes"]) <= 2
        seen += [c["id"] for c in doc["changes"]]
        since = doc["cursor"]
        if not doc["more"]:
            break
        assert pages < 10
    assert pages == 3 and sorted(seen) == sorted(ids) and len(seen) == len(set(seen))
    # a change made between pages comes in a later page, once
    first = httpx.get(f"{s.url}/v1/pull", params={"limit": 2}, headers=s.headers("reader")).json()
    rev = httpx.get(f"{s.url}/v1/memories/{ids[0]}", headers=s.headers("reader")).json()["revision"]
    httpx.post(f"{s.url}/v1/review/{ids[0]}", json={"decision": "approve", "revision": rev},
               headers=s.headers("reviewer"))
    rest = httpx.get(f"{s.url}/v1/pull", params={"since": first["cursor"]}, headers=s.headers("reader")).json()
    assert not rest["more"] and ids[0] in [c["id"] for c in rest["changes"]]
    for bad in ("0", "1001", "x", "-1"):
        r = httpx.get(f"{s.url}/v1/pull", params={"limit": bad}, headers=s.headers("reader"))
        assert r.status_code == 400 and "limit" in r.json()["error"]


def test_remote_pull_reads_every_page(ready: Path, tmp_path: Path) -> None:
    files = dict((f"{mid}.md", text) for mid, text in
                 (memory_file(f"Seeded memory {i} about the deploy pipeline") for i in range(5)))
    with remote_server(tmp_path, files) as srv:
        r = run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"]))
        assert r.code == 0, r.err
        r = run_cli("remote", "pull", "team", "--full", "--page-size", "2", "--json")
        assert r.code == 0, r.err
        doc = json.loads(r.out)["remotes"][0]
        assert (doc["pages"], doc["received"], doc["more"], doc["memories"]) == (3, 5, False, 5)
        assert sorted(doc["landed"]) == sorted(Path(n).stem for n in files)
        r = run_cli("remote", "pull", "team", "--page-size", "0")
        assert r.code == 1 and "--page-size" in r.err


def test_a_cursor_that_never_moves_stops_the_pull(ready: Path, tmp_path: Path) -> None:
    mid, text = memory_file("A memory a looping server sends again and again")
    tokens = token_files(tmp_path / "t")
    change = {"id": mid, "revision": 1, "review_state": "approved", "sha256": sha(text), "file": text}
    with hostile_server([change], more=True) as url:
        r = run_cli("remote", "add", "loop", url, "--token-file", str(tokens["reader"]))
        assert r.code == 0, r.err
        r = run_cli("remote", "pull", "loop", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)["remotes"][0]
    assert doc["more"] is True and doc["pages"] <= 2 and "cursor did not move" in doc["warnings"][0]

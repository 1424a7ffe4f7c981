"""The remote client against the real remote server (`git memex remote-server` in its own process):
subscribe, list, pull, remove; labelled hits in search, list and the MCP tools; an unreachable
server served from the cache with a freshness note; propose and its 409; refusals."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from client_support import memory_file, remote_server, run_cli
from mcp_client import call, text


def _ids(res: dict, key: str = "hits") -> dict[str, dict]:
    return {h["id"]: h for h in res[key]}


def test_add_list_pull_remove(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    b_id, b = memory_file("The billing service retries webhooks three times.")
    with remote_server(tmp_path, {f"{a_id}.md": a, f"{b_id}.md": b}) as srv:
        r = run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"]))
        assert r.code == 0, r.err
        assert "subscribed to remote team" in r.out and "2 memories" in r.out
        cfg = subprocess.run(["git", "config", "--local", "--get-regexp", r"^memex\.remote\."], cwd=ready,
                             capture_output=True, text=True).stdout
        assert f"memex.remote.team.url {srv.url}" in cfg and "memex.remote.team.tokenfile" in cfg
        assert srv.tokens["reader"].read_text().strip() not in cfg  # the token is never copied
        cache = Path(json.loads(run_cli("remote", "list", "--json").out)["remotes"][0]["path"])
        assert (cache / f"{a_id}.md").read_text() == a  # byte for byte as the server has it
        assert oct(cache.stat().st_mode & 0o777) == "0o700"
        assert oct((cache / f"{a_id}.md").stat().st_mode & 0o777) == "0o600"
        state = json.loads((cache / "state.json").read_text())
        assert set(state) >= {"url", "cursor", "last_pull_at", "last_attempt_at", "last_error", "items"}
        assert state["items"][a_id]["review_state"] == "approved"

        rows = json.loads(run_cli("remote", "list", "--json").out)["remotes"]
        assert [(r["name"], r["url"], r["memories"], r["freshness"]["stale"]) for r in rows] == \
            [("team", srv.url, 2, False)]

        hits = _ids(json.loads(run_cli("search", "staging cluster", "--json").out))
        assert hits[a_id]["location"] == "remote:team" and hits[a_id]["remote"] == "team"
        out = run_cli("search", "staging cluster").out
        assert "remote:team/fact" in out and "last pulled" not in out  # fresh: no note
        listed = run_cli("list")
        assert "Remote (read-only):" in listed.out and "remote:team/fact" in listed.out

        # a change on the server arrives with the next pull, and only it
        c_id, c = memory_file("Feature flags live in the flags service, never in env files.")
        r = run_cli("propose", "--help")  # (the CLI knows --to remote)
        assert "remote NAME" in r.out
        srv.call("POST", "/propose", role="proposer", body={"file": c, "base_revision": None})
        pulled = run_cli("remote", "pull", "team", "--json")
        assert pulled.code == 0, pulled.err
        doc = json.loads(pulled.out)["remotes"][0]
        assert doc["landed"] == [c_id] and doc["memories"] == 3

        r = run_cli("remote", "remove", "team")
        assert r.code == 0, r.err
        assert not cache.exists()
        assert subprocess.run(["git", "config", "--get-regexp", r"^memex\.remote\."], cwd=ready,
                              capture_output=True, text=True).stdout == ""
        assert a_id not in _ids(json.loads(run_cli("search", "staging cluster", "--json").out))


def test_remote_memories_are_read_only_and_declared(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"])).code == 0
        for args in (("forget", a_id), ("status", a_id, "deprecated"), ("supersede", a_id, "new text")):
            r = run_cli(*args)
            assert r.code == 1, (args, r.out, r.err)
            assert "is a memory of remote team, read-only here" in r.err and "Traceback" not in r.err
        where = json.loads(run_cli("where", "--json").out)
        row = next(p for p in where["providers"] if p["name"] == "remote:team")
        assert row["kind"] == "remote" and row["propose"] is True
        assert row["capabilities"] == {"read": True, "write": False, "delete": False, "history": True, "sync": "pull"}


def test_mcp_tools_include_remote_memories(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"])).code == 0
    res = call("memory_search", {"query": "staging cluster"}, cwd=ready)  # the server is gone: the cache serves
    assert not res.is_error, text(res)
    hit = next(h for h in res.structured_content["hits"] if h["id"] == a_id)
    assert hit["remote"] == "team" and f"[remote:team/fact] [approved] id={a_id}" in text(res)
    res = call("memory_list", {}, cwd=ready)
    assert f"[remote:team/fact] [approved] id={a_id}" in text(res)
    res = call("memory_get", {"id": a_id}, cwd=ready)
    assert not res.is_error and "[remote:team/fact]" in text(res)


def test_unreachable_remote_serves_the_cache_with_a_freshness_note(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"])).code == 0
    cache = Path(json.loads(run_cli("remote", "list", "--json").out)["remotes"][0]["path"])
    before = {p.name: p.read_bytes() for p in cache.glob("*.md")}
    r = run_cli("remote", "pull", "team")
    assert r.code == 2, (r.out, r.err)
    line = r.err.strip()
    assert "\n" not in line and line.startswith(f"git-memex: cannot reach remote team ({srv.url})")
    assert "nothing was changed" in line and "Traceback" not in r.err
    assert {p.name: p.read_bytes() for p in cache.glob("*.md")} == before

    out = run_cli("search", "staging cluster")
    assert a_id[:7] in out.out and "remote:team/fact" in out.out
    assert "note: remote team last pulled just now; its last pull failed" in out.out
    doc = json.loads(run_cli("search", "staging cluster", "--json").out)
    fresh = doc["freshness"][0]
    assert fresh["remote"] == "team" and fresh["stale"] is True and "cannot reach" in fresh["last_error"]
    assert "remote team last pulled" in run_cli("list").out
    ctx = json.loads(run_cli("context", "--query", "staging cluster", "--json").out)
    assert ctx["freshness"][0]["stale"] is True and "remote team last pulled" in ctx["text"]

    # an old pull is stale too, failed or not: 3 hours ago
    state = json.loads((cache / "state.json").read_text())
    state.update(last_pull_at="2000-01-01T00:00:00Z", last_attempt_at="2000-01-01T00:00:00Z", last_error=None)
    (cache / "state.json").write_text(json.dumps(state))
    assert "note: remote team last pulled" in run_cli("search", "staging cluster").out


def test_pull_retries_only_when_asked(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"])).code == 0
    once = json.loads(run_cli("remote", "pull", "team", "--json").out)
    assert once["failed"][0]["name"] == "team" and once["remotes"] == []
    r = run_cli("remote", "pull", "team", "--retry", "-1")
    assert r.code == 1 and "--retry" in r.err


def test_add_refusals(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        tok = srv.tokens["reader"]
        tok.chmod(0o644)
        r = run_cli("remote", "add", "team", srv.url, "--token-file", str(tok))
        assert r.code == 1 and "may be read by group or others" in r.err and "chmod 600" in r.err
        tok.chmod(0o600)
        for bad in ("Team", "x_y", "a/b"):
            r = run_cli("remote", "add", bad, srv.url, "--token-file", str(tok))
            assert r.code == 1 and "not a valid remote name" in r.err, r.err
        for url in ("ftp://host", "http://u:p@127.0.0.1:1", "nonsense"):
            r = run_cli("remote", "add", "team", url, "--token-file", str(tok))
            assert r.code == 1 and "Traceback" not in r.err and r.err.count("\n") == 1, r.err
        wrong = tmp_path / "wrong.token"
        wrong.write_text("not-the-token-at-all-0123456789\n")
        wrong.chmod(0o600)
        r = run_cli("remote", "add", "team", srv.url, "--token-file", str(wrong))
        assert r.code == 1 and "refused the token" in r.err, r.err
        assert subprocess.run(["git", "config", "--get-regexp", r"^memex\.remote\."], cwd=ready,
                              capture_output=True, text=True).stdout == ""
        assert json.loads(run_cli("remote", "list", "--json").out)["remotes"] == []


def test_propose_and_its_409(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"])).code == 0
        added = run_cli("add", "Releases are cut on Tuesdays.", "--json")
        mid = json.loads(added.out)["id"]
        r = run_cli("propose", mid, "--to", "remote", "team", "--json")
        assert r.code == 0, r.err
        assert json.loads(r.out)["revision"] == 1 and json.loads(r.out)["base_revision"] is None
        assert srv.call("GET", f"/memories/{mid}", role="reader")["review_state"] == "proposed"
        # again without pulling: it bases on what it proposed (revision 1), not on the cache, which never saw it
        r = run_cli("propose", mid, "--to", "remote", "team", "--json")
        assert r.code == 0, r.err
        assert json.loads(r.out)["base_revision"] == 1 and json.loads(r.out)["revision"] == 2
        # someone else's revision 3: the next proposal from here merges it (a 409, then the merge), never drops it
        theirs = srv.call("GET", f"/memories/{mid}", role="reader")["file"].replace("on Tuesdays", "on Wednesdays")
        assert srv.call("POST", "/propose", role="proposer", body={"file": theirs, "base_revision": 2})["revision"] == 3
        r = run_cli("propose", mid, "--to", "remote", "team", "--json")
        assert r.code == 0, r.err
        out = json.loads(r.out)
        assert (out["base_revision"], out["revision"], out["merged_with"]["revision"]) == (3, 4, 3)
        assert "on Wednesdays" in srv.call("GET", f"/memories/{mid}", role="reader")["file"]
        assert "on Wednesdays" in Path(out["path"]).read_text("utf-8")  # this file holds their change now


def test_a_personal_memory_is_never_sent(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"])).code == 0
        mid = json.loads(run_cli("add", "I like tabs over spaces.", "--scope", "personal", "--json").out)["id"]
        audit = srv.root / "audit.jsonl"
        before = audit.read_text() if audit.exists() else ""
        r = run_cli("propose", mid, "--to", "remote", "team")
        assert r.code == 1 and "is a personal memory, which never leaves this machine" in r.err
        assert (audit.read_text() if audit.exists() else "") == before
        assert not list(srv.root.glob("*.md"))


# ------------------------------------------------------------------ what a hostile server answers
def _answering(status: int, doc: dict | None, headers: dict[str, str] | None = None):
    """A stand-in whose health is a remote server's and whose every other GET answers `status`
    with `doc` (and `headers`); `seen` collects each request's Authorization header."""
    import threading
    from contextlib import contextmanager
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            seen.append(self.headers.get("Authorization"))
            body: dict | None = doc
            code, extra = status, headers or {}
            if self.path.startswith("/v1/health"):
                code, body, extra = 200, {"ok": True, "protocol": "openmemex/0.2"}, {}
            raw = b"" if body is None else json.dumps(body).encode()
            self.send_response(code)
            for k, v in extra.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    @contextmanager
    def serving():
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        t = threading.Thread(target=httpd.serve_forever, daemon=True)
        t.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
        finally:
            httpd.shutdown()
            httpd.server_close()

    return serving()


def _token(tmp_path: Path) -> tuple[Path, str]:
    tok = tmp_path / "tok"
    value = "reader-" + "a1b2c3d4e5f6a7b8c9d0"
    tok.write_text(value + "\n")
    tok.chmod(0o600)
    return tok, value


def test_a_redirect_is_never_followed_with_the_token(ready: Path, tmp_path: Path) -> None:
    tok, value = _token(tmp_path)
    with _answering(404, {}) as (elsewhere, seen_elsewhere), \
            _answering(302, None, {"Location": f"{elsewhere}/v1/pull"}) as (url, _seen):
        r = run_cli("remote", "add", "evil", url, "--token-file", str(tok))
    assert r.code == 1 and "redirect" in r.err and "never follows" in r.err, r.err
    assert seen_elsewhere == [] and value not in r.err


def test_a_servers_error_sentence_is_masked_before_it_is_printed_or_kept(ready: Path, tmp_path: Path) -> None:
    tok, value = _token(tmp_path)
    pat = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    good = {"cursor": "1", "changes": []}
    with _answering(200, good) as (url, _):
        assert run_cli("remote", "add", "team", url, "--token-file", str(tok)).code == 0
        port = url.rsplit(":", 1)[1]
    with _answering(500, {"error": f"boom {value} {pat} " + "x" * 5000}) as (url2, _):
        assert url2.rsplit(":", 1)[1] != port
        assert subprocess.run(["git", "config", "memex.remote.team.url", url2], cwd=ready).returncode == 0
        r = run_cli("remote", "pull", "team")
    assert r.code == 2 and "500" in r.err, r.err
    listed = run_cli("remote", "list", "--json")
    state = "".join(p.read_text() for p in (Path(json.loads(listed.out)["remotes"][0]["path"])).glob("*.json"))
    for where in (r.err, listed.out, state):
        assert value not in where and pat not in where
    assert len(r.err) < 1000


def test_a_cursor_that_is_not_one_is_refused_and_not_kept(ready: Path, tmp_path: Path) -> None:
    tok, _ = _token(tmp_path)
    with _answering(200, {"cursor": "x" * 100_000, "changes": []}) as (url, _):
        r = run_cli("remote", "add", "evil", url, "--token-file", str(tok))
    assert r.code == 2 and "cursor that is not one" in r.err, r.err
    assert len(r.err) < 1000


def test_a_private_span_from_a_server_is_quarantined(ready: Path, tmp_path: Path) -> None:
    from client_support import hostile_server, sha

    tok, _ = _token(tmp_path)
    good_id, good = memory_file("Deploys go through the staging cluster first, always.")
    priv_id, priv = memory_file("The on-call phone is <private>hidden stuff</private> this week.")
    changes = [{"id": mid, "revision": 1, "review_state": "approved", "sha256": sha(text), "file": text}
               for mid, text in ((good_id, good), (priv_id, priv))]
    with hostile_server(changes) as url:
        r = run_cli("remote", "add", "team", url, "--token-file", str(tok))
    assert r.code == 0, r.err
    assert f"quarantined {priv_id}: it holds a span marked private" in r.err, r.err
    shown = run_cli("show", priv_id)
    assert "hidden stuff" not in shown.out + shown.err
    assert run_cli("show", good_id).code == 0


def test_a_token_split_by_a_line_separator_is_still_masked(ready: Path, tmp_path: Path) -> None:
    tok, value = _token(tmp_path)
    split = value[:9] + "\u2028" + value[9:]
    with _answering(400, {"error": f"bad request from {value} and {split}"}) as (url, _):
        r = run_cli("remote", "add", "evil", url, "--token-file", str(tok))
    assert r.code == 1, r.err
    assert value not in r.err and value[:9] + " " + value[9:] not in r.err and value[9:] not in r.err, r.err


def test_a_file_without_review_state_on_the_server_lands_unreviewed(ready: Path, tmp_path: Path) -> None:
    """An operator's hand-put file has no review_state; the server sends null and it lands (never
    served as a rule: the gate wants approved)."""
    from client_support import hostile_server, sha

    tok, _ = _token(tmp_path)
    mid, text = memory_file("The build cache lives on the shared runner disk.")
    change = {"id": mid, "revision": 1, "review_state": None, "sha256": sha(text), "file": text}
    with hostile_server([change]) as url:
        r = run_cli("remote", "add", "team", url, "--token-file", str(tok))
    assert r.code == 0 and "quarantined" not in r.err, r.err
    hits = json.loads(run_cli("search", "build cache shared runner", "--json").out)["hits"]
    assert mid in [h["id"] for h in hits]

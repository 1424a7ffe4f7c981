"""The served folder across crashes: kill -9 of the real server at each point of a write, then a
restart; the audit log's recovery; the folder as the truth. (Named test_remote_store: tests/core
already has a test_store.py and the test folders are not packages.)"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from pathlib import Path

import httpx
import pytest

from git_memex.core import frontmatter, model
from git_memex.remote.store import POINTS

from server_support import remote_server, start_remote_server, wait_for  # noqa: F401  (fixtures)


def memory_text(body: str) -> tuple[str, str]:
    m = model.create(body, tags=["crash"])
    return m.id, frontmatter.serialize(m.fm, m.body)


def audit(root: Path) -> list[dict]:
    return [json.loads(x) for x in (root / "audit.jsonl").read_text().splitlines()]


def ids_on_disk(root: Path) -> list[str]:
    out = []
    for p in sorted(root.rglob("*.md")):
        if ".remote" in p.parts:
            continue
        fm, _ = frontmatter.parse(p.read_text())
        out.append(fm["id"])
    return out


def check_log_matches_files(root: Path) -> None:
    """Every begun line is settled, and each id's last committed sha256 is its file's."""
    lines = audit(root)
    assert [d["seq"] for d in lines] == list(range(1, len(lines) + 1))
    open_: list[dict] = []
    for d in lines:
        if d["outcome"] == "begun":
            open_.append(d)
        else:
            match = [b for b in open_ if (b["id"], b["revision"], b["sha256"]) == (d["id"], d["revision"], d["sha256"])]
            assert match, d
            open_.remove(match[0])
    assert open_ == []
    last: dict[str, str] = {}
    for d in lines:
        if d["outcome"] == "committed":
            last[d["id"]] = d["sha256"]
    on_disk = {p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.glob("*.md")}
    assert last == on_disk


EXPECTED = {  # point -> (the killed proposal's file is there afterwards, the recover outcome or None)
    "remote.before_begun": (False, None),
    "remote.after_begun": (False, "aborted"),
    "remote.after_tmp": (False, "aborted"),
    "remote.after_rename": (True, "committed"),
    "remote.after_committed": (True, None),
}


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_during_a_propose_leaves_all_or_nothing(remote_server, tmp_path, point):
    s = remote_server
    accepted = []
    for n in range(3):
        mid, text = memory_text(f"accepted memory number {n} before the crash")
        r = httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None}, headers=s.headers("proposer"))
        assert r.status_code == 201
        accepted.append(mid)
    s.stop()
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    s.start(env={"GIT_MEMEX_PAUSE_AT": point, "GIT_MEMEX_PAUSE_DIR": str(pauses)})
    victim, text = memory_text("the proposal the server dies during")
    answers: list[object] = []

    def send() -> None:
        try:
            answers.append(httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                                      headers=s.headers("proposer"), timeout=60).status_code)
        except httpx.HTTPError as exc:
            answers.append(exc)

    t = threading.Thread(target=send)
    t.start()
    wait_for(pauses / f"{point}.reached")
    before = (s.root / "audit.jsonl").read_bytes()
    s.kill()
    t.join(timeout=60)
    assert answers and isinstance(answers[0], httpx.HTTPError)  # never a 201 for the killed one
    s.start()
    there, outcome = EXPECTED[point]
    assert (s.root / "audit.jsonl").read_bytes().startswith(before)  # the log grew, nothing rewritten
    on_disk = ids_on_disk(s.root)
    for mid in accepted:
        assert on_disk.count(mid) == 1
    assert on_disk.count(victim) == (1 if there else 0)
    assert not list(s.root.glob(".*.tmp"))  # a killed write's temp file is gone
    recovers = [d for d in audit(s.root) if d["event"] == "recover"]
    if outcome is None:
        assert recovers == []
    else:
        assert [(d["id"], d["outcome"], d["of"]) for d in recovers] == [(victim, outcome, "propose")]
        assert "recovered" in s.stderr()
    check_log_matches_files(s.root)
    # the client retries: exactly once either way
    r = httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None}, headers=s.headers("proposer"))
    assert r.status_code == (409 if there else 201)
    assert ids_on_disk(s.root).count(victim) == 1
    check_log_matches_files(s.root)
    s.stop()
    s.start()  # a second restart settles nothing more
    assert [d for d in audit(s.root) if d["event"] == "recover"] == recovers
    hist = httpx.get(f"{s.url}/v1/memories/{victim}/history", headers=s.headers("reader")).json()["events"]
    assert len([e for e in hist if e["revision"] == 1]) == 1


def test_kill_9_during_a_review_keeps_the_old_file(remote_server, tmp_path):
    s = remote_server
    mid, text = memory_text("a memory whose review is cut short")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    old = (s.root / f"{mid}.md").read_bytes()
    s.stop()
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    s.start(env={"GIT_MEMEX_PAUSE_AT": "remote.after_tmp", "GIT_MEMEX_PAUSE_DIR": str(pauses)})
    t = threading.Thread(target=lambda: _quiet(lambda: httpx.post(
        f"{s.url}/v1/review/{mid}", json={"decision": "approve", "revision": 1}, headers=s.headers("reviewer"),
        timeout=60)))
    t.start()
    wait_for(pauses / "remote.after_tmp.reached")
    s.kill()
    t.join(timeout=60)
    s.start()
    assert (s.root / f"{mid}.md").read_bytes() == old
    rec = [d for d in audit(s.root) if d["event"] == "recover"]
    assert [(d["outcome"], d["of"], d["decision"]) for d in rec] == [("aborted", "review", "approve")]
    check_log_matches_files(s.root)
    r = httpx.post(f"{s.url}/v1/review/{mid}", json={"decision": "approve", "revision": 1},
                   headers=s.headers("reviewer"))
    assert r.status_code == 200 and r.json()["revision"] == 2


def _quiet(call) -> None:
    with contextlib.suppress(httpx.HTTPError):
        call()


def test_a_torn_last_line_is_ended_never_removed(remote_server):
    s = remote_server
    _mid, text = memory_text("before the torn line")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    s.stop()
    log = s.root / "audit.jsonl"
    with open(log, "ab") as fh:
        fh.write(b'{"seq": 3, "at": "2026-')  # a power loss mid-line
    torn = log.read_bytes()
    s.start()
    assert "torn line" in s.stderr()
    after = log.read_bytes()
    assert after.startswith(torn) and after == torn + b"\n"
    _mid2, text2 = memory_text("after the torn line")
    assert httpx.post(f"{s.url}/v1/propose", json={"file": text2, "base_revision": None},
                      headers=s.headers("proposer")).status_code == 201
    lines = log.read_text().splitlines()
    assert json.loads(lines[-1])["seq"] == len(lines)  # seq stays the line number


def test_files_are_the_truth(remote_server):
    """A file put in DIR (or a sub folder) by hand while the server is stopped is served and
    found; an unreadable one is left out with one warning line; the revision is the file's."""
    s = remote_server
    s.stop()
    m = model.create("Handwritten memory about the kubernetes ingress", tags=["ops"])
    m.fm["revision"] = 7
    (s.root / "engineering").mkdir()
    (s.root / "engineering" / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    (s.root / "broken.md").write_text("---\nid: broken\n: x\n---\n")
    s.start()
    assert "left out" in s.stderr() and "broken.md" in s.stderr() and "Traceback" not in s.stderr()
    g = httpx.get(f"{s.url}/v1/memories/{m.id}", headers=s.headers("reader")).json()
    assert g["revision"] == 7
    hits = httpx.get(f"{s.url}/v1/search", params={"q": "kubernetes ingress"}, headers=s.headers("reader")).json()
    assert [h["id"] for h in hits["hits"]] == [m.id] and hits["hits"][0]["revision"] == 7
    assert [c["id"] for c in httpx.get(f"{s.url}/v1/pull", headers=s.headers("reader")).json()["changes"]] == [m.id]
    r = httpx.post(f"{s.url}/v1/propose", json={"file": g["file"].replace("ingress", "ingress controller"),
                                                "base_revision": 7}, headers=s.headers("proposer"))
    assert r.status_code == 201 and r.json()["revision"] == 8
    assert (s.root / "engineering" / f"{m.id}.md").exists() and not (s.root / f"{m.id}.md").exists()
    hits = httpx.get(f"{s.url}/v1/search", params={"q": "controller"}, headers=s.headers("reader")).json()
    assert [h["revision"] for h in hits["hits"]] == [8]


def test_hand_added_files_are_skipped_or_quarantined_with_a_reason(remote_server):
    """Attack finding 8: files put in the served folder by hand never stop the server. A FIFO or a
    link named like a memory is left out with its reason; a FIFO or a folder where `.remote/`
    keeps its index (which SQLite failed on: an internal error, the server did not start) is moved
    into `.remote/quarantine/` with a warning, and the index is rebuilt from the files."""
    import os

    s = remote_server
    s.stop()
    m = model.create("Handwritten memory about the staging ingress", tags=["ops"])
    (s.root / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    os.mkfifo(s.root / "pipe.md")
    (s.root / "link.md").symlink_to("/dev/zero")
    state = s.root / ".remote"
    for name in ("index.db", "index.db-wal", "index.db-shm"):
        with contextlib.suppress(FileNotFoundError):
            (state / name).unlink()
    os.mkfifo(state / "index.db")
    (state / "index.db-wal").mkdir()
    s.start()
    err = s.stderr()
    assert "Traceback" not in err and "internal error" not in err, err
    assert "left out" in err and "pipe.md: it is not a regular file" in err and "link.md: it is a symbolic link" in err
    assert "index.db is a FIFO, not the server's index: moved to" in err
    assert "index.db-wal is a folder, not the server's index: moved to" in err
    assert sorted(p.name.split(".2")[0] for p in (state / "quarantine").iterdir()) == ["index.db", "index.db-wal"]
    hits = httpx.get(f"{s.url}/v1/search", params={"q": "staging ingress"}, headers=s.headers("reader")).json()
    assert [h["id"] for h in hits["hits"]] == [m.id]

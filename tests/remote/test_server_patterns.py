"""The remote server refuses a team's own secret formats (`memex.redactPattern`) as a local write
masks them: `--redact-pattern`, and the git config a local write in DIR would read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from git_memex.core import frontmatter, model

from client_support import run_cli
from server_support import start_remote_server, write_tokens  # noqa: F401  (fixtures)

PATTERN = r"ACME-[A-Z0-9]{20}"
ACME = "ACME-" + "Q7R8S9T0U1V2W3X4Y5Z6"


def memory_text(body: str, **fm: object) -> tuple[str, str]:
    m = model.create(body, type="fact", role="knowledge", tags=["ops"])
    m.fm.update(fm)  # as written (create would lowercase a tag)
    return m.id, frontmatter.serialize(m.fm, m.body)


def files_in(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if ".remote" not in p.parts)


def _refused_everywhere(s) -> None:
    def propose(text: str) -> httpx.Response:
        return httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                          headers=s.headers("proposer"))

    ok_id, ok = memory_text("The staging cluster is rebuilt every Monday")
    assert propose(ok).status_code == 201
    before, listing = (s.root / "audit.jsonl").read_bytes(), files_in(s.root)
    cases = [("text", memory_text(f"The partner key is {ACME} for now")),
             ("tags", memory_text("Partner keys live in the vault", tags=["ops", ACME])),
             ("canonical_ref", memory_text("A link holding the key", canonical_ref=f"https://x.example/{ACME}")),
             ("links", memory_text("A nested field holding the key", links={"partner": [ACME]}))]
    for field, (mid, text) in cases:
        r = propose(text)
        assert r.status_code == 422, (field, r.text)
        err = r.json()["error"]
        assert field in err and ACME not in err and ACME[5:13] not in err, err
        assert not (s.root / f"{mid}.md").exists()
    assert files_in(s.root) == listing and (s.root / "audit.jsonl").read_bytes() == before
    rev = httpx.get(f"{s.url}/v1/memories/{ok_id}", headers=s.headers("reader")).json()["revision"]
    r = httpx.post(f"{s.url}/v1/review/{ok_id}", json={"decision": "approve", "revision": rev,
                                                       "note": f"checked with {ACME}"},
                   headers=s.headers("reviewer"))
    assert r.status_code == 422 and ACME not in r.text
    assert (s.root / "audit.jsonl").read_bytes() == before
    assert ACME not in s.stderr()


def test_a_redact_pattern_flag_secret_in_any_field_is_422_nothing_written(start_remote_server, tmp_path):
    tokens = write_tokens(tmp_path / "tokens")
    s = start_remote_server(tmp_path / "served", tmp_path / "tokens", "--redact-pattern", PATTERN, tokens=tokens)
    _refused_everywhere(s)


def test_the_patterns_of_dir_git_config_apply(start_remote_server, tmp_path):
    """DIR a checkout of the team's memory repository: its `memex.redactPattern` is the server's."""
    root = tmp_path / "served"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "config", "--add", "memex.redactPattern", PATTERN], check=True)
    tokens = write_tokens(tmp_path / "tokens")
    s = start_remote_server(root, tmp_path / "tokens", tokens=tokens)
    _refused_everywhere(s)


def test_a_pattern_that_cannot_be_used_stops_the_server(tmp_path):
    write_tokens(tmp_path / "tokens")
    r = run_cli("remote-server", "--port", "0", "--token-file", str(tmp_path / "tokens"), "--root",
                str(tmp_path / "served"), "--redact-pattern", "(a+)+$")
    assert r.code == 1 and r.err.count("\n") == 1 and "Traceback" not in r.err
    assert "--redact-pattern '(a+)+$' cannot be used" in r.err and "exponential" in r.err
    assert not (tmp_path / "served").exists()


SLOW = ".*.*.*.*.*="  # polynomial backtracking: no nested repeat for the shape test to see


def test_a_slow_pattern_flag_stops_the_server(tmp_path):
    write_tokens(tmp_path / "tokens")
    r = run_cli("remote-server", "--port", "0", "--token-file", str(tmp_path / "tokens"), "--root",
                str(tmp_path / "served"), "--redact-pattern", SLOW)
    assert r.code == 1 and r.err.count("\n") == 1 and "catastrophic backtracking" in r.err, r.err


def test_a_slow_git_config_pattern_is_skipped_and_the_server_keeps_answering(start_remote_server, tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "config", "--add", "memex.redactPattern", r"\w*\w*\w*\w*\w*="], check=True)
    subprocess.run(["git", "-C", str(root), "config", "--add", "memex.redactPattern", PATTERN], check=True)
    tokens = write_tokens(tmp_path / "tokens")
    s = start_remote_server(root, tmp_path / "tokens", tokens=tokens)
    assert "is skipped" in s.stderr() and "catastrophic backtracking" in s.stderr()
    _mid, text = memory_text("a" * 1000)
    r = httpx.post(f"{s.url}/v1/propose", json={"file": text, "base_revision": None},
                   headers=s.headers("proposer"), timeout=30)
    assert r.status_code == 201, r.text
    assert httpx.get(f"{s.url}/v1/health", timeout=30).status_code == 200
    _refused_everywhere(s)  # the usable pattern still applies


def test_a_token_name_matching_a_team_pattern_is_refused(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("p" * 20 + f" {ACME} proposer\n")
    tokens.chmod(0o600)
    r = run_cli("remote-server", "--port", "0", "--token-file", str(tokens), "--root",
                str(tmp_path / "served"), "--redact-pattern", PATTERN)
    assert r.code == 1 and "looks like a secret" in r.err and ACME not in r.err, r.err

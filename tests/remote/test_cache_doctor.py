"""`git memex doctor` checks each remote cache: owner-only modes, the last pull, and every cached
file through the admission barrier again (a team pattern added since the pull, a hand edit)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from client_support import memory_file, remote_server, run_cli


def _remote_checks(cwd: Path) -> tuple[int, list[dict]]:
    r = run_cli("doctor", "--json", cwd=cwd)
    assert "Traceback" not in r.err
    return r.code, [c for c in json.loads(r.out)["checks"] if c["name"] == "remote team"]


def test_doctor_checks_remote_caches(ready: Path, tmp_path: Path) -> None:
    a_id, a = memory_file("The partner id ACME-Q7R8S9T0U1V2W3X4Y5Z6 is for the staging cluster.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"])).code == 0
    cache = Path(json.loads(run_cli("remote", "list", "--json").out)["remotes"][0]["path"])
    code, checks = _remote_checks(ready)
    assert [c["level"] for c in checks] == ["ok", "ok"], checks
    assert "last pulled just now" in checks[0]["detail"]

    (cache / f"{a_id}.md").chmod(0o644)
    code, checks = _remote_checks(ready)
    assert code != 0
    assert any(c["level"] == "fail" and "open to group or others" in c["detail"] and "chmod" in c["detail"]
               for c in checks), checks
    (cache / f"{a_id}.md").chmod(0o600)

    subprocess.run(["git", "config", "--add", "memex.redactPattern", r"ACME-[A-Z0-9]{20}"], cwd=ready, check=True)
    code, checks = _remote_checks(ready)
    bad = [c for c in checks if c["level"] == "fail"]
    assert code != 0 and len(bad) == 1, checks
    assert "no longer pass admission" in bad[0]["detail"] and a_id in bad[0]["detail"]
    assert "ACME-Q7R8" not in bad[0]["detail"] and "--full" in bad[0]["detail"]

    state = json.loads((cache / "state.json").read_text())
    state.update(last_pull_at="2000-01-01T00:00:00Z", last_attempt_at="2000-01-01T00:00:00Z")
    (cache / "state.json").write_text(json.dumps(state))
    (cache / "state.json").chmod(0o600)
    _code, checks = _remote_checks(ready)
    assert any(c["level"] == "warn" and "remote team last pulled" in c["detail"] for c in checks), checks

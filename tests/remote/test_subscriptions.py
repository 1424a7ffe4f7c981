"""`remote remove` in one project keeps the cache a same-named subscription of another project
still uses (the data root is the user's, shared by every project): two real repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from client_support import memory_file, remote_server, run_cli


def _repo(path: Path) -> Path:
    path.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    assert run_cli("init", "--yes", cwd=path).code == 0
    return path


def _hits(cwd: Path, query: str) -> list[str]:
    r = run_cli("search", query, "--json", cwd=cwd)
    assert r.code == 0, r.err
    return [h["id"] for h in json.loads(r.out)["hits"] if h.get("remote") == "team"]


def test_remove_in_one_project_keeps_the_cache_another_uses(ready: Path, tmp_path: Path) -> None:
    other = _repo(tmp_path / "other")
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        for cwd in (ready, other):
            r = run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"]), cwd=cwd)
            assert r.code == 0, r.err
    cache = Path(json.loads(run_cli("remote", "list", "--json", cwd=other).out)["remotes"][0]["path"])
    r = run_cli("remote", "remove", "team", "--json", cwd=ready)
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["cache_removed"] is False and res["kept_for"] == [str(other / ".git" / "config")]
    assert (cache / f"{a_id}.md").exists()
    assert _hits(other, "staging cluster") == [a_id]  # the other project still reads it
    assert _hits(ready, "staging cluster") == []
    r = run_cli("remote", "remove", "team", cwd=other)
    assert r.code == 0 and "deleted" in r.out, r.err
    assert not cache.exists()


def test_a_project_that_dropped_its_subscription_by_hand_does_not_keep_the_cache(ready: Path,
                                                                                 tmp_path: Path) -> None:
    other = _repo(tmp_path / "other")
    a_id, a = memory_file("Deploys go through the staging cluster first, always.")
    with remote_server(tmp_path, {f"{a_id}.md": a}) as srv:
        for cwd in (ready, other):
            assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reader"]),
                           cwd=cwd).code == 0
    subprocess.run(["git", "config", "--remove-section", "memex.remote.team"], cwd=other, check=True)
    r = run_cli("remote", "remove", "team", "--json", cwd=ready)
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["cache_removed"] is True and res["kept_for"] == []

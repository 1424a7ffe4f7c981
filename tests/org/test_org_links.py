"""An org repository that commits its memory folder as a link never exposes the subscriber's own
memories as org ones (issue 20 hole 8): a folder reached through a link out of its root is left out."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from conftest import bare_and_clone, git, run_cli


def _org_linking_to(tmp_path: Path, target: str) -> Path:
    remote, seed = bare_and_clone(tmp_path)
    (seed / ".ai").mkdir()
    os.symlink(target, seed / ".ai" / "open-memex")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "memory folder as a link", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    return remote


def test_a_linked_org_memory_folder_never_indexes_personal_memories(repo: Path, tmp_path: Path) -> None:
    r = run_cli("add", "--scope", "personal", "my personal secret plan for the launch", "--json")
    assert r.code == 0, r.err
    remote = _org_linking_to(tmp_path, "../../../memories/personal")
    added = run_cli("org", "add", "acme", str(remote))  # refused or accepted: either way nothing leaks
    found = run_cli("search", "launch plan", "--json")
    assert found.code == 0, found.err
    hits = json.loads(found.out)["hits"]
    assert hits and all(not h["location"].startswith("org:") for h in hits), hits
    assert _org_memories() == 0
    assert "never followed through links" in added.out + added.err


def test_a_linked_org_memory_folder_never_exposes_another_projects_private_memories(repo: Path, tmp_path: Path) -> None:
    r = run_cli("add", "private detail of this project about the vault", "--visibility", "private", "--json")
    assert r.code == 0, r.err
    data = Path(os.environ["GIT_MEMEX_HOME"])
    keys = [p.name for p in (data / "memories" / "private").iterdir()] if (data / "memories" / "private").is_dir() else []
    target = f"../../../memories/private/{keys[0]}" if keys else "../../../memories/outbox"
    other = tmp_path / "other"
    other.mkdir()
    git("init", "-q", "-b", "main", cwd=other)
    remote = _org_linking_to(tmp_path, target)
    run_cli("org", "add", "acme", str(remote), cwd=other)
    found = run_cli("search", "vault", "--json", cwd=other)
    assert found.code == 0, found.err
    assert json.loads(found.out)["hits"] == []
    assert _org_memories(other) == 0


def _org_memories(cwd: Path | None = None) -> int:
    r = run_cli("org", "list", "--json", cwd=cwd)
    assert r.code == 0, r.err
    return sum(o["memories"] or 0 for o in json.loads(r.out)["orgs"])


def test_org_clone_files_are_owner_only(tmp_path: Path, repo: Path) -> None:
    remote, seed = bare_and_clone(tmp_path)
    mem = seed / ".ai" / "open-memex"
    mem.mkdir(parents=True)
    (mem / "01JORG00000000000000DEPLOY.md").write_text(
        "---\nid: 01JORG00000000000000DEPLOY\nschema_version: 2\nscope: org\ntype: decision\nstatus: active\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\nDeploys are blue green.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "one", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    r = run_cli("org", "add", "acme", str(remote))
    assert r.code == 0, r.err
    clone = Path(os.environ["GIT_MEMEX_HOME"]) / "org" / "acme"
    for here, dirs, files in os.walk(clone):
        for name in [*dirs, *files]:
            mode = stat.S_IMODE(os.lstat(os.path.join(here, name)).st_mode)
            assert not mode & 0o077, (os.path.join(here, name), oct(mode))

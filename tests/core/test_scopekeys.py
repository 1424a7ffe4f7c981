"""Project keys of copied, moved and late-connected clones (git_memex/core/scopekeys.py,
docs/project-keys.md, docs/git.md "Copied, moved and linked clones"), through the real CLI on real
clones copied with `cp -a` and moved with `mv` (issue 21, item 12)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import git, run_cli

ORIGIN = "https://github.com/acme/widgets.git"


def add(cwd: Path, text: str) -> str:
    r = run_cli("add", text, "--json", cwd=cwd)
    assert r.code == 0, r.err
    return str(r.json()["id"])


def search_ids(cwd: Path, query: str) -> list[str]:
    r = run_cli("search", "--json", query, cwd=cwd)
    assert r.code == 0, r.err
    return [h["id"] for h in r.json()["hits"]]


def clone_of(tmp_path: Path, bare: Path, name: str) -> Path:
    work = tmp_path / name
    git("clone", "-q", str(bare), str(work))
    git("remote", "set-url", "origin", ORIGIN, cwd=work)  # as a real clone of the team's repository
    r = run_cli("init", "--yes", cwd=work)
    assert r.code == 0, r.err
    return work


def bare_repo(tmp_path: Path) -> Path:
    bare = tmp_path / "widgets.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git("clone", "-q", str(bare), str(seed))
    (seed / "README.md").write_text("widgets\n")
    git("add", "README.md", cwd=seed)
    git("commit", "-q", "-m", "start", cwd=seed)
    git("push", "-q", "origin", "HEAD:main", cwd=seed)
    return bare


def cp_a(src: Path, dst: Path) -> None:
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)


def test_a_copy_with_a_pinned_key_never_acts_on_the_originals_drafts(tmp_path: Path) -> None:
    """`cp -a repo copy`: the copy carries memex.projectKey; it gets a key of its own with one
    sentence, and `forget` there cannot delete the original's draft."""
    repo = clone_of(tmp_path, bare_repo(tmp_path), "repo")
    mid = add(repo, "the okapi service restarts at midnight")
    draft = next(Path(os.environ["GIT_MEMEX_HOME"]).rglob(f"{mid}.md"))
    copy = tmp_path / "copy"
    cp_a(repo, copy)
    r = run_cli("search", "--json", "okapi", cwd=copy)
    assert r.code == 0, r.err
    assert r.json()["hits"] == []
    notes = [ln for ln in r.err.splitlines() if "copy of" in ln]
    assert len(notes) == 1 and str(repo) in notes[0] and "scopes --adopt" in notes[0], r.err
    gone = run_cli("forget", mid, cwd=copy)
    assert gone.code != 0 and "Traceback" not in gone.err
    assert draft.is_file()  # the original's draft is still there
    assert search_ids(repo, "okapi") == [mid]
    keys = {json.loads(run_cli("where", "--json", cwd=w).out)["project_key"] for w in (repo, copy)}
    assert len(keys) == 2
    again = run_cli("search", "okapi", cwd=copy)
    assert "copy of" not in again.err  # said once
    # the copy's own drafts are its own
    own = add(copy, "the copy's okapi experiment")
    assert search_ids(copy, "okapi") == [own] and search_ids(repo, "okapi") == [mid]


def test_a_moved_clone_keeps_its_drafts_and_takes_its_old_place(tmp_path: Path) -> None:
    """`mv repo moved` is no copy: same key, same drafts, no message; the old path leaves the record."""
    repo = clone_of(tmp_path, bare_repo(tmp_path), "repo")
    mid = add(repo, "the okapi service restarts at midnight")
    moved = tmp_path / "moved"
    os.rename(repo, moved)
    r = run_cli("search", "--json", "okapi", cwd=moved)
    assert r.code == 0 and [h["id"] for h in r.json()["hits"]] == [mid], r.err
    assert "copy of" not in r.err
    clones = json.loads((Path(os.environ["GIT_MEMEX_HOME"]) / "scopes.json").read_text())["clones"]
    assert str(repo) not in clones and str(moved) in clones


def test_doctor_never_suggests_adopting_a_key_a_live_clone_uses(tmp_path: Path) -> None:
    """Two clones of one origin share a key; one is moved. doctor in another clone must not offer
    `scopes --adopt` for that key (following it hid the other clone's drafts)."""
    bare = bare_repo(tmp_path)
    first = clone_of(tmp_path, bare, "a-first")
    second = clone_of(tmp_path, bare, "b-second")
    mid = add(second, "the okapi service restarts at midnight")
    assert search_ids(first, "okapi") == [mid]  # same origin, same key: the same outbox
    os.rename(first, tmp_path / "z-first-moved")  # recorded as a-first until it runs a command
    other = tmp_path / "other"
    other.mkdir()
    git("init", "-q", "-b", "main", cwd=other)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=other)
    assert run_cli("init", "--yes", cwd=other).code == 0
    doc = run_cli("doctor", cwd=other)
    assert "Traceback" not in doc.err
    key = json.loads(run_cli("where", "--json", cwd=second).out)["project_key"]
    assert f"--adopt {key}" not in doc.out + doc.err, doc.out
    listed = {s["key"]: s for s in run_cli("scopes", "--json", cwd=other).json()["scopes"]}
    assert listed[key]["clone"] == str(second) and listed[key]["clone_exists"] is True
    assert search_ids(second, "okapi") == [mid]
    # once no clone is left at a recorded path, the key is reported as before
    for gone in (second, tmp_path / "z-first-moved"):
        subprocess.run(["rm", "-rf", str(gone)], check=True)
    doc = run_cli("doctor", cwd=other)
    assert f"--adopt {key}" in doc.out and "is gone" in doc.out, doc.out


def test_a_draft_made_before_the_folder_had_an_origin_stays_found(tmp_path: Path) -> None:
    """A draft made in a plain folder; then `git init` and `git remote add origin` before any other
    command: the draft stays in `search`, with one line saying its key was pinned."""
    work = tmp_path / "notes"
    work.mkdir()
    mid = add(work, "the wombat cache holds ten minutes")
    git("init", "-q", "-b", "main", cwd=work)
    git("remote", "add", "origin", "https://github.com/acme/elsewhere.git", cwd=work)
    r = run_cli("search", "--json", "wombat", cwd=work)
    assert r.code == 0, r.err
    assert [h["id"] for h in r.json()["hits"]] == [mid]
    assert len([ln for ln in r.err.splitlines() if "before it had an origin" in ln]) == 1, r.err
    assert search_ids(work, "wombat") == [mid]
    doc = run_cli("doctor", cwd=work)
    assert "stranded drafts" not in doc.out, doc.out


def list_ids(cwd: Path, env: dict | None = None) -> list[str]:
    r = run_cli("list", "--json", cwd=cwd, env=env)
    assert r.code == 0, r.err
    doc = r.json()
    items = doc if isinstance(doc, list) else doc.get("memories", doc.get("items", []))
    return sorted(m["id"] for m in items)


def test_a_second_data_root_never_rekeys_the_original(tmp_path: Path) -> None:
    """`cp -a repo copy`; a second data root runs first in the copy, then in repo: only the copy
    ever takes a key of its own, so Alice's draft stays hers in repo and `forget` in the copy cannot
    reach it; Bob's draft made in the copy stays in his list after Alice's first command there."""
    repo = clone_of(tmp_path, bare_repo(tmp_path), "repo")
    mid = add(repo, "the okapi service restarts at midnight")
    draft = next(Path(os.environ["GIT_MEMEX_HOME"]).rglob(f"{mid}.md"))
    key = json.loads(run_cli("where", "--json", cwd=repo).out)["project_key"]
    copy = tmp_path / "copy"
    cp_a(repo, copy)
    bob = {"GIT_MEMEX_HOME": str(tmp_path / "bob-data")}
    first = run_cli("list", cwd=copy, env=bob)
    assert first.code == 0 and "copy of" in first.err, first.err
    assert run_cli("list", cwd=repo, env=bob).code == 0
    bobs = run_cli("add", "bob's okapi note", "--json", cwd=copy, env=bob)
    assert bobs.code == 0, bobs.err
    assert git("config", "memex.projectKey", cwd=repo).stdout.strip() == key  # never re-keyed
    assert list_ids(repo) == [mid]
    r = run_cli("list", cwd=copy)  # Alice's first command in the copy
    assert r.code == 0 and "copy of" not in r.err, r.err
    assert list_ids(copy, env=bob) == [bobs.json()["id"]]
    gone = run_cli("forget", mid, cwd=copy)
    assert gone.code != 0 and "Traceback" not in gone.err
    assert draft.is_file() and list_ids(repo) == [mid]
    assert git("config", "memex.projectKey", cwd=repo).stdout.strip() == key


def test_a_clone_moved_across_filesystems_keeps_its_key(tmp_path: Path) -> None:
    """A new inode (as a move to another filesystem gives) with nothing left at the old path is
    the clone moved, not a copy: same key, same drafts, whatever data root runs first."""
    repo = clone_of(tmp_path, bare_repo(tmp_path), "repo")
    mid = add(repo, "the okapi service restarts at midnight")
    moved = tmp_path / "moved"
    cp_a(repo, moved)  # new inodes, as across filesystems
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    bob = {"GIT_MEMEX_HOME": str(tmp_path / "bob-data")}
    r = run_cli("list", cwd=moved, env=bob)
    assert r.code == 0 and "copy of" not in r.err, r.err
    assert list_ids(moved) == [mid]


def test_an_id_from_an_older_version_is_bound_by_the_data_root_that_knows_the_clone(tmp_path: Path) -> None:
    """A clone id without memex.cloneDir (an older version): a second data root that runs first
    in a `cp -a` copy and then in repo still never re-keys repo; the data root that recorded repo
    binds the id there, and the copy then takes a key of its own."""
    repo = clone_of(tmp_path, bare_repo(tmp_path), "repo")
    mid = add(repo, "the okapi service restarts at midnight")
    git("config", "--unset", "memex.cloneDir", cwd=repo, check=False)
    key = git("config", "memex.projectKey", cwd=repo).stdout.strip()
    copy = tmp_path / "copy"
    cp_a(repo, copy)
    bob = {"GIT_MEMEX_HOME": str(tmp_path / "bob-data")}
    for where in (copy, repo):
        assert run_cli("list", cwd=where, env=bob).code == 0
    assert git("config", "memex.projectKey", cwd=repo).stdout.strip() == key
    assert list_ids(repo) == [mid]
    assert git("config", "memex.cloneDir", cwd=repo).stdout.strip().endswith(f":{repo}")
    r = run_cli("list", cwd=copy)
    assert r.code == 0 and "copy of" in r.err, r.err
    assert git("config", "memex.projectKey", cwd=copy).stdout.strip() != key
    assert list_ids(repo) == [mid] and list_ids(copy) == []

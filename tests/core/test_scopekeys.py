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
    """A draft an earlier version filed in a plain folder (under the folder's own key; `add` refuses
    a project memory outside a repository since issue 32 item 12, so the test files it there as
    that version did); then `git init` and `git remote add origin` before any other command: the
    draft stays in `search`, with one line saying its key was pinned."""
    from git_memex.core.project import key_for

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git("init", "-q", "-b", "main", cwd=elsewhere)
    mid = add(elsewhere, "the wombat cache holds ten minutes")
    (draft,) = (Path(os.environ["GIT_MEMEX_HOME"]) / "memories" / "outbox").rglob(f"{mid}.md")
    work = tmp_path / "notes"
    work.mkdir()
    folder_key = draft.parent.parent / key_for(None, work.resolve())
    folder_key.mkdir()
    draft.rename(folder_key / draft.name)
    git("init", "-q", "-b", "main", cwd=work)
    git("remote", "add", "origin", "https://github.com/acme/elsewhere.git", cwd=work)
    r = run_cli("search", "--json", "wombat", cwd=work)
    assert r.code == 0, r.err
    assert [h["id"] for h in r.json()["hits"]] == [mid]
    assert len([ln for ln in r.err.splitlines() if "now pinned as memex.projectKey" in ln]) == 1, r.err
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


def test_a_clone_with_a_new_inode_takes_a_fresh_key_and_can_adopt_its_drafts(tmp_path: Path) -> None:
    """A new inode with nothing left at the old path (a move to another filesystem, or a copy of a
    clone that has moved since: the two cannot be told apart) is never given the old key: it takes
    a fresh one with one sentence naming `scopes --adopt`, whatever data root runs first, and
    following it brings the drafts over."""
    repo = clone_of(tmp_path, bare_repo(tmp_path), "repo")
    mid = add(repo, "the okapi service restarts at midnight")
    key = git("config", "memex.projectKey", cwd=repo).stdout.strip()
    moved = tmp_path / "moved"
    cp_a(repo, moved)  # new inodes, as across filesystems
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    bob = {"GIT_MEMEX_HOME": str(tmp_path / "bob-data")}
    r = run_cli("list", cwd=moved, env=bob)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    notes = [ln for ln in r.err.splitlines() if "not the one its clone id was given to" in ln]
    assert len(notes) == 1 and f"scopes --adopt {key}" in notes[0], r.err
    assert git("config", "memex.projectKey", cwd=moved).stdout.strip() != key
    assert list_ids(moved) == []
    adopted = run_cli("scopes", "--adopt", key, cwd=moved)
    assert adopted.code == 0, adopted.err
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


# ---------------------------------------------------------------- a copy and a move, in any order
def plain_repo(tmp_path: Path, name: str = "repo") -> tuple[Path, str, Path]:
    """A repository with no origin (its key comes from its path), one project draft: (repo, id, file)."""
    repo = tmp_path / name
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "i", cwd=repo)
    assert run_cli("init", "--yes", cwd=repo).code == 0
    r = run_cli("add", "original draft precious", "--scope", "project", "--json", cwd=repo)
    assert r.code == 0, r.err
    mid = str(r.json()["id"])
    return repo, mid, next(Path(os.environ["GIT_MEMEX_HOME"]).rglob(f"{mid}.md"))


def identity(cwd: Path) -> tuple[str, str]:
    return (git("config", "memex.projectKey", cwd=cwd).stdout.strip(),
            git("config", "memex.cloneId", cwd=cwd).stdout.strip())


def assert_apart(original: Path, copy: Path, mid: str, draft: Path) -> None:
    """The copy never sees, nor deletes, the original's draft; the two have distinct keys and ids."""
    assert list_ids(copy) == []
    gone = run_cli("forget", mid, cwd=copy)
    assert gone.code != 0 and "Traceback" not in gone.err, gone.err
    assert draft.is_file() and list_ids(original) == [mid]
    a, b = identity(original), identity(copy)
    assert a[0] != b[0] and a[1] != b[1], (a, b)
    for where in (original, copy):  # settled: said once, and stable
        again = run_cli("list", cwd=where)
        assert again.code == 0 and "git-memex: this clone" not in again.err, again.err
    assert list_ids(original) == [mid] and identity(original) == a and identity(copy) == b


def test_a_copy_made_before_a_move_and_run_first_never_takes_the_originals_key(tmp_path: Path) -> None:
    """`cp -a repo copy; mv repo repo-moved`, then the copy runs first: the copy's .git is not the
    one its id was given to, so it takes a fresh key (one sentence), and `forget` there cannot delete
    the original's draft, which stays in repo-moved."""
    repo, mid, draft = plain_repo(tmp_path)
    key = identity(repo)[0]
    copy, moved = tmp_path / "copy", tmp_path / "repo-moved"
    cp_a(repo, copy)
    os.rename(repo, moved)
    r = run_cli("list", cwd=copy)
    assert r.code == 0 and "original draft precious" not in r.out, r.out
    assert "not the one its clone id was given to" in r.err and f"--adopt {key}" in r.err, r.err
    assert_apart(moved, copy, mid, draft)
    assert identity(moved)[0] == key


def test_a_copy_made_before_a_move_run_after_the_moved_original(tmp_path: Path) -> None:
    """The same, the moved original running first: it keeps its key and draft; the copy then finds
    it at its new path and says it is a copy of it."""
    repo, mid, draft = plain_repo(tmp_path)
    key = identity(repo)[0]
    copy, moved = tmp_path / "copy", tmp_path / "repo-moved"
    cp_a(repo, copy)
    os.rename(repo, moved)
    assert list_ids(moved) == [mid]
    r = run_cli("list", cwd=copy)
    assert r.code == 0 and f"copy of {moved}" in r.err, r.err
    assert_apart(moved, copy, mid, draft)
    assert identity(moved)[0] == key


def test_a_copy_put_where_the_original_was_takes_a_key_of_its_own(tmp_path: Path) -> None:
    """`mv repo repo-moved; cp -a repo-moved repo`: the copy sits at the original's path, whose
    folder key is the original's key, and still gets a key (and id) of its own."""
    repo, mid, draft = plain_repo(tmp_path)
    key = identity(repo)[0]
    moved = tmp_path / "repo-moved"
    os.rename(repo, moved)
    cp_a(moved, repo)
    r = run_cli("list", cwd=repo)
    assert r.code == 0 and "original draft precious" not in r.out, r.err
    assert_apart(moved, repo, mid, draft)
    assert identity(moved)[0] == key


def test_a_plain_move_and_a_plain_copy_of_a_pathkeyed_clone(tmp_path: Path) -> None:
    """`mv` keeps the key and the draft without a word; a later `cp -a` of the moved clone, with the
    original still in place, is a copy of it."""
    repo, mid, draft = plain_repo(tmp_path)
    key = identity(repo)[0]
    moved = tmp_path / "repo-moved"
    os.rename(repo, moved)
    r = run_cli("list", cwd=moved)
    assert r.code == 0 and "original draft precious" in r.out and "git-memex: this clone" not in r.err, r.err
    assert identity(moved)[0] == key
    copy = tmp_path / "copy"
    cp_a(moved, copy)
    r = run_cli("list", cwd=copy)
    assert r.code == 0 and f"copy of {moved}" in r.err, r.err
    assert_apart(moved, copy, mid, draft)


def test_a_copy_made_before_the_id_was_bound_is_told_by_the_data_roots_record(tmp_path: Path) -> None:
    """An id from an older version (no memex.cloneDir) copied with `cp -a`; the original runs (its id
    is bound, and the data root records which .git owns it), then moves; the copy runs first after
    the move: the record names another .git, so the copy takes a key of its own."""
    repo, mid, draft = plain_repo(tmp_path)
    git("config", "--unset", "memex.cloneDir", cwd=repo, check=False)
    copy, moved = tmp_path / "copy", tmp_path / "repo-moved"
    cp_a(repo, copy)
    assert list_ids(repo) == [mid]  # binds the id to repo's .git
    os.rename(repo, moved)
    r = run_cli("list", cwd=copy)
    assert r.code == 0 and "original draft precious" not in r.out, r.err
    assert_apart(moved, copy, mid, draft)


def test_a_copys_first_command_that_opens_no_store_already_names_its_own_key(tmp_path: Path) -> None:
    """`git memex where` opens no index; in a copy (made before the original moved) it still names
    the copy's own key and outbox, never the original's, since `Context.project_key` settles first."""
    repo, mid, draft = plain_repo(tmp_path)
    key = identity(repo)[0]
    copy, moved = tmp_path / "copy", tmp_path / "repo-moved"
    cp_a(repo, copy)
    os.rename(repo, moved)
    r = run_cli("where", "--json", cwd=copy)
    assert r.code == 0 and "not the one its clone id was given to" in r.err, r.err
    where = r.json()
    assert where["project_key"] != key and key not in where["outbox_dir"], where
    assert where["project_key"] == identity(copy)[0]
    assert_apart(moved, copy, mid, draft)


def test_the_same_git_seen_with_another_device_number_keeps_its_key(tmp_path: Path) -> None:
    """`memex.cloneDir` naming this .git's inode on another device number at a path not here (as a
    container's bind mount shows the clone): the same .git, not a copy: the key, id and draft stay,
    no message, and `memex.cloneDir` is brought up to date."""
    repo, mid, _ = plain_repo(tmp_path)
    before = identity(repo)
    st = os.stat(repo / ".git")
    git("config", "memex.cloneDir", f"{st.st_dev + 1}:{st.st_ino}:/workspace/repo", cwd=repo)
    r = run_cli("list", cwd=repo)
    assert r.code == 0 and "git-memex: this clone" not in r.err, r.err
    assert identity(repo) == before and list_ids(repo) == [mid]
    assert git("config", "memex.cloneDir", cwd=repo).stdout.strip() == f"{st.st_dev}:{st.st_ino}:{repo}"

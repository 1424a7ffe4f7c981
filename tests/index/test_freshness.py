"""What a command notices without listing a memory folder (docs/index.md, "What a command notices").

A command's refresh takes a folder whose stamp (mtime, ctime, inode, device) is the one of its
last complete scan for unchanged, but for its racy files and a slice of `changes.SLICE_FILES`
files stat-checked in turn. Each case of the guarantee, with real files, the real CLI (in this
process) and real git: an add, an edit by rename, a delete, git checkout and pull (hooks off, so
the stamp and not the hook is what sees them) are seen at once; an edit written in place within
⌈files / SLICE_FILES⌉ commands, at once by `reindex` and by a long-lived process's watch.

The racy window is shortened here (`database.RACY_NS`): a stamp is trusted only once the folder's
last change is that old, so each test waits that long (`settle`) where it wants the quick path;
waiting longer changes nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from git_memex.index import changes, database

from conftest import git, run_cli

N = 20
SLICE = 4
RACY_S = 0.2
MEM = ".ai/open-memex"


@pytest.fixture
def folder(ready: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`ready`'s memory folder holding N committed memories, the index built; the stamps of the
    folder recorded (a complete scan once its last change is RACY_S old)."""
    monkeypatch.setattr(database, "RACY_NS", int(RACY_S * 1e9))
    monkeypatch.setattr(changes, "SLICE_FILES", SLICE, raising=False)
    monkeypatch.setenv("GIT_MEMEX_WATCH", "0")  # a command's refresh (the watch is the long-lived process's)
    mem = ready / MEM
    mem.mkdir(parents=True, exist_ok=True)
    for i in range(N):
        write(mem, i, f"memory {i} about the cache of service{i}")
    git("add", "-A", cwd=ready)
    git("commit", "-qm", "memories", cwd=ready)
    assert run_cli("reindex").code == 0
    settle()
    return mem


def mid(i: int) -> str:
    return f"01JHM6MNKBRW8EKSW4MXHS5N{i:02d}"


def text(i: int, body: str) -> str:
    return (f"---\nid: {mid(i)}\nschema_version: 2\nscope: project\ntype: fact\nstatus: active\n"
            f"review_state: proposed\n---\n\n{body}\n")


def write(mem: Path, i: int, body: str) -> Path:
    p = mem / f"{mid(i)}.md"
    p.write_text(text(i, body), encoding="utf-8")
    return p


def settle() -> None:
    """Wait out the racy window, then let a command record the folders' stamps (a complete scan)."""
    time.sleep(RACY_S * 1.5)
    assert run_cli("list").code == 0


def found(word: str) -> set[str]:
    r = run_cli("search", word, "--json", "--limit", "50")
    assert r.code == 0, r.err
    return {h["id"] for h in r.json()["hits"]}


def test_a_command_after_nothing_changed_lists_no_folder(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    real = changes.listing

    def spy(path: str) -> changes.Listing:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(changes, "listing", spy)
    assert found("service7") == {mid(7)}
    assert listed == []  # the stamps stood for every listing: O(folders), not O(files)


def test_an_add_and_a_file_written_by_rename_are_seen_at_once(folder: Path) -> None:
    r = run_cli("add", "the kestrel proxy timeout is 45 seconds", "--json")
    assert r.code == 0, r.err
    assert found("kestrel") == {r.json()["id"]}
    settle()
    tmp = folder / ".incoming.tmp"  # what an editor that saves by rename, or another tool, does
    tmp.write_text(text(40, "a new memory about the walrus queue"), encoding="utf-8")
    os.replace(tmp, folder / f"{mid(40)}.md")
    assert found("walrus") == {mid(40)}


def test_an_edit_by_rename_is_seen_at_once(folder: Path) -> None:
    p = folder / f"{mid(3)}.md"
    tmp = folder / ".edit.tmp"
    tmp.write_text(text(3, "memory 3 now about the narwhal cache"), encoding="utf-8")
    os.replace(tmp, p)
    assert found("narwhal") == {mid(3)}


def test_a_delete_is_seen_at_once(folder: Path) -> None:
    assert found("service5") == {mid(5)}
    settle()
    (folder / f"{mid(5)}.md").unlink()
    assert found("service5") == set()


def test_a_new_file_is_seen_when_the_folder_mtime_is_put_back(folder: Path) -> None:
    before = os.stat(folder)
    write(folder, 41, "a memory about the okapi gateway")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # the ctime still moved
    assert found("okapi") == {mid(41)}


def test_an_in_place_edit_is_seen_within_the_slices_and_at_once_by_reindex(folder: Path) -> None:
    p = folder / f"{mid(11)}.md"
    ino = p.stat().st_ino
    with open(p, "r+", encoding="utf-8") as fh:  # an editor that writes the file in place
        fh.seek(0)
        fh.write(text(11, "memory 11 now about the axolotl pipeline"))
        fh.truncate()
    assert p.stat().st_ino == ino
    commands = 0
    while "axolotl" not in " ".join(run_cli("search", "axolotl").out.split()) and commands <= N:
        commands += 1
    assert commands < -(-N // SLICE) + 1, f"seen only after {commands} commands"  # ⌈files / slice⌉ at most
    with open(p, "r+", encoding="utf-8") as fh:
        fh.seek(0)
        fh.write(text(11, "memory 11 now about the quokka pipeline"))
        fh.truncate()
    assert run_cli("reindex").code == 0
    assert found("quokka") == {mid(11)}


def test_git_checkout_and_pull_are_seen_at_once_without_hooks(folder: Path, tmp_path: Path) -> None:
    root = folder.parents[1]
    git("config", "core.hooksPath", "/dev/null", cwd=root)  # the stamp sees them, not the hook
    write(folder, 2, "memory 2 now about the pelican build")
    git("commit", "-qam", "pelican", cwd=root)
    settle()
    git("checkout", "-q", "HEAD~1", cwd=root)  # git writes the old content back
    assert found("pelican") == set()
    assert found("service2") == {mid(2)}
    settle()
    git("checkout", "-q", "main", cwd=root)
    assert found("pelican") == {mid(2)}
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(root), str(origin))
    git("remote", "add", "origin", str(origin), cwd=root)
    git("fetch", "-q", "origin", cwd=root)
    git("branch", "-q", "--set-upstream-to", "origin/main", cwd=root)
    other = tmp_path / "other"
    git("clone", "-q", str(origin), str(other))
    write(other / MEM, 42, "a memory about the ibis deploy")
    git("add", "-A", cwd=other)
    git("commit", "-qm", "ibis", cwd=other)
    git("push", "-q", "origin", "HEAD:main", cwd=other)
    settle()
    git("pull", "-q", "--ff-only", cwd=root)
    assert found("ibis") == {mid(42)}


def test_a_long_lived_process_sees_an_in_place_edit_at_once(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores
    from git_memex.search.engine import search

    monkeypatch.setenv("GIT_MEMEX_WATCH", "1")  # the MCP server's folder watch (Linux inotify)
    ctx = load_context()
    for _ in range(3):  # the watch starts at a folder's second refresh in the process
        with Stores(ctx) as st:
            st.refresh()
    p = folder / f"{mid(13)}.md"
    with open(p, "r+", encoding="utf-8") as fh:
        fh.seek(0)
        fh.write(text(13, "memory 13 now about the tapir cache"))
        fh.truncate()
    with Stores(ctx) as st:
        assert [h.id for h in search(st, "tapir").hits] == [mid(13)]


def linked_folder(link: Path, target: Path) -> Path:
    """`link` (the memory folder) made a symbolic link to `target`, a new folder beside it."""
    import shutil

    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        shutil.rmtree(link)
    target.mkdir(parents=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))
    return target


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's refresh with the racy window shortened, no watch (as `folder` sets it up)."""
    monkeypatch.setattr(database, "RACY_NS", int(RACY_S * 1e9))
    monkeypatch.setattr(changes, "SLICE_FILES", SLICE, raising=False)
    monkeypatch.setenv("GIT_MEMEX_WATCH", "0")


def test_a_new_file_in_a_linked_memory_folder_is_seen_at_once(ready: Path, quick: None) -> None:
    mem = linked_folder(ready / MEM, ready / "mem")  # .ai/open-memex -> ../../mem, inside the work tree
    for i in range(N):
        write(mem, i, f"memory {i} about the cache of service{i}")
    git("add", "-A", cwd=ready)
    git("commit", "-qm", "memories in a linked folder", cwd=ready)
    assert run_cli("reindex").code == 0
    assert found("service4") == {mid(4)}
    settle()
    settle()  # the stamps recorded and trusted: a command now lists no folder
    write(mem, 43, "a memory about the gecko scheduler")  # through the target, as a copy or a pull does
    assert found("gecko") == {mid(43)}
    settle()
    (mem / f"{mid(43)}.md").unlink()
    assert found("gecko") == set()


def test_a_new_file_in_a_linked_personal_folder_is_seen_at_once(repo: Path, quick: None, isolated_env: Path) -> None:
    data = isolated_env / "data"
    mine = linked_folder(data / "memories" / "personal", data / "mine")  # a link that stays inside the data root
    for i in range(3):
        (mine / f"{mid(i)}.md").write_text(text(i, f"personal memory {i} about editor{i}").replace(
            "scope: project", "scope: personal"), encoding="utf-8")
    assert found("editor1") == {mid(1)}
    settle()
    settle()
    (mine / f"{mid(44)}.md").write_text(text(44, "a personal memory about the heron keymap").replace(
        "scope: project", "scope: personal"), encoding="utf-8")
    assert found("heron") == {mid(44)}


def test_a_pull_into_a_linked_memory_folder_is_seen_by_the_next_command(ready: Path, quick: None,
                                                                        tmp_path: Path) -> None:
    mem = linked_folder(ready / MEM, ready / "mem")  # committed as a link: git stores the link and mem/
    for i in range(N):
        write(mem, i, f"memory {i} about the cache of service{i}")
    git("add", "-A", cwd=ready)
    git("commit", "-qm", "memories in a linked folder", cwd=ready)
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(ready), str(origin))
    git("remote", "add", "origin", str(origin), cwd=ready)
    git("fetch", "-q", "origin", cwd=ready)
    git("branch", "-q", "--set-upstream-to", "origin/main", cwd=ready)
    other = tmp_path / "other"
    git("clone", "-q", str(origin), str(other))
    assert (other / MEM).is_symlink()
    write(other / "mem", 45, "a memory about the marmot release")
    git("add", "-A", cwd=other)
    git("commit", "-qm", "marmot", cwd=other)
    git("push", "-q", "origin", "HEAD:main", cwd=other)
    assert run_cli("reindex").code == 0
    settle()
    settle()
    r = git("pull", "-q", "--ff-only", cwd=ready)  # through the post-merge hook `init` installed
    assert "Traceback" not in r.stderr, r.stderr
    assert found("marmot") == {mid(45)}


def test_a_new_subfolder_is_seen_when_its_parents_mtime_is_put_back(folder: Path) -> None:
    before = os.stat(folder)
    sub = folder / "team"
    sub.mkdir()
    write(sub, 46, "a memory about the ocelot registry")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # `touch -r`: the ctime still moved
    assert os.stat(folder).st_mtime_ns == before.st_mtime_ns
    assert run_cli("reindex").code == 0
    assert found("ocelot") == {mid(46)}
    settle()
    deeper = sub / "infra"
    before = os.stat(sub)
    deeper.mkdir()
    write(deeper, 47, "a memory about the civet runner")
    os.utime(sub, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert found("civet") == {mid(47)}  # a command's own refresh, not only a named sync


def test_an_in_place_edit_of_the_same_size_with_its_mtime_put_back_is_seen(folder: Path) -> None:
    p = folder / f"{mid(11)}.md"
    before = p.stat()
    raw = p.read_bytes()
    edited = raw.replace(b"service11", b"pangolin1")  # the same size
    assert len(edited) == len(raw) and edited != raw
    with open(p, "r+b") as fh:  # written in place: same inode
        fh.write(edited)
    os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back; the ctime moved
    after = p.stat()
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)
    commands = 0
    while not found("pangolin1") and commands <= N:
        commands += 1
    assert commands < -(-N // SLICE) + 1, f"seen only after {commands} commands"  # the slices see it
    settle()
    raw = p.read_bytes()
    before = p.stat()
    with open(p, "r+b") as fh:
        fh.write(raw.replace(b"pangolin1", b"wombatxx1"))
    os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert run_cli("reindex").code == 0  # a named sync: at once
    assert found("wombatxx1") == {mid(11)}

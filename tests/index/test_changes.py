"""`git_memex.index.changes`: the change detectors of a refresh find the same work.

Real memory files in a real folder, a real SQLite index; `changes.scan` is asked directly so each
detector (listing digest, listing snapshot, every row) is seen on its own."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memex.index import changes
from git_memex.index.database import Index, RefreshStats, Source

from conftest import run_cli


def _write(folder: Path, n: int, body: str) -> Path:
    mid = f"01JHM6MNKBRW8EKSW4MXHS5N{n:02d}"
    p = folder / f"{mid}.md"
    p.write_text(f"---\nid: {mid}\nschema_version: 2\nscope: project\ntype: fact\nstatus: active\n"
                 f"tags: [t]\n---\n\n{body}\n", encoding="utf-8")
    old = time.time() - 60  # outside the racy window: only a stat change makes a file suspect
    os.utime(p, (old, old))
    return p


def _scan(idx: Index, src: Source) -> tuple[list[str], list[str], int, bool]:
    """(paths to read, paths gone, files counted unchanged, digest changed?) for one folder."""
    stats = RefreshStats()
    plan: changes.Plan = []
    gone: list[str] = []
    changed: set[str] = set()
    changes.scan(idx, src, stats, plan, gone, {}, changed, {})
    return sorted(p[1] for p in plan), sorted(gone), stats.unchanged, bool(changed)


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Index, Source, list[Path]]]:
    monkeypatch.setenv("GIT_MEMEX_WATCH", "0")  # the stat detectors only
    folder = tmp_path / "mem"
    folder.mkdir()
    paths = [_write(folder, i, f"memory {i} about caching") for i in range(6)]
    idx = Index(tmp_path / "index.db")
    src = Source("repo", folder, "k")
    idx.refresh([src])
    yield idx, src, paths
    idx.close()


def test_an_unchanged_folder_plans_nothing(indexed: tuple[Index, Source, list[Path]]) -> None:
    idx, src, paths = indexed
    assert _scan(idx, src) == ([], [], len(paths), False)  # the digest matches: no row is read


def test_snapshot_and_rows_detectors_agree(indexed: tuple[Index, Source, list[Path]]) -> None:
    idx, src, paths = indexed
    folder = src.folder
    _write(folder, 1, "memory 1 about caching, now longer")  # changed (size)
    paths[2].unlink()  # deleted
    added = _write(folder, 9, "a new memory")  # added
    want = (sorted([str(paths[1]), str(added)]), [str(paths[2])], 4, True)
    assert changes.snapshot(idx, str(folder)) is not None
    assert _scan(idx, src) == want  # against the listing snapshot of the last scan
    idx.conn.execute("DELETE FROM scans")
    assert changes.snapshot(idx, str(folder)) is None
    assert _scan(idx, src) == want  # against every row of the folder


def test_a_write_outside_a_refresh_patches_the_snapshot(indexed: tuple[Index, Source, list[Path]]) -> None:
    idx, src, paths = indexed
    idx.remove(paths[0])
    paths[0].unlink()  # the index already knows: nothing is planned, nothing is gone twice
    plan, gone, unchanged, changed = _scan(idx, src)
    assert (plan, gone, unchanged, changed) == ([], [], len(paths) - 1, True)
    assert str(paths[0].name) not in changes.snapshot(idx, str(src.folder))  # type: ignore[operator]


def test_a_memory_file_whose_name_is_not_utf8_is_left_out_with_a_warning(ready: Path) -> None:
    """The index keys files by path, as text: a file name that is not UTF-8 is left out with one
    warning per command, and nothing else breaks (docs/org.md)."""
    assert run_cli("add", "The queue retries with jitter", "--json").code == 0
    mem = os.fsencode(ready / ".ai" / "open-memex")
    Path(os.fsdecode(mem + b"/caf\xe9.md")).write_text("---\nid: x\n---\nx\n")
    for args in (("reindex",), ("search", "jitter"), ("list",)):  # doctor prints the name's bytes as they are
        r = run_cli(*args)
        assert r.code in (0, 1) and "internal error" not in r.err and "Traceback" not in r.err, (args, r.err)
    r = run_cli("reindex", "--full", "--json")
    assert r.code == 0 and r.err.count("caf\\xe9.md is left out") == 1, r.err
    assert len(run_cli("search", "jitter", "--json").json()["hits"]) == 1

"""A full rebuild reads each file once and looks up each folder's real path once (issue 34: the
per-file `realpath` of its folder was ~19% of a cold `reindex --full`, 151,000 lstat calls at 10k)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import files

from conftest import run_cli


def test_a_rebuild_resolves_each_folder_once(ready: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = ready / ".ai" / "open-memex"
    mem.mkdir(parents=True, exist_ok=True)
    for i in range(60):
        mid = f"01JHM6MNKBRW8EKSW4MXHS{i:04d}"
        (mem / f"{mid}.md").write_text(f"---\nid: {mid}\nschema_version: 2\nscope: project\ntype: fact\n"
                                       f"status: active\n---\n\nmemory {i} about the heron feeder\n", encoding="utf-8")
    resolved: list[str] = []
    real = files.inside

    def counted(path: object, root: object) -> bool:
        resolved.append(str(path))
        return real(path, root)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "inside", counted)
    r = run_cli("reindex", "--full", "--json")
    assert r.code == 0, r.err
    assert "heron" in run_cli("search", "heron", "--limit", "1").out
    assert len(resolved) <= 4, resolved  # the memory folder (and the data root's, if they hold files), not 60 files

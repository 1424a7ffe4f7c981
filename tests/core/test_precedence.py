"""`core.precedence`: which of two disagreeing memories precedence prefers, and what it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import files, precedence


def _memory(folder: Path, n: int, state: str, body: str) -> dict[str, object]:
    """A repository memory claiming `state`, written as a file, as a row without the index's
    `standing` (so precedence reads the file to check the claim)."""
    mid = f"01JHM6MNKBRW8EKSW4MXHS5N{n:02d}"
    p = folder / f"{mid}.md"
    p.write_text(f"---\nid: {mid}\nschema_version: 2\nscope: project\ntype: fact\nreview_state: {state}\n---\n\n{body}\n")
    return {"id": mid, "body": body, "location": "project", "type": "fact", "source": "manual",
            "review_state": state, "supersedes": None, "superseded_by": None, "path": str(p)}


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every memory file read from here on (`files.read_memory`)."""
    seen: list[Path] = []
    real = files.read_memory

    def counting(path: Path) -> files.Memory:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(files, "read_memory", counting)
    return seen


def test_prefer_reads_each_memorys_file_once(tmp_path: Path, reads: list[Path]) -> None:
    """Two repository memories that claim a reviewed state, without an index's `standing`: their
    files are read to check the claim (docs/search.md), once each per `prefer`, not once per look
    (the store's finder calls it for every pair it finds, and sync-status and MCP wait on it)."""
    rows = [_memory(tmp_path, n, state, f"body {n}") for n, state in enumerate(("published", "approved"))]
    first, why = precedence.prefer(rows[0], rows[1])
    assert sorted(map(str, reads)) == sorted(str(r["path"]) for r in rows)
    assert why  # a sentence either way (both claims unproven here: one standing, precedence may not decide)
    assert first is None or first in rows


def test_the_store_finder_reads_each_memorys_standing_once(tmp_path: Path, reads: list[Path]) -> None:
    """The store's finder asks precedence for every pair it finds; a memory in many pairs had its
    file read for each (sync-status's first run over 1,000 near-identical published memories:
    31,704 reads, 25 s of CPU). Now once a memory, with the same pairs."""
    from git_memex.review.contradictions import find

    rows = [_memory(tmp_path, n, "published", f"The payments worker retries a failed webhook {n + 2} times.")
            for n in range(8)]
    pairs = find(rows)
    assert len(pairs) >= len(rows)  # each disagrees with the others
    assert len(reads) <= len(rows), len(reads)

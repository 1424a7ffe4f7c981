"""`import` costs the same per memory whatever the folder already holds, and scans each string once.

The figures are in bench/speed.py (`python -m bench.speed --figures import`); here the two shapes
that made a 10k import 24× its floor (issue 34): a temp-file sweep of the whole folder after every
write (quadratic), and the secret detector run ~8.6 times per memory. Both are asked of the real
command (in this process), the first as a ratio of CPU times measured here, never a time in seconds.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from git_memex.core.files import LEFTOVER_AGE_S
from git_memex.secrets import redact

from conftest import run_cli

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def ulid(n: int, prefix: str = "01JHM6") -> str:
    return f"{prefix}{n:020d}"


def memory(mid: str, body: str, tags: list[str] | None = None) -> dict:
    return {"id": mid, "location": "personal", "body": body,
            "frontmatter": {"id": mid, "schema_version": 2, "scope": "personal", "type": "fact", "status": "active",
                            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                            "tags": tags or ["speed"]}}


def bundle(path: Path, mems: list[dict]) -> Path:
    path.write_text(json.dumps({"format": "git-memex-bundle", "version": 1, "count": len(mems), "memories": mems}),
                    encoding="utf-8")
    return path


def fill(home: Path, n: int) -> None:
    """`n` personal memories written straight into the data root, then indexed by `reindex`."""
    folder = home / "memories" / "personal"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    old = time.time() - 600  # written long ago: outside the racy window, no refresh reads them again
    for i in range(n):
        mid = ulid(i, "01JHM7")
        p = folder / f"{mid}.md"
        p.write_text(f"---\nid: {mid}\nschema_version: 2\nscope: personal\ntype: fact\nstatus: active\n---\n\n"
                     f"filler memory {i} about the lighthouse\n", encoding="utf-8")
        os.utime(p, (old, old))
    assert run_cli("reindex").code == 0


@pytest.mark.slow
def test_import_cost_per_memory_does_not_grow_with_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 150 memories imported into a data root whose personal folder holds 150 memories,
    and into one holding 9,600: linear, the CPU time barely moves (the one sweep and the one stat
    walk per command are O(folder)); with a sweep per write it grew ~3×."""
    mems = [memory(ulid(i), f"imported memory {i} about the harbour crane number {i * 7}") for i in range(150)]
    b = bundle(tmp_path / "b.json", mems)
    took: dict[int, list[float]] = {150: [], 9600: []}
    for attempt in range(3):
        for size in took:
            home = tmp_path / f"home-{size}-{attempt}"
            monkeypatch.setenv("GIT_MEMEX_HOME", str(home))
            fill(home, size)
            t = time.process_time()
            r = run_cli("import", str(b))
            took[size].append(time.process_time() - t)
            assert r.code == 0, r.err
            assert len(list((home / "memories" / "personal").glob("*.md"))) == size + 150
        small, big = min(took[150]), min(took[9600])
        if big < 1.6 * small:
            break
    assert big < 1.6 * small, f"importing 150 memories took {small:.3f} s of CPU beside 150 and {big:.3f} s beside 9,600"


def test_an_import_scans_each_string_once(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planning, admitting and writing a memory run the detector on its body once, on each
    frontmatter string once for the whole import (the same tag in 40 memories is one string), and
    on the file text once (what the whole file shows, `check_text`): 2 texts a memory, not ~9."""
    mems = [memory(ulid(i), f"memory {i} about the osprey queue and its retry number {i}", ["osprey", f"queue{i % 4}"])
            for i in range(40)]
    mems[7]["body"] += f" token {SECRET}"
    mems[9]["frontmatter"]["tags"].append(SECRET)
    calls: list[str] = []
    real = redact.find_secrets

    def counted(text: str, *a: object, **kw: object) -> list[redact.Finding]:
        calls.append(text)
        return real(text, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(redact, "find_secrets", counted)
    r = run_cli("import", str(bundle(tmp_path / "b.json", mems)), "--json")
    assert r.code == 0, r.err
    assert sorted(r.json()["masked"]) == [ulid(7), ulid(9)]
    written = "".join(p.read_text() for p in Path(run_cli("where", "--json").json()["data_root"]).rglob("*.md"))
    assert SECRET not in written and written.count(SECRET[:4] + "xxxx") == 2  # masked where it was
    # 40 bodies and 40 file texts, the 6 distinct tags (the token one of them), and what finding a
    # secret costs: the tag's first look, then `redact`'s rounds until one finds nothing (2 each)
    assert len(calls) <= 2 * len(mems) + 6 + 3, len(calls)


def test_the_sweep_runs_once_per_command_and_again_in_a_long_lived_process(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """One sweep per command and folder, not one per write; a process still running a minute
    later (the MCP server) sweeps the folder again at its next write there."""
    from git_memex.core import files, model

    swept: list[str] = []
    real = files.sweep_leftovers
    def counted(folder: Path) -> list[Path]:
        swept.append(str(folder))
        return real(folder)

    monkeypatch.setattr(files, "sweep_leftovers", counted)
    folder = tmp_path / "mem"
    for i in range(5):
        files.write_memory(folder, model.create(f"memory {i} about the gannet colony", scope="personal"))
    assert swept == [str(folder)]
    old = tmp_path / "mem" / f".{ulid(1)}.md.0123456789ab.tmp"
    old.write_text("a killed write's text")
    monkeypatch.setitem(files._SWEPT, str(folder), files._SWEPT[str(folder)] - LEFTOVER_AGE_S - 1)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    files.write_memory(folder, model.create("one more memory about the gannet colony", scope="personal"))
    assert swept == [str(folder)] * 2 and not old.exists()

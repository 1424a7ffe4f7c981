"""`store.atomic_write_text` and its temporary file: private, hidden, gone afterwards."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from git_memex.core.files import atomic_write_text, create_temp_beside


def test_temp_file_is_private_hidden_and_unique(tmp_path: Path) -> None:
    target = tmp_path / "01ABC.md"
    made = [create_temp_beside(target) for _ in range(50)]
    try:
        names = {os.path.basename(p) for _, p in made}
        assert len(names) == 50
        for name in names:
            assert name.startswith(".01ABC.md.") and name.endswith(".tmp")  # no scan takes it for a memory
        for _, p in made:
            assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    finally:
        for fd, p in made:
            os.close(fd)
            os.unlink(p)


def test_write_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "m.md"
    atomic_write_text(target, "one\n")
    atomic_write_text(target, "two\n", mode=0o600)
    assert target.read_text() == "two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["m.md"]


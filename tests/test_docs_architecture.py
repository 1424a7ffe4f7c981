"""docs/architecture.md's claims about the code, checked against the code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 600


def _sizes_section() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return text.split("\n## Sizes\n", 1)[1].split("\n## ", 1)[0]


def test_the_modules_over_600_lines_are_the_ones_named():
    over = {
        p.relative_to(ROOT / "git_memex").as_posix()
        for p in (ROOT / "git_memex").rglob("*.py")
        if len(p.read_text(encoding="utf-8").splitlines()) > LIMIT
    }
    named = set(re.findall(r"^- `([\w/]+\.py)`", _sizes_section(), flags=re.M))
    assert over - named == set(), f"over {LIMIT} lines but not named in docs/architecture.md's Sizes: {over - named}"
    assert named - over == set(), f"named in docs/architecture.md's Sizes but no longer over {LIMIT} lines: {named - over}"

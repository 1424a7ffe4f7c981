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


def _section(title: str) -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _modules() -> set[str]:
    """Every module of the package as `room/name` (`name` at the top), packages' __init__ left out."""
    out = set()
    for p in (ROOT / "git_memex").rglob("*.py"):
        rel = p.relative_to(ROOT / "git_memex").with_suffix("")
        if rel.name != "__init__":
            out.add(rel.as_posix())
    return out


def _named_in_modules_section() -> set[str]:
    """`room/name` for each name that opens a bullet under a `### `room/`` heading of "Modules"
    (a bullet may open with several names, over several lines: `` - `a`, `b`: job ``)."""
    named: set[str] = set()
    room: str | None = None
    bullets: list[tuple[str, str]] = []
    for line in _section("Modules").splitlines():
        head = re.match(r"^### `([\w/]+)/`$", line)
        if head:
            room = "" if head.group(1) == "git_memex" else head.group(1) + "/"
        elif line.startswith("- ") and room is not None:
            bullets.append((room, line[2:]))
        elif line.startswith("  ") and bullets:
            bullets[-1] = (bullets[-1][0], bullets[-1][1] + " " + line.strip())
    for where, text in bullets:
        names = re.match(r"^((?:`\w+`,?\s*)+):", text)
        if names:
            named |= {where + n for n in re.findall(r"`(\w+)`", names.group(1))}
    return named


def test_every_module_is_named_in_the_modules_section_and_every_name_is_a_module():
    modules, named = _modules(), _named_in_modules_section()
    assert modules - named == set(), f"modules missing from docs/architecture.md's Modules: {sorted(modules - named)}"
    assert named - modules == set(), f"docs/architecture.md's Modules names what is no module: {sorted(named - modules)}"


ROOMS = ("core", "index", "search", "secrets", "agents", "review", "upkeep", "git", "remote", "commands")


def _dotted_references(text: str) -> set[str]:
    """`room/name.py`, `room/name` and `room.name[.attr]` spelled in backticks, as `room/name`."""
    refs = set()
    for token in re.findall(r"`([^`\s]+)`", text):
        m = re.match(rf"^({'|'.join(ROOMS)})[./](\w+)(?:\.py)?(?:[.(].*)?$", token)
        if m:
            refs.add(f"{m.group(1)}/{m.group(2)}")
    return refs


def test_every_module_the_doc_names_outside_the_rename_table_exists():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rest = text.replace(_section("Renamed modules"), "") if "\n## Renamed modules\n" in text else text
    missing = sorted(r for r in _dotted_references(rest) if r not in _modules())
    assert missing == [], f"docs/architecture.md names modules that do not exist: {missing}"


def test_the_rename_table_names_existing_new_modules_and_gone_old_ones():
    rows = [line.split("|")[1:3] for line in _section("Renamed modules").splitlines()
            if line.startswith("| `")]
    assert rows
    modules = _modules()
    for old, new in rows:
        assert _dotted_references(new) and _dotted_references(new) <= modules, new
        for ref in _dotted_references(old):
            if "(a function)" not in old and "keeps" not in new:
                assert ref not in modules, f"{old} is still a module"

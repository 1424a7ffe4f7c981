"""Editing a team's committed file as text, our additions between two marker lines (`reach.BEGIN`,
`reach.END`), in the file's own layout and line ending, and taking them out again byte for byte
(docs/git.md, "Hook managers"). `managers` decides what goes where; this is how.

A block may say that init created the file (`reach.CREATED_LINE`: `--uninstall` deletes it when
nothing else is left) or carry a line of the person's it replaced (`reach.WAS`: put back where the
block was). YAML is read with `strict_yaml`, which refuses a key given twice in one mapping, as
lefthook's parser does.
"""

from __future__ import annotations

import re
from pathlib import Path

from git_memex.git.reach import BEGIN_LINE, CREATED_LINE, WAS, newline, parse_blocks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def strip_blocks(text: str) -> tuple[str, bool]:
    """`text` without every BEGIN..END block (marker lines included), a line a block replaced put
    back in its place; when a block ends the file without a newline, the newline before it goes
    too (what `_insert` added). Returns (text, whether a block says init created the file).
    The marker lines must be sound (`parse_blocks` found no problem)."""
    found, _ = parse_blocks(text)
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    created = False
    i = 0
    for b in found:
        out.extend(lines[i:b.start])
        created = created or b.created
        end_line = lines[b.end]
        ending = end_line[len(end_line.rstrip("\r\n")):]
        if b.was is not None:
            out.append(b.was + ending)
        elif not ending and out and out[-1].endswith("\n"):
            out[-1] = out[-1][:-2] if out[-1].endswith("\r\n") else out[-1][:-1]
        i = b.end + 1
    out.extend(lines[i:])
    return "".join(out), created


def block(indent: str, body: list[str], *, created: bool = False, was: str | None = None) -> list[str]:
    head = [indent + (CREATED_LINE if created else BEGIN_LINE) + "\n"]
    if was is not None:
        head.append(indent + WAS + was + "\n")
    return [*head, *body, indent + "# <<< git-memex\n"]


def insert(text: str, at: int, new: list[str], *, replace: bool = False) -> str:
    """`new` (whole lines, LF) inserted before line `at` of `text` (at == len: appended), or in
    place of line `at` (`replace`), in the text's own line ending."""
    nl = newline(text) if text else "\n"
    new = [x[:-1] + nl if x.endswith("\n") else x for x in new]
    lines = text.splitlines(keepends=True)
    if replace:
        if not lines[at].endswith("\n"):  # the last line, without a newline: so is the block's
            new[-1] = new[-1].rstrip("\r\n")
        return "".join(lines[:at] + new + lines[at + 1:])
    if at >= len(lines):
        if lines and not lines[-1].endswith("\n"):
            new[-1] = new[-1].rstrip("\r\n")
            return text + nl + "".join(new)
        return text + "".join(new)
    return "".join(lines[:at] + new + lines[at:])


def write(path: Path, text: str) -> None:
    from git_memex.core.files import atomic_write_text

    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text, mode=mode)


def state(path: Path) -> str:
    """missing, file, link (a symbolic link, whatever it points to), folder or other (a FIFO...)."""
    import stat

    try:
        st = path.lstat()
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    if stat.S_ISDIR(st.st_mode):
        return "folder"
    return "file" if stat.S_ISREG(st.st_mode) else "other"


def parent_problem(path: Path, stop: Path) -> str | None:
    """A folder on the way to `path` (below `stop`) that is a file: init could not create it."""
    p = path.parent
    while p != stop and stop in p.parents:
        s = state(p)
        if s not in ("missing", "folder", "link"):
            return f"{p} is a file where init needs a folder"
        p = p.parent
    return None


# ------------------------------------------------------------------ YAML
def strict_yaml(text: str) -> Any:
    """The YAML document of `text` (None when empty). A key given twice in one mapping is an
    error, as in lefthook's Go parser (PyYAML alone would keep the last one silently)."""
    import yaml

    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader: Strict, node: yaml.MappingNode) -> Any:
        seen: list[Any] = []
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is given twice",
                                                        key_node.start_mark)
            seen.append(key)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=True)

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Strict) if text.strip() else None  # noqa: S506 - a SafeLoader subclass


def unit_of(lines: list[str]) -> int:
    widths = [len(x) - len(x.lstrip(" ")) for x in lines if x.strip() and not x.lstrip().startswith("#")]
    positive = [w for w in widths if w > 0]
    return min(positive) if positive else 2


_EMPTY = r"(\{\s*\}|~|null|Null|NULL)?"


def key_line(lines: list[str], key: str, indent: int, start: int = 0, stop: int | None = None,
              empty: bool = False) -> int | None:
    """The line of `key:` at `indent` with no value on it (`empty`: or an empty one, `{}`, `~`, `null`)."""
    value = _EMPTY if empty else ""
    pat = re.compile(rf"^ {{{indent}}}{re.escape(key)}:\s*{value}\s*(#.*)?$")
    for i in range(start, len(lines) if stop is None else stop):
        if pat.match(lines[i].rstrip("\r\n")):
            return i
    return None


def has_empty_value(line: str) -> bool:
    """`key: {}` / `~` / `null`: a line whose empty value a block must replace."""
    return re.match(r"^\s*[^:#]+:\s*(\{\s*\}|~|null|Null|NULL)\s*(#.*)?$", line.rstrip("\r\n")) is not None


def block_end(lines: list[str], start: int, indent: int) -> int:
    """The line after the block that begins at `start` (a key at `indent`): the first content
    line at `indent` or less."""
    for i in range(start + 1, len(lines)):
        s = lines[i]
        if s.strip() and not s.lstrip().startswith("#") and len(s) - len(s.lstrip(" ")) <= indent:
            return i
    return len(lines)


def child_indent(lines: list[str], start: int, stop: int, parent: int) -> int | None:
    for i in range(start + 1, stop):
        s = lines[i]
        if s.strip() and not s.lstrip().startswith("#"):
            w = len(s) - len(s.lstrip(" "))
            return w if w > parent else None
    return None


def mark_created(text: str) -> str:
    """A file init creates: its first block's BEGIN line says so (`--uninstall` then deletes it)."""
    return text.replace(BEGIN_LINE, CREATED_LINE, 1)


def first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__



"""A line added to a person's text file and taken out again, giving back the same bytes.

`init` adds one line to `.gitattributes` and AGENTS.md; `--uninstall` takes it out. The file's
own line ending is used (CRLF stays CRLF), and a file that did not end with a newline still does
not: the line goes last without one, and taking it out takes the newline before it too.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def newline(text: str) -> str:
    """The line ending a text uses (its first line's): CRLF or LF."""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def append_line(text: str, line: str) -> str:
    """`text` with `line` as its last line, in its line ending; no newline after it when `text`
    had none at its end (an empty text gets `line` and a newline)."""
    if not text:
        return line + "\n"
    nl = newline(text)
    return text + line + nl if text.endswith("\n") else text + nl + line


def replace_lines(text: str, pick: Callable[[str], bool], line: str) -> str:
    """`text` with the first line `pick` chooses (it gets the stripped line) replaced by `line`,
    the old line's ending kept."""
    out = text.splitlines(keepends=True)
    for i, x in enumerate(out):
        if pick(x.strip()):
            out[i] = line + x[len(x.rstrip("\r\n")):]
            break
    return "".join(out)


def without_lines(text: str, drop: Callable[[str], bool]) -> str:
    """`text` without the lines `drop` picks (it gets each stripped line); a dropped last line
    that had no newline takes the newline before it too (what `append_line` added)."""
    out: list[str] = []
    for x in text.splitlines(keepends=True):
        if drop(x.strip()):
            if not x.endswith("\n") and out:
                out[-1] = out[-1].rstrip("\r\n")
            continue
        out.append(x)
    return "".join(out)


def read(path: object) -> str:
    """A text file's content, its line endings as they are (no newline translation)."""
    with open(path, encoding="utf-8", newline="") as fh:  # type: ignore[call-overload]
        return fh.read()

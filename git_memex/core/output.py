"""The one output guard for terminal text: what the CLI prints can never drive the terminal.

Invariant: every character written to the guarded stdout or stderr that a terminal would act on
(C0 controls but newline and tab, DEL, C1 controls, so ESC/CSI/OSC sequences such as OSC 8 links,
carriage return and backspace; and the bidi embeddings, overrides and isolates U+202A-U+202E,
U+2066-U+2069 that reorder what is shown) is written as its ``\\uXXXX`` escape instead. That
spelling is also a valid JSON string escape, so `--json` output stays JSON with the same values.
Bytes written to ``.buffer`` (the MCP server's JSON-RPC, binary output) are not touched.
The memory files themselves keep what was written; only the display is neutralised.

Second invariant: a memory file name whose id is secret-shaped (`ghp_….md`: the id rule lets a
token through, and a teammate can commit one with --no-verify) is written masked
(`core.files.secret_id`, `mask_id`). The reader quarantines such a file, so the index, search,
show and agents never hold it; this is the net for every line that names the file by its path
(doctor, audit, scan, pull, the hooks). A ULID name never reaches the detector.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


_MD_NAME = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{7,63}(?=\.md\b)")


def _masked_name(m: re.Match[str]) -> str:
    from git_memex.core.files import mask_id, secret_id

    name = m.group()
    return mask_id(name) if secret_id(name) else name


def mask_file_names(text: str) -> str:
    """`text` with every memory file name whose id is secret-shaped masked (`x` for the secret)."""
    return _MD_NAME.sub(_masked_name, text) if ".md" in text else text


def neutralise(text: str) -> str:
    """`text` with every terminal control and bidi override spelled as a visible escape."""
    return _UNSAFE.sub(_escape, text)


class GuardedStream:
    """A text stream that neutralises what is written and passes everything else through."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.wrote = False
        """Whether anything was written: `main` prints a `--json` run's error as a JSON document
        only when the command printed none."""

    def write(self, text: str) -> int:
        if text:
            self.wrote = True
        text = mask_file_names(text)
        self._stream.write(_UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdio() -> None:
    """Guard sys.stdout and sys.stderr (once) for the rest of the process."""
    if not isinstance(sys.stdout, GuardedStream):
        sys.stdout = GuardedStream(sys.stdout)
    if not isinstance(sys.stderr, GuardedStream):
        sys.stderr = GuardedStream(sys.stderr)

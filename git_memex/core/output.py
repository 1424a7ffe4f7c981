"""The one output guard for terminal text: what the CLI prints can never drive the terminal.

Invariant: every character written to the guarded stdout or stderr that a terminal would act on
(C0 controls but newline and tab, DEL, C1 controls, so ESC/CSI/OSC sequences such as OSC 8 links,
carriage return and backspace; and the bidi embeddings, overrides and isolates U+202A-U+202E,
U+2066-U+2069 that reorder what is shown) is written as its ``\\uXXXX`` escape instead. That
spelling is also a valid JSON string escape, so `--json` output stays JSON with the same values.
Bytes written to ``.buffer`` (the MCP server's JSON-RPC, binary output) are not touched.
The memory files themselves keep what was written; only the display is neutralised.
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

"""The progress line of a long refresh: `git-memex: indexing [####------] 12,000/100,000 (12%)`.

Shown on stderr only when stderr is a terminal, the refresh reads at least PROGRESS_MIN files,
and GIT_MEMEX_PROGRESS is not 0; at most ten updates a second, and the line is erased at the end,
so nothing of it reaches a pipe, a log or a hook's output.
"""

from __future__ import annotations

import os
import sys
import time

PROGRESS_MIN = 2000
"""A refresh that reads at least this many files shows a progress line on a terminal."""


class Progress:
    """`indexing 12,000/100,000 (12%)` on stderr, only when stderr is a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.on = total >= PROGRESS_MIN and _stderr_tty() and os.environ.get("GIT_MEMEX_PROGRESS", "1") != "0"
        self.last = 0.0

    def update(self, done: int) -> None:
        if not self.on:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and 0 < done < self.total:
            return
        self.last = now
        width = 30
        filled = width * done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\rgit-memex: indexing [{bar}] {done:,}/{self.total:,} ({100 * done // max(self.total, 1)}%)")
        sys.stderr.flush()

    def done(self) -> None:
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _stderr_tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False

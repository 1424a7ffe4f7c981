"""One exception type for failures a user should see as one sentence, not a traceback."""

from __future__ import annotations

# Exit codes (docs/decisions.md, exit codes).
OK = 0
USAGE = 1  # usage error or not found
FAILED = 2  # failed, and nothing was changed
CONFLICT = 3  # an unresolved conflict remains


class MemexError(Exception):
    """A failure with a plain-sentence message and the exit code it maps to."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message


class NotFound(MemexError):
    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


class UsageError(MemexError):
    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)

"""What every detector shares: regexes compiled on first use, and the mask itself.

A masked value keeps its first 4 characters and turns the rest into ``x`` (docs/security.md), so
an already-masked value is recognised and never reported again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping


class _Lazy:
    """A regex compiled on first use.

    Compiling the ~100 patterns of the detector modules costs ~13 ms (median of 9), paid by every short-lived command that merely
    imports this module (hooks, capture); it is paid once, by the first redaction, instead.
    """

    __slots__ = ("_flags", "_pattern", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._rx: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self._pattern, self._flags)
        return self._rx

    @property
    def groups(self) -> int:
        return self.rx.groups

    @property
    def groupindex(self) -> Mapping[str, int]:
        return self.rx.groupindex

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.rx.search(text, pos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.rx.match(text, pos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.rx.fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.rx.finditer(text)

    def findall(self, text: str) -> list[str]:
        return self.rx.findall(text)


_lazy = _Lazy


REDACTED = "[REDACTED]"
KEEP = 4  # characters of a secret kept visible (D14, docs/decisions.md)
_MIN_SECRET_LEN = KEEP + 1  # shorter values cannot be masked at all, so are not reported


def mask(value: str, keep: int = KEEP) -> str:
    """Keep the first `keep` characters (4 unless a known format says how long its public prefix
    is), turn the rest into ``x`` (same length; line breaks kept)."""
    head, tail = value[:keep], value[keep:]
    return head + "".join(c if c in "\r\n" else "x" for c in tail)


def _is_masked(value: str) -> bool:
    """True for values already masked by us (``x`` tail) or documentation placeholders (``X``)."""
    tail = value[KEEP:]
    if bool(tail) and all(c in "xX\r\n" for c in tail):
        return True
    # a known format's longer public prefix (``shippo_live_``, up to 16 characters) then x to the end
    run = len(value) - len(value.rstrip("xX\r\n"))
    return run >= 8 and len(value) - run <= 16



def _has_digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _mixed_case(v: str) -> bool:
    return any(c.islower() for c in v) and any(c.isupper() for c in v)


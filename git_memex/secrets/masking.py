"""What every detector shares: regexes compiled on first use, and the mask itself.

A masked value keeps its first 4 characters and turns the rest into ``x`` (docs/security.md), so
an already-masked value is recognised and never reported again.
"""

from __future__ import annotations

from git_memex.secrets.rx import Rx

# Every detector's pattern is an `Rx`: run by RE2 (linear time), compiled on first use.
_Lazy = Rx
_lazy = Rx


REDACTED = "[REDACTED]"
KEEP = 4  # characters of a secret kept visible (D14, docs/decisions.md)
_MIN_SECRET_LEN = KEEP + 1  # shorter values cannot be masked at all, so are not reported


def mask(value: str) -> str:
    """Keep the first 4 characters, turn the rest into ``x`` (same length; line breaks kept)."""
    head, tail = value[:KEEP], value[KEEP:]
    return head + "".join(c if c in "\r\n" else "x" for c in tail)


def _is_masked(value: str) -> bool:
    """True for values already masked by us (``x`` tail) or documentation placeholders (``X``)."""
    tail = value[KEEP:]
    return bool(tail) and all(c in "xX\r\n" for c in tail)



def _has_digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _mixed_case(v: str) -> bool:
    return any(c.islower() for c in v) and any(c.isupper() for c in v)


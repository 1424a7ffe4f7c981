"""What every detector shares: regexes compiled on first use, and the mask itself.

A masked value keeps only the documented, non-secret prefix of a known format (``ghp_``, ``AKIA``)
and turns every other character into ``x`` (docs/security.md); a password or a generic value
keeps nothing. An already-masked value is recognised and never reported again.
"""

from __future__ import annotations

from git_memex.secrets.rx import Rx

# Every detector's pattern is an `Rx`: run by RE2 (linear time), compiled on first use.
_Lazy = Rx
_lazy = Rx


REDACTED = "[REDACTED]"
_MIN_SECRET_LEN = 5  # values of 4 characters or fewer are not reported
# What masks written before the whole value was masked left visible: a value whose characters
# after its first 4 are all "x" is still taken as masked, so files masked then scan clean.
_OLD_KEEP = 4
_MAX_KEEP = 16  # the longest documented prefix a mask may leave (`formats.Format.keep`)
_MAX_PREFIX = 24


def mask(value: str, keep: int = 0) -> str:
    """Every character of ``value`` becomes ``x`` (same length, line breaks kept) but its first
    ``keep``: a documented, non-secret prefix of a known format (``ghp_``, ``AKIA``), never any
    part of a password or a generic value (a `formats.Format`'s ``keep`` says how long)."""
    head, tail = value[:keep], value[keep:]
    return head + "".join(c if c in "\r\n" else "x" for c in tail)


def _is_masked(value: str, keep: int = 0) -> bool:
    """True for values already masked (ours, now or before: an ``x`` tail after at most
    ``max(keep, 4)`` characters, or at least 8 after at most 16, or after up to 24 that end in
    ``_``, ``-`` or ``.``)
    and for documentation placeholders (``X``)."""
    start = len(value.rstrip("xX\r\n"))  # where the x tail begins
    if start == len(value):
        return False
    if start <= max(keep, _OLD_KEEP):
        return True
    if len(value) - start < 8:
        return False
    # a documented prefix (`formats.Format.keep`, at most 16: ``GR1348941``, ``ATATT3``) or a
    # longer one that ends as prefixes do, then at least 8 x
    return start <= _MAX_KEEP or (start <= _MAX_PREFIX and value[start - 1] in "_-.")


def _has_digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _mixed_case(v: str) -> bool:
    return any(c.islower() for c in v) and any(c.isupper() for c in v)


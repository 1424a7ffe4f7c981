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



def stand_in_word(value: str, words: tuple[str, ...]) -> bool:
    """Whether `value` is written as a stand-in: it holds one of `words` (lower case, matched in
    any case; a word may carry the separator it needs, ``your_``) *as a word*. A value without a
    digit is words, and a word anywhere in it counts (``YOUR_TOKEN_HERE``, ``PutYourKeyHere``,
    ``thisisfake``). A value with a digit may be a generated token whose random body spells a
    word by chance (``ghp_…3HeRe8…``, ``sk_live_c3XuhereXeV…``, issue 31 F3): there the word must
    be a whole segment between separators, the value's start or its end (``your-api-key-1``,
    ``<dummy>``, ``replace_me_2``), or sit in a segment of letters of one case
    (``ghp_YOURTOKENHERE_1``), never inside a run that mixes cases or holds digits; or two of the
    words of four letters or more are there (``YOURtokenHERE…``: one such word turns up in
    random bodies, two do not; "put" and "add" are too short to count)."""
    low = value.lower()
    hits = [w for w in words if w in low]
    if not hits:
        return False
    if not any(c.isdigit() for c in value) or len({w.strip("_-.") for w in hits if len(w.strip("_-.")) >= 4}) >= 2:
        return True
    bare = {w.strip("_-.") for w in hits}
    segments = "".join(c if c.isalnum() else " " for c in value).split()
    for segment in segments:
        s = segment.lower()
        if s in bare:
            return True
        if segment.isalpha() and (segment.isupper() or segment.islower()) and any(b in s for b in bare):
            return True
    return False

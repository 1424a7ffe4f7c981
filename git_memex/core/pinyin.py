"""Write-time pinyin for Han tags (docs/search.md, "Pinyin for tags"): a memory tagged 数据库 is found by `shujuku`,
`shu ju ku` and `sjk`.

The forms are written into the index's `tags` column, beside the tag itself; the memory file
never changes (docs/search.md, "Pinyin for tags", says why these forms and not others, with the
figures of `python -m bench.pinyin`). Per run of Han characters in a tag:

- the syllables joined (`shujuku`): the word as a pinyin user types it;
- each syllable (`shu ju ku`), when the run has two characters or more;
- the initials (`sjk`), when the run has three characters or more (two-letter initials are left
  out: three in ten of the shared sets' two-character words share theirs with another word).

`pypinyin` (MIT, offline, the standard library for this) costs ~140 ms to import (median of 9
`python -X importtime` runs; its phrase dictionary): it is imported only when a tag holds a Han character, so a hook or a command
over memories without Chinese tags never loads it.
"""

from __future__ import annotations

import re

# Han only (not Kana or Hangul): unified, extension A, compatibility, extensions B-H.
_HAN_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U000323af]+")
_CACHE: dict[str, tuple[str, ...]] = {}


def has_han(s: str) -> bool:
    return _HAN_RE.search(s) is not None


def run_forms(run: str) -> tuple[str, ...]:
    """The pinyin tokens of one run of Han characters: joined, syllables (2+), initials (3+)."""
    got = _CACHE.get(run)
    if got is not None:
        return got
    try:
        from pypinyin import lazy_pinyin  # ~140 ms: only here, only for Han text
    except ImportError:  # a dependency, but an install without it still indexes (without pinyin)
        return ()

    # the phrase dictionary picks each character's reading in its word; ü is written v, as
    # pinyin keyboards take it (绿 -> lv)
    syl = [s for s in lazy_pinyin(run, errors="ignore") if s.isascii() and s.isalpha()]
    out: list[str] = []
    if syl:
        out.append("".join(syl))
        if len(syl) >= 2:
            out.extend(syl)
        if len(syl) >= 3:
            out.append("".join(s[0] for s in syl))
    forms = tuple(dict.fromkeys(out))
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[run] = forms
    return forms


def tag_pinyin(tags: list[str]) -> str:
    """The pinyin tokens of every Han run of `tags`, space-separated ('' when none has Han)."""
    out: list[str] = []
    for tag in tags:
        for run in _HAN_RE.findall(tag):
            out.extend(run_forms(run))
    return " ".join(dict.fromkeys(out))

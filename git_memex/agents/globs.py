"""``paths:`` globs of a memory matched against repository paths (gitignore-like, no I/O).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:

    pass

_glob_cache: dict[str, re.Pattern[str] | None] = {}


def glob_regex(pattern: str) -> re.Pattern[str] | None:
    """A memory's ``paths`` glob as a regex over repo-relative posix paths.

    gitignore-like: ``**`` crosses folders, ``*`` and ``?`` do not; a pattern without a slash
    (``*.sql``) matches at any depth; a pattern naming a folder (``src/auth``, ``src/auth/``,
    ``src/auth/**``) also matches the folder itself and everything under it.
    """
    if pattern in _glob_cache:
        return _glob_cache[pattern]
    p = pattern.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    anchored = "/" in p.rstrip("/")
    p = p.strip("/")
    if not p:
        _glob_cache[pattern] = None
        return None
    out: list[str] = []
    i, n = 0, len(p)
    while i < n:
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif p.startswith("/**", i) and i + 3 == n:
            out.append("(?:/.*)?")
            i += 3
        elif p.startswith("**", i):
            out.append(".*")
            i += 2
        elif p[i] == "*":
            out.append("[^/]*")
            i += 1
        elif p[i] == "?":
            out.append("[^/]")
            i += 1
        elif p[i] == "[" and (j := p.find("]", i + 2)) > 0:
            cls = p[i + 1 : j]
            if cls.startswith("!"):
                cls = "^" + cls[1:]
            out.append("[" + cls.replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(p[i]))
            i += 1
    src = ("" if anchored else "(?:.*/)?") + "".join(out) + "(?:/.*)?"
    try:
        rx: re.Pattern[str] | None = re.compile(src)
    except re.error:
        rx = None
    _glob_cache[pattern] = rx
    return rx


def glob_matches(patterns: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths (repo-relative) that any of the globs matches."""
    rxs = [rx for rx in (glob_regex(g) for g in patterns) if rx is not None]
    if not rxs:
        return []
    return [p for p in paths if any(rx.fullmatch(p) for rx in rxs)]



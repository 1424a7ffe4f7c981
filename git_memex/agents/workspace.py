"""Where the agent is working: branch, changed files, cwd, last fetch, and their topic words.

Read from git's own files where possible (HEAD, FETCH_HEAD, reflogs) so that a session start costs
no subprocess beyond one `git status`, which runs while the index refreshes.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Any

    from git_memex.core.context import Context

STALE_AFTER_S = 24 * 3600
"""Project memories count as stale when origin was last fetched longer ago than this (D12, docs/decisions.md)."""
MAX_CHANGED_PATHS = 50
_GENERIC_TEXT = """
    feat feature features fix fixes fixed bugfix bug hotfix chore chores docs doc refactor
    release releases main master trunk dev develop development wip test tests testing ci build
    perf style topic tmp temp experiment exp origin head users user
    src lib libs spec specs py pyi js mjs cjs ts tsx jsx md rst txt json jsonc yaml yml toml cfg
    ini lock index init app apps pkg pkgs packages internal cmd utils util common core github
    vscode node modules dist out target vendor readme changelog license setup conftest
"""
GENERIC_WORDS = frozenset(_GENERIC_TEXT.split())
_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+")


def current_branch(ctx: Context) -> str | None:
    """The checked-out branch, read from this work tree's HEAD file (no subprocess)."""
    if ctx.repo is None:
        return None
    try:
        head = (ctx.repo.git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix):] if head.startswith(prefix) else None


def start_changed_paths(ctx: Context) -> subprocess.Popen[bytes] | None:
    """Start the `git status` behind `changed_paths` and return at once (None: nothing to ask).

    git stats every tracked file, and so does our index refresh: started first, the two run
    side by side instead of one after the other.
    """
    from git_memex.core.gitcmd import start_git

    if ctx.repo is None:
        return None
    return start_git(["--no-optional-locks", "status", "--porcelain=v1", "-z", "--no-renames",
                      "--untracked-files=all"], ctx.repo.work_tree)


def finish_changed_paths(proc: subprocess.Popen[bytes] | None, limit: int = MAX_CHANGED_PATHS) -> list[str]:
    """The paths a `start_changed_paths` process reported; any git failure means "no paths"."""
    from git_memex.core.gitcmd import finish_git

    r = finish_git(proc, timeout=20)
    if r is None or r.returncode != 0:
        return []
    out: list[str] = []
    for entry in r.stdout.split("\0"):
        if len(entry) < 4:
            continue
        path = entry[3:].rstrip("/")
        if path and path not in out:
            out.append(path)
        if len(out) >= limit:
            break
    return out


def last_fetch(ctx: Context) -> float | None:
    """When this repository last fetched from a remote, or None when it never did.

    Every fetch and pull writes FETCH_HEAD (in the git dir of the work tree it ran in, so every
    worktree's is read). A clone writes none; then the time of the newest entry in origin's
    remote-tracking reflogs says when the clone fetched (entry times, not file times: `git gc`
    rewrites reflog files without fetching anything)."""
    if ctx.repo is None:
        return None
    common = ctx.repo.common_dir
    heads = [ctx.repo.git_dir / "FETCH_HEAD", common / "FETCH_HEAD"]
    with contextlib.suppress(OSError):
        heads += [Path(e.path) / "FETCH_HEAD" for e in os.scandir(common / "worktrees") if e.is_dir()]
    times: list[float] = []
    for head in heads:
        with contextlib.suppress(OSError):
            times.append(head.stat().st_mtime)
    if times:
        return max(times)
    logs = common / "logs" / "refs" / "remotes" / "origin"
    for folder, _dirs, names in itertools.islice(os.walk(logs), 50):
        for name in names[:200]:
            stamp = _last_reflog_time(os.path.join(folder, name))
            if stamp is not None:
                times.append(stamp)
    return max(times) if times else None


def _last_reflog_time(path: str) -> float | None:
    """The time of a reflog's newest entry: `<old> <new> <who> <unix time> <tz>\t<message>`."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            tail = fh.read()
    except OSError:
        return None
    for line in reversed(tail.splitlines()):
        words = line.split(b"\t", 1)[0].split()
        if len(words) >= 2 and words[-2].isdigit():
            return float(words[-2])
    return None


def staleness_line(ctx: Context, now: float) -> tuple[str, dict[str, Any] | None]:
    """The D12 indicator: session start never pulls, so say how old the project knowledge may be.

    Only for a repository with an origin, and only when origin was last fetched more than a day
    ago (or never): a fresh clone says nothing."""
    if ctx.repo is None or not ctx.origin_url:
        return "", None
    at = last_fetch(ctx)
    from git_memex.core.model import epoch_ms_to_rfc3339

    info: dict[str, Any] = {"last_fetch": None if at is None else epoch_ms_to_rfc3339(at * 1000), "stale": True}
    if at is None:
        return ("Project memories have never been fetched from origin here; teammates' memories "
                "arrive with `git memex pull`."), info
    age = now - at
    if age <= STALE_AFTER_S:
        info["stale"] = False
        return "", info
    hours = int(age // 3600)
    ago = f"{hours} hours" if hours < 48 else f"{hours // 24} days"
    return (f"Project memories were last fetched from origin {ago} ago; teammates' newer memories "
            "arrive with `git memex pull`."), info


def changed_paths(ctx: Context, limit: int = MAX_CHANGED_PATHS) -> list[str]:
    """Repo-relative paths changed against HEAD (staged or not) plus untracked ones, at most `limit`.

    One `git status` call (with --no-optional-locks, so it never takes the index lock), listing
    the files inside new folders too, so that a glob such as ``db/migrations/**`` sees them.
    Any git failure means "no paths".
    """
    return finish_changed_paths(start_changed_paths(ctx), limit)


def cwd_paths(ctx: Context) -> list[str]:
    """The cwd and its ancestors inside the work tree, repo-relative ("a", "a/b"); [] at the root."""
    if ctx.repo is None:
        return []
    try:
        rel = ctx.cwd.resolve().relative_to(ctx.repo.work_tree.resolve())
    except (OSError, ValueError):
        return []
    parts = rel.parts
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def topic_words(text: str) -> list[str]:
    """Content words of a branch name or a path: split on separators and camelCase, lower-cased,
    minus generic words (feat, fix, src, py, …) and stopwords. ``feat/auth-token-refresh`` →
    auth, token, refresh."""
    from git_memex.core.textproc import STOPWORDS

    out: list[str] = []
    for piece in re.split(r"[/\\_\-.\s]+", text):
        for w in _WORD_RE.findall(piece):
            lw = w.lower()
            if lw in GENERIC_WORDS or lw in STOPWORDS:
                continue
            if lw.isascii() and len(lw) < 2:
                continue
            if lw not in out:
                out.append(lw)
    return out


_ID_PIECE_RE = re.compile(r"(?=[0-9A-Za-z]*\d)(?:[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}|[0-9a-fA-F]{7,})")
"""A ULID (26 Crockford base32 characters) or a hex run of 7+ (a hash, a commit, a UUID's first
group), with at least one digit: an id, whose letters would split into junk words."""
PATH_WORD_MIN = 3
"""Shortest path word kept (ASCII): `ai`, `db`, `v2` say little about a file that its longer words do not."""


def path_words(paths: Iterable[str], limit: int = 24, skip: Iterable[str] = ()) -> list[str]:
    """Topic words of changed files, most frequent first (docs/agents.md, "Warnings"): file
    extensions dropped; paths in the `skip` folders (the memory folder: its file names are ids)
    left out; id-like pieces (ULIDs, hex of 7+), numbers and ASCII words shorter than
    PATH_WORD_MIN dropped."""
    folders = [f.replace("\\", "/").strip("/") + "/" for f in skip if f and f.strip("/")]
    counts: dict[str, int] = {}
    for p in paths:
        p = p.replace("\\", "/")
        if any(p.strip("/").startswith(f) for f in folders):
            continue
        parts = p.split("/")
        if parts and "." in parts[-1]:
            parts[-1] = parts[-1].rsplit(".", 1)[0]
        pieces = [x for part in parts for x in re.split(r"[_\-.\s]+", part) if x and not _ID_PIECE_RE.fullmatch(x)]
        for w in topic_words("/".join(pieces)):
            if w.isdigit() or (w.isascii() and len(w) < PATH_WORD_MIN):
                continue
            counts[w] = counts.get(w, 0) + 1
    ranked = sorted(counts, key=lambda w: -counts[w])  # stable: first seen wins ties
    return ranked[:limit]



"""A person's word that two memories do not contradict (`git memex compatible A B`).

The contradiction finder (`review.contradictions`) is a heuristic: two memories it flags may
both be true ("for the public API" / "for partners"). A person who read both says so once, and
the pair is not raised again. The record (docs/curating.md, "Contradictions"):

* **where**: when both memories are committed repository memories, in
  ``<memoryDir>/.compatible/<A>-<B>.json`` (the two ids sorted), written and staged (`git add`):
  it travels with the repository and is reviewed like the memories, so the whole team stops
  seeing the pair once it is merged. Otherwise (a personal, draft, private, org or remote
  memory is one of them) in ``<data root>/compatible/<A>-<B>.json`` on this machine: a personal
  memory's id never enters a commit;
* **what**: both ids, the content hash of each text as marked (`textproc.content_hash`), who
  marked it (`core.person.actor`), when, and an optional note (masked like every text we write);
* **while**: a mark covers the pair only while both texts are the ones marked. An edit of either
  (a new value, a new negation) raises the pair again: the person judged those two texts;
* **who**: a person, at the command line. No MCP tool marks a pair: an agent must not silence a
  disagreement it was shown (docs/agents.md, "Callers have roles").

Reading the marks is a folder listing and a few small files, done only when a pair was found.
"""

from __future__ import annotations

import json
from pathlib import Path

from git_memex.core.context import Context
from git_memex.errors import USAGE, MemexError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FOLDER = ".compatible"
FORMAT = "git-memex-compatible/1"
MAX_NOTE = 2000


def _name(a: str, b: str) -> str:
    x, y = sorted((a, b))
    return f"{x}-{y}.json"


def repo_folder(ctx: Context) -> Path | None:
    return None if ctx.memory_dir is None else ctx.memory_dir / FOLDER


def home_folder(ctx: Context) -> Path:
    return ctx.data_root / "compatible"


def _hash(row: Mapping[str, Any]) -> str:
    from git_memex.core.textproc import content_hash

    try:
        h = row["content_hash"]
    except (KeyError, IndexError):
        h = None
    return str(h) if h else content_hash(str(row["body"] or ""))


def _read(path: Path) -> dict[str, Any] | None:
    """One record, or None when it is not one we wrote (ignored: it covers nothing)."""
    try:
        if path.is_symlink() or path.stat().st_size > 64 * 1024:
            return None
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(doc.get("content"), dict)
            and isinstance(doc.get("a"), str) and isinstance(doc.get("b"), str)):
        return None
    return doc


def marks(ctx: Context) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every record in the repository's folder and the data root's, by (smaller id, larger id)."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for folder, where in ((repo_folder(ctx), "repository"), (home_folder(ctx), "this machine")):
        if folder is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*-*.json")):
            doc = _read(path)
            if doc is None:
                continue
            key = (min(doc["a"], doc["b"]), max(doc["a"], doc["b"]))
            out.setdefault(key, []).append({**doc, "where": where, "path": str(path)})
    return out


def covers(found: dict[tuple[str, str], list[dict[str, Any]]], ra: Mapping[str, Any], rb: Mapping[str, Any]) -> bool:
    """Whether a person marked these two memories, as they read now, not contradictory."""
    a, b = str(ra["id"]), str(rb["id"])
    recs = found.get((min(a, b), max(a, b)))
    if not recs:
        return False
    ha, hb = _hash(ra), _hash(rb)
    return any(r["content"].get(a) == ha and r["content"].get(b) == hb for r in recs)


def covering(found: dict[tuple[str, str], list[dict[str, Any]]], ra: Mapping[str, Any],
             rb: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record by which a person marked these two, as they read now, not contradictory; None."""
    a, b = str(ra["id"]), str(rb["id"])
    ha, hb = _hash(ra), _hash(rb)
    for r in found.get((min(a, b), max(a, b)), []):
        if r["content"].get(a) == ha and r["content"].get(b) == hb:
            return r
    return None


def silenced(ctx: Context, record: Mapping[str, Any]) -> dict[str, Any]:
    """What audit shows of one pair a record silences: the ids, where the record is, and who
    marked it as git knows them: for a repository record, the author of the commit that added
    it (``by``; None while it is not committed: ``committed`` false). The name inside the
    record (``says``) is only what its writer put there (any file can be written by hand)."""
    out: dict[str, Any] = {"a": record["a"], "b": record["b"], "where": record["where"], "path": record["path"],
                           "says": str(record.get("by") or ""), "by": None, "committed": False}
    if record["where"] == "repository" and ctx.repo is not None:
        from git_memex.core.gitcmd import git_text

        rel = Path(record["path"]).relative_to(ctx.repo.work_tree).as_posix()
        r = git_text(["log", "--diff-filter=A", "-1", "--format=%an <%ae>", "--", rel], ctx.repo.work_tree, timeout=30)
        who = r.stdout.strip() if r is not None and r.returncode == 0 else ""
        out["by"], out["committed"] = (who or None), bool(who)
    elif record["where"] == "this machine":
        out["by"] = out["says"] or None  # written by this machine's `git memex compatible`, in its data root
    return out


def _rows(ctx: Context, a: str, b: str) -> tuple[Any, Any]:
    from git_memex.index.stores import Stores

    with Stores(ctx) as st:
        st.refresh()
        ra, rb = st.find(a).row, st.find(b).row
    if ra["id"] == rb["id"]:
        raise MemexError(f"{a} and {b} name the same memory ({ra['id']}); name two", USAGE)
    for r in (ra, rb):
        if r["status"] != "active":
            raise MemexError(f"{r['id']} is {r['status']}, not active: only active memories are checked for "
                             "contradictions", USAGE)
    return ra, rb


def _where(ctx: Context, ra: Any, rb: Any) -> tuple[Path, bool]:
    """(the record's path, whether it is the repository's)."""
    folder = repo_folder(ctx)
    if ctx.repo is not None and folder is not None and ra["location"] == "repo" and rb["location"] == "repo":
        return folder / _name(ra["id"], rb["id"]), True
    return home_folder(ctx) / _name(ra["id"], rb["id"]), False


def _stage(ctx: Context, path: Path) -> str | None:
    """`git add` (or `git rm --cached` for a removed record): the sentence when git could not."""
    from git_memex.core.gitcmd import run_git

    assert ctx.repo is not None
    rel = path.relative_to(ctx.repo.work_tree).as_posix()
    args = ["add", "--", rel] if path.exists() else ["rm", "-q", "--cached", "--ignore-unmatch", "--", rel]
    proc = run_git(args, ctx.repo.work_tree, timeout=30)
    if proc is None or proc.returncode != 0:
        return f"git could not stage {rel}; run `git add {rel}`"
    return None


def mark(ctx: Context, a: str, b: str, *, note: str | None = None) -> dict[str, Any]:
    """Record that memories `a` and `b` (ids or unique prefixes) do not contradict each other,
    as their texts read now. Idempotent: the same pair and texts again rewrite the record."""
    from git_memex.agents.approval_record import write
    from git_memex.core import model
    from git_memex.core.person import actor
    from git_memex.review.disagreement import compare

    if note is not None and len(note) > MAX_NOTE:
        raise MemexError(f"the note is {len(note):,} characters; at most {MAX_NOTE:,}", USAGE)
    ra, rb = _rows(ctx, a, b)
    path, in_repo = _where(ctx, ra, rb)
    clean = None
    if note and note.strip():
        from git_memex.secrets.redact import redact

        clean = redact(" ".join(note.split()), ctx.redact_patterns).text
    x, y = sorted((ra, rb), key=lambda r: r["id"])
    doc = {"format": FORMAT, "a": x["id"], "b": y["id"],
           "content": {x["id"]: _hash(x), y["id"]: _hash(y)},
           "by": actor(ctx), "at": model.now(), "note": clean}
    write(path, (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    out: dict[str, Any] = {"a": x["id"], "b": y["id"], "path": str(path),
                           "where": "repository" if in_repo else "this machine", "note": clean,
                           "flagged": compare(x["body"] or "", y["body"] or "") is not None}
    if in_repo:
        problem = _stage(ctx, path)
        out["staged"] = problem is None
        if problem:
            out["warning"] = problem
    return out


def unmark(ctx: Context, a: str, b: str) -> dict[str, Any]:
    """Remove the records of a pair (both places): the finder raises it again."""
    from git_memex.index.stores import Stores

    with Stores(ctx) as st:
        st.refresh()
        ida, idb = st.find(a).row["id"], st.find(b).row["id"]
    removed: list[str] = []
    warnings: list[str] = []
    for folder in (repo_folder(ctx), home_folder(ctx)):
        if folder is None:
            continue
        path = folder / _name(ida, idb)
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed.append(str(path))
            if ctx.repo is not None and folder == repo_folder(ctx):
                problem = _stage(ctx, path)
                if problem:
                    warnings.append(problem)
    if not removed:
        raise MemexError(f"no record marks {ida} and {idb} as not contradictory", USAGE)
    out: dict[str, Any] = {"a": min(ida, idb), "b": max(ida, idb), "removed": removed}
    if warnings:
        out["warnings"] = warnings
    return out

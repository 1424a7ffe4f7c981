"""Bundles: memories moved between machines or projects as one versioned JSON file.

`export` gathers memories (personal, this project's repository files and outbox drafts, and
private ones only when asked) into one JSON document; `import_bundle` reads one back, checking
the whole bundle before it writes anything, and writes each memory as any write path does
(validated, secrets masked, `<private>` parts removed). The format and every rule are in
docs/bundle.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import FAILED, USAGE, MemexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.model import Memory
    from git_memex.index.stores import Stores

FORMAT = "git-memex-bundle"
VERSION = 1
"""The bundle format version this code writes and the highest it reads."""
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
LOCATIONS = ("personal", "outbox", "private", "repo")
"""Where an exported memory came from, in the order an id found in two places is taken."""
CONTENT_KEYS = ("scope", "visibility", "type", "role", "status", "tags", "supersedes", "superseded_by")
"""What two copies of one id must agree on (with the body) to be the same memory; the other keys
(review state, times, revision, history) are bookkeeping a copy may be ahead or behind on."""
LIVE = ("active", "deprecated")


def _bundle_problem(path: str, why: str) -> MemexError:
    return MemexError(f"{path} {why}; nothing was imported", FAILED)


# ------------------------------------------------------------------ export
@record
class ExportResult:
    bundle: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)
    masked: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    path: str | None = None

    @property
    def personal(self) -> int:
        return self.counts.get("personal", 0)

    @property
    def private(self) -> int:
        return self.counts.get("private", 0)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "count": self.bundle["count"], "counts": self.counts,
                "masked": self.masked, "warnings": self.warnings}


def _locations(ctx: Context, scope: str, include_private: bool) -> list[str]:
    if scope not in ("project", "personal", "both"):
        raise UsageError(f"scope {scope!r} is not valid; use project, personal or both")
    out = []
    if scope in ("personal", "both"):
        out.append("personal")
    if scope in ("project", "both"):
        if ctx.repo is None:
            if scope == "project":
                raise UsageError("exporting project memories needs the project's git repository; run it inside one")
        else:
            out += ["outbox"] + (["private"] if include_private else []) + ["repo"]
    return out


def _vocabulary_masked(fm: dict[str, Any], patterns: Sequence[str] = ()) -> list[str]:
    """Mask secrets in every string field of a memory's frontmatter (title, tags, paths, aliases,
    canonical_ref, summary…), as every write path does (`secrets.admission`); the rules found."""
    from git_memex.secrets.admission import mask_fields

    masked_fm, masked = mask_fields(fm, patterns)
    if masked:
        fm.clear()
        fm.update(masked_fm)
    return masked


def export(ctx: Context, *, scope: str = "both", type: str | None = None, tag: str | None = None,
           all: bool = False, include_private: bool = False) -> ExportResult:
    """The bundle of the memories the filters select: active and deprecated ones unless `all`."""
    from git_memex import __version__
    from git_memex.core import model
    from git_memex.core.files import UnreadableMemory, read_memory
    from git_memex.index.stores import opened
    from git_memex.secrets.redact import redact

    locs = _locations(ctx, scope, include_private)
    if type is not None and type not in model.TYPES:
        raise UsageError(f"type {type!r} is not valid; use one of: {', '.join(model.TYPES)}")
    want_tag = model.normalize_tags([tag])[0] if tag and model.normalize_tags([tag]) else None
    res = ExportResult(bundle={})
    rows: dict[str, Any] = {}
    with opened(ctx, None) as st:
        st.refresh()
        cond = f"m.location IN ({','.join('?' * len(locs))})"
        args: list[Any] = [*locs]
        if not all:
            cond += " AND m.status IN ('active', 'deprecated')"
        if type:
            cond += " AND m.type = ?"
            args.append(type)
        for r in st.rows(cond, args):
            if want_tag and want_tag not in json.loads(r["tags"] or "[]"):
                continue
            have = rows.get(r["id"])
            if have is None or LOCATIONS.index(r["location"]) < LOCATIONS.index(have["location"]):
                rows[r["id"]] = r
        unreadable = [p for index, _w, _p in st.dbs() for p, _why in index.quarantined()
                      if _location_of(st, p) in locs]
        if unreadable:
            n = len(unreadable)
            res.warnings.append(f"{n} unreadable memory file{'' if n == 1 else 's'} left out of the bundle "
                                "(`git memex doctor` lists them with the reason)")
        entries = []
        misplaced = 0
        for mid in sorted(rows):
            r = rows[mid]
            try:
                m = read_memory(Path(r["path"]))
            except UnreadableMemory as exc:
                res.warnings.append(f"{r['path']} {exc}; left out of the bundle")
                continue
            try:  # a file in the wrong folder (a personal memory in the repository) stays where it is
                _destination("", m.id, r["location"], m.fm)
            except MemexError:
                misplaced += 1
                continue
            red = redact(m.body, ctx.redact_patterns)
            masked = list(red.masked) + _vocabulary_masked(m.fm, ctx.redact_patterns)
            if masked:
                res.masked[m.id] = sorted(set(masked))
            entries.append({"id": m.id, "location": r["location"], "frontmatter": m.fm, "body": red.text})
            res.counts[r["location"]] = res.counts.get(r["location"], 0) + 1
    res.bundle = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": model.now(),
        "exported_by": f"git-memex {__version__}",
        "origin": {"project_key": ctx.project_key if ctx.repo else None,
                   "repo_id": ctx.repo_id if ctx.repo else None},
        "filters": {"scope": scope, "type": type, "tag": want_tag, "all": all, "include_private": include_private},
        "count": len(entries),
        "memories": entries,
    }
    if misplaced:
        res.warnings.append(f"{misplaced} memor{'y' if misplaced == 1 else 'ies'} in the wrong folder (a personal or "
                            "private one in the repository) left out of the bundle; `git memex audit` lists them")
    if res.personal:
        res.warnings.append(f"the bundle holds {res.personal} personal memor{'y' if res.personal == 1 else 'ies'}: "
                            "keep the file to yourself, never commit or share it")
    if res.private:
        res.warnings.append(f"the bundle holds {res.private} private memor{'y' if res.private == 1 else 'ies'} "
                            "(--include-private): keep the file to yourself")
    return res


def _location_of(st: Stores, path: str) -> str | None:
    """Which of this context's folders holds `path`, if any."""
    folder = Path(path).parent
    for loc in ("personal", "outbox", "private", "repo"):
        try:
            if Path(st.source(loc).folder) == folder:
                return loc
        except MemexError:
            continue
    return None


def bundle_text(bundle: dict[str, Any]) -> str:
    return json.dumps(bundle, ensure_ascii=False, indent=2, default=str) + "\n"


def _work_tree_of(folder: Path) -> Path | None:
    """The git work tree `folder` is inside, if any; fails closed (`data_root.enclosing_work_tree`:
    no `git` is asked, so dubious ownership or a stray ``GIT_DIR`` cannot make it say none)."""
    from git_memex.core.data_root import enclosing_work_tree

    return enclosing_work_tree(folder)


def write_bundle(res: ExportResult, out: str) -> Path:
    """Write the bundle to `out` in one step, readable by its owner only. A bundle holding personal
    or private memories is never written inside a git work tree (exit 2, nothing written)."""
    from git_memex.core.files import atomic_write_text

    path = Path(out).expanduser()
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise MemexError(f"-o {out} is a folder; name the bundle file to write", FAILED)
    if not folder.is_dir():
        raise MemexError(f"-o {out}: the folder {folder} does not exist; nothing was written", FAILED)
    if res.personal or res.private:
        tree = _work_tree_of(folder)
        if tree is not None:
            kind = "personal" if res.personal else "private"
            raise MemexError(f"-o {out} is inside the git work tree {tree} and the bundle holds {kind} memories, "
                             "which never enter a work tree; write it outside the repository (nothing was written)", FAILED)
    try:
        atomic_write_text(path, bundle_text(res.bundle), mode=0o600)
    except OSError as exc:
        raise MemexError(f"cannot write {out} ({exc.strerror or exc}); nothing was written", FAILED) from None
    res.path = str(path)
    return path


def guard_stdout(res: ExportResult, fd: int = 1) -> None:
    """Before a bundle holding personal or private memories is printed: when stdout is a regular
    file (`> FILE`), make it readable by its owner only, and refuse when it lies inside a git work
    tree, exactly as for `-o FILE`. A pipe or a terminal is left alone."""
    import os
    import stat

    if not (res.personal or res.private):
        return
    try:
        st = os.fstat(fd)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        return
    try:
        where = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        where = None
    if where is not None and where.parent.is_dir():
        tree = _work_tree_of(where.parent)
        if tree is not None:
            raise MemexError(f"stdout is {where}, inside the git work tree {tree}, and the bundle holds personal or "
                             "private memories, which never enter a work tree; use -o FILE outside the repository "
                             "(nothing was written)", FAILED)
    if st.st_mode & 0o077:
        try:
            os.fchmod(fd, 0o600)
            res.warnings.append("stdout is a file: it is now readable by you only, as the bundle holds personal or "
                                "private memories")
        except OSError:
            res.warnings.append("stdout is a file other users may read, and the bundle holds personal or private "
                                "memories: remove it or restrict it (chmod 600)")


# ------------------------------------------------------------------ import
@record
class Planned:
    id: str
    location: str  # where it lands here: personal, outbox or private
    text: str
    memory: Memory
    masked: list[str]


@record
class ImportResult:
    imported: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)
    masked: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def summary(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        return (f"{verb} {len(self.imported)}, skipped {len(self.skipped)} identical, "
                f"{len(self.conflicts)} conflict{'' if len(self.conflicts) == 1 else 's'} kept existing")

    def to_json(self) -> dict[str, Any]:
        return {"imported": self.imported, "skipped_identical": self.skipped, "conflicts": self.conflicts,
                "masked": self.masked, "warnings": self.warnings, "dry_run": self.dry_run,
                "summary": self.summary}


def read_bundle(path: str) -> dict[str, Any]:
    """The bundle document in `path` (`-` for stdin), its envelope checked; one sentence otherwise.
    At most MAX_BUNDLE_BYTES are read: a larger file is refused from its size, before any read."""
    import os
    import sys

    if path == "-":
        raw = sys.stdin.buffer.read(MAX_BUNDLE_BYTES + 1)
        name = "the bundle on stdin"
    else:
        name = path
        p = Path(path).expanduser()
        if p.is_dir():
            raise UsageError(f"{path} is a folder, not a bundle file")
        try:
            with open(p, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size > MAX_BUNDLE_BYTES:  # refused from its size: never read into memory
                    raise _bundle_problem(name, f"is larger than {MAX_BUNDLE_BYTES // (1024 * 1024)} MiB, "
                                          "so it is not a bundle")
                raw = fh.read(MAX_BUNDLE_BYTES + 1)
        except FileNotFoundError:
            raise UsageError(f"{path} does not exist; name a bundle written by `git memex export -o FILE`") from None
        except OSError as exc:
            raise MemexError(f"cannot read {path} ({exc.strerror}); nothing was imported", FAILED) from None
    if len(raw) > MAX_BUNDLE_BYTES:
        raise _bundle_problem(name, f"is larger than {MAX_BUNDLE_BYTES // (1024 * 1024)} MiB, so it is not a bundle")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bundle_problem(name, "is not a git-memex bundle (it is not UTF-8 text)") from None
    from git_memex.core.files import loads_json

    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        if FORMAT in text[:200]:
            raise _bundle_problem(name, f"is truncated or damaged (invalid JSON at line {exc.lineno})") from None
        raise _bundle_problem(name, "is not a git-memex bundle (not the JSON `git memex export` writes)") from None
    except ValueError as exc:  # nested too deeply, or a number longer than Python reads
        why = "a number in it is too long" if "digits" in str(exc) else "its JSON is nested too deeply"
        raise _bundle_problem(name, f"is not a git-memex bundle ({why})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bundle_problem(name, f"is not a git-memex bundle (no \"format\": \"{FORMAT}\")")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bundle_problem(name, "is damaged: its \"version\" is not a positive whole number")
    if version > VERSION:
        raise _bundle_problem(name, f"is a version {version} bundle, newer than this git-memex reads "
                              f"(version {VERSION}); upgrade git-memex")
    memories = doc.get("memories")
    count = doc.get("count")
    if not isinstance(memories, list) or not isinstance(count, int) or isinstance(count, bool):
        raise _bundle_problem(name, "is damaged: it lacks its \"memories\" list or \"count\"")
    if count != len(memories):
        raise _bundle_problem(name, f"is truncated or edited: it says it holds {count} memories but holds {len(memories)}")
    return doc


def _entry(name: str, i: int, e: Any) -> tuple[str, str, dict[str, Any], str]:
    from git_memex.core.model import is_valid_id

    if not isinstance(e, dict):
        raise _bundle_problem(name, f"is damaged: memory {i + 1} is not an object")
    mid, loc, fm, body = e.get("id"), e.get("location"), e.get("frontmatter"), e.get("body")
    if not is_valid_id(mid):
        raise _bundle_problem(name, f"is damaged: memory {i + 1} has no valid id")
    if loc not in LOCATIONS:
        raise _bundle_problem(name, f"is damaged: memory {mid} has location {loc!r}, not one of {', '.join(LOCATIONS)}")
    if not isinstance(fm, dict) or not isinstance(body, str):
        raise _bundle_problem(name, f"is damaged: memory {mid} lacks its frontmatter or body")
    if fm.get("id") != mid:
        raise _bundle_problem(name, f"is damaged: memory {mid} has id {fm.get('id')!r} in its frontmatter")
    return str(mid), str(loc), dict(fm), body


def _destination(name: str, mid: str, loc: str, fm: dict[str, Any],
                 problem: Callable[[str], Exception] | None = None) -> str:
    fail = problem or (lambda why: _bundle_problem(name, why))
    scope, vis = fm.get("scope"), fm.get("visibility")
    if scope == "personal":
        if loc != "personal":
            raise fail(f"holds the personal memory {mid} bound for the project's {loc}; a personal "
                       "memory never enters a repository or its outbox")
        return "personal"
    if loc == "personal":
        raise fail(f"holds memory {mid} filed as personal but with scope {scope!r}; "
                   "it is not a bundle `git memex export` writes")
    if scope != "project":
        raise fail(f"holds memory {mid} with scope {scope!r}; import takes personal and project memories")
    if vis == "private":
        if loc == "repo":
            raise fail(f"holds the private memory {mid} bound for the repository; a private "
                       "memory never enters a repository")
        return "private"
    return "outbox"


def _prepare(ctx: Context, name: str, doc: dict[str, Any]) -> list[Planned]:
    """Every memory of the bundle as it would be written here; refuses the whole bundle on the
    first one that cannot be (nothing has been written yet)."""
    out: list[Planned] = []
    seen: set[str] = set()
    repo_id = ctx.repo_id if ctx.repo is not None else None  # computed once: it hashes the origin URL
    for i, e in enumerate(doc["memories"]):
        mid, loc, fm, body = _entry(name, i, e)
        if mid in seen:
            raise _bundle_problem(name, f"holds memory {mid} twice")
        seen.add(mid)
        out.append(plan_memory(ctx, name, mid, loc, fm, body, repo_id))
    return out


def plan_memory(ctx: Context, name: str, mid: str, loc: str, fm: dict[str, Any], body: str,
                repo_id: str | None, problem: Callable[[str], Exception] | None = None) -> Planned:
    """One memory as it would be written here, through the admission barrier: `<private>` parts
    removed, secrets masked in the body and every frontmatter string, approvals dropped, the file
    validated and read back by the index's reader. `loc` is where it comes from (a bundle
    location). Raises `problem(why)` (by default MemexError with one sentence naming `name` and the
    memory, "nothing was imported")."""
    from git_memex.core import model
    from git_memex.core.files import file_text, size_problem
    from git_memex.secrets.admission import admit
    from git_memex.secrets.scan import check_text

    fail = problem or (lambda why: _bundle_problem(name, why))
    too_big = size_problem(body, fm)  # before the detector reads a byte of it
    if too_big is not None:
        raise fail(f"holds memory {mid}, which is not valid ({too_big})")
    m = model.from_parsed(fm, body)  # a v1 or reference-tool file is read as any file is
    dest = _destination(name, mid, loc, m.fm, fail)
    if dest != "personal" and ctx.repo is None:
        raise MemexError(f"{name} holds project memories; run `git memex import` inside the project's "
                         "repository (nothing was imported)", USAGE)
    m.body = m.body.strip()
    # the body redacted (<private> parts out, secrets masked) and every frontmatter string masked,
    # each string scanned once: `file_text` below and the write find them in admission's memo
    masked = list(admit(m, ctx.redact_patterns))
    m.body = m.body.strip()
    if not m.body or m.body == "[REDACTED]":
        raise fail(f"holds memory {mid} whose text is empty once <private> parts are removed")
    # an approval is given by a person in the project it applies to; it does not travel in a file
    if m.fm.get("instruction_state") == "approved":
        m.fm["instruction_state"] = "draft"
        m.fm.pop("approved_by", None)
    if m.fm.get("trust_level") == "trusted":
        m.fm["trust_level"] = "reviewed"
    if dest != "personal":
        m.fm["repo_id"] = repo_id
        if loc == "repo":  # team knowledge of another checkout: reviewed again here, through submit
            m.fm["review_state"] = "draft"
    try:
        text = file_text(m, Path(f"{mid}.md"))
    except model.ValidationError as exc:
        raise fail(f"holds memory {mid}, which is not valid ({exc})") from None
    # the format checks are file_text's own (the reader accepted exactly `text`, conflict markers and
    # the size limit included): what is left to ask is a secret the whole file shows (a key's name
    # beside a value) that no single string did
    left = [f for f in check_text(f"{mid}.md", text, fmt=False, patterns=ctx.redact_patterns)]
    if left:
        why = "a secret that cannot be masked" if left[0].secret else "a problem"
        raise fail(f"holds memory {mid} with {why} ({left[0].rule}, line {left[0].line} of its file)")
    return Planned(mid, dest, text, m, sorted(set(masked)))


def content_of(m: Memory) -> tuple[Any, ...]:
    from git_memex.core.model import normalize_tags

    vals = []
    for k in CONTENT_KEYS:
        v = m.fm.get(k)
        vals.append(tuple(normalize_tags(v)) if k == "tags" else (None if v is None else str(v)))
    return (m.body.strip(), *vals)


def _difference(a: Memory, b: Memory) -> str:
    if a.body.strip() != b.body.strip():
        return "text"
    ca, cb = content_of(a), content_of(b)
    return ", ".join(k for k, x, y in zip(CONTENT_KEYS, ca[1:], cb[1:], strict=True) if x != y)


def import_bundle(ctx: Context, path: str, *, dry_run: bool = False) -> ImportResult:
    """Import a bundle: all checked first, then written; identical ids skipped, differing ids kept
    as they are here (conflicts); a failure part-way removes what this run wrote."""
    from git_memex.index.stores import opened

    name = "the bundle on stdin" if path == "-" else path
    doc = read_bundle(path)
    res = ImportResult(dry_run=dry_run)
    with opened(ctx, None) as st:
        if st.degraded:
            raise MemexError(st.degraded, FAILED)
        planned = _prepare(ctx, name, doc)
        apply_planned(ctx, st, planned, res)
    if res.masked:
        n = len(res.masked)
        res.warnings.append(f"secrets were masked in {n} imported memor{'y' if n == 1 else 'ies'}; the bundle file "
                            "itself still holds them: delete it")
    return res


def apply_planned(ctx: Context, st: Stores, planned: Sequence[Planned], res: ImportResult) -> None:
    """Write `planned` memories (or, with `res.dry_run`, only report them) under the import lock:
    an id already here is skipped when identical and kept as it is when it differs (a conflict);
    a failure part-way removes the files this run wrote, so the writes are all or nothing."""
    from git_memex.core.files import (
        UnreadableMemory,
        delete_file,
        one_folder_sync,
        read_memory,
        write_memory,
    )
    from git_memex.core.locks import held

    st.refresh()
    written: list[tuple[Path, Any]] = []
    rows: dict[int, tuple[Any, list[tuple[Memory, Any]]]] = {}  # id(index) -> (index, [(memory, source)])
    # each folder is synced once, after the last rename into it (`files.one_folder_sync`), and the
    # index takes the new rows in one transaction per index once every file is written
    with held(ctx.data_root, "import"), one_folder_sync():
        try:
            for p in planned:
                here = st.find_all(p.id)
                if here:
                    f = here[0]
                    try:
                        existing = read_memory(f.path)
                    except UnreadableMemory:
                        existing = None
                    if existing is not None and content_of(existing) == content_of(p.memory):
                        res.skipped.append({"id": p.id, "location": f.row["location"]})
                    else:
                        why = "its file here is unreadable" if existing is None else f"they differ in {_difference(existing, p.memory)}"
                        res.conflicts.append({"id": p.id, "location": f.row["location"], "reason": why})
                    continue
                res.imported.append({"id": p.id, "location": p.location})
                if p.masked:
                    res.masked[p.id] = p.masked
                if res.dry_run:
                    continue
                src = st.source(p.location)
                target = write_memory(src.folder, p.memory, private=True)
                index = st.index_for(p.location)
                written.append((target, index))
                rows.setdefault(id(index), (index, []))[1].append((p.memory, src))
            for index, batch in rows.values():
                index.upsert_many(batch)
        except BaseException:
            for target, index in written:
                delete_file(target)
                index.remove(target)
            raise

"""`git memex import --from open-memex [DIR]`: the reference tool's personal memories and outbox
drafts, from its data root, through the same admission barrier as any import (docs/bundle.md).

The reference tool (TypeScript open-memex, its src/paths.ts and src/scope.ts) keeps everything
in one data root: `$OPEN_MEMEX_HOME` (or the older `$MY_O_MEMORY_HOME`), else `%APPDATA%/open-memex`
on Windows, else `$XDG_DATA_HOME/open-memex`, else `~/.local/share/open-memex`. Inside it,
`memories/<scope_key>/<id>.md`: `personal/` (and `user/`, its v1 name) for personal memories, and
`project__<name>__<12 hex>/` for each project's outbox drafts. Its `index.db` is never read.

Invariants:

- Only regular `*.md` files directly in those folders are read, each through the one safe reader
  (`core.files.read_bytes` with the reference's `memories/` folder as root): a link, FIFO or
  device is never followed or waited on; a linked folder is never entered.
- A file that cannot be taken is quarantined: reported with its reason, never written, never
  stopping the others. A folder that cannot be listed stops the run before anything is written.
- Each memory passes `bundle.plan_memory` (masking, validation, read-back) and keeps its id;
  the writes go through `bundle.apply_planned` (identical ids skipped, differing ids kept as
  they are here, all or nothing on a failure). Personal memories go to the personal folder of
  our data root, never a work tree; drafts only to this project's outbox, and only when their
  folder is this project's scope key; other projects' drafts are reported, not written.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import FAILED, MemexError, UsageError
from git_memex.upkeep.bundle import ImportResult, Planned

SOURCE = "open-memex"
PERSONAL_FOLDERS = ("personal", "user")
"""The reference's personal folders under `memories/`, in the order an id in both is taken."""
PROJECT_FOLDER_RE = re.compile(r"project__[A-Za-z0-9._-]{1,40}__[0-9a-f]{12}")
"""A project's outbox folder as the reference names it (src/scope.ts `scopeFromSeed`)."""


def reference_root() -> Path:
    """The reference tool's data root as it finds it (src/paths.ts `dataRoot`)."""
    for var in ("OPEN_MEMEX_HOME", "MY_O_MEMORY_HOME"):
        if os.environ.get(var):
            return Path(os.path.abspath(os.path.expanduser(os.environ[var])))
    if sys.platform == "win32":
        app = os.environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(app) / "open-memex"
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(os.path.abspath(xdg)) / "open-memex"


class _Quarantined(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@record
class OtherProject:
    scope_key: str
    project_name: str | None
    ids: list[str] = field(default_factory=list)


@record
class ReferenceImport:
    root: Path
    res: ImportResult
    quarantined: list[dict[str, str]] = field(default_factory=list)
    others: dict[str, OtherProject] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    in_repo: bool = True

    @property
    def summary(self) -> str:
        out = f"{self.res.summary}, {len(self.quarantined)} quarantined"
        n = sum(len(o.ids) for o in self.others.values())
        if n:
            out += f", {n} draft{'' if n == 1 else 's'} of other projects left"
        return out

    def other_lines(self, named_dir: str | None) -> list[str]:
        cmd = f"git memex import --from {SOURCE}" + (f" {named_dir}" if named_dir else "")
        where = "inside that project's clone" if self.in_repo else "inside the project's clone (this is not a repository)"
        return [f"left {len(o.ids)} draft{'' if len(o.ids) == 1 else 's'} of {o.project_name or 'another project'} "
                f"({o.scope_key}): run `{cmd}` {where}" for o in self.others.values()]

    def to_json(self) -> dict[str, Any]:
        doc = self.res.to_json()
        doc.update({
            "source": SOURCE,
            "root": str(self.root),
            "quarantined": self.quarantined,
            "other_projects": [{"scope_key": o.scope_key, "project_name": o.project_name, "ids": o.ids}
                               for o in self.others.values()],
            "ignored": self.ignored,
            "summary": self.summary,
        })
        return doc


def this_project_keys(ctx: Context) -> set[str]:
    """The reference's scope keys of this project: from the origin URL, and from the path (the key
    it used before the origin was set, or without one) of the main work tree and of this one."""
    from git_memex.core.project import reference_scope

    if ctx.repo is None:
        return set()
    keys = {ctx.reference_keys["scope_key"], reference_scope(None, ctx.project_root)[0]}
    keys.add(reference_scope(None, ctx.repo.work_tree)[0])
    return keys


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemexError(f"cannot read {path} ({exc.strerror}); nothing was imported", FAILED) from None


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        raise MemexError(f"cannot read the open-memex folder {folder} ({exc.strerror}); nothing was imported",
                         FAILED) from None


def _memory_entries(name: str, folder: Path, out: ReferenceImport) -> list[os.DirEntry[str]]:
    """The `*.md` entries of one reference memory folder; every other entry is listed in
    `out.ignored` with why it is not read (nothing is skipped without a line)."""
    keep = []
    for e in _entries(folder):
        rel = f"memories/{name}/{e.name}"
        if e.name.startswith("."):
            out.ignored.append(f"{rel} is a hidden file; not read")
        elif not e.name.endswith(".md"):
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            out.ignored.append(f"{rel} is a folder; only files directly in memories/{name}/ are read" if is_dir
                               else f"{rel} is not named <id>.md, so it is not a memory file; not read")
        else:
            keep.append(e)
    return keep


def _folders(root: Path, mem: Path, out: ReferenceImport) -> list[tuple[str, Path]]:
    """(folder name, path) of the reference's memory folders, personal ones first; every folder
    listed (so an unreadable one stops the run here, before anything is written)."""
    personal: list[tuple[str, Path]] = []
    projects: list[tuple[str, Path]] = []
    for e in _entries(mem):
        if e.name.startswith("."):
            continue
        rel = f"memories/{e.name}"
        if e.is_symlink():
            out.ignored.append(f"{rel} is a symbolic link; not followed")
            continue
        if not e.is_dir(follow_symlinks=False):
            continue
        if e.name in PERSONAL_FOLDERS:
            personal.append((e.name, Path(e.path)))
        elif PROJECT_FOLDER_RE.fullmatch(e.name):
            projects.append((e.name, Path(e.path)))
        else:
            out.ignored.append(f"{rel} is not a folder open-memex writes; not read")
    personal.sort(key=lambda f: PERSONAL_FOLDERS.index(f[0]))
    return personal + projects


def _check_root(ctx: Context, named: str | None) -> tuple[Path, Path]:
    """(data root, its memories/ folder), or one sentence: a missing folder exits 1, an unreadable
    one 2."""
    root = Path(os.path.abspath(os.path.expanduser(named))) if named else reference_root()
    how = "" if named else " (name its folder: `git memex import --from open-memex DIR`)"
    st = _lstat(root)
    if st is None:
        raise UsageError(f"{root} does not exist, so there is no open-memex data root to import{how}")
    try:
        real = Path(os.path.realpath(root))
    except OSError:
        real = root
    if not real.is_dir():
        raise UsageError(f"{root} is not a folder; name the open-memex data root (the folder that holds memories/)")
    if os.path.realpath(ctx.data_root) == str(real):
        raise UsageError(f"{root} is git-memex's own data root, not the open-memex one; nothing to import")
    mem = real / "memories"
    mst = _lstat(mem)
    if mst is None or not stat.S_ISDIR(mst.st_mode):
        if mst is not None and stat.S_ISLNK(mst.st_mode):
            raise MemexError(f"{mem} is a symbolic link, which import never follows; name the folder it points "
                             "to's parent, or copy it (nothing was imported)", FAILED)
        raise UsageError(f"{root} is not an open-memex data root: it has no memories/ folder; nothing was imported")
    return root, mem


def _reason(why: str, mid: str) -> str:
    """A reason `bundle.plan_memory` gave ("holds memory ID, which is not valid (…)"), said of the file."""
    rest = why.removeprefix(f"holds memory {mid}")
    for old, new in ((", which is ", "is "), (" whose text is empty", "has no text"), (" with ", "holds ")):
        if rest.startswith(old):
            return new + rest[len(old):]
    return why


def import_reference(ctx: Context, named: str | None, *, dry_run: bool = False) -> ReferenceImport:
    from git_memex.core.files import UnreadableMemory, parse_memory_bytes, read_bytes
    from git_memex.index.stores import opened
    from git_memex.upkeep.bundle import apply_planned, content_of, plan_memory

    root, mem = _check_root(ctx, named)
    out = ReferenceImport(root=root, res=ImportResult(dry_run=dry_run), in_repo=ctx.repo is not None)
    folders = _folders(root, mem, out)
    listed = [(name, path, _memory_entries(name, path, out)) for name, path in folders]
    mine = this_project_keys(ctx)
    repo_id = ctx.repo_id if ctx.repo is not None else None
    planned: list[Planned] = []
    taken: dict[str, tuple[str, Planned]] = {}

    def quarantine(rel: str, why: str) -> None:
        out.quarantined.append({"path": str(mem / rel), "reason": why})

    def fail(why: str) -> Exception:
        return _Quarantined(why)

    for name, _path, files in listed:
        personal = name in PERSONAL_FOLDERS
        for e in files:
            rel = f"{name}/{e.name}"
            try:
                m = parse_memory_bytes(read_bytes(e.path, root=mem), Path(e.path))
            except UnreadableMemory as exc:
                quarantine(rel, str(exc))
                continue
            scope = m.fm.get("scope")
            if personal and scope != "personal":
                quarantine(rel, f"has scope {scope!r} but lies in memories/{name}/, open-memex's personal folder")
                continue
            if not personal:
                if scope == "personal":
                    quarantine(rel, f"is a personal memory in the project folder memories/{name}/")
                    continue
                if name not in mine:
                    pname = m.fm.get("project_name")
                    other = out.others.setdefault(name, OtherProject(name, pname if isinstance(pname, str) else None))
                    other.ids.append(m.id)
                    continue
            try:
                p = plan_memory(ctx, rel, m.id, "personal" if personal else "outbox", m.fm, m.body, repo_id, fail)
            except _Quarantined as exc:
                quarantine(rel, _reason(exc.why, m.id))
                continue
            if m.id in taken:
                first, q = taken[m.id]
                if content_of(q.memory) != content_of(p.memory):
                    quarantine(rel, f"has the id of memories/{first}, which differs; that one was taken")
                continue
            taken[m.id] = (rel, p)
            planned.append(p)

    with opened(ctx, None) as st:
        if st.degraded:
            raise MemexError(st.degraded, FAILED)
        apply_planned(ctx, st, planned, out.res)
    if out.res.masked:
        n = len(out.res.masked)
        out.res.warnings.append(f"secrets were masked in {n} imported memor{'y' if n == 1 else 'ies'}; the open-memex "
                                f"files in {root} still hold them")
    return out

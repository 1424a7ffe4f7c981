"""v1 → v2 migration (docs/decisions.md, migration): explicit, previewable, with a backup, never silent."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from git_memex.core import frontmatter, model
from git_memex.core.context import Context
from git_memex.core.files import UnreadableMemory, atomic_write_text, delete_file, read_bytes
from git_memex.core.record import field, record

LEGACY_REPO_DIRS = (".my-o-memory", ".open-memex")
LEGACY_HOMES = (".my-o-memory", ".open-memex")


@record
class Conversion:
    source: Path
    target: Path
    changes: list[str]
    text: str  # the v2 file to write


@record
class Plan:
    conversions: list[Conversion] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    scanned: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "scanned": self.scanned,
            "conversions": [{"from": str(c.source), "to": str(c.target), "changes": c.changes} for c in self.conversions],
            "problems": self.problems,
        }


def plan_file(path: Path, target_dir: Path, personal_dir: Path | None = None) -> Conversion | None:
    """The conversion of one file, or None when it is already a v2 file in the right folder.

    `personal_dir` is given for a folder inside a work tree: a file that is (or becomes) a
    personal memory goes there, out of the repository, never stays beside the project's files."""
    fm, body = frontmatter.parse_bytes(read_bytes(path))
    target = target_dir / path.name
    if not model.is_v1(fm) and target == path and not (personal_dir is not None and fm.get("scope") == "personal"):
        return None
    out, changes = model.normalize(fm)
    if personal_dir is not None and out.get("scope") == "personal":
        target = personal_dir / path.name
    if target != path:
        changes.append(f"moved to {target}" + (" (a personal memory is never kept in the repository)"
                                                if target.parent == personal_dir else ""))
    if not changes:
        return None
    return Conversion(path, target, changes, frontmatter.serialize(out, body))


def _scan(folder: Path, target_dir: Path, plan: Plan, personal_dir: Path | None = None) -> None:
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.md")):
        if path.name.startswith("."):
            continue
        plan.scanned += 1
        try:
            conv = plan_file(path, target_dir, personal_dir)
        except (frontmatter.FrontmatterError, UnreadableMemory, OSError) as exc:
            plan.problems.append(f"{path}: {exc}")
            continue
        if conv is not None:
            if conv.target != conv.source and conv.target.exists():
                plan.problems.append(f"{path}: {conv.target} already exists; left both alone" + (
                    " (a personal memory does not belong in the repository: compare the two, then delete "
                    f"{path.name} from {folder})" if personal_dir is not None and conv.target.parent == personal_dir
                    else ""))
                continue
            plan.conversions.append(conv)


def build_plan(ctx: Context) -> Plan:
    plan = Plan()
    mem = ctx.data_root / "memories"
    _scan(mem / "user", ctx.personal_dir, plan)  # v1 personal folder
    for home_name in LEGACY_HOMES:
        _scan(Path.home() / home_name / "memories" / "user", ctx.personal_dir, plan)
    for folder in (ctx.personal_dir, ctx.outbox_dir, ctx.private_dir):
        _scan(folder, folder, plan)
    if ctx.repo is not None and ctx.memory_dir is not None:
        for legacy in LEGACY_REPO_DIRS:
            d = ctx.repo.work_tree / legacy
            if d != ctx.memory_dir:
                _scan(d, ctx.memory_dir, plan, ctx.personal_dir)
        _scan(ctx.memory_dir, ctx.memory_dir, plan, ctx.personal_dir)
    return plan


def apply(ctx: Context, plan: Plan) -> Path | None:
    """Back the originals up, then write the v2 files; returns the backup folder."""
    if not plan.conversions:
        return None
    from git_memex.core.data_root import prepare_data_root, private_mkdir

    prepare_data_root(ctx.data_root)
    backup = ctx.data_root / "backups" / time.strftime("migrate-%Y%m%dT%H%M%S", time.gmtime())
    private_mkdir(backup)  # the backups hold personal bodies: the user's alone
    for i, c in enumerate(plan.conversions):
        dest = backup / f"{i:04d}-{c.source.parent.name}-{c.source.name}"
        shutil.copy2(c.source, dest)
        os.chmod(dest, 0o600)  # copy2 copies the source's mode, often 0644
    atomic_write_text(backup / "MANIFEST.txt",
                      "".join(f"{i:04d}  {c.source}  →  {c.target}\n" for i, c in enumerate(plan.conversions)))
    for c in plan.conversions:
        private = c.target.is_relative_to(ctx.data_root)
        atomic_write_text(c.target, c.text, mode=0o600 if private else None)
        legacy_home = any(c.source.is_relative_to(Path.home() / h) for h in LEGACY_HOMES)
        if c.target != c.source and not legacy_home:
            delete_file(c.source)  # kept in the backup; legacy homes are left as they were
    return backup

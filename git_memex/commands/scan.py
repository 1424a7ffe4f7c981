"""`git memex scan [--staged] [PATH...]`: secret and format scan of memory files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from git_memex.errors import FAILED, USAGE

if TYPE_CHECKING:
    from git_memex.core.context import Context


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scan", help="scan memory files for secrets (prints path:line: rule, never the secret)",
                       description="Scan memory files for secrets and invalid frontmatter. With --staged, scan the "
                       "staged blobs (what a commit would record). Prints path:line: rule; exit 1 on findings.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files to scan (default: the memory folder)")
    p.add_argument("--staged", action="store_true", help="scan staged memory files instead of the work tree")
    p.add_argument("--secrets-only", action="store_true", help="skip the frontmatter checks")
    p.add_argument("--format-only", action="store_true", help="skip the secret checks")
    p.add_argument("--memory-files", action="store_true",
                   help="of the PATHs given, check only the files in the memory folder (memex.memoryDir) or its subfolders; "
                   "what the pre-commit framework's hooks use, so they follow a configured folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.core.context import load_context
    from git_memex.errors import MemexError
    from git_memex.secrets.scan import check_bytes

    ctx = load_context()
    kw = {"secrets": not args.format_only, "fmt": not args.secrets_only, "patterns": ctx.redact_patterns}
    findings = []
    if args.staged:
        from git_memex.agents.approval_record import staged_record_problems
        from git_memex.core.gitcmd import is_team_record_path, staged_memory_changes
        from git_memex.secrets.scan import dangling_pointers, size_findings

        work_tree = ctx.require_repo("scan --staged").work_tree
        try:  # the index GIT_INDEX_FILE names (as in a pre-commit hook), else the repository's own
            both, deleted, oversized = staged_memory_changes(work_tree, ctx.memory_dir_rel, records=True)
            findings.extend(size_findings(oversized))  # known from the blob's size; never read, nor scanned
            staged = [(p, d) for p, d in both if not is_team_record_path(p, ctx.memory_dir_rel)]
            for path, data in both:  # .compatible and .approvals JSON, as the pre-commit hook checks them
                if is_team_record_path(path, ctx.memory_dir_rel):
                    findings.extend(staged_record_problems(path, data, ctx.memory_dir_rel, ctx.redact_patterns,
                                                           secrets=not args.format_only, form=not args.secrets_only))
            for path, data in staged:
                findings.extend(check_bytes(path, data, **kw))
            if kw["fmt"]:  # what the pre-commit hook also refuses: a successor the commit lacks
                findings.extend(dangling_pointers(work_tree, ctx.memory_dir_rel, staged, deleted,
                                                  patterns=ctx.redact_patterns, reference_keys=ctx.reference_keys))
        except OSError as exc:
            raise MemexError(f"{exc}; nothing was scanned", FAILED) from None
    else:
        paths = [Path(p) for p in args.paths]
        if args.memory_files and paths:
            paths = _memory_files(ctx, paths)
            if not paths:  # none of the given files is a memory file: nothing to check
                return 0
        if not paths:
            folder = ctx.memory_dir
            if folder is None:
                raise MemexError("no files given and no repository memory folder here", USAGE)
            paths = sorted(folder.rglob("*.md"))  # subfolders too (an org repo's engineering/, …)
            if kw["secrets"]:  # and the record folders' JSON (secrets only: they have no frontmatter)
                from git_memex.core.gitcmd import RECORD_FOLDERS

                paths += sorted(p for f in RECORD_FOLDERS for p in (folder / f).glob("*.json"))
        from git_memex.core.files import UnreadableMemory, read_bytes
        from git_memex.secrets.scan import Finding

        for p in paths:
            try:  # the one safe reader: a FIFO, a link or a huge file is a finding, never a hang
                data = read_bytes(p)
            except UnreadableMemory as exc:
                if not p.exists() and not p.is_symlink():
                    raise MemexError(f"cannot read {p} ({exc})", USAGE) from None
                findings.append(Finding(str(p), 0, f"unreadable: {exc}"))
                continue
            if p.suffix == ".json" and p.parent.name in (".compatible", ".approvals"):
                from git_memex.secrets.scan import record_problems

                findings.extend(record_problems(str(p), data, ctx.redact_patterns) if kw["secrets"] else [])
                continue
            findings.extend(check_bytes(str(p), data, **kw))
    for f in findings:
        print(str(f))
    if findings:
        print(f"git-memex: {len(findings)} finding(s)", file=sys.stderr)
        return 1
    return 0


def _memory_files(ctx: Context, paths: list[Path]) -> list[Path]:
    """The given paths that are `<memoryDir>/…/<name>.md` of this repository (relative paths are
    read against the current folder, as the pre-commit framework passes them from the root)."""
    folder = ctx.memory_dir
    if folder is None:
        return []
    try:
        root = Path(folder).resolve()
    except OSError:
        return []
    out = []
    for p in paths:
        try:
            parent = p.absolute().parent.resolve()
        except OSError:
            continue
        if p.suffix == ".md" and (parent == root or root in parent.parents):
            out.append(p)
    return out

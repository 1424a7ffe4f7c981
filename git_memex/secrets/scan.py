"""Checks a memory file must pass before it may enter a commit: format, scope, secrets.

Used by the pre-commit hook (on staged blobs), `git memex scan`, `submit` (whose
pygit2 commit runs no hooks) and the pre-commit framework hooks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from git_memex.core import frontmatter
from git_memex.core.model import SAFE_ID_RE, ValidationError, from_parsed, is_valid_id, validate
from git_memex.core.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    secret: bool = False  # a secret's rule (never the secret) rather than a format problem

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}"


def _line_of(text: str, key: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith(f"{key}:"):
            return i
    return 1


def check_secrets(path: str, text: str, patterns: Sequence[str] = ()) -> list[Finding]:
    """Secrets in the text as stored; `patterns` are the team's (`Context.redact_patterns`)."""
    from git_memex.secrets.redact import scan_text

    return [Finding(path, f.line, f.rule, True) for f in scan_text(text, patterns)]


def check_format(path: str, text: str, *, in_repo: bool = True) -> list[Finding]:
    """No unresolved merge conflict; frontmatter that parses and validates; in a repo, never
    personal or private."""
    from git_memex.core.files import conflict_marker_line

    conflict = conflict_marker_line(text)
    if conflict is not None:  # the rest would only report the markers' side effects
        return [Finding(path, conflict, "conflict-markers (an unfinished merge; run `git memex resolve`, after "
                        f"`git checkout -m -- {path}` if it was already `git add`ed)")]
    found = _format_findings(path, text, in_repo)
    if not found:
        return found
    # admission.mask_text's masking (admission imports scan, so not through it)
    from git_memex.secrets.redact import redact

    # a format finding quotes what the file holds (`invalid (importance 'ghp_…' …)`): each is masked
    return [Finding(f.path, f.line, redact(f.rule).text) for f in found]


def _format_findings(path: str, text: str, in_repo: bool) -> list[Finding]:
    try:
        fm, body = frontmatter.parse(text)
    except frontmatter.FrontmatterError as exc:
        return [Finding(path, 1, f"invalid-frontmatter ({exc})")]
    out: list[Finding] = []
    name = path.rsplit("/", 1)[-1]
    stem = name[:-3] if name.endswith(".md") else name
    mid = fm.get("id")
    if not is_valid_id(mid) or str(mid) != stem:
        out.append(Finding(path, _line_of(text, "id"), f"id-mismatch (id {mid!r} must equal the file name {stem})"))
    m = from_parsed(dict(fm), body)
    if in_repo:
        if m.fm.get("scope") == "personal":
            out.append(Finding(path, _line_of(text, "scope"), "personal-memory-in-repo (personal memories never leave this machine)"))
        if m.fm.get("visibility") == "private":
            out.append(Finding(path, _line_of(text, "visibility"), "private-memory-in-repo (private memories never leave this machine)"))
    try:
        validate(m)
    except ValidationError as exc:
        out.append(Finding(path, 1, f"invalid ({exc})"))
    return out


def check_text(path: str, text: str, *, secrets: bool = True, fmt: bool = True, in_repo: bool = True,
               patterns: Sequence[str] = ()) -> list[Finding]:
    out: list[Finding] = []
    if fmt:
        out.extend(check_format(path, text, in_repo=in_repo))
    if secrets:
        out.extend(check_secrets(path, text, patterns))
    return sorted(out, key=lambda f: (f.path, f.line, f.rule))


def check_bytes(path: str, data: bytes, **kw: Any) -> list[Finding]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Finding(path, 1, f"invalid-frontmatter (file is not valid UTF-8 at byte {exc.start})")]
    return check_text(path, text, **kw)


# `superseded_by: ID` as the writer puts it (quoted by hand at most); `null` and `~` are no id
_SUCCESSOR_RE = re.compile(r"^superseded_by:[ \t]*['\"]?([0-9A-Za-z][0-9A-Za-z_-]{0,63})['\"]?[ \t]*$", re.M)


def successor_named(text: str) -> tuple[str, int] | None:
    """The id a memory file's frontmatter names in `superseded_by`, and its line; None when none."""
    end = text.find("\n---", 3)
    head = text[: end if end > 0 else len(text)]
    m = _SUCCESSOR_RE.search(head)
    if m is None or m.group(1) in ("null", "Null", "NULL"):
        return None
    return m.group(1), head.count("\n", 0, m.start()) + 1


def dangling_pointers(work_tree: Path, memory_dir: str, staged: list[tuple[str, bytes]],
                      deleted: list[str]) -> list[Finding]:
    """Memory files the commit would record with a `superseded_by` naming a memory the commit
    does not hold. Such a file hides its memory from every teammate (superseded) and shows them
    nothing in its place. Costs a git call only when a staged file names a successor (one
    `ls-files`) or a memory file is deleted (one `grep --cached`). Raises OSError when git
    cannot answer."""
    from git_memex.core.gitcmd import indexed_lines_matching, indexed_paths

    folder = memory_dir.rstrip("/")
    out: list[Finding] = []
    named: dict[str, list[tuple[str, int]]] = {}
    for path, data in staged:
        found = successor_named(data.decode("utf-8", "replace"))
        if found is not None:
            named.setdefault(f"{folder}/{found[0]}.md", []).append((path, found[1]))
    if named:
        present = indexed_paths(work_tree, list(named))
        if present is None:
            raise OSError("git could not list the memory files of the commit")
        if any(succ not in present for succ in named):
            # the successor may sit in a subfolder (an org repo's engineering/, decisions/…)
            everything = indexed_paths(work_tree, [folder + "/"])
            if everything is None:
                raise OSError("git could not list the memory files of the commit")
            ids = {p.rsplit("/", 1)[-1][:-3] for p in everything if p.endswith(".md")}
            present |= {succ for succ in named if succ.rsplit("/", 1)[-1][:-3] in ids}
        for succ, users in named.items():
            if succ in present:
                continue
            sid = succ.rsplit("/", 1)[-1][:-3]
            for path, line in users:
                out.append(Finding(path, line, f"dangling-superseded-by ({sid} is not in this commit, so teammates "
                                   f"would lose this memory and get nothing in its place; `git memex submit {sid}` "
                                   f"commits both, or stage {succ})"))
    gone = {p.rsplit("/", 1)[-1][:-3] for p in deleted}
    gone = {g for g in gone if SAFE_ID_RE.match(g)}
    if gone:  # files this commit leaves as they were, naming a memory it deletes
        pattern = "^superseded_by:[[:space:]]*['\"]?(" + "|".join(sorted(gone)) + ")['\"]?[[:space:]]*$"
        lines = indexed_lines_matching(work_tree, folder, pattern)
        if lines is None:
            raise OSError("git could not search the memory files of the commit")
        staged_paths = {p for p, _d in staged}
        for path, line, text in lines:
            found = successor_named(text)
            if path in staged_paths or found is None or found[0] not in gone:
                continue  # a staged file was checked above, against what the commit holds
            out.append(Finding(path, line, f"dangling-superseded-by (this commit deletes {found[0]}, which this "
                               "memory names as its successor, so teammates would lose both; keep it, or point "
                               "superseded_by at the memory that replaces it)"))
    return out

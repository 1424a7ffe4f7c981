"""Checks a memory file must pass before it may enter a commit: format, scope, secrets.

Used by the pre-commit hook (on staged blobs), `git memex scan`, `submit` (whose
pygit2 commit runs no hooks) and the pre-commit framework hooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from git_memex.core import frontmatter
from git_memex.core.model import ValidationError, from_parsed, is_valid_id, validate
from git_memex.core.record import record


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
               patterns: Sequence[str] = ()) -> list[Finding]:  # fmt: skip
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

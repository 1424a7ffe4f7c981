"""Checks a memory file must pass before it may enter a commit: format, scope, secrets.

Used by the pre-commit hook (on staged blobs), `git memex scan`, `submit` (whose
pygit2 commit runs no hooks) and the pre-commit framework hooks.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from git_memex.core import frontmatter
from git_memex.core.model import SAFE_ID_RE, Memory, ValidationError, validate
from git_memex.core.record import record
from git_memex.secrets.rx import Rx

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


def check_format(path: str, text: str, *, in_repo: bool = True, judged: _Judged | None = None) -> list[Finding]:
    """No unresolved merge conflict; a file the reader accepts (`core.files.judge_bytes`, the one
    every command reads memory files with: same function, same limits, its quarantine reason as
    the finding); in a repo, never personal or private. `judged`: the reader's answer on `text`
    when the caller has it (`check_text` parses a file once for all its checks)."""
    from git_memex.core.files import conflict_marker_line

    conflict = conflict_marker_line(text)
    if conflict is not None:  # the rest would only report the markers' side effects
        return [Finding(path, conflict, "conflict-markers (an unfinished merge; run `git memex resolve`, after "
                        f"`git checkout -m -- {path}` if it was already `git add`ed)")]
    found = _format_findings(path, text, in_repo, judged or _Judged(path, text))
    if not found:
        return found
    # admission.mask_text's masking (admission imports scan, so not through it)
    from git_memex.secrets.redact import redact

    # a format finding quotes what the file holds (`invalid (importance 'ghp_…' …)`): each is masked
    # (not the private-span finding: its words are ours, and redact would strip from its "<private>")
    return [f if f.secret else Finding(f.path, f.line, redact(f.rule).text) for f in found]


class _Judged:
    """The reader's answer on a file's text (`core.files.judge_bytes`), asked at most once per
    `check_text`. `memory()` returns the Memory, or the reader's refusal as an UnreadableMemory
    (raised by `memory`). The check of YAML escapes does not use it: it reads the mapping as
    parsed, before normalisation (`_escaped_secrets`)."""

    __slots__ = ("_answer", "path", "text")

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self._answer: Any = None

    def memory(self) -> Any:
        if self._answer is None:
            from git_memex.core.files import UnreadableMemory, judge_bytes

            try:
                self._answer = judge_bytes(self.text.encode("utf-8", "surrogatepass"), self.path.rsplit("/", 1)[-1])
            except UnreadableMemory as exc:
                self._answer = exc
        if isinstance(self._answer, Exception):
            raise self._answer
        return self._answer


def _format_findings(path: str, text: str, in_repo: bool, judged: _Judged) -> list[Finding]:
    from git_memex.core.files import UnreadableMemory

    try:
        m = judged.memory()
    except UnreadableMemory as exc:
        return [reader_finding(path, text, str(exc))]
    out: list[Finding] = []
    if in_repo:
        if m.fm.get("scope") == "personal":
            out.append(Finding(path, _line_of(text, "scope"), "personal-memory-in-repo (personal memories never leave this machine)"))
        if m.fm.get("visibility") == "private":
            out.append(Finding(path, _line_of(text, "visibility"), "private-memory-in-repo (private memories never leave this machine)"))
        for key in ("supersedes", "superseded_by"):
            if m.fm.get(key) == m.id:  # a ring of one: it would hide itself (search/chains.py)
                out.append(Finding(path, _line_of(text, key), f"self-supersede (the memory names itself in {key}; a "
                                   "memory never replaces itself: remove the line)"))
        span = _private_span_line(text)
        if span is not None:
            out.append(Finding(path, span, "private-span-in-repo (a <private> part never leaves this machine; remove "
                               "it, or let git memex write the text, which leaves such parts out)", True))
    try:  # on a copy: `validate` may set a field (a rule's instruction_state)
        validate(Memory(fm=dict(m.fm), body=m.body))
    except ValidationError as exc:
        out.append(Finding(path, 1, f"invalid ({exc})"))
    return out


_ID_REASONS = ("has no id", "has an id", "has id ")


def reader_finding(path: str, text: str, reason: str) -> Finding:
    """The finding for a file the reader refuses, with its reason: `too-large`, `id-mismatch`, or
    `invalid-frontmatter`, on the line of the field the reason names when there is one."""
    if reason.startswith("is larger than"):
        return Finding(path, 1, f"too-large (file {reason}, the limit of a memory file)")
    if reason.startswith(_ID_REASONS):
        return Finding(path, _line_of(text, "id"), f"id-mismatch ({reason})")
    key = reason.split(" ", 1)[0]
    return Finding(path, _line_of(text, key) if key.isidentifier() else 1, f"invalid-frontmatter ({reason})")


def size_findings(sized: list[tuple[str, int]]) -> list[Finding]:
    """The `too-large` finding of each (path, size in bytes) over the reader's limit
    (`core.files.refuse_size`, its reason word for word), known from the size alone."""
    from git_memex.core.files import UnreadableMemory, refuse_size

    out: list[Finding] = []
    for path, size in sized:
        try:
            refuse_size(size)
        except UnreadableMemory as exc:
            out.append(reader_finding(path, "", str(exc)))
    return out


def _private_span_line(text: str) -> int | None:
    """The line of the first `<private>` part in a file's text (what every write of git memex
    leaves out, `redact.strip_private`), or None. Costs a regex only when the text says "private"."""
    if "private" not in text.lower():
        return None
    from git_memex.secrets.redact import strip_private

    stripped, spans = strip_private(text)
    if not spans:
        return None
    at = next((i for i, (a, b) in enumerate(zip(text, stripped, strict=False)) if a != b), len(stripped))
    return text.count("\n", 0, at) + 1


def check_text(path: str, text: str, *, secrets: bool = True, fmt: bool = True, in_repo: bool = True,
               patterns: Sequence[str] = ()) -> list[Finding]:
    if fmt and len(text) > frontmatter.MAX_FILE_BYTES:  # refused by its size alone: never scanned further
        return size_findings([(path, len(text))])
    out: list[Finding] = []
    judged = _Judged(path, text)  # the reader asked at most once
    if fmt:
        out.extend(check_format(path, text, in_repo=in_repo, judged=judged))
    if secrets:
        out.extend(check_secrets(path, text, patterns))
        out.extend(_escaped_secrets(path, text, patterns))
    return sorted(out, key=lambda f: (f.path, f.line, f.rule))


def _escaped_secrets(path: str, text: str, patterns: Sequence[str]) -> list[Finding]:
    """Secrets, and `<private>` parts, that the frontmatter spells with YAML escapes
    (``"\\u0067hp_…"``, ``"gh\\x70_…"``, a double-quoted line joined by ``\\``): the reader decodes
    them, so `show`, the index and every output would hold the token that the text as stored does
    not show.

    Invariant: this reads exactly what the reader reads. The frontmatter is cut by the reader's own
    `frontmatter.split` (its BOM and line-end handling, its fence ``^---[ \\t]*$``), and the strings
    are those of the mapping `frontmatter.parse` builds from it (PyYAML decoding the escapes, as for
    every reader of the file) before any normalisation rewrites a field: every key and every value
    at every depth (`secrets.fields.strings_in`, the walk the admission barrier masks with), and
    each top-level field dumped plainly as the reader holds it, so a secret whose key or context
    is the escaped part is found in that context (what the text as stored shows is left to the
    text check: a finding of the same rule and value there is not repeated). Only a
    frontmatter the fast reader (`core.plainyaml.fast_frontmatter`) declines is parsed for this:
    one it accepts is the plain shape whose every value is its text as written (no escape, block
    scalar, explicit `?` key, nested mapping), the shape every writer produces, so the hook's cost
    on those is unchanged. Each decoded string that the frontmatter does not hold as written is
    scanned too, reported at the line of its top-level key. Not the reader's Memory
    (`_Judged`): normalisation overwrites fields (a bad `type` resets `priority`, `source`…), and
    what it dropped was still in the file that would be committed."""
    try:
        head, _body = frontmatter.split(text)
    except frontmatter.FrontmatterError:  # the format check names why
        return []
    from git_memex.core.plainyaml import fast_frontmatter

    fast = fast_frontmatter(head) if len(head) <= frontmatter.MAX_FRONTMATTER_BYTES else None
    if fast is not None:  # the plain shape every writer produces: each value is its text as written
        return _beside_keys(path, text, fast, patterns)
    from git_memex.secrets.fields import strings_in
    from git_memex.secrets.redact import scan_text

    try:
        raw, _ = frontmatter.parse(text)
    except frontmatter.FrontmatterError:  # the format check names why
        return []
    import yaml

    # what the text as stored shows: a secret found here is the text check's finding already
    plain = {(f.rule, head[f.start : f.end]) for f in scan_text(head, patterns)}
    how = "written with YAML escapes" if "\\" in head else "as YAML reads the frontmatter"
    from git_memex.secrets.keys import key_lines

    out: list[Finding] = _beside_keys(path, text, raw, patterns)
    lines = key_lines(text)
    for key, value in raw.items():
        line = lines.get(key, 1)
        rules: list[str] = []
        # each field as the reader holds it, written plainly: a secret whose context is spelled
        # with escapes (`"p\\x61ssword": Hunter2024x`) is found in its decoded context
        dumped = yaml.safe_dump({key: value}, allow_unicode=True, sort_keys=False, width=1 << 30)
        rules += [f.rule for f in scan_text(dumped, patterns) if (f.rule, dumped[f.start : f.end]) not in plain]
        for piece in strings_in({key: value}):
            if piece in head:
                continue
            rules += [f.rule for f in scan_text(piece, patterns)][:1]
            if _private_span_line(piece) is not None:
                out.append(Finding(path, line, f"private-span-in-repo (a <private> part {how}; a <private> part "
                                   "never leaves this machine: remove it)", True))
        out.extend(Finding(path, line, f"{rule} ({how})", True) for rule in dict.fromkeys(rules))
    return out


def _beside_keys(path: str, text: str, fm: dict[str, Any], patterns: Sequence[str]) -> list[Finding]:
    """Secrets a string of the frontmatter is only beside its key: each string `keys.map_beside_keys`
    reads beside a key (under a key that is not the protocol's own, a string value or a list
    item, at any depth) read as ``name: string`` for its key, else the key of the mapping it is in
    (``password:`` then ``- Sunshine2024``, a block list the text check does not read as an
    assignment; a key with a trailing space): what the output paths mask (`admission.mask_fields`
    walks the same strings). A file holding only the protocol's keys costs nothing here. One
    detector pass a string."""
    from git_memex.secrets.keys import key_lines, map_beside_keys
    from git_memex.secrets.redact import scan_text

    out: list[Finding] = []
    lines: list[dict[str, int]] = []  # each key's line, read once at the first finding

    def find(names: tuple[str, ...], item: str, top: str) -> str:
        for name in names:
            lead = f"{name}: "
            rules = [f.rule for f in scan_text(lead + item, patterns) if f.end > len(lead)]
            if rules:
                if not lines:
                    lines.append(key_lines(text))
                out.append(Finding(path, lines[0].get(top, 1), f"{rules[0]} (beside its key {names[0]!r} in the "
                                   "frontmatter)", True))
                break
        return item

    map_beside_keys(fm, find)
    return out


def check_bytes(path: str, data: bytes, **kw: Any) -> list[Finding]:
    """`check_text` on a file's bytes; over the size limit (format checks on), the one finding
    that says so (the bytes are neither decoded nor scanned)."""
    if kw.get("fmt", True) and len(data) > frontmatter.MAX_FILE_BYTES:
        return size_findings([(path, len(data))])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Finding(path, 1, f"invalid-frontmatter (file is not valid UTF-8 at byte {exc.start})")]
    return check_text(path, text, **kw)


def commit_problems(path: str, data: bytes, patterns: Sequence[str] = ()) -> list[Finding]:
    """Why a memory file may not enter a commit: the one check of everything a commit records in
    the memory folder, whoever makes the commit. The pre-commit hook runs it on each staged blob,
    `scan --staged` likewise, and `submit` (whose pygit2 commit runs no hooks) on each draft and
    each companion it commits: the full reader and validation, no conflict markers, never
    `scope: personal` or `visibility: private`, no `<private>` part, no secret (built-in rules and
    the team's `patterns`). Empty when the file may be committed."""
    return check_bytes(path, data, patterns=patterns)


def record_problems(path: str, data: bytes, patterns: Sequence[str] = ()) -> list[Finding]:
    """Why a record file (`<memoryDir>/.compatible/*.json`, `<memoryDir>/.approvals/*.json`: JSON a
    person's command writes, with a note or a name in it) may not enter a commit: a secret in it
    (built-in rules and the team's `patterns`), as for a memory file. Its text is read as written
    (a hand-written record may hold anything), undecodable bytes being one finding."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Finding(path, 1, f"unreadable record (not valid UTF-8 at byte {exc.start})")]
    return check_secrets(path, text, patterns)


# What `git memex supersede` changes in the memory it replaces (`ops.supersede`, `ops._rewrite`):
# the only change `submit` commits in a file beside its drafts. The reference tool's keys
# (`Context.reference_keys`) may be filled in where the committed file lacks them.
SUPERSEDE_MARKING = frozenset({"status", "superseded_by", "updated_at", "revision"})
# What a review since the last commit wrote in the work tree (`git memex promote` of the memory,
# then `supersede` before any commit): taken too. It grants nothing by itself: an instruction is
# served only with an approval record binding a person to its content (agents/approval_record).
REVIEW_MARKING = frozenset({"review_state", "approved_by", "review_history", "review_note"})


def companion_problem(path: str, head: bytes | None, data: bytes, successors: Collection[str], *,
                      patterns: Sequence[str] = (), reference_keys: Mapping[str, str] | None = None) -> str | None:
    """Why `submit` may not commit `data`, the work tree's `path`, beside drafts `successors` that
    it names in `superseded_by`; None when it may. `head` is what HEAD holds there (None: nothing).

    Taken only when the file passes `commit_problems` and its one change against HEAD is the
    supersede marking: status `superseded`, `superseded_by` one of `successors`, `updated_at` and
    `revision` (`SUPERSEDE_MARKING`), the fields a review since the last commit wrote
    (`REVIEW_MARKING`), and a reference key (`Context.reference_keys`) filled in with
    its value where the committed file lacks it. Nothing else may differ: not a
    field, not the text, not a comment or a line the reader does not see. The answer reads after
    the file's path: "changes its text as well as …"."""
    if head is None:
        return "is not in the repository, and submit commits a file beside its drafts only as the supersede marking of a committed memory"
    found = commit_problems(path, data, patterns)
    if found:
        f = found[0]
        what = "holds a secret" if f.secret and not f.rule.startswith("private-span") else "fails a check"
        return f"{what} ({f.rule.split(' (', 1)[0]}, line {f.line}), so it may not be committed"
    from git_memex.core.files import UnreadableMemory, parse_memory_bytes

    try:
        old = parse_memory_bytes(head, Path(path))
    except UnreadableMemory as exc:
        return f"was committed as a file the reader refuses ({exc}), so its change cannot be checked"
    try:
        new = parse_memory_bytes(data, Path(path))
    except UnreadableMemory as exc:
        return f"is not a readable memory file ({exc})"
    nxt = new.fm.get("superseded_by")
    if new.fm.get("status") != "superseded" or nxt not in successors:
        return (f"names {nxt} in superseded_by but is not marked superseded (status: {new.fm.get('status')})"
                if nxt in successors else "is not marked superseded by a memory being submitted")
    if new.body != old.body:
        return "changes its text as well as being marked superseded"
    filled = {k for k, v in (reference_keys or {}).items() if not old.fm.get(k) and new.fm.get(k) in (None, v)}
    for key in sorted({*old.fm, *new.fm}, key=str):
        if key not in SUPERSEDE_MARKING | REVIEW_MARKING and key not in filled and old.fm.get(key) != new.fm.get(key):
            return f"changes its {key} field as well as being marked superseded"
    text = data.decode("utf-8")
    raw_fm, raw_body = frontmatter.parse(text)
    if text != frontmatter.serialize(raw_fm, raw_body) and not _only_marking_lines(head, text, raw_fm, {
            *SUPERSEDE_MARKING, *REVIEW_MARKING, *filled}):
        return "changes lines the reader does not see (a comment or hand formatting) as well as being marked superseded"
    return None


def _only_marking_lines(head: bytes, text: str, fm: dict[str, Any], keys: set[str]) -> bool:
    """Whether every line that differs between the two texts is a line of one of `keys`, each
    added line exactly as git memex writes that key's value (so no comment rides on one)."""
    import difflib

    written = {frontmatter.serialize({k: fm[k]}, "").split("\n")[1] for k in keys if k in fm}
    for line in difflib.ndiff(head.decode("utf-8", "replace").splitlines(), text.splitlines()):
        if line.startswith("+ ") and line[2:] not in written:
            return False
        if line.startswith("- ") and line[2:].split(":", 1)[0] not in keys:
            return False
    return True


# `superseded_by: ID` as the writer puts it (quoted by hand at most); `null` and `~` are no id
_SUCCESSOR_RE = Rx(r"^superseded_by:[ \t]*['\"]?([0-9A-Za-z][0-9A-Za-z_-]{0,63})['\"]?[ \t]*$", re.M)


_SUPERSEDES_RE = Rx(r"^supersedes:[ \t]*['\"]?([0-9A-Za-z][0-9A-Za-z_-]{0,63})['\"]?[ \t]*$", re.M)


def replaced_named(text: str) -> tuple[str, int] | None:
    """The id a memory file's frontmatter names in `supersedes`, and its line; None when none."""
    end = text.find("\n---", 3)
    head = text[: end if end > 0 else len(text)]
    m = _SUPERSEDES_RE.search(head)
    if m is None or m.group(1) in ("null", "Null", "NULL"):
        return None
    return m.group(1), head.count("\n", 0, m.start()) + 1


def supersede_rings(work_tree: Path, memory_dir: str, staged: list[tuple[str, bytes]],
                    limit: int = 64) -> list[Finding]:
    """Staged memory files whose `supersedes` leads, through what the commit records, back to
    themselves: two files naming each other, or a longer ring (a file naming itself is
    `self-supersede`, found by the format checks). Such a ring counts for none of its memories
    (search/chains.py), so the commit is refused rather than recording a chain that means nothing.
    Costs a `cat-file` per step only when a staged file names a memory the commit does not
    stage (one step for an ordinary supersede). Raises OSError when git cannot answer."""
    from git_memex.core.gitcmd import indexed_blobs

    folder = memory_dir.rstrip("/")
    names: dict[str, str | None] = {}  # id -> the id it supersedes, as the commit records it
    where: dict[str, tuple[str, int]] = {}
    for path, data in staged:
        mid = path.rsplit("/", 1)[-1][:-3]
        found = replaced_named(data.decode("utf-8", "replace"))
        names[mid] = found[0] if found else None
        if found:
            where[mid] = (path, found[1])
    todo = {v for v in names.values() if v and v not in names}
    for _ in range(limit):
        if not todo:
            break
        got = indexed_blobs(work_tree, [f"{folder}/{t}.md" for t in sorted(todo)])
        if got is None:
            raise OSError("git could not read the memory files of the commit")
        for t in todo:
            blob = got.get(f"{folder}/{t}.md")
            found = replaced_named(blob.decode("utf-8", "replace")) if blob is not None else None
            names[t] = found[0] if found else None
        todo = {v for v in names.values() if v and v not in names}
    out: list[Finding] = []
    for mid, (path, line) in sorted(where.items()):
        ring, cur = [mid], names.get(mid)
        while cur and cur not in ring and len(ring) <= limit:
            ring.append(cur)
            cur = names.get(cur)
        if cur == mid and len(ring) > 1:
            out.append(Finding(path, line, f"supersede-cycle ({' → '.join([*ring, mid])}: each names the next in "
                               "supersedes, so the links count for none of them; remove the one that is wrong)"))
    return out


def _claimed_review(text: str) -> tuple[str, int] | None:
    """The review state a memory file's frontmatter claims, when approved or published, and its
    line, as the project's frontmatter parser reads the field (`core.model.review_recorded` reads
    the history the same way): a comment after the value, a `!!str` tag, a quoted key, CRLF line
    ends or a YAML escape all say what the parser says. The substring test in front is only a
    cheap prefilter that cannot miss: a key or value the parser reads as ``review_state`` and
    ``approved``/``published`` either holds those words literally or is spelled with a backslash
    escape of a double-quoted scalar. None for a file the parser refuses (the format checks name it)."""
    from git_memex.core.model import REVIEWED_STATES

    if "\\" not in text and ("review_state" not in text or ("approved" not in text and "published" not in text)):
        return None
    try:
        state = frontmatter.parse(text)[0].get("review_state")
    except (frontmatter.FrontmatterError, ValueError):
        return None
    if not isinstance(state, str) or state not in REVIEWED_STATES:
        return None
    at = text.find("review_state")
    return state, (text.count("\n", 0, at) + 1 if at >= 0 else 1)


def unreviewed_claims(work_tree: Path, staged: list[tuple[str, bytes]]) -> list[Finding]:
    """Staged memory files claiming a review no step records: a file the commit adds, or one whose
    `review_state` it changes, saying approved or published without the review_history step to it
    (`core.model.review_recorded`: what `promote`, `pr-status --apply` and `propose --local-approve`
    write with each step; a hand edit writes none). Such a claim ranks as in review anyway
    (`core.model.standing`); refusing it keeps the repository's files honest. A file whose claim
    the commit leaves as HEAD has it (one committed before review histories, touched for another
    reason) is not this commit's claim and passes. Costs one `cat-file` only when a staged file
    makes such a claim. Raises OSError when git cannot answer."""
    from git_memex.core import frontmatter
    from git_memex.core.gitcmd import head_blobs
    from git_memex.core.model import review_recorded

    claims: list[tuple[str, str, int]] = []
    for path, data in staged:
        text = data.decode("utf-8", "replace")
        found = _claimed_review(text)
        if found is None:
            continue
        if not review_recorded(frontmatter.parse(text)[0], found[0]):
            claims.append((path, found[0], found[1]))
    if not claims:
        return []
    head = head_blobs(work_tree, [p for p, _s, _l in claims])
    if head is None:
        raise OSError("git could not read the committed memory files")
    out: list[Finding] = []
    for path, state, line in claims:
        before = head.get(path)
        was = _claimed_review(before.decode("utf-8", "replace")) if before is not None else None
        if was is not None and was[0] == state:
            continue
        out.append(Finding(path, line, f"unreviewed-claim (review_state: {state}, but its review_history records no "
                           "step to it, so no one reviewed it here; `git memex promote ID` records each step)"))
    return out


def successor_named(text: str) -> tuple[str, int] | None:
    """The id a memory file's frontmatter names in `superseded_by`, and its line; None when none."""
    end = text.find("\n---", 3)
    head = text[: end if end > 0 else len(text)]
    m = _SUCCESSOR_RE.search(head)
    if m is None or m.group(1) in ("null", "Null", "NULL"):
        return None
    return m.group(1), head.count("\n", 0, m.start()) + 1


def dangling_pointers(work_tree: Path, memory_dir: str, staged: list[tuple[str, bytes]],
                      deleted: list[str], *, patterns: Sequence[str] = (),
                      reference_keys: Mapping[str, str] | None = None) -> list[Finding]:
    """Memory files the commit would record with a `superseded_by` naming a memory the commit
    does not hold. Such a file hides its memory from every teammate (superseded) and shows them
    nothing in its place. Costs a git call only when a staged file names a successor (one
    `ls-files`) or a memory file is deleted (one `grep --cached`), and one more (`cat-file`)
    when such a successor is missing, for the hint. Raises OSError when git cannot answer.

    The hint sends the person to `git memex submit SUCCESSOR` only when submit would take the
    file with it (`companion_problem` of the file as the work tree holds it; `patterns` and
    `reference_keys` as submit uses them); otherwise it says what stops that."""
    from git_memex.core.gitcmd import head_blobs, indexed_lines_matching, indexed_paths

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
        missing = {succ: users for succ, users in named.items() if succ not in present}
        head = head_blobs(work_tree, [p for users in missing.values() for p, _line in users]) if missing else {}
        if head is None:
            raise OSError("git could not read the committed memory files")
        data_of = dict(staged)
        for succ, users in missing.items():
            sid = succ.rsplit("/", 1)[-1][:-3]
            for path, line in users:
                hint = _submit_hint(work_tree, path, sid, succ, head.get(path), data_of[path], patterns, reference_keys)
                out.append(Finding(path, line, f"dangling-superseded-by ({sid} is not in this commit, so teammates "
                                   f"would lose this memory and get nothing in its place; {hint})"))
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


def _submit_hint(work_tree: Path, path: str, sid: str, succ: str, head: bytes | None, staged: bytes,
                 patterns: Sequence[str], reference_keys: Mapping[str, str] | None) -> str:
    """What to do about a file naming a successor the commit lacks: `git memex submit` only when
    submit would commit the file (as the work tree holds it, which is what submit reads)."""
    from git_memex.core.files import UnreadableMemory, read_bytes

    try:
        data = read_bytes(work_tree / path, root=work_tree)
    except UnreadableMemory:
        data = staged
    why = companion_problem(path, head, data, {sid}, patterns=patterns, reference_keys=reference_keys)
    if why is None:
        return f"`git memex submit {sid}` commits both, or stage {succ}"
    if head is None:
        if commit_problems(path, data, patterns):
            return (f"`git memex submit {sid}` never takes this file, which is not in the repository, and it "
                    "cannot be committed as it is")
        return (f"this file is not in the repository yet, so `git memex submit {sid}` leaves it out: submit "
                f"{sid} first, then commit this file, or stage {succ}")
    return f"`git memex submit {sid}` would refuse this file too, as it {why}"

"""Approval records: the evidence that a named person approved a rule's exact content.

A rule's own fields (``instruction_state``, ``approved_by``, ``trust_level``) are data anyone can
type. What the instruction gate believes instead is an **approval record**, written only by
``git memex instruction approve`` (docs/agents.md, "Approval records"):

* a repository rule's record is ``<memoryDir>/.approvals/<id>.json``, written and staged
  (``git add``) by ``approve``, committed and merged like the rule itself;
* a personal rule's record is ``<data root>/approvals/personal/<id>.json`` on this machine.

A record holds the rule's id, the **content hash** (`content_hash`: sha256 of the body and the
fields that decide what the rule says and where it applies) and the approver, the person
git names (name and email from ``git var GIT_AUTHOR_IDENT``).

A repository record is credible (`repo_verdicts`) only when all hold, everything read from the
default branch with replace objects and grafts switched off (`gitcmd.TRUSTED_HISTORY`):

* it is on the default branch, well formed, names this rule and holds the hash of the content
  the gate is about to serve (an edit after approval changes the hash: not served);
* the author email of the commit that last changed the record on the default branch is the
  approver's email (a hand-written record naming someone else fails);
* when ``<memoryDir>/OWNERS`` exists on the default branch, the approver owns the rule's path.

A record also holds a random ``nonce``; `approval_key` (id, content hash, approver, time, nonce)
names that one act of approval. **Revocation is durable**: ``instruction revoke``, and every change
that switches a rule off (supersede, forget, deprecate, archive), names the key of every approval
record of the rule (the work tree's and every version ever committed) in
``<memoryDir>/.approvals/<id>.revoked.json`` (``<data root>/approvals/personal/<id>.revoked.json``
for a personal rule), appended to and never trimmed, and deletes the approval record. The gate
refuses an approval whose key any version of that file ever committed on the default branch
names (`history`: ``--full-history -m``, replace objects off), so a cherry-pick of the old
approval commit (which keeps its author), a revert of the revocation, a restored file or a copied
record never serves the rule again; approving again writes a new nonce, a new key.

Not protected: a person with push rights to the default branch who forges both the record and
the commit's author (git does not authenticate authors; signed commits would).

Closed by default: a git failure, a missing or unreadable record fails the rule.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from git_memex.core.context import Context
    from git_memex.core.model import Memory
    from git_memex.secrets.scan import Finding

RECORDS_DIR = ".approvals"
FORMAT = "git-memex-approval/1"
REVOCATION_FORMAT = "git-memex-revocation/1"
CONTENT_FIELDS = ("id", "role", "scope", "type", "trust_level", "source", "paths", "tags", "body",
                  "importance", "confidence", "aliases", "alias", "target", "created_by", "expires_ts")
"""The index row's fields a content hash covers: every one that changes how a rule is served. What
it says (body, type, role), where and to whom it applies (scope, paths, tags, created_by: a
personal rule's owner), how prominent it is (importance orders the rules and decides which the
budget drops; confidence is shown), how it is found (aliases, alias/target), for how long
(`expires_at`: a later expiry would serve it longer than approved), and its trust
(trust_level, source). Left out, each for a reason: `instruction_state`, `status` and
`review_state` (the gate needs exactly approved, active, not rejected; any other value only
switches the rule off, and a switch-off is made durable by the revocation record);
`updated_at`, `created_at` and `revision` (bookkeeping every write changes); `visibility` and the
supersede links (`supersedes`, `superseded_by`, `derived_from`: a pointer can only hide a rule,
and the pre-commit hook refuses one that dangles)."""

_IDENT_RE = re.compile(r"^(.*?) <([^<>]*)> \d+ [+-]\d{4}$")


def content_hash(row: Mapping[str, Any] | sqlite3.Row) -> str:
    """``sha256:<hex>`` of the rule's content as the index serves it (`CONTENT_FIELDS`)."""
    from git_memex.core.digest import sha256_hex

    payload = {k: row[k] for k in CONTENT_FIELDS}
    return "sha256:" + sha256_hex(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8"))


def memory_hash(m: Memory) -> str:
    """`content_hash` of a memory about to be written (the row the index will hold for it)."""
    from git_memex.index.schema import memory_row

    return content_hash(memory_row(m, "repo", None))


def git_person(cwd: Path) -> tuple[str, str] | None:
    """(name, email) git puts on a commit made here (``git var GIT_AUTHOR_IDENT``); None when
    git knows no email."""
    from git_memex.core.gitcmd import run_git

    proc = run_git(["var", "GIT_AUTHOR_IDENT"], cwd, timeout=20)
    if proc is None or proc.returncode != 0:
        return None
    m = _IDENT_RE.match(proc.stdout.decode("utf-8", "replace").strip())
    if m is None or "@" not in m.group(2):
        return None
    return m.group(1), m.group(2)


def build(mid: str, digest: str, name: str, email: str, trust: str) -> bytes:
    """A record's bytes."""
    import secrets

    from git_memex.core.model import now

    rec = {"format": FORMAT, "id": mid, "content": digest, "approver": {"name": name, "email": email},
           "trust_level": trust, "approved_at": now(), "nonce": secrets.token_hex(16)}
    return (json.dumps(rec, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def parse(data: bytes | None, mid: str) -> dict[str, Any] | str:
    """The record's fields, or why it does not count (one phrase)."""
    if data is None:
        return "no approval record (`git memex instruction approve` writes one)"
    try:
        rec = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "its approval record is not valid JSON"
    if not isinstance(rec, dict) or rec.get("format") != FORMAT or rec.get("id") != mid:
        return "its approval record is not one `git memex instruction approve` wrote for this rule"
    who = rec.get("approver")
    if not isinstance(who, dict) or not isinstance(who.get("email"), str) or not isinstance(rec.get("content"), str):
        return "its approval record names no approver"
    return rec


def approval_key(rec: Mapping[str, Any]) -> str:
    """What names one act of approval: ``sha256:<hex>`` of the record's id, content hash, approver
    email, time and nonce. A cherry-pick, a revert or a copy of a record carries the same key, so a
    revocation naming it outranks every copy; approving again writes a new nonce, a new key."""
    from git_memex.core.digest import sha256_hex

    who = rec.get("approver")
    payload = {"id": rec.get("id"), "content": rec.get("content"),
               "approver": who.get("email") if isinstance(who, dict) else None,
               "approved_at": rec.get("approved_at"), "nonce": rec.get("nonce")}
    return "sha256:" + sha256_hex(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8"))


def parse_revocation(data: bytes | None, mid: str) -> dict[str, dict[str, Any]] | None:
    """The approvals a revocation record voids, by key ({} when there is none); None when it is
    not one `git memex` wrote for this rule (then nothing of the rule's is trusted)."""
    if data is None:
        return {}
    try:
        rec = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("format") != REVOCATION_FORMAT or rec.get("id") != mid:
        return None
    entries = rec.get("revoked")
    if not isinstance(entries, list):
        return None
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("approval"), str):
            return None
        out[e["approval"]] = e
    return out


def build_revocation(mid: str, entries: Iterable[Mapping[str, Any]]) -> bytes:
    rec = {"format": REVOCATION_FORMAT, "id": mid, "revoked": list(entries)}
    return (json.dumps(rec, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def memory_folders(ctx: Context, work: Path, revs: list[str], known: Iterable[str] = ()) -> list[str] | None:
    """Every memory folder the history had, where a rule's records may have been committed: the
    default folder, this clone's (`ctx.memory_dir_rel`), those in `known` (the folders this clone
    used before, kept in its revocation cache: a folder once named only in this clone's own
    config), and each ``memoryDir`` any version of the committed `.gitmemex` in the history of
    `revs` names. Moving the memory folder (`memex.memoryDir`, `git mv`) thus leaves no record
    behind. Each is then read with a literal pathspec (a wildcard one makes git diff every
    changed tree of every commit: about ten times the time on a 20,000-commit history). None
    when git fails."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, log_changes
    from git_memex.core.settings import DEFAULT_MEMORY_DIR, TEAM_FILE, parse_team_text

    folders = {DEFAULT_MEMORY_DIR, ctx.memory_dir_rel, *known}
    log = log_changes(["--full-history", "-m", *revs, "--", TEAM_FILE], work, env=TRUSTED_HISTORY)
    if log is None:
        return None
    blobs = list(dict.fromkeys(blob for _c, _p, _f, changes in log for status, blob, path in changes
                               if path == TEAM_FILE and status != "D"))
    for data in (_batch(work, blobs) or []) if blobs else []:
        if data is not None:
            folders.update(v for k, v in parse_team_text(data.decode("utf-8", "replace")).items()
                           if k == "memex.memorydir")
    return sorted(f.strip("/") for f in folders if f and f.strip("/"))


def history(ctx: Context, work: Path, refs: list[str], names: list[str]) -> dict[str, list[bytes]] | None:
    """Every version of each record file in `names` (``<id>.json``, ``<id>.revoked.json``) ever
    committed in the history of `refs`, in the `.approvals/` folder of every memory folder the
    history had (`memory_folders`), replace objects and grafts off: name -> the blobs (deleted
    versions left out). ``--full-history`` and ``-m``: a merge that drops a file cannot hide the
    commit that added it. None when git fails."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, log_changes

    out: dict[str, list[bytes]] = {name: [] for name in names}
    if not names or not refs:
        return out
    folders = memory_folders(ctx, work, ["--ignore-missing", *refs], _cached_folders(ctx, work))
    if folders is None:
        return None
    log = log_changes(["--full-history", "-m", "--ignore-missing", *refs, "--",
                       *(f"{folder}/{RECORDS_DIR}/{name}" for folder in folders for name in names)], work,
                      env=TRUSTED_HISTORY)
    if log is None:
        return None
    wanted: dict[str, str] = {}  # blob id -> name
    for _commit, _parents, _fields, changes in log:
        for status, blob, path in changes:
            name = path.rsplit("/", 1)[-1]
            if status != "D" and name in out:
                wanted.setdefault(blob, name)
    if not wanted:
        return out
    blobs = _batch(work, list(wanted))
    if blobs is None:
        return None
    for name, data in zip(wanted.values(), blobs, strict=True):
        if data is not None:
            out[name].append(data)
    return out


def write(path: Path, data: bytes) -> None:
    """Write a record atomically (never half a file)."""
    import os
    import tempfile

    from git_memex.core.data_root import data_root, in_data_root, refuse_link_out

    if in_data_root(path):
        refuse_link_out(data_root(), path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def personal_path(ctx: Context, mid: str) -> Path:
    return ctx.data_root / "approvals" / "personal" / f"{mid}.json"


def repo_rel(ctx: Context, mid: str) -> str:
    return f"{ctx.memory_dir_rel}/{RECORDS_DIR}/{mid}.json"


def personal_revoked_path(ctx: Context, mid: str) -> Path:
    return ctx.data_root / "approvals" / "personal" / f"{mid}.revoked.json"


def revoked_rel(ctx: Context, mid: str) -> str:
    return f"{ctx.memory_dir_rel}/{RECORDS_DIR}/{mid}.revoked.json"


def personal_verdict(ctx: Context, row: Mapping[str, Any] | sqlite3.Row, current_user: str | None) -> str | None:
    """None when this machine holds the owner's approval record for the personal rule's content."""
    from git_memex.agents.owners import owner_email
    from git_memex.core.files import read_private

    mid = str(row["id"])
    try:
        data: bytes | None = read_private(ctx.data_root, personal_path(ctx, mid))
    except OSError:
        data = None
    rec = parse(data, mid)
    if isinstance(rec, str):
        return rec
    if rec["content"] != content_hash(row):
        return "changed since you approved it (content hash differs): approve it again"
    try:
        void: bytes | None = read_private(ctx.data_root, personal_revoked_path(ctx, mid))
    except OSError:
        void = None
    revoked = parse_revocation(void, mid)
    if revoked is None:
        return "its revocation record is not one `git memex` wrote: approve it again"
    if approval_key(rec) in revoked:
        return f"this approval was {revoked[approval_key(rec)].get('why') or 'revoked'} since: approve it again"
    me = owner_email(current_user)
    if me is None or owner_email(rec["approver"]["email"]) != me:
        return "its approval record names someone else"
    return None


def repo_verdicts(ctx: Context, ref: str, branch: str,
                  rows: Iterable[Mapping[str, Any] | sqlite3.Row]) -> dict[str, str | None]:
    """For each repository row (already byte-identical to the default branch): None when a
    credible approval record for its content is on the default branch, else why not."""
    from git_memex.agents.owners import OWNERS_FILE, owner_email, owners_of
    from git_memex.agents.owners import parse as parse_owners
    from git_memex.core.gitcmd import TRUSTED_HISTORY, run_git

    rows = list(rows)
    out: dict[str, str | None] = {}
    if not rows or ctx.repo is None:
        return out
    work = ctx.repo.work_tree
    specs = [f"{ref}:{repo_rel(ctx, str(r['id']))}" for r in rows] + [f"{ref}:{ctx.memory_dir_rel}/{OWNERS_FILE}"]
    blobs = _batch(work, specs)
    if blobs is None:
        return {str(r["id"]): "git could not read the approval records" for r in rows}
    owners_text = blobs[-1]
    rules = parse_owners(owners_text.decode("utf-8", "replace")) if owners_text is not None else None
    credible: dict[str, dict[str, Any]] = {}
    for r, data in zip(rows, blobs[:-1], strict=True):
        mid = str(r["id"])
        rec = parse(data, mid)
        if isinstance(rec, str):
            out[mid] = f"{rec} on {branch}"
            continue
        if rec["content"] != content_hash(r):
            out[mid] = (f"its content is not what {rec['approver']['email']} approved (content hash differs): "
                        "approve it again and merge that")
            continue
        who = owner_email(rec["approver"]["email"])
        proc = run_git(["log", "-1", "--format=%ae", ref, "--", repo_rel(ctx, mid)], work, timeout=20,
                       env=TRUSTED_HISTORY)
        author = proc.stdout.decode("utf-8", "replace").strip() if proc is not None and proc.returncode == 0 else ""
        if who is None or owner_email(author) != who:
            out[mid] = (f"its approval record names {rec['approver']['email']} but was committed by "
                        f"{author or 'nobody known'}: an approval counts only in a commit by the approver")
            continue
        if rules is not None:
            try:
                rel = Path(str(r["path"])).resolve().relative_to((work / ctx.memory_dir_rel).resolve()).as_posix()
            except ValueError:
                rel = f"{mid}.md"
            if who not in owners_of(rules, rel):
                out[mid] = f"{who} is not an owner of {rel} in {ctx.memory_dir_rel}/{OWNERS_FILE} on {branch}"
                continue
        out[mid] = None
        credible[mid] = rec
    if credible:
        out.update(_revoked(ctx, work, ref, branch, credible))
    return out


def _revoked(ctx: Context, work: Path, ref: str, branch: str,
             credible: Mapping[str, Mapping[str, Any]]) -> dict[str, str | None]:
    """For rules whose approval record is otherwise credible: why not, when any version of the
    rule's revocation record ever committed on the default branch names that approval (a
    revocation is durable: deleting, reverting or trimming the record later does not undo it)."""
    known = revocations(ctx, work, ref)
    if known is None:
        return {mid: "git could not read the revocation records" for mid in credible}
    voids, bad = known
    out: dict[str, str | None] = {}
    for mid, rec in credible.items():
        key = approval_key(rec)
        if mid in bad:
            out[mid] = f"a revocation record for it on {branch} is not one `git memex` wrote: approve it again"
        elif key in voids.get(mid, {}):
            out[mid] = (f"its approval by {rec['approver']['email']} was {voids[mid][key]} on {branch} "
                        "(a copy, cherry-pick or revert of an old approval does not undo that): approve it again")
    return out


CACHE_FORMAT = "git-memex-revocations-cache/2"


def _cache_path(ctx: Context, work: Path) -> Path:
    from git_memex.core.digest import sha256_hex

    common = str(ctx.repo.common_dir) if ctx.repo is not None else str(work)
    return ctx.data_root / "approvals" / f"revocations-{sha256_hex(common.encode('utf-8'))[:16]}.json"


def _read_cache(ctx: Context, work: Path) -> dict[str, Any]:
    from git_memex.core.files import read_private

    try:
        got = json.loads(read_private(ctx.data_root, _cache_path(ctx, work)).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) and got.get("format") == CACHE_FORMAT else {}


def _cached_folders(ctx: Context, work: Path) -> list[str]:
    """The memory folders this clone's revocation cache was computed over (whatever its ref)."""
    folders = _read_cache(ctx, work).get("folders")
    return [str(f) for f in folders] if isinstance(folders, list) else []


def revocations(ctx: Context, work: Path, ref: str) -> tuple[dict[str, dict[str, str]], set[str]] | None:
    """Every approval any revocation record ever committed in `ref`'s history voids, in every
    memory folder that history had (`memory_folders`): ({rule id: {approval key: why}}, ids with a
    version that is not a revocation record); None when git fails.

    History only grows, so the answer is cached in the data root by the commit and the folders it
    was computed for; the next call walks only the commits since (``OLD..NEW``: what OLD reaches
    was read already, so after a force-push the answer is a superset, which only keeps more off),
    and everything again when a folder not read before appears. One `git rev-parse` when nothing
    changed."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, run_git
    from git_memex.core.settings import DEFAULT_MEMORY_DIR

    proc = run_git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], work, timeout=20, env=TRUSTED_HISTORY)
    if proc is None or proc.returncode != 0:
        return None
    oid = proc.stdout.decode("ascii", "replace").strip()
    got = _read_cache(ctx, work)
    known = _cached_folders(ctx, work)
    voids: dict[str, dict[str, str]] = {}
    bad: set[str] = set()
    since = None
    try:
        if got.get("ref") == ref and isinstance(got.get("oid"), str):
            voids = {str(m): {str(k): str(w) for k, w in v.items()} for m, v in got["rules"].items()}
            bad = {str(m) for m in got["bad"]}
            since = got["oid"]
    except (ValueError, TypeError, AttributeError, KeyError):
        voids, bad, since = {}, set(), None
    if since == oid and {DEFAULT_MEMORY_DIR, ctx.memory_dir_rel.strip("/")} <= set(known):
        return voids, bad
    folders = memory_folders(ctx, work, [oid if since is None else f"{since}..{oid}"], known)
    if folders is None:
        return None
    if since is not None and not set(folders) <= set(known):  # a folder not read yet: all of history again
        voids, bad, since = {}, set(), None
    fresh = _walk(ctx, work, oid if since is None else f"{since}..{oid}", folders)
    if fresh is None and since is not None:  # the cached commit is gone (gc after a force-push)
        voids, bad = {}, set()
        fresh = _walk(ctx, work, oid, folders)
    if fresh is None:
        return None
    for mid, keys in fresh[0].items():
        voids.setdefault(mid, {}).update(keys)
    bad |= fresh[1]
    import contextlib

    with contextlib.suppress(OSError):  # a read-only data root: walk again next time
        write(_cache_path(ctx, work), json.dumps({"format": CACHE_FORMAT, "ref": ref, "oid": oid, "folders": folders,
                                                  "rules": voids, "bad": sorted(bad)}).encode("utf-8"))
    return voids, bad


def _walk(ctx: Context, work: Path, revs: str,
          folders: list[str]) -> tuple[dict[str, dict[str, str]], set[str]] | None:
    """`revocations` of the commits `revs` names in the `.approvals/` folder of each of `folders`
    (one `git log`, one `git cat-file --batch`)."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, log_changes

    suffix = ".revoked.json"
    log = log_changes(["--full-history", "-m", revs, "--", *(f"{f}/{RECORDS_DIR}" for f in folders)], work,
                      env=TRUSTED_HISTORY)
    if log is None:
        return None
    dirs = {f"{f}/{RECORDS_DIR}" for f in folders}
    wanted: dict[str, str] = {}  # blob id -> rule id
    for _commit, _parents, _fields, changes in log:
        for status, blob, path in changes:
            folder, _, name = path.rpartition("/")
            if status != "D" and folder in dirs and name.endswith(suffix) and name[:-len(suffix)]:
                wanted.setdefault(blob, name[:-len(suffix)])
    voids: dict[str, dict[str, str]] = {}
    bad: set[str] = set()
    if not wanted:
        return voids, bad
    blobs = _batch(work, list(wanted))
    if blobs is None:
        return None
    for mid, data in zip(wanted.values(), blobs, strict=True):
        if data is None:
            continue
        entries = parse_revocation(data, mid)
        if entries is None:
            bad.add(mid)
            continue
        for key, e in entries.items():
            voids.setdefault(mid, {})[key] = str(e.get("why") or "revoked")
    return voids, bad


def _batch(work: Path, specs: list[str]) -> list[bytes | None] | None:
    """`git cat-file --batch` with replace objects off: each spec's blob bytes (None: no blob)."""
    from git_memex.core.gitcmd import TRUSTED_HISTORY, run_git

    proc = run_git(["cat-file", "--batch"], work, input="".join(s + "\n" for s in specs).encode("utf-8"),
                   timeout=30, env=TRUSTED_HISTORY)
    if proc is None or proc.returncode != 0:
        return None
    data, pos, got = proc.stdout, 0, []
    for _ in specs:
        end = data.find(b"\n", pos)
        if end < 0:
            return None
        header = data[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            got.append(data[pos:pos + size] if header[1] == b"blob" else None)
            pos += size + 1
        else:
            got.append(None)
    return got


def staged_record_problems(path: str, data: bytes, memory_dir: str, patterns: Sequence[str] = (), *,
                           secrets: bool = True, form: bool = True) -> list[Finding]:
    """What the pre-commit hook and `scan --staged` refuse in a staged record file
    (`gitcmd.is_team_record_path`): with `secrets`, a secret in it (any record,
    `secrets.scan.record_problems`); with `form`, for an approval or revocation record, what
    `record_problems` refuses."""
    from git_memex.core.gitcmd import is_record_path
    from git_memex.secrets import scan

    out = scan.record_problems(path, data, patterns) if secrets else []
    if form and is_record_path(path, memory_dir):
        out += record_problems(path, data)
    return out


def record_problems(path: str, data: bytes) -> list[Finding]:
    """Why an approval or revocation record (`<memoryDir>/.approvals/<id>.json`, `<id>.revoked.json`)
    may not enter a commit: conflict markers (two approvals of one rule on parallel branches, a
    conflicted file added as it is), or a file that is not the JSON record `git memex` writes for
    that rule. Such a record serves nothing ("not valid JSON on main") and says so nowhere;
    refused here, the person settles it first (`git memex resolve PATH --ours|--theirs`, or
    approve the rule again). Empty when the record may be committed."""
    from git_memex.core.files import conflict_marker_line
    from git_memex.secrets.scan import Finding

    text = data.decode("utf-8", "replace")
    name = path.rsplit("/", 1)[-1]
    revocation = name.endswith(".revoked.json")
    mid = name[:-len(".revoked.json")] if revocation else name[:-len(".json")]
    how = (f"settle it with `git memex resolve {path} --ours` (or `--theirs`)" if not revocation
           else f"`git memex resolve {path}` keeps both sides' revocations")
    line = conflict_marker_line(text)
    if line is not None:
        return [Finding(path, line, f"conflict markers in a rule's {'revocation' if revocation else 'approval'} "
                                    f"record: {how}, or approve the rule again")]
    if revocation:
        ok = parse_revocation(data, mid) is not None
    else:
        ok = not isinstance(parse(data, mid), str)
    if not ok:
        return [Finding(path, 1, "not a record `git memex instruction` writes for this rule (the rule would not be "
                                 "served): restore it from git, or approve the rule again")]
    return []

"""Org rules and their owners: when an org memory may be served as a rule (docs/org.md, "Org
instructions and owners").

An org repository names who may approve what in ``.ai/open-memex/OWNERS`` (CODEOWNERS-style:
``PATTERN OWNER...`` lines, gitignore-like patterns relative to the memory folder, the last
matching line wins, a line with no owner leaves its paths unowned). Owners are spelled as
`core.person.person` spells people (``local:<email>``) or as a bare email; anything else (a
``@team`` handle, ``github:…``) can be checked against nothing in git history and never matches.

Trust comes from history, not from content. Everything is read from one commit, the org clone's
**default branch** as fetched (``refs/remotes/origin/<origin's HEAD branch>``), never from the
work tree, and never from the branch the clone has checked out. An org rule (already past
`gate.passes_claims`) passes when all hold (`org_verdicts`):

1. the work tree file is byte-identical to the blob at its path in that commit;
2. that commit holds an OWNERS file whose version in force (below) gives the file's path owners;
3. its ``approved_by`` names one of them (a claim: necessary, never sufficient);
4. the first-parent commit of the default branch that last changed the file (the commit itself
   for a direct push, the merge commit for a merged branch) has an owner of the path as its
   author or its committer: an owner put these bytes on the default branch.

The version of OWNERS in force: its first version on the default branch's first-parent history
is taken as it is (trust on first use, like a host's CODEOWNERS); each later change, a re-add
after a deletion included, counts only when its commit's author or committer is an owner of
``OWNERS`` under the last version in force, otherwise it is ignored. So nobody adds himself to
the owners file without an owner. The commit of that first version is remembered in
``<clone>/.git/memex/owners-anchor``; a later history whose first-parent chain no longer holds
it (an unrelated history merged in as the first parent, a force push) trusts no owner at all.

Cost: nothing at all unless an org rule claims approval. Then, per org, the facts read from git
(blob ids, the last commit of each rule file, the owners file's history) are facts about one
immutable commit and are cached in ``<clone>/.git/memex/gate.json`` under that commit: the next
session start reads two files under ``.git`` and runs no git process until ``org pull`` moves
the branch.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from git_memex.core.settings import DEFAULT_MEMORY_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Mapping
    from typing import Any

    from git_memex.agents.globs import Glob
    from git_memex.core.context import Context

OWNERS_FILE = "OWNERS"  # in the memory folder: .ai/open-memex/OWNERS
OWNERS_PATH = f"{DEFAULT_MEMORY_DIR}/{OWNERS_FILE}"
CACHE_NAME = "gate.json"
CACHE_VERSION = 2
ZERO = "0" * 40


# ------------------------------------------------------------------ the owners file
def owner_email(who: str | None) -> str | None:
    """The email OWNERS knows a person by, lowercased (owners, approvers and commit authors are
    compared by it): `core.person.email_key`, the one normalisation of a granting match."""
    from git_memex.core.person import email_key

    return email_key(who)


def parse(text: str | None) -> list[tuple[Glob | None, tuple[str, ...]]]:
    """OWNERS lines as (pattern, owner emails); comments (``#``) and blank lines skipped."""
    from git_memex.agents.globs import glob_regex

    out: list[tuple[Glob | None, tuple[str, ...]]] = []
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pattern, *names = line.split()
        emails = tuple(e for e in (owner_email(n) for n in names) if e)
        out.append((glob_regex(pattern), emails))
    return out


def owners_of(rules: list[tuple[Glob | None, tuple[str, ...]]], rel: str) -> tuple[str, ...]:
    """The owners of `rel` (a path relative to the memory folder): the last matching line's."""
    found: tuple[str, ...] = ()
    for rx, emails in rules:
        if rx is not None and rx.fullmatch(rel):
            found = emails
    return found


# ------------------------------------------------------------------ reading the clone's git dir
def _read(path: Path) -> str | None:
    try:
        return path.read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _safe_ref(ref: str) -> bool:
    """A ref name under refs/ with no `..`, empty or dot-led part (a symbolic ref read from a
    file must not lead out of refs/remotes/origin, for example to a local branch)."""
    parts = ref.split("/")
    return ref.startswith("refs/") and all(p and not p.startswith(".") for p in parts) and "\\" not in ref


def _ref_sha(git_dir: Path, ref: str, depth: int = 0) -> str | None:
    """The commit a ref names, from the loose ref file, else packed-refs (no git process); None
    for anything that is not a full hex object id."""
    if depth > 4 or not _safe_ref(ref):
        return None
    loose = _read(git_dir / ref)
    if loose:
        if loose.startswith("ref: "):
            return _ref_sha(git_dir, loose[len("ref: "):], depth + 1)
        return loose if _is_sha(loose) else None
    text = _read(git_dir / "packed-refs") or ""
    for line in text.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha if _is_sha(sha) else None
    return None


def default_ref(clone: Path) -> str | None:
    """``refs/remotes/origin/<branch>`` of the org repo's default branch (origin's HEAD)."""
    head = _read(clone / ".git" / "refs" / "remotes" / "origin" / "HEAD") or ""
    prefix = "ref: refs/remotes/origin/"
    ref = head[len("ref: "):] if head.startswith(prefix) and len(head) > len(prefix) else None
    return ref if ref is not None and _safe_ref(ref) else None


# ------------------------------------------------------------------ facts from git (cached per commit)
def _git(clone: Path, args: list[str], data: bytes | None = None) -> bytes | None:
    from git_memex.core.gitcmd import TRUSTED_HISTORY, run_git

    proc = run_git(args, clone, input=data, timeout=30, env=TRUSTED_HISTORY)
    return proc.stdout if proc is not None and proc.returncode == 0 else None


def _batch(clone: Path, specs: list[str]) -> list[bytes | None] | None:
    """`git cat-file --batch` for each spec (``COMMIT:PATH`` or a blob id): its bytes, or None
    when there is no such blob. None when git fails."""
    if not specs:
        return []
    out = _git(clone, ["cat-file", "--batch"], "".join(s + "\n" for s in specs).encode("utf-8"))
    if out is None:
        return None
    got: list[bytes | None] = []
    pos = 0
    for _ in specs:
        end = out.find(b"\n", pos)
        if end < 0:
            return None
        header = out[pos:end].decode("utf-8", "replace").split()
        pos = end + 1
        if len(header) == 3 and header[1] == "blob":
            size = int(header[2])
            got.append(out[pos:pos + size])
            pos += size + 1
        elif len(header) == 3:  # a tree or another kind of object: skip its bytes
            pos += int(header[2]) + 1
            got.append(None)
        else:  # "<spec> missing" / "ambiguous"
            got.append(None)
    return got


def _oids(clone: Path, specs: list[str]) -> list[str | None] | None:
    """`git cat-file --batch-check`: the blob id at each ``COMMIT:PATH`` (None: no blob there)."""
    out = _git(clone, ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
               "".join(s + "\n" for s in specs).encode("utf-8"))
    if out is None:
        return None
    lines = out.decode("utf-8", "replace").split("\n")[:len(specs)]
    if len(lines) != len(specs):
        return None
    return [oid if kind == "blob" else None for oid, _, kind in (ln.partition(" ") for ln in lines)]


def _last_change(clone: Path, commit: str, path: str) -> list[str] | None:
    """[commit, author email, committer email] of the first-parent commit of `commit` that last
    changed `path`; None when git fails or nothing did."""
    out = _git(clone, ["log", "-1", "--first-parent", "--format=%H%x00%ae%x00%ce", commit, "--", path])
    if not out:
        return None
    parts = out.decode("utf-8", "replace").strip().split("\x00")
    return parts if len(parts) == 3 else None


def _owners_in_force(clone: Path, commit: str) -> dict[str, Any] | None:
    """The OWNERS text in force at `commit` (see the module docstring) and the changes ignored:
    ``{"text": str | None, "ignored": [[commit, author, committer], ...]}``; None when git fails."""
    out = _git(clone, ["log", "--first-parent", "--diff-merges=first-parent", "--reverse", "--no-abbrev",
                       "--raw", "--format=%x01%H%x00%ae%x00%ce", commit, "--", OWNERS_PATH])
    if out is None:
        return None
    steps: list[tuple[list[str], str]] = []  # ([commit, author, committer], new blob id)
    for chunk in out.decode("utf-8", "replace").split("\x01")[1:]:
        lines = chunk.strip("\n").split("\n")
        who = lines[0].split("\x00")
        blob = None
        for ln in lines[1:]:
            if ln.startswith(":") and "\t" in ln:
                fields = ln.split("\t", 1)[0].split()
                if len(fields) >= 4:
                    blob = fields[3]
        if len(who) == 3 and blob is not None:
            steps.append((who, blob))
    blobs = sorted({b for _, b in steps if b.strip("0")})
    contents = _batch(clone, blobs)
    if contents is None:
        return None
    text_of = {b: (c.decode("utf-8", "replace") if c is not None else None) for b, c in zip(blobs, contents, strict=True)}
    first = steps[0][0][0] if steps else None
    anchor = _read(_anchor_path(clone))
    if anchor and anchor not in {who[0] for who, _ in steps}:
        # the first version this clone trusted is no longer in the branch's first-parent history:
        # the history was replaced (an unrelated history merged in first, a force push)
        return {"text": None, "ignored": [], "first": first, "rewritten": anchor}
    if not anchor and first:
        _write_anchor(clone, first)
    current: str | None = None
    in_force: str | None = None  # the last version that was in force (survives a deletion)
    ignored: list[list[str]] = []
    for who, blob in steps:
        text = text_of.get(blob) if blob.strip("0") else None
        if in_force is None:
            current = in_force = text  # the first version: taken as it is
            continue
        # later changes, a re-add after a deletion included, only by an owner of OWNERS as it stood
        allowed = set(owners_of(parse(in_force), OWNERS_FILE))
        if allowed & {x for x in (owner_email(who[1]), owner_email(who[2])) if x}:
            current = text
            if text is not None:
                in_force = text
        else:
            ignored.append(who)
    return {"text": current, "ignored": ignored, "first": first}


ANCHOR_NAME = "owners-anchor"


def remember_anchor(clone: Path) -> None:
    """At `org add`: remember the first OWNERS version of the default branch as it is now, so a
    history replaced later is refused even before any rule was checked. Best effort."""
    ref = default_ref(clone)
    commit = _ref_sha(clone / ".git", ref) if ref else None
    if commit and not _read(_anchor_path(clone)):
        _owners_in_force(clone, commit)


def _anchor_path(clone: Path) -> Path:
    return clone / ".git" / "memex" / ANCHOR_NAME


def _write_anchor(clone: Path, commit: str) -> None:
    """Remember the commit of the first OWNERS version this clone trusted (trust on first use);
    a later history without it is refused (`_owners_in_force`)."""
    path = _anchor_path(clone)
    tmp = path.with_name(f".{ANCHOR_NAME}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(commit + "\n", "utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _cache_path(clone: Path) -> Path:
    return clone / ".git" / "memex" / CACHE_NAME


def _load_cache(clone: Path, commit: str, shallow: list[str]) -> dict[str, Any]:
    """The cached facts about `commit`, as read with this shallow boundary (a clone deepened or
    unshallowed since answers differently: its cache is dropped)."""
    try:
        data = json.loads(_cache_path(clone).read_text("utf-8"))
        if isinstance(data, dict) and data.get("v") == CACHE_VERSION and data.get("commit") == commit \
                and data.get("shallow") == shallow and isinstance(data.get("files"), dict) \
                and isinstance(data.get("owners"), (dict, type(None))):
            return data
    except (OSError, ValueError):
        pass
    return {"v": CACHE_VERSION, "commit": commit, "shallow": shallow, "owners": None, "files": {}}


def _save_cache(clone: Path, data: dict[str, Any]) -> None:
    path = _cache_path(clone)
    tmp = path.with_name(f".{CACHE_NAME}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, sort_keys=True), "utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


# ------------------------------------------------------------------ the verdicts
def org_verdicts(ctx: Context, rows: Iterable[Mapping[str, Any] | sqlite3.Row]) -> dict[str, str | None]:
    """For each org row (location ``org:NAME``), None when its history lets it through as a rule,
    else why not (one phrase). Rows of other locations are left out. Closed by default: a git
    failure, a missing ref or an unreadable file fails the row."""
    from git_memex.core.digest import blob_id
    from git_memex.index.schema import matches_file

    by_org: dict[str, list[Any]] = {}
    for r in rows:
        loc = str(r["location"] or "")
        if loc.startswith("org:"):
            by_org.setdefault(loc[len("org:"):], []).append(r)
    out: dict[str, str | None] = {}
    for name, group in by_org.items():
        clone = ctx.org_clone(name)
        ref = default_ref(clone)
        commit = _ref_sha(clone / ".git", ref) if ref else None
        if ref is None or commit is None:
            for r in group:
                out[r["id"]] = (f"the default branch of org {name} is unknown (no origin/HEAD in {clone}; "
                                f"`git -C {clone} remote set-head origin --auto`)")
            continue
        branch = ref[len("refs/remotes/"):]
        shallow = sorted(set((_read(clone / ".git" / "shallow") or "").split()))  # a shallow clone's cut
        cache = _load_cache(clone, commit, shallow)
        dirty = False
        from git_memex.core.files import UnreadableMemory, read_bytes

        wanted: dict[str, tuple[str, bytes]] = {}  # id -> (repo-relative path, work tree bytes)
        for r in group:
            try:
                rel = os.path.relpath(str(r["path"]), clone).replace(os.sep, "/")
                data = read_bytes(str(r["path"]), root=clone)
            except (UnreadableMemory, ValueError, TypeError):
                out[r["id"]] = "its file cannot be read"
                continue
            if not rel.startswith(DEFAULT_MEMORY_DIR + "/") or "\n" in rel:
                out[r["id"]] = "its file is outside the org memory folder"
                continue
            if not matches_file(r, data):
                out[r["id"]] = "its index entry is not what its file says (`git memex reindex` reads it again)"
                continue
            wanted[r["id"]] = (rel, data)
        new = sorted({rel for rel, _ in wanted.values() if rel not in cache["files"]})
        if new:
            oids = _oids(clone, [f"{commit}:{rel}" for rel in new])
            for i, rel in enumerate(new if oids is not None else []):  # git failed: nothing cached, the rows fail
                oid = oids[i] if oids is not None else None
                last = _last_change(clone, commit, rel) if oid else None
                if oid and last is None:
                    continue  # git failed on this one: asked again next time, the row fails now
                cache["files"][rel] = {"blob": oid, "last": last}
                dirty = True
        if cache["owners"] is None and wanted:
            owners = _owners_in_force(clone, commit)
            if owners is not None:
                cache["owners"] = owners
                dirty = True
        if dirty:
            _save_cache(clone, cache)
        rules = parse(cache["owners"]["text"]) if cache["owners"] and cache["owners"].get("text") else None
        for mid, (rel, data) in wanted.items():
            why = _verdict(name, branch, cache, rules, rel, data, blob_id)
            if shallow and ((why is None and _cut(cache, rel, set(shallow)))
                            or (cache["owners"] or {}).get("rewritten")):  # the trusted version may lie past the cut
                why = (f"the clone of org {name} is shallow, so who first wrote it or its {OWNERS_FILE} file is "
                       f"unknown (`git -C {clone} fetch --unshallow`)")
            ignored = (cache["owners"] or {}).get("ignored") or []
            if why and ignored and rules is not None and not why.startswith("not as it is"):
                last = ignored[-1]
                why += (f" ({len(ignored)} change(s) to {OWNERS_FILE} were ignored, the last {last[0][:10]} by "
                        f"{last[1]}: not made by an owner of {OWNERS_FILE})")
            out[mid] = why
    return out


def _verdict(name: str, branch: str, cache: dict[str, Any], rules: list[Any] | None, rel: str,
             data: bytes, blob_id: Any) -> str | None:
    facts = cache["files"].get(rel)
    if facts is None or cache["owners"] is None:
        return f"git could not tell what {branch} of org {name} holds"
    oid = facts.get("blob")
    if not oid or oid != blob_id(data, sha256=len(oid) == 64):
        return f"not as it is on {branch} of org {name}: only what reached the org's default branch is served"
    if cache["owners"].get("rewritten"):
        return (f"the history of {OWNERS_FILE} on {branch} of org {name} no longer holds the first version this "
                f"clone trusted ({cache['owners']['rewritten'][:10]}): it was replaced, so no owner is trusted "
                f"(docs/org.md, \"Owners in force\")")
    if rules is None:
        return f"org {name} has no {OWNERS_FILE} file on {branch} ({OWNERS_PATH}), so nobody can approve its rules"
    mem_rel = rel[len(DEFAULT_MEMORY_DIR) + 1:]
    owners = owners_of(rules, mem_rel)
    if not owners:
        return f"nobody owns {mem_rel} in the {OWNERS_FILE} file of org {name}"
    approver = _approved_by(rel, data)
    if owner_email(approver) not in owners:
        return f"approved by {approver or 'nobody'}, who is not an owner of {mem_rel} in org {name}"
    last = facts.get("last")
    if not last:
        return f"git could not tell which commit put it on {branch} of org {name}"
    if not {x for x in (owner_email(last[1]), owner_email(last[2])) if x} & set(owners):
        who = last[1] if last[2] == last[1] else f"{last[1]} (committed by {last[2]})"
        return (f"the commit that put it on {branch} ({last[0][:10]}) is by {who}, "
                f"not by an owner of {mem_rel} in org {name}")
    return None


def _cut(cache: dict[str, Any], rel: str, shallow: set[str]) -> bool:
    """Whether a fact the verdict rests on is a shallow clone's boundary commit, which git shows as
    adding every file it holds: the file's last change, or the first version of OWNERS."""
    last = (cache["files"].get(rel) or {}).get("last") or [""]
    first = (cache["owners"] or {}).get("first") or ""
    return last[0] in shallow or first in shallow


def _approved_by(rel: str, data: bytes) -> str | None:
    """The file's ``approved_by``, read as the indexer reads it (None when it cannot be read)."""
    from git_memex.core.files import parse_for_index

    try:
        v = parse_for_index(Path(rel), data).fm.get("approved_by")
    except (ValueError, TypeError):  # FrontmatterError and UnreadableMemory are ValueErrors
        return None
    return str(v) if v else None

"""The instruction gate: when may a memory be shown to an agent as a rule to follow?

Trust comes from history, not from content. What a file says about itself (``role:
instruction``, ``instruction_state: approved``, ``trust_level: trusted``) is data anyone can
type; what a person reviewed is what reached the project's default branch through a commit.
So a memory passes only when both hold (docs/agents.md, "The instruction gate"):

* **its claims** (`passes_claims`): role instruction, approved, trust reviewed or trusted, not
  inferred, active, not rejected; org rules need ``trusted``; a personal rule only for its
  owner and only from this machine's personal store;
* **its history** (`reviewed_ids`): a repository memory's exact bytes are the blob committed at
  ``<memoryDir>/<id>.md`` on the default branch *and* the work tree file is unchanged, *and* the
  index row that is served is what those bytes say (`index.schema.matches_file`). An
  outbox draft, a private memory, a file edited since, or one only on a feature branch fails.
  Personal rules live on this machine only and have no history: the owner is the reviewer.
  An org rule (location ``org:NAME``) passes when the org repo's history shows an owner put it
  on the org's default branch (`agents.owners.org_verdicts`, docs/org.md).
  A remote rule (location ``remote:NAME``) passes when the last pull's state says the server's
  review approved it and the cached file's sha256 is the one the server sent with that approved
  revision (`remote.cache.verdicts`, docs/remote.md): the trust rests on the server's operator
  and the holders of its reviewer tokens.

The default branch (`default_branch`) is origin's HEAD branch when origin has one, else
``memex.defaultBranch``, else the branch ``git memex init`` ran on (``memex.initBranch``). An
origin HEAD naming a branch origin no longer has is never followed (the gate closes, and says
`git remote set-head origin -a`).
With an origin remote the reviewed copy is the remote-tracking branch (what reached the
team's branch), without one the local branch. When none can be found the gate stays closed.

The gate is closed by default: any unknown value, a git failure or a missing file fails.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping

from git_memex.core.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from git_memex.core.context import Context


def _field(obj: Any, key: str) -> str | None:
    """A value from a frontmatter dict or an index row (sqlite3.Row has no .get)."""
    try:
        v = obj[key]
    except (KeyError, IndexError, TypeError):
        return None
    if v is None:
        return None
    return str(v).strip()


def passes_claims(memory: Mapping[str, Any] | sqlite3.Row, current_user: str | None) -> bool:
    """The first half of the gate: what the memory's own fields must say.

    All of: ``role: instruction``, ``instruction_state: approved``, ``trust_level`` reviewed or
    trusted, ``source`` not ``inference``, ``status`` active (a deprecated or superseded
    instruction is history), ``review_state`` not rejected. Org scope needs ``trusted``. A
    personal memory passes only for its owner: ``created_by`` must equal `current_user` (`core.person.person`)
    (``local:<email or name>``), and a row read from anywhere but this machine's personal store
    (a personal file copied into the repo) never passes. Unknown values fail.
    """
    if _field(memory, "role") != "instruction":
        return False
    if _field(memory, "instruction_state") != "approved":
        return False
    trust = _field(memory, "trust_level")
    if trust not in ("reviewed", "trusted"):
        return False
    from git_memex.core.model import SOURCES

    source = _field(memory, "source")
    if source is not None and (source not in SOURCES or source == "inference"):
        return False  # exact values only: `Inference` or `INFERENCE` is unknown, and unknown fails
    if (_field(memory, "status") or "active") != "active":
        return False
    if _field(memory, "review_state") == "rejected":
        return False
    scope = _field(memory, "scope") or "project"
    if (_field(memory, "location") or "").startswith("org:") and trust != "trusted":
        return False  # whatever its scope field says, a rule from an org clone needs trusted
    if (_field(memory, "location") or "").startswith("remote:"):
        # the server's review is the history half (`remote.cache.verdicts`); an approval there
        # writes trust_level reviewed, so reviewed is enough whatever the scope says
        return scope in ("project", "org")
    if scope == "project":
        return True
    if scope == "org":
        return trust == "trusted"
    if scope == "personal":
        location = _field(memory, "location")
        if location is not None and location != "personal":
            return False
        owner = _field(memory, "created_by")
        return bool(current_user) and bool(owner) and owner == current_user
    return False


# --------------------------------------------------------------------- the default branch
@record(frozen=True)
class ReviewedRef:
    """Where reviewed memories are read from: a branch name and the ref that holds it."""

    branch: str
    ref: str  # refs/remotes/origin/<branch> with an origin remote, else refs/heads/<branch>
    source: str  # origin-head | memex.defaultBranch | memex.initBranch


def origin_head(ctx: Context) -> str | None:
    """origin's HEAD branch, read from the symbolic ref file (symbolic refs are never packed)."""
    if ctx.repo is None:
        return None
    try:
        text = (ctx.repo.common_dir / "refs" / "remotes" / "origin" / "HEAD").read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    prefix = "ref: refs/remotes/origin/"
    return text[len(prefix):] if text.startswith(prefix) and len(text) > len(prefix) else None


def _ref_exists(ctx: Context, ref: str) -> bool:
    """Whether `ref` exists in this repository: its loose file, or a line of `packed-refs` (two
    file reads, no git: this runs before every session block)."""
    if ctx.repo is None:
        return False
    if (ctx.repo.common_dir / ref).is_file():
        return True
    try:
        with open(ctx.repo.common_dir / "packed-refs", encoding="utf-8", errors="replace") as fh:
            return any(line.rstrip("\n").partition(" ")[2] == ref for line in fh if not line.startswith(("#", "^")))
    except OSError:
        return False


def dangling_origin_head(ctx: Context) -> str | None:
    """The branch origin's HEAD names when origin no longer has it (renamed or deleted on origin,
    then `git fetch --prune`); None otherwise."""
    if ctx.repo is None or not ctx.origin_url:
        return None
    head = origin_head(ctx)
    return head if head and not _ref_exists(ctx, f"refs/remotes/origin/{head}") else None


def unknown_branch(ctx: Context) -> str:
    """Why the default branch is unknown (`default_branch` gave None), one clause that names the fix."""
    gone = dangling_origin_head(ctx)
    if gone is not None:
        return (f"origin's HEAD names {gone}, a branch origin no longer has (renamed or deleted there), so the "
                "project's default branch is unknown: `git remote set-head origin -a` makes origin's HEAD follow "
                "its default branch again")
    return ("the project's default branch is unknown: set it with `git memex config set memex.defaultBranch NAME` "
            "(or `git remote set-head origin -a` when origin has one)")


def default_branch(ctx: Context) -> ReviewedRef | None:
    """The project's default branch and the ref whose tree counts as reviewed (None: unknown).
    An origin HEAD that names a branch origin no longer has (`dangling_origin_head`) is not
    followed: then only a `memex.defaultBranch` that origin has counts, and otherwise the branch
    is unknown (`unknown_branch` says how to fix it), never a ref that is gone."""
    if ctx.repo is None:
        return None
    has_origin = bool(ctx.origin_url)
    head = origin_head(ctx) if has_origin else None
    if head and _ref_exists(ctx, f"refs/remotes/origin/{head}"):
        return ReviewedRef(head, f"refs/remotes/origin/{head}", "origin-head")
    if head:  # dangling
        name = ctx.setting("defaultBranch")
        if name and _ref_exists(ctx, f"refs/remotes/origin/{name}"):
            return ReviewedRef(name, f"refs/remotes/origin/{name}", "memex.defaultBranch")
        return None
    for key in ("defaultBranch", "initBranch"):
        name = ctx.setting(key)  # validated: an invalid value reads as unset
        if name:
            ref = f"refs/remotes/origin/{name}" if has_origin else f"refs/heads/{name}"
            return ReviewedRef(name, ref, f"memex.{key}")
    return None


def branch_check(ctx: Context) -> tuple[str, str]:
    """`doctor`'s (level, detail) about the default branch: fail when it is unknown because
    origin's HEAD names a branch origin no longer has (nothing of this repository is served
    then), warn when it is unknown, when origin's HEAD dangles, when origin has no HEAD here (a
    clone of an empty repository: the branch then comes from settings), and when it is a
    `memex.defaultBranch` other than the branch `init` ran on (a rule approved only there is
    served); else ok, naming it and where it comes from."""
    ref = default_branch(ctx)
    gone = dangling_origin_head(ctx)
    if ref is None:
        return ("fail" if gone is not None else "warn",
                f"{unknown_branch(ctx)}; until then no rule of this repository is served and pr-status finds no merge")
    if gone is not None:
        return "warn", (f"origin's HEAD names {gone}, a branch origin no longer has; rules are served from {ref.branch} "
                        f"({ref.source}) meanwhile; `git remote set-head origin -a` makes origin's HEAD follow its "
                        "default branch again")
    headless = bool(ctx.origin_url) and origin_head(ctx) is None
    init = ctx.setting("initBranch")
    if ref.source == "memex.defaultBranch" and init and init != ref.branch:
        return "warn", (f"rules are served from {ref.branch} (memex.defaultBranch), not from {init}, the branch `git "
                        f"memex init` ran on: a rule approved and merged only on {ref.branch} reaches agents; if that is "
                        "not the team's default branch, `git config --unset memex.defaultBranch`"
                        + (" and `git remote set-head origin -a` (origin has no HEAD here)" if headless else ""))
    if headless:
        return "warn", (f"origin has no HEAD here (a clone of an empty repository, or `git remote add`), so rules are "
                        f"served from {ref.branch} ({ref.source}); `git remote set-head origin -a` records origin's own "
                        "default branch")
    return "ok", f"{ref.branch} ({ref.ref}, from {ref.source})"


# --------------------------------------------------------------------- history
def reviewed_ids(ctx: Context, rows: Iterable[Mapping[str, Any] | sqlite3.Row]) -> set[str]:
    """The ids of repository rows that pass the history half of the gate (`repo_verdicts`)."""
    return {mid for mid, why in repo_verdicts(ctx, rows).items() if why is None}


def repo_verdicts(ctx: Context, rows: Iterable[Mapping[str, Any] | sqlite3.Row]) -> dict[str, str | None]:
    """For each repository row: None when its file is committed as it is on the default branch
    (`committed_ids`) and a credible approval record for its content is there too
    (`approval_record.repo_verdicts`), else why not."""
    ref = default_branch(ctx)
    repo_rows = [r for r in rows if _field(r, "location") == "repo" and _field(r, "id")]
    if ref is None:
        why = unknown_branch(ctx)
        return {str(r["id"]): why for r in repo_rows}
    committed = committed_ids(ctx, repo_rows)
    missing = "" if _ref_exists(ctx, ref.ref) else (
        f"; {ref.ref} does not exist here: push or fetch {ref.branch}, or, when origin's default branch is "
        "another, `git remote set-head origin -a`" if ctx.origin_url else f"; there is no branch {ref.branch} yet")
    out: dict[str, str | None] = {
        str(r["id"]): f"not committed as it is on {ref.branch} ({ref.ref}): commit it and merge it there{missing}"
        for r in repo_rows if r["id"] not in committed}
    if committed:
        from git_memex.agents.approval_record import repo_verdicts as record_verdicts

        out.update(record_verdicts(ctx, ref.ref, ref.branch, [r for r in repo_rows if r["id"] in committed]))
    return out


def committed_ids(ctx: Context, rows: Iterable[Mapping[str, Any] | sqlite3.Row]) -> set[str]:
    """The ids of repository rows whose work tree file is the blob committed at the same path on
    the default branch: byte-identical, or identical once git's checkout conversion of line ends
    is undone (`same_as_committed`). One `git cat-file --batch-check` for all of them, replace
    objects and grafts ignored; any failure means "none"."""
    ref = default_branch(ctx)
    if ctx.repo is None or ref is None:
        return set()
    from git_memex.core.files import UnreadableMemory, read_bytes
    from git_memex.index.schema import matches_file

    work = ctx.repo.work_tree
    wanted: dict[str, tuple[str, bytes]] = {}  # rel path -> (id, work tree bytes)
    for r in rows:
        if _field(r, "location") != "repo":
            continue
        mid, path = _field(r, "id"), _field(r, "path")
        if not mid or not path:
            continue
        try:
            rel = os.path.relpath(path, work).replace(os.sep, "/")
            data = read_bytes(path, root=work)
        except (UnreadableMemory, ValueError):
            continue
        if rel.startswith("../") or "\n" in rel or not matches_file(r, data):
            continue
        wanted[rel] = (mid, data)
    if not wanted:
        return set()
    from git_memex.core.gitcmd import TRUSTED_HISTORY, run_git

    rels = list(wanted)
    query = "".join(f"{ref.ref}:{rel}\n" for rel in rels)
    proc = run_git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], work, input=query.encode("utf-8"),
                   timeout=20, env=TRUSTED_HISTORY)
    if proc is None or proc.returncode != 0:
        return set()
    answers = proc.stdout.decode("utf-8", "replace").split("\n")[:len(rels)]
    if len(answers) != len(rels):
        return set()
    committed: dict[str, tuple[bytes, str]] = {}
    for rel, answer in zip(rels, answers, strict=True):
        oid, _, kind = answer.partition(" ")
        if kind == "blob":
            committed[rel] = (wanted[rel][1], oid)
    return {wanted[rel][0] for rel in same_as_committed(work, committed)}


def same_as_committed(work: Path, files: Mapping[str, tuple[bytes, str]]) -> set[str]:
    """The paths (relative to `work`) whose work tree bytes are the committed blob named with them,
    compared as git compares them: the bytes hash to that blob, or, when they do not, the file
    cleaned through git's own conversion for its path does (`git hash-object --stdin-paths`: the
    line ends a checkout converted under ``core.autocrlf`` or a ``text``/``eol`` attribute, as
    `git status` reads them). One git call, only for the files whose bytes differ."""
    from git_memex.core.digest import blob_id

    out: set[str] = set()
    rest: list[str] = []
    for rel, (data, oid) in files.items():
        if not oid:
            continue
        if blob_id(data, sha256=len(oid) == 64) == oid:
            out.add(rel)
        elif "\n" not in rel and not rel.startswith('"'):  # one path a line, unquoted
            rest.append(rel)
    if rest:
        from git_memex.core.gitcmd import run_git

        proc = run_git(["hash-object", "--stdin-paths"], work,
                       input="".join(r + "\n" for r in rest).encode("utf-8", "surrogateescape"), timeout=30)
        if proc is not None and proc.returncode == 0:
            answers = proc.stdout.decode("ascii", "replace").split("\n")
            out |= {rel for rel, got in zip(rest, answers, strict=False) if got.strip() == files[rel][1]}
    return out


def passing(ctx: Context, rows: Iterable[sqlite3.Row], current_user: str | None) -> list[sqlite3.Row]:
    """The rows that pass the whole gate: their claims, and for repository and org rows their
    history.

    Outbox and private rows never pass (nothing there was reviewed); personal rows pass on their
    claims alone (owner only, see `passes_claims`); org rows when an owner put them on the org's
    default branch (`owners.org_verdicts`, imported only when an org rule claims approval)."""
    claimed = [r for r in rows if passes_claims(r, current_user)]
    repo_rows = [r for r in claimed if r["location"] == "repo"]
    reviewed = reviewed_ids(ctx, repo_rows) if repo_rows else set()
    org_rows = [r for r in claimed if str(r["location"]).startswith("org:")]
    owned: set[str] = set()
    if org_rows:
        from git_memex.agents.owners import org_verdicts

        owned = {mid for mid, why in org_verdicts(ctx, org_rows).items() if why is None}
    remote_rows = [r for r in claimed if str(r["location"]).startswith("remote:")]
    approved: set[str] = set()
    if remote_rows:
        from git_memex.remote.cache import verdicts

        approved = {mid for mid, why in verdicts(ctx, remote_rows).items() if why is None}
    personal_ok: set[str] = set()
    if any(r["location"] == "personal" for r in claimed):
        from git_memex.agents.approval_record import personal_verdict

        personal_ok = {r["id"] for r in claimed
                       if r["location"] == "personal" and personal_verdict(ctx, r, current_user) is None}
    return [r for r in claimed
            if r["id"] in personal_ok or (r["location"] == "repo" and r["id"] in reviewed)
            or (str(r["location"]).startswith("org:") and r["id"] in owned)
            or (str(r["location"]).startswith("remote:") and r["id"] in approved)]


def why_not(ctx: Context, row: Mapping[str, Any] | sqlite3.Row, current_user: str | None,
            reviewed: Mapping[str, str | None] | None = None,
            org: Mapping[str, str | None] | None = None) -> str | None:
    """None when the row passes the gate, else one phrase saying why not (for `instruction list`
    and `audit`). `reviewed` is `repo_verdicts` of the rows being listed and `org`
    `owners.org_verdicts` of the org ones, each asked once for all of them."""
    if _field(row, "role") != "instruction":
        return "not a rule (role knowledge)"
    state = _field(row, "instruction_state") or "draft"
    if state != "approved":
        return f"instruction_state {state}"
    if not passes_claims(row, current_user):
        return "its fields fail the gate (trust level, source, status or owner)"
    loc = _field(row, "location")
    if loc == "personal":
        from git_memex.agents.approval_record import personal_verdict

        return personal_verdict(ctx, row, current_user)
    if loc is not None and loc.startswith("org:"):
        if org is None:
            from git_memex.agents.owners import org_verdicts

            org = org_verdicts(ctx, [row])
        return org.get(_field(row, "id") or "", "not checked against the org repo's history")
    if loc is not None and loc.startswith("remote:"):
        from git_memex.remote.cache import verdicts as remote_verdicts

        return remote_verdicts(ctx, [row]).get(_field(row, "id") or "", "not checked against the remote's review")
    if loc != "repo":
        return f"in the {loc}, not the repository: submit it for review"
    verdicts = repo_verdicts(ctx, [row]) if reviewed is None else reviewed
    return verdicts.get(_field(row, "id") or "", "not checked against the default branch")


# --------------------------------------------------------------------- what a label may say
def claims_approval(row: Mapping[str, Any] | sqlite3.Row) -> bool:
    """Whether a rule's own fields say it is approved (``instruction_state: approved``, or
    ``review_state`` approved or published): a claim anyone can type, which only the gate checks."""
    return (_field(row, "instruction_state") == "approved"
            or _field(row, "review_state") in ("approved", "published"))


def verdicts(ctx: Context, rows: Iterable[Mapping[str, Any] | sqlite3.Row]) -> dict[str, str | None]:
    """For each rule among `rows` (role instruction; index rows): None when the whole gate passes
    (it is served to agents as a rule), else why not (`why_not`). The default branch and the org
    repos are asked once for all of them; the person only when a personal rule is among them.
    Labels (MCP `memory_search`, `memory_get`) say what this says, never what a file claims."""
    rules = [r for r in rows if _field(r, "role") == "instruction" and _field(r, "id")]
    if not rules:
        return {}
    user: str | None = None
    if any(_field(r, "location") == "personal" for r in rules):
        from git_memex.core.person import person

        user = person(ctx)
    repo_rows = [r for r in rules if _field(r, "location") == "repo" and passes_claims(r, user)]
    reviewed = repo_verdicts(ctx, repo_rows) if repo_rows else {}
    org_rows = [r for r in rules if (_field(r, "location") or "").startswith("org:") and passes_claims(r, user)]
    org: Mapping[str, str | None] = {}
    if org_rows:
        from git_memex.agents.owners import org_verdicts

        org = org_verdicts(ctx, org_rows)
    return {str(r["id"]): why_not(ctx, r, user, reviewed=reviewed, org=org) for r in rules}


def approved_where(ctx: Context, row: Mapping[str, Any] | sqlite3.Row) -> str | None:
    """Who approved a rule that was approved outside this project, and where, for the session
    block: ``approved by "carol", a reviewer of remote team (http://127.0.0.1:8731)`` or ``approved
    by "local:ann@example.com", an owner in org acme``; None for a rule of this project or of this
    machine (personal). Read from the file the gate checked (its ``approved_by``: for a remote
    rule the server wrote it, for an org rule the gate checked it names an owner), masked like any
    field, and shown as data (`render.quoted`: in quotes, controls and bidi characters escaped,
    at most `render.NAME_CHARS` characters): another party wrote it. The remote's URL is shown as
    `remote.protocol.shown_url` gives it (no user, password, query or fragment); one git config
    cannot read as a URL is named so. Never raises: the line is a courtesy, and nothing in it may
    cost the session block its rules."""
    loc = _field(row, "location") or ""
    if not loc.startswith(("org:", "remote:")):
        return None
    from git_memex.agents.render import quoted
    from git_memex.core import frontmatter
    from git_memex.core.files import UnreadableMemory, read_bytes
    from git_memex.secrets.redact import redact

    kind, name = loc.split(":", 1)
    who: str | None = None
    try:
        root = ctx.org_clone(name) if kind == "org" else ctx.remote_cache(name)
        fm, _ = frontmatter.parse(read_bytes(str(_field(row, "path")), root=root).decode("utf-8"))
        value = fm.get("approved_by")
        who = value.strip() if isinstance(value, str) and value.strip() else None
    except (UnreadableMemory, UnicodeDecodeError, frontmatter.FrontmatterError, OSError, ValueError, TypeError):
        who = None
    by = f"approved by {quoted(redact(who, ctx.redact_patterns).text)}" if who else "approved"
    if kind == "org":
        text = f"{by}, an owner in org {name}"
    else:
        from git_memex.remote.protocol import shown_url

        raw = str(ctx.config.get(f"memex.remote.{name}.url") or "")
        url = shown_url(raw)
        where = f" ({url})" if url else " (its configured URL is not one: `git memex remote list`)" if raw else ""
        text = f"{by}, a reviewer of remote {name}{where}"
    return redact(text, ctx.redact_patterns).text

"""The core operations: plain arguments in, plain results out; no printing.

The CLI and the MCP server are thin adapters over these functions.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from git_memex.core import model
from git_memex.core.context import Context
from git_memex.core.files import (
    UnreadableMemory,
    crash_point,
    delete_file,
    file_text,
    read_memory,
    size_problem,
    write_memory,
)
from git_memex.core.model import Memory, ValidationError
from git_memex.core.person import person
from git_memex.core.record import field, record
from git_memex.errors import FAILED, MemexError, NotFound, UsageError
from git_memex.index.database import RefreshStats
from git_memex.index.stores import Found, Stores, opened

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Unpack

LIFECYCLE_TARGETS = ("active", "deprecated", "retracted", "archived")
NEAR_DUP_CANDIDATES = 20
MAX_QUERY_CHARS = 2000
"""Longest query `search` (CLI and MCP) accepts; a longer one is refused, not truncated."""


def _invalid(exc: ValidationError) -> UsageError:
    return UsageError(str(exc))


def location_for(scope: str, visibility: str | None) -> str:
    if scope == "personal":
        return "personal"
    if visibility == "private":
        return "private"
    return "outbox"


# ------------------------------------------------------------------ add
@record
class AddResult:
    id: str | None
    scope: str
    review_state: str | None
    duplicate_of: str | None
    near_duplicates: list[str]
    masked: list[str]
    private_spans: int = 0
    path: str | None = None
    location: str | None = None
    body: str | None = None  # as written: masked, <private> parts removed

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "review_state": self.review_state,
            "duplicate_of": self.duplicate_of,
            "near_duplicates": self.near_duplicates,
            "masked": self.masked,
            "path": self.path,
        }


def _scope_locations(scope: str) -> tuple[str, ...]:
    return ("personal",) if scope == "personal" else ("repo", "outbox", "private")


def find_duplicate(stores: Stores, scope: str, body: str) -> str | None:
    from git_memex.core.textproc import content_hash

    h = content_hash(body)
    locs = _scope_locations(scope)
    marks = ",".join("?" * len(locs))
    row = stores.first(f"m.content_hash = ? AND m.status = 'active' AND m.location IN ({marks})", (h, *locs),
                       columns="m.id", order_by="m.id", limit=1)
    return str(row[0]) if row else None


def find_turn_echo(ctx: Context, scope: str, text: str, *, now: float | None = None) -> str | None:
    """The id of a memory the keyword capture saved in the last TURN_ECHO_WINDOW_S seconds, in
    the same scope, that `text` rewords (Jaccard ≥ TURN_ECHO_THRESHOLD); None when there is none.

    An agent told "remember that …" often saves the same fact again in its own words right after
    the capture hook saved the user's: the second copy is reported, not written."""
    import time

    from git_memex.core.textproc import TURN_ECHO_THRESHOLD, TURN_ECHO_WINDOW_S, jaccard

    since = (time.time() if now is None else now) - TURN_ECHO_WINDOW_S
    locs = _scope_locations(scope)
    marks = ",".join("?" * len(locs))
    best: tuple[float, str] | None = None
    with opened(ctx, None) as st:
        st.refresh()
        for r in st.rows(f"m.source = 'keyword' AND m.status = 'active' AND m.updated_ts >= ? AND m.location IN ({marks})",
                         (since, *locs), columns="m.id, m.body"):
            sim = jaccard(text, r["body"] or "")
            if sim >= TURN_ECHO_THRESHOLD and (best is None or sim > best[0]):
                best = (sim, str(r["id"]))
    return best[1] if best else None


def find_near_duplicates(stores: Stores, scope: str, body: str, exclude: str | None = None) -> list[str]:
    from git_memex.core.textproc import NEAR_DUP_THRESHOLD, jaccard
    from git_memex.search.engine import search

    res = search(stores, body, scope="personal" if scope == "personal" else "project",
                 limit=NEAR_DUP_CANDIDATES, refresh=False)
    out = []
    for h in res.hits:
        if h.id == exclude:
            continue
        row = stores.one(h.id, "m.body", scoped=False)
        if row is not None and jaccard(body, row[0]) >= NEAR_DUP_THRESHOLD:
            out.append(h.id)
    return out


ALIASES_MAX = 4
"""Capture-time aliases a memory may carry (the reference tool's limit)."""


def _vocabulary(aliases: list[str] | None, alias: str | None, target: str | None,
                patterns: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    words = [" ".join(a.split()) for a in aliases or [] if a and a.strip()]
    if len(words) > ALIASES_MAX:
        raise UsageError(f"a memory takes at most {ALIASES_MAX} aliases, not {len(words)}")
    if words:
        out["aliases"] = words  # masked with every other field by `admission.admit`
    a, t = (alias or "").strip(), (target or "").strip()
    if bool(a) != bool(t):
        raise UsageError("alias and target go together: the alias is another name for the target")
    if a:
        out["alias"], out["target"] = a, t
    return out


def _duplicate(st: Stores, scope: str, dup: str, red: Any) -> AddResult:
    """The answer to an add of an existing memory's text: that memory, in `id` and `duplicate_of`
    (docs/decisions.md, exit codes), with its review state, path and location; nothing is written."""
    state: str | None = None
    path: str | None = None
    loc: str | None = None
    try:
        found = st.find(dup)
        state, path, loc = found.row["standing"], str(found.path), found.row["location"]
    except NotFound:  # removed between the check and now: still nothing written
        pass
    return AddResult(dup, scope, state, dup, [], list(red.masked), red.private_spans, path, loc)


def add(
    ctx: Context,
    text: str,
    *,
    aliases: list[str] | None = None,
    alias: str | None = None,
    target: str | None = None,
    related: list[str] | None = None,
    expires: str | None = None,
    source_detail: str | None = None,
    canonical_ref: str | None = None,
    stores: Stores | None = None,
    **chosen: Unpack[model.Chosen],
) -> AddResult:
    """A new memory. `chosen` is what the writer picks (scope, type, tags…: `model.Chosen`),
    handed to `model.create` as it came. `aliases` are other words it should be found by (at
    most ALIASES_MAX); `alias` and `target` together are a vocabulary entry (the reference
    tool's: a search for either finds memories with the other). Both are masked like the body."""
    from git_memex.secrets.admission import admit, tag_holds_secret
    from git_memex.secrets.redact import redact

    extra = _vocabulary(aliases, alias, target, ctx.redact_patterns)
    if source_detail:  # a caller's own word for where it came from, kept as data (docs/agents.md)
        extra["source_detail"] = source_detail
    scope = chosen.get("scope", "project")
    visibility = chosen.get("visibility")
    if scope not in ("project", "personal"):
        if scope in model.RESERVED_SCOPES:
            raise UsageError(f"scope {scope!r} is reserved by the protocol; use project or personal")
        raise UsageError(f"scope {scope!r} is not valid; use project or personal")
    if scope == "personal" and visibility not in (None, "private"):
        raise UsageError(f"a personal memory never leaves this machine, so it cannot be {visibility}; "
                         "drop --visibility or use --scope project")
    if scope == "project":
        ctx.require_project()  # a draft outside a repository would belong to no project anyone reaches
    if text is None or not text.strip():
        raise UsageError("memory text is empty; give the text to remember")
    too_big = size_problem(text.strip())  # before the detector reads it: its cost grows with the text
    if too_big is not None:
        raise UsageError(too_big)
    cites = checked_canonical_ref(ctx, canonical_ref) if canonical_ref is not None else None
    red = redact(text.strip(), ctx.redact_patterns)
    body = red.text.strip()
    if not body or body == "[REDACTED]":
        raise UsageError("memory text is empty once <private> parts are removed")
    try:
        m = model.create(body, created_by=person(ctx), repo_id=ctx.repo_id, extra=extra or None,
                         tags_as_given=tag_holds_secret, **chosen)
        if expires is not None:
            try:
                m.fm["expires_at"] = model.expiry(expires)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        if related:
            m.fm["related"] = _resolve_related(ctx, related, stores)
        if cites is not None:
            m.fm["canonical_ref"] = cites
        if location_for(scope, visibility) == "outbox" and (related or extra.get("target")):
            _refuse_local_links(ctx, m, stores)
        # every other field (tags, paths, aliases…) is masked like the body, and reported
        masked = list(red.masked) + list(admit(m, ctx.redact_patterns, body=False, values=red.values))
        file_text(m, Path(f"{m.id}.md"))  # refused before anything is looked up or written
    except ValidationError as exc:
        raise _invalid(exc) from None
    from git_memex.core.files import pause_point
    from git_memex.core.locks import held

    with opened(ctx, stores) as st:
        gen = st.generation()
        st.refresh()
        dup = find_duplicate(st, scope, body)
        if dup is not None:
            return _duplicate(st, scope, dup, red)
        near = find_near_duplicates(st, scope, body)  # advice only: outside the lock
        loc = location_for(scope, m.fm.get("visibility"))
        pause_point("add.before_lock")
        # One writer at a time per dedup domain, from the duplicate check to the index row, across
        # processes: concurrent adds of one text keep one file, the others get duplicate_of.
        lock = "add-personal" if scope == "personal" else f"add-project-{ctx.project_key}"
        with held(ctx.data_root, lock):
            while True:
                dup = find_duplicate(st, scope, body)
                if dup is not None:
                    return _duplicate(st, scope, dup, red)
                # An index emptied since our refresh (a `reindex --full` running in another
                # process) does not yet hold every file again: "no row" proves nothing until we
                # have read the files ourselves.
                now = st.generation()
                if now == gen:
                    break
                gen = now
                st.refresh()
            src = st.source(loc)
            write_memory(src.folder, m, private=loc != "repo")
            crash_point("add.after_write")
            st.index_for(loc).upsert(m, src)
        return AddResult(
            m.id, scope, m.review_state, None, near, masked, red.private_spans,
            str(m.path), loc, m.body,
        )


# ------------------------------------------------------------------ read
def load(found: Found) -> Memory:
    try:
        return read_memory(found.path)
    except UnreadableMemory as exc:
        raise MemexError(f"{found.path} {exc}", FAILED) from None


def chain_warnings(stores: Stores, m: Memory) -> list[str]:
    """Repair a hand-broken supersede chain in what we return, and say so."""
    from git_memex.search.chains import successor

    out: list[str] = []
    mid = m.id
    newer = successor(stores, mid)
    if newer and m.fm.get("superseded_by") != newer:
        out.append(f"{mid} is superseded by {newer} but its file does not say so; treated as superseded")
        m.fm["superseded_by"] = newer
        m.fm["status"] = "superseded"
    elif newer and m.status != "superseded":
        out.append(f"{mid} names {newer} as its successor but is not marked superseded; treated as superseded")
        m.fm["status"] = "superseded"
    sb = m.fm.get("superseded_by")
    if sb and not newer:
        try:
            succ = load(stores.find(str(sb)))
            if succ.fm.get("supersedes") != mid:
                out.append(f"{sb} replaces {mid} but does not name it in `supersedes`; chain completed in this view")
        except NotFound:
            out.append(f"{mid} names {sb} as its successor, which does not exist")
    return out


def show(ctx: Context, memory_id: str, stores: Stores | None = None) -> dict[str, Any]:
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find(memory_id)
        m = load(found)
        warnings = chain_warnings(st, m) + list(m.warnings)
        out = {"id": m.id, "path": str(found.path), "location": found.row["location"],
               "frontmatter": m.fm, "body": m.body, "warnings": warnings,
               "related": _related(st, m.fm.get("related")),
               "canonical_ref": _canonical_ref(ctx, m.fm.get("canonical_ref"))}
        # the review state it has by where it is and what its history proves (core.model.standing);
        # the frontmatter keeps the file's own claim as written
        out["standing"] = model.standing(found.row["location"], m.fm)
        gate = rule_verdicts(ctx, [found.row])
        if gate:
            out["gate"] = gate[(found.row["id"], found.row["location"])]
        if ctx.remote_names() and not str(found.row["location"]).startswith("remote:"):
            # the copy here wins (docs/remote.md); say when a remote holds a revision saying otherwise
            from git_memex.core.files import read_bytes
            from git_memex.remote import cache

            try:
                here = read_bytes(found.path).decode("utf-8", "replace")
            except (OSError, ValueError):
                here = None
            others = cache.other_revisions(ctx, m.id, here) if here is not None else []
            out["remote_revisions"] = others
            warnings.extend(cache.other_revision_note(m.id, o) for o in others)
        return out


def show_remote(ctx: Context, name: str, memory_id: str) -> dict[str, Any]:
    """`show --remote NAME ID`: the revision remote `name`'s cache holds of ID (an id or a unique
    prefix of it there), the one `remote review NAME ID` reviews, whether or not a copy held here
    hides it from every other read. Its file is read through the one safe reader of the data root;
    a file that is not the bytes the server sent with that revision is said so in `warnings`."""
    from git_memex.core import frontmatter
    from git_memex.core.digest import sha256_hex
    from git_memex.core.files import read_private
    from git_memex.remote import cache

    cache.require(name, ctx)
    state = cache.load_state(ctx, name)
    mid = cache.cached_id(ctx, name, memory_id, state)
    item = state["items"][mid] if isinstance(state["items"].get(mid), dict) else {}
    path = ctx.remote_cache(name) / f"{mid}.md"
    try:
        data = read_private(ctx.data_root, path)
        fm, body = frontmatter.parse(data.decode("utf-8", "replace"))
    except (OSError, ValueError, frontmatter.FrontmatterError):
        raise MemexError(f"the cache of remote {name} holds no readable file of {mid}; `git memex remote pull {name} "
                         "--full` fetches it again", FAILED) from None
    warnings: list[str] = []
    if sha256_hex(data) != item.get("sha256"):
        warnings.append(f"the cached file of {mid} is not what remote {name} sent with revision {item.get('revision')}; "
                        f"`git memex remote pull {name} --full` fetches it again")
    return {"id": mid, "path": str(path), "location": cache.location(name), "remote": name,
            "revision": item.get("revision"), "review_state": item.get("review_state"), "frontmatter": fm,
            "body": body, "warnings": warnings, "related": [], "canonical_ref": None}


def rule_verdicts(ctx: Context, rows: list[sqlite3.Row]) -> dict[tuple[str, str], dict[str, Any]]:
    """For each rule among `rows` (role instruction), by (id, location): what the instruction gate
    says of it (`agents.gate.verdicts`): `served` (it reaches agents as a rule), `claims` (its own
    fields say approved) and `why` not served (masked). What `memory_search`, `memory_list` and
    `memory_get` label a rule by: a file that only claims approval is never shown as approved."""
    rules = [r for r in rows if r["role"] == "instruction"]
    if not rules:
        return {}
    from git_memex.agents.gate import claims_approval, verdicts
    from git_memex.secrets.redact import redact

    said = verdicts(ctx, rules)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rules:
        why = said.get(r["id"], "not checked")
        out[(r["id"], r["location"])] = {"served": why is None, "claims": claims_approval(r),
                                         "why": None if why is None else redact(why, ctx.redact_patterns).text}
    return out


def masked(ctx: Context, res: dict[str, Any]) -> dict[str, Any]:
    """`show`'s result as it may leave the process (show --json, memory_get): the body and every
    frontmatter field masked (`secrets.admission`), and the links it carries said as the masked
    fields say them (a hand-edited file may hold a token where an id or a reference belongs)."""
    from git_memex.secrets.admission import mask_fields, mask_value
    from git_memex.secrets.redact import redact

    fm = mask_fields(res["frontmatter"], ctx.redact_patterns)[0]
    out = {**res, "frontmatter": fm, "body": redact(res["body"] or "", ctx.redact_patterns).text,
           "warnings": mask_value(res.get("warnings") or [], ctx.redact_patterns)[0]}
    if res.get("canonical_ref") is not None:
        out["canonical_ref"] = {**res["canonical_ref"], "ref": fm.get("canonical_ref")}
    ids = fm.get("related") or []
    out["related"] = [{**link, "id": ids[i] if i < len(ids) and isinstance(ids[i], str) else link["id"]}
                      for i, link in enumerate(res.get("related") or [])]
    return out


def _cited_document(ctx: Context, ref: str) -> dict[str, Any] | None:
    """The document a memory's `canonical_ref` cites, as `--explain`'s precedence shows it: where it
    is, whether it exists, and whether it says `authoritative: true` in its own frontmatter. An
    authoritative document stands in the chain's `authoritative-docs` tier, above every memory:
    where the memory and the document disagree, the document wins (docs/org.md, "Precedence").
    The file is read through the one safe reader (a regular file inside the work tree, capped)."""
    from git_memex.core import frontmatter
    from git_memex.core.files import UnreadableMemory, read_bytes
    from git_memex.core.precedence import FACTS

    found = _canonical_ref(ctx, ref)
    if found is None:
        return None
    out: dict[str, Any] = {"ref": ref, "exists": found["exists"], "authoritative": False}
    if found["exists"] and ctx.repo is not None:
        try:
            fm, _ = frontmatter.parse(read_bytes(_cited_path(ctx.repo.work_tree, ref),
                                                 root=ctx.repo.work_tree).decode("utf-8"))
        except (UnreadableMemory, UnicodeDecodeError, frontmatter.FrontmatterError, OSError):
            fm = {}
        if fm.get("authoritative") is True:
            out.update(authoritative=True, tier="authoritative-docs",
                       rank=FACTS.index("authoritative-docs") + 1, of=len(FACTS))
    return out


def _resolve_related(ctx: Context, ids: list[str], stores: Stores | None) -> list[str]:
    """`--related` ids as typed (a unique prefix is enough) made full ids; an unknown one is a
    usage error (exit 1) before anything is written."""
    out: list[str] = []
    with opened(ctx, stores) as st:
        st.refresh()
        for typed in ids:
            mid = st.find(typed.strip()).row["id"]
            if mid not in out:
                out.append(mid)
    return out


def _refuse_local_links(ctx: Context, m: Memory, stores: Stores | None) -> None:
    """A project draft's links never name a memory that stays on this machine (`local_link`):
    refused (exit 1) before anything is written; a private project memory, which never leaves
    the machine either, is not checked."""
    with opened(ctx, stores) as st:
        hit = local_link(st, m.fm)
    if hit is not None:
        key, mid, loc = hit
        raise UsageError(f"a project memory cannot name {loc} memory {mid} in {key}: "
                         "the repository would get its id; link it from a personal memory, "
                         f"or `git memex propose {mid}` and link the copy")


def local_link(st: Stores, fm: dict[str, Any]) -> tuple[str, str, str] | None:
    """(key, id, location) of the first link in `fm` (`related`, `supersedes`, and `alias` or
    `target` when one is a memory's id or an id prefix of MIN_PREFIX+) that names a personal or
    private memory, whose id must never reach the repository; None when there is none. `add`
    and `submit` both ask it."""
    from git_memex.index.stores import MIN_PREFIX

    rel = fm.get("related")
    words = [("related", str(i).strip()) for i in rel if isinstance(i, str)] if isinstance(rel, list) else []
    words += [(k, str(fm[k]).strip()) for k in ("supersedes", "alias", "target") if isinstance(fm.get(k), str)]
    for key, word in words:
        if not word or any(c.isspace() for c in word):
            continue
        pattern = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        row = st.first("m.location IN ('personal', 'private') AND (m.id = ? COLLATE NOCASE"
                       " OR (length(?) >= ? AND m.id LIKE ? ESCAPE '\\'))",
                       (word, word, MIN_PREFIX, pattern), columns="m.id, m.location")
        if row is not None:
            return key, str(row[0]), str(row[1])
    return None


def _related(st: Stores, ids: Any) -> list[dict[str, Any]]:
    """Each id the memory links to: whether this clone holds it, and its first line (masked)."""
    from git_memex.search.engine import _snippet
    from git_memex.secrets.guard import safe_bodies

    out: list[dict[str, Any]] = []
    wanted = [i for i in (ids or []) if isinstance(i, str)]
    rows = {i: st.one(i) if model.SAFE_ID_RE.match(i) and len(i) == 26 else None for i in wanted}
    bodies = safe_bodies(st, [(r["id"], r["body"]) for r in rows.values() if r is not None])
    for i in wanted:
        r = rows[i]
        out.append({"id": i, "found": r is not None, "status": r["status"] if r is not None else None,
                    "snippet": _snippet(bodies[r["id"]], [])[:80] if r is not None else None})
    return out


CANONICAL_REF_MAX = 1000
"""The longest `canonical_ref` a writer may set (a path in a repository, or a URL)."""


def checked_canonical_ref(ctx: Context, ref: str) -> str:
    """`add --canonical-ref` / MCP `canonical_ref` as it is written (docs/format.md, `canonical_ref`),
    or a usage error (exit 1) before anything is written. Two forms:

    * an `http://` or `https://` URL with a host (the wiki page, the ADR on the code host);
    * a path relative to the repository's work tree, with `/` between folders and an optional
      `#anchor`, naming a file that exists there: `docs/adr/003-queues.md#decision`. `./` and
      `a/../b` are normalised away; an absolute path, a `..` leading out of the work tree (a
      link included), a backslash, a path into `.git/` (through a link too: the path is resolved
      and refused inside the git directory) and, outside a repository, any path are refused: a
      memory points at the project's own documents, which everyone who clones it has.

    A value starting with a scheme (`word:`) is a URL: any scheme but http and https is refused
    (`file:/etc/passwd`, `javascript:…`, `mailto:…`, whether or not a file of that name exists
    in the work tree). A control or format character anywhere (ESC, NEL, U+2028, a bidi
    override) is refused: the reference is shown to people and agents, and must read as written.

    The value is then masked like every other field (`secrets.admission.admit`): a token in a URL
    never reaches the file."""
    import posixpath
    import re
    import unicodedata

    value = ref.strip()
    if not value:
        raise UsageError("--canonical-ref is empty; give a path in the repository or a URL")
    if len(value) > CANONICAL_REF_MAX or any(c in value for c in "\n\r\0\t"):
        raise UsageError(f"--canonical-ref must be one line of at most {CANONICAL_REF_MAX} characters")
    odd = next((c for c in value if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn")), None)
    if odd is not None:  # ESC, NEL, U+2028, a bidi override: a reference is shown, and must read as written
        raise UsageError(f"--canonical-ref holds U+{ord(odd):04X}, a control or format character; a path or a URL "
                         "has none")
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", value)
    if scheme and len(scheme.group(1)) > 1:  # `file:/etc/passwd`, `javascript:…`, `mailto:…`: a URL, not a path
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(value)
            host = parts.hostname
        except ValueError:
            parts, host = None, None
        if parts is None or parts.scheme.lower() not in ("http", "https") or not host or "://" not in value:
            raise UsageError(f"--canonical-ref takes an http:// or https:// URL with a host, or a path in the "
                             f"repository; {scheme.group(1)}: is neither")
        return value
    path, _, anchor = value.partition("#")
    if "\\" in path or path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise UsageError(f"--canonical-ref {path!r} must be a path relative to the repository's top folder, "
                         "with / between folders (docs/adr/003.md)")
    norm = posixpath.normpath(path)
    if norm in ("", ".") or norm == ".." or norm.startswith("../"):
        raise UsageError(f"--canonical-ref {path!r} leads out of the repository; name a file inside it")
    if any(part.lower() == ".git" for part in norm.split("/")):
        raise UsageError(f"--canonical-ref {path!r} is inside .git; name a document of the project")
    if ctx.repo is None:
        raise UsageError("--canonical-ref names a path, and this is not a git repository; run it inside the "
                         "repository that holds the document, or give a URL")
    import os

    from git_memex.core.files import inside

    target = ctx.repo.work_tree / norm
    if not inside(target, ctx.repo.work_tree):
        raise UsageError(f"--canonical-ref {path!r} leads out of the repository (through a link); "
                         "name a file inside it")
    real = os.path.realpath(target)
    if (any(inside(real, d) for d in {ctx.repo.git_dir, ctx.repo.common_dir})
            or ".git" in (p.lower() for p in os.path.relpath(real, os.path.realpath(ctx.repo.work_tree)).split(os.sep))):
        raise UsageError(f"--canonical-ref {path!r} leads into .git (through a link); name a document of the project")
    if not os.path.isfile(target):
        raise UsageError(f"--canonical-ref {norm!r}: no such file in the repository ({ctx.repo.work_tree}); "
                         "check the path (relative to the repository's top folder)")
    return norm + (f"#{anchor}" if anchor else "")


def _cited_path(work_tree: Path, ref: str) -> Path:
    """The file a `canonical_ref` path names in the work tree (its `#anchor` dropped)."""
    return work_tree / ref.split("#", 1)[0].lstrip("/")


def _canonical_ref(ctx: Context, ref: Any) -> dict[str, Any] | None:
    """The document a memory cites: a URL is external; a path is looked up in the work tree (never
    outside it, never read), so `show` can say whether it exists."""
    if not isinstance(ref, str) or not ref.strip():
        return None
    if "://" in ref:
        return {"ref": ref, "kind": "url", "exists": None}
    if ctx.repo is None:
        return {"ref": ref, "kind": "path", "exists": None}
    import os

    from git_memex.core.files import inside

    target = _cited_path(ctx.repo.work_tree, ref)
    ok = inside(target, ctx.repo.work_tree)
    return {"ref": ref, "kind": "path", "exists": bool(ok and os.path.lexists(target)),
            **({} if ok else {"outside": True})}


def list_memories(
    ctx: Context,
    *,
    scope: str = "both",
    type: str | None = None,
    limit: int = 20,
    include: str = "active",
    review_state: str | None = None,
    confidence: str | None = None,
    stores: Stores | None = None,
) -> dict[str, Any]:
    from git_memex.index.schema import NOT_EXPIRED
    from git_memex.index.stores import scope_filter
    from git_memex.search.chains import superseded_ids

    with opened(ctx, stores) as st:
        st.refresh()
        cond = scope_filter(scope)
        args: list[Any] = []
        if include == "active":
            cond += " AND m.status IN ('active', 'deprecated') AND " + NOT_EXPIRED
        if confidence:
            # no confidence written means the default, medium (docs/format.md)
            cond += " AND coalesce(m.confidence, 'medium') = ?"
            args.append(confidence)
        if type:
            cond += " AND m.type = ?"
            args.append(type)
        if review_state:  # as it stands (core.model.standing), as the listing labels it
            cond += " AND m.standing = ?"
            args.append(review_state)
        rows = st.by_id(cond, args)
        newer: dict[str, str] = {}
        if include == "active":
            gone = superseded_ids(st, list(rows))
            for g in gone:
                rows.pop(g, None)
        else:  # a hand-broken chain is repaired in what is shown, as search and show do (search/chains.py)
            from git_memex.search.chains import replacements

            for new, old in replacements(st, list(rows)):
                newer.setdefault(old, new)
        ordered = sorted(rows.values(), key=lambda r: (r["updated_ts"] or 0, r["id"]), reverse=True)
        total = len(ordered)
        from git_memex.secrets.guard import safe_bodies, safe_tags

        page = ordered[: max(limit, 0)]
        bodies = safe_bodies(st, [(r["id"], r["body"]) for r in page])
        tags = safe_tags(st, [(r["id"], json.loads(r["tags"] or "[]")) for r in page])
        from git_memex.agents.render import ABBREV, short_ids

        abbrev = short_ids(st, [r["id"] for r in page], ABBREV)
        gate = rule_verdicts(ctx, page)
        memories = [{**summary(r, bodies[r["id"]], tags[r["id"]], newer.get(r["id"])), "short_id": abbrev[r["id"]],
                     **({"gate": gate[(r["id"], r["location"])]} if (r["id"], r["location"]) in gate else {})}
                    for r in page]
        out: dict[str, Any] = {"memories": memories, "total": total, "limit": limit, "more": total > len(page)}
        from git_memex.review.contradictions import (
            ANSWER_LIMIT,
            annotate,
            disagreement_json,
            shown_item,
        )

        found = annotate(ctx, memories, [shown_item(r["id"], r["body"] or "", r["location"], r["type"], r["source"],
                                                     r["review_state"], r["content_hash"], r["path"])
                                          for r in page if r["status"] == "active" and r["id"] not in newer],
                         reorder=False)  # a memory shown superseded (a chain repaired on read) disagrees with nothing
        if found:
            out["disagreements"] = [disagreement_json(c) for c in found[:ANSWER_LIMIT]]
            if len(found) > ANSWER_LIMIT:
                out["disagreements_left_out"] = len(found) - ANSWER_LIMIT
        fresh = remote_freshness(ctx, [r["location"] for r in page])
        if fresh:
            out["freshness"] = fresh
        others = remote_others(ctx, [(r["id"], r["location"], r["path"]) for r in page])
        if others:
            out["remote_revisions"] = others
        return out


def summary(r: sqlite3.Row, body: str, tags: list[str] | None = None, newer: str | None = None) -> dict[str, Any]:
    """A listing entry; `body` is the row's body as `guard.safe_bodies` gives it, `tags` its tags
    as `guard.safe_tags` does (default: as stored). `newer`: the live memory that replaces it
    (`chains.replacements`), whatever its own file says: it is then shown superseded, naming it."""
    from git_memex.search.engine import _snippet

    out: dict[str, Any] = {
        "id": r["id"],
        "scope": r["scope"],
        "type": r["type"],
        "status": r["status"],
        "review_state": r["standing"],  # its standing (core.model.standing), never the file's claim alone
        "snippet": _snippet(body, []),
        "location": r["location"],
        "tags": json.loads(r["tags"] or "[]") if tags is None else tags,
        "importance": r["importance"],
        "updated_at": r["updated_at"],
        "role": r["role"] or "knowledge",
        "source": r["source"],
    }
    claim = model.claim_beyond(r["location"], r["review_state"], r["standing"])
    if claim:
        out["review_claim"] = claim
    if r["location"].startswith("org:"):
        out["org"] = r["location"][len("org:"):]  # the label of an org memory (docs/org.md)
    elif r["location"].startswith("remote:"):
        out["remote"] = r["location"][len("remote:"):]  # a remote server's memory (docs/remote.md)
    if newer is not None and r["status"] not in ("retracted", "archived"):
        if r["status"] != "superseded" or r["superseded_by"] != newer:
            out["chain"] = f"repaired on read: {newer} replaces it, which its own file does not say"
        out["status"] = "superseded"
        out["superseded_by"] = newer
    elif r["status"] == "superseded" and r["superseded_by"]:
        out["superseded_by"] = r["superseded_by"]
    return out


CONFIDENCE_POOL = 500
"""With a confidence filter, search ranks this many and keeps those of that confidence: the
regret window is a review of a few memories, not a second index."""


def search(ctx: Context, query: str, *, scope: str = "both", type: str | None = None,
           limit: int = 8, explain: bool = False, confidence: str | None = None,
           stores: Stores | None = None) -> dict[str, Any]:
    from git_memex.search.engine import search as run

    if not query or not query.strip():
        raise UsageError("search needs a query")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}, "
                         "so search for its key words instead")
    if limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {limit})")
    with opened(ctx, stores) as st:
        res = run(st, query, scope=scope, type=type, limit=max(limit, CONFIDENCE_POOL) if confidence else limit,
                  explain=explain)
        if confidence:
            kept = [h for h in res.hits if (h.confidence or "medium") == confidence]
            res.more = len(kept) > limit or (res.more and len(kept) >= limit)
            res.hits = kept[:limit]
        from git_memex.secrets.guard import safe_tags

        tags = safe_tags(st, [(h.id, h.tags) for h in res.hits])  # a tag may hold a secret too
        for h in res.hits:
            h.tags = tags[h.id]
            if h.canonical_ref:  # and the reference a memory cites (a URL with a token in it)
                from git_memex.secrets.redact import redact

                h.canonical_ref = redact(h.canonical_ref, ctx.redact_patterns).text
        from git_memex.search.engine import _snippet
        from git_memex.secrets.guard import safe_bodies

        safe = safe_bodies(st, [(h.id, h.body) for h in res.hits])
        for h in res.hits:
            if safe[h.id] != h.body:
                h.snippet = _snippet(safe[h.id], res.terms)
        if explain:  # which hit wins where two disagree (docs/org.md, "Precedence"); ranking is untouched
            from git_memex.core.precedence import CHAINS, tier

            cited: dict[str, dict[str, Any] | None] = {}
            for h in res.hits:
                h.explain["precedence"] = tier(h)
                if h.canonical_ref:
                    if h.canonical_ref not in cited:
                        cited[h.canonical_ref] = _cited_document(ctx, h.canonical_ref)
                    if cited[h.canonical_ref] is not None:
                        h.explain["precedence"]["cites"] = cited[h.canonical_ref]
        from git_memex.agents.render import ABBREV, short_ids

        abbrev = short_ids(st, [h.id for h in res.hits], ABBREV)
        # the query is echoed back: masked like a body (a pasted token), the verdict remembered
        out: dict[str, Any] = {"query": safe_bodies(st, [("", query)])[""],
                               "hits": [{**h.to_json(explain), "short_id": abbrev[h.id]} for h in res.hits],
                               "limit": limit, "more": res.more}
        rules = [h.path for h in res.hits if h.role == "instruction"]
        if rules:  # what the gate says of each rule, for its label (never what the file claims)
            gate = rule_verdicts(ctx, st.rows(f"m.path IN ({','.join('?' * len(rules))})", rules))
            for d in out["hits"]:
                if (d["id"], d["location"]) in gate:
                    d["gate"] = gate[(d["id"], d["location"])]
        # hits that disagree name each other, the one precedence prefers first (docs/search.md)
        from git_memex.review.contradictions import (
            ANSWER_LIMIT,
            annotate,
            disagreement_json,
            shown_item,
        )

        found = annotate(ctx, out["hits"], [shown_item(h.id, h.body, h.location, h.type, h.source, h.review_state,
                                                       path=h.path)
                                            for h in res.hits if h.status == "active"])
        if found:
            out["disagreements"] = [disagreement_json(c) for c in found[:ANSWER_LIMIT]]
            if len(found) > ANSWER_LIMIT:
                out["disagreements_left_out"] = len(found) - ANSWER_LIMIT
        if explain:
            out["precedence"] = {k: list(v) for k, v in CHAINS.items()}
            out["fts"] = res.fts
            out["ranking"] = res.ranking
            out["elapsed_ms"] = round(res.elapsed_ms, 3)
            out["semantic"] = res.semantic
        if st.warnings:
            out["warnings"] = list(st.warnings)
        fresh = remote_freshness(ctx, [h.location for h in res.hits])
        if fresh:
            out["freshness"] = fresh
        others = remote_others(ctx, [(h.id, h.location, h.path) for h in res.hits])
        if others:
            out["remote_revisions"] = others
        return out


def remote_others(ctx: Context, shown: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The remote revisions that differ from a copy shown from here, (id, location, path) each
    (docs/remote.md, "The same id here and on the server"): the copy here wins every read, so
    the listing says when a server holds (or approved) something else. [] without a subscription."""
    if not shown or not ctx.remote_names():
        return []
    from git_memex.remote.cache import others_shown

    return others_shown(ctx, shown)


def remote_freshness(ctx: Context, locations: list[str]) -> list[dict[str, Any]]:
    """How fresh each remote cache among `locations` is (docs/remote.md, "Freshness"); [] when
    none of them is a remote's (the common case: nothing imported)."""
    if not any(str(loc or "").startswith("remote:") for loc in locations):
        return []
    from git_memex.remote.cache import notes_for

    return notes_for(ctx, locations)


# ------------------------------------------------------------------ lifecycle
def _rewrite(st: Stores, found: Found, m: Memory) -> None:
    model.touch(m)
    if found.source.location == "repo":
        model.stamp_reference(m.fm, st.ctx.reference_keys)
    write_memory(found.source.folder, m, private=found.source.location != "repo")
    found.index.upsert(m, found.source)


def _retire(st: Stores, found: Found, why: str) -> None:
    """A rule switched off stays off: its approvals are voided for good (`instruction.retire`), so a
    restored file, a cherry-picked approval or a reverted revocation never serves it again."""
    loc = found.source.location
    if loc not in ("repo", "personal"):
        return
    from git_memex.agents import instruction

    record = instruction._record_path(st.ctx, loc, str(found.row["id"]))
    if found.row["role"] != "instruction" and not record.exists():
        return  # only rules are approved: nothing to void, no git call
    from git_memex.core.person import actor

    instruction.retire(st.ctx, loc, str(found.row["id"]), why, actor(st.ctx))


def staged_fields(staged: list[str]) -> dict[str, Any]:
    from git_memex.git.sync import staged_fields as fields

    return fields(staged)


def _stage_repo(st: Stores, found: Found) -> list[str]:
    """A repository memory's changed (or deleted) file is staged, with the approval and
    revocation records a switch-off wrote for it (`instruction.retire`), so a plain `git commit`
    records the change (docs/git.md, "What a command stages"); returns what was staged ([]
    elsewhere). Not after `supersede`: its marking waits for `submit NEW`, which commits it with
    the successor (a commit of the marking alone is refused as a dangling `superseded_by`)."""
    if found.source.location != "repo" or st.ctx.repo is None:
        return []
    from git_memex.agents.instruction import _record_path, _revocation_path, _stage_rule

    mid = str(found.row["id"])
    return _stage_rule(st.ctx, "repo", Path(found.path), _record_path(st.ctx, "repo", mid),
                       _revocation_path(st.ctx, "repo", mid))


def supersede(ctx: Context, memory_id: str, text: str, *, via: str = "cli", source: str = "cli",
              type: str | None = None, tags: list[str] | None = None, role: str | None = None,
              confidence: str | None = None, stores: Stores | None = None) -> dict[str, Any]:
    """A new memory replacing `memory_id`; type, tags, role and confidence are the old one's
    unless given."""
    from git_memex.secrets.admission import admit, tag_holds_secret
    from git_memex.secrets.redact import redact

    if not text or not text.strip():
        raise UsageError("the new memory text is empty")
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find_changeable(memory_id)
        old = load(found)
        if old.status in ("superseded", "retracted", "archived"):
            nxt = old.fm.get("superseded_by")
            hint = f"; supersede {nxt} instead" if nxt else ""
            raise MemexError(f"{old.id} is {old.status} and cannot be superseded{hint}", FAILED)
        too_big = size_problem(text.strip())  # before the detector reads it
        if too_big is not None:
            raise UsageError(too_big)
        red = redact(text.strip(), ctx.redact_patterns)
        fm = old.fm
        scope = str(fm.get("scope", "project"))
        try:
            new = model.create(
                red.text.strip(),
                tags_as_given=tag_holds_secret,
                scope=scope if scope in ("personal", "project") else "project",
                type=type or (str(fm.get("type", "fact")) if fm.get("type") in model.TYPES else "fact"),
                tags=old.tags if tags is None else tags,
                importance=str(fm.get("importance") or "normal"),
                role=role or str(fm.get("role") or "knowledge"),
                source=source,
                visibility=fm.get("visibility"),
                confidence=confidence or (fm.get("confidence") if fm.get("confidence") in model.CONFIDENCES else None),
                created_by=person(ctx),
                via=via,
                repo_id=ctx.repo_id,
                paths=old.paths,
            )
            new.fm["supersedes"] = old.id
            masked = list(red.masked) + list(admit(new, ctx.redact_patterns, body=False, values=red.values))
            file_text(new, Path(f"{new.id}.md"))
        except ValidationError as exc:
            raise _invalid(exc) from None
        loc = found.source.location
        if loc == "repo":
            loc = "outbox"  # a replacement of team knowledge goes through review too
        src = st.source(loc) if loc in ("personal", "outbox", "private") else found.source
        write_memory(src.folder, new, private=True)
        st.index_for(loc).upsert(new, src)
        crash_point("supersede.after_new")  # a rerun of reindex completes the old side
        old.fm["status"] = "superseded"
        old.fm["superseded_by"] = new.id
        _rewrite(st, found, old)
        _retire(st, found, "superseded")
        return {"id": new.id, "supersedes": old.id, "masked": masked, "location": loc}


def set_status(ctx: Context, memory_id: str, status: str, stores: Stores | None = None) -> dict[str, Any]:
    if status not in LIFECYCLE_TARGETS:
        if status == "superseded":
            raise UsageError("a memory becomes superseded only through `git memex supersede ID TEXT`")
        raise UsageError(f"status {status!r} is not valid; use one of: {', '.join(LIFECYCLE_TARGETS)}")
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find_changeable(memory_id)
        m = load(found)
        old = m.status
        if old == status:
            return {"id": m.id, "from": old, "to": status, "changed": False}
        if old == "retracted" and status == "active":
            raise MemexError(f"{m.id} was retracted as wrong and cannot become active again; add a new memory instead", FAILED)
        if old == "superseded":
            nxt = m.fm.get("superseded_by")
            raise MemexError(f"{m.id} is superseded" + (f" by {nxt}; change that memory instead" if nxt else
                             "; change the memory that replaced it instead"), FAILED)
        m.fm["status"] = status
        _rewrite(st, found, m)
        if status != "active":
            _retire(st, found, status)
        staged = _stage_repo(st, found)
        return {"id": m.id, "from": old, "to": status, "changed": True, **staged_fields(staged)}


def forget(ctx: Context, memory_id: str, *, soft: bool = False, stores: Stores | None = None) -> dict[str, Any]:
    with opened(ctx, stores) as st:
        st.refresh()
        found = st.find_changeable(memory_id)
        mid = found.row["id"]
        if soft:
            m = load(found)
            if m.status == "retracted":
                return {"id": mid, "deleted": False, "status": "retracted", "changed": False}
            m.fm["status"] = "retracted"
            _rewrite(st, found, m)
            _retire(st, found, "retracted")
            staged = _stage_repo(st, found)
            return {"id": mid, "deleted": False, "status": "retracted", "changed": True, **staged_fields(staged)}
        removed = []
        staged = []
        for f in st.find_all(mid):
            delete_file(f.path)
            f.index.remove(f.path)
            _retire(st, f, "forgotten")
            staged += _stage_repo(st, f)
            removed.append(str(f.path))
        return {"id": mid, "deleted": True, "paths": removed, **staged_fields(staged)}


def forget_expired(ctx: Context, *, dry_run: bool = False, stores: Stores | None = None) -> dict[str, Any]:
    """Delete the local files (personal, outbox, private) whose `expires_at` has passed: the
    explicit garbage collection, `forget --expired` (docs/format.md). A committed file is only listed: removing it is
    a commit, which a person makes (`git memex forget ID`, then commit). Org memories expire in
    their org repository."""
    from git_memex.index.schema import NOT_EXPIRED

    local = ("personal", "outbox", "private")
    with opened(ctx, stores) as st:
        st.refresh()
        expired = st.by_id(f"m.expires_ts IS NOT NULL AND NOT {NOT_EXPIRED}", order_by="m.id")
        deleted: list[dict[str, Any]] = []
        in_repo: list[str] = []
        for mid, row in expired.items():
            if row["location"] == "repo":
                in_repo.append(mid)
                continue
            for f in st.find_all(mid):
                if f.row["location"] not in local:
                    continue
                if not dry_run:
                    delete_file(f.path)
                    f.index.remove(f.path)
                deleted.append({"id": mid, "path": str(f.path), "expires_at": row["expires_ts"] and
                                model.epoch_ms_to_rfc3339(row["expires_ts"] * 1000)})
        return {"dry_run": dry_run, "deleted": deleted, "in_repository": in_repo}


# ------------------------------------------------------------------ index
@record
class ReindexResult:
    stats: RefreshStats
    full: bool
    quarantined: list[tuple[str, str]] = field(default_factory=list)
    total: int = 0
    repaired: list[str] = field(default_factory=list)


def repair_chains(st: Stores) -> list[str]:
    """Complete supersede chains whose newer side exists but whose older side was never updated.

    This is what an interrupted `supersede` leaves (the new memory is written first), and what a
    hand edit of only one side leaves. Only the old file's status and superseded_by change, and
    only the copies the newer memory may replace (`chains.links`) in a location this machine
    writes (`chains.REPAIRABLE`): a repository file never rewrites a personal, private or outbox one.
    """
    from git_memex.search.chains import REPAIRABLE, links

    repaired: list[str] = []
    for new_id, old_id, old_loc in links(st):
        if old_loc not in REPAIRABLE:
            continue
        for found in st.find_all(old_id):
            if found.row["location"] != old_loc:
                continue
            if found.row["superseded_by"] == new_id and found.row["status"] == "superseded":
                continue
            if found.row["status"] in ("retracted", "archived"):
                continue
            m = load(found)
            m.fm["status"] = "superseded"
            m.fm["superseded_by"] = new_id
            _rewrite(st, found, m)
            repaired.append(f"{old_id} is now marked superseded by {new_id}")
    return repaired


def reindex(ctx: Context, *, full: bool = False, trigger: str = "reindex") -> ReindexResult:
    with Stores(ctx) as st:
        stats = st.rebuild() if full else st.refresh(trigger=trigger)
        repaired = repair_chains(st)
        q = st.home.quarantined() + (st.repo.quarantined() if st.repo else [])
        total = st.home.count() + (st.repo.count() if st.repo else 0)
        return ReindexResult(stats, full, q, total, repaired)


def where(ctx: Context) -> dict[str, Any]:
    from git_memex.index.providers import providers

    return {
        "data_root": str(ctx.data_root),
        "home_index": str(ctx.home_index),
        "personal_dir": str(ctx.personal_dir),
        "outbox_dir": str(ctx.outbox_dir),
        "private_dir": str(ctx.private_dir),
        "work_tree": str(ctx.repo.work_tree) if ctx.repo else None,
        "memory_dir": str(ctx.memory_dir) if ctx.memory_dir else None,
        "repo_index": str(ctx.repo_index) if ctx.repo_index else None,
        "project_key": ctx.project_key,
        "natural_key": ctx.natural_key,
        "project_key_pinned": ctx.pinned_key is not None,
        "scope_key": ctx.project_key,
        "repo_id": ctx.repo_id,
        "origin": ctx.origin_url,
        "providers": providers(ctx),  # what each store can do (docs/format.md, index/providers.py)
    }

"""The local cache of a remote server: pulled memory files, the pull state, their index
(docs/remote.md, "The client").

`<data root>/remote/<NAME>/` (0700 folders, 0600 files) holds one `<id>.md` per memory the
server sent, byte for byte as the server has it, plus `state.json`:
`{"url", "cursor", "last_pull_at", "last_attempt_at", "last_error", "items": {id: {"revision",
"review_state", "sha256"}}, "quarantined": {id: reason}}`, and `.bases/<id>.json` (BASES: the
revisions of a memory this machine saw and what each says). Its index lives in `.index/` inside
it, and `Stores` reads it as a further source labelled `remote:NAME`, as it reads an org clone.
`users.json` names the git config files whose subscription pulled into it (the cache is the
user's, shared by every project subscribed to NAME), so `remote remove` keeps it while another uses it.

Invariants:

- Every received file passes the admission barrier before it is written (`admit`): the bytes
  hash to the sha256 the server sent, the one safe reader takes them (no conflict markers, plain
  YAML frontmatter, valid fields, id equal to the file name), the commit checks find nothing (a
  secret anywhere is a quarantine: the file is never masked, since the gate compares its exact
  bytes with what the server approved), and it is not a personal memory. A file that fails is
  named with its reason and skipped; the rest land. Its earlier copy, if any, stays as it was.
- Writes are atomic (temp file, fsync, rename); the files first, then `state.json`. A pull
  stopped in between leaves files whose sha256 the state does not vouch for, which only closes
  the gate until the next pull fetches them again from the old cursor.
- A failed pull changes no memory file: it records only `last_attempt_at` and `last_error`, so
  the cache keeps serving with a freshness note.
- The wire contract has no deletion: a memory is never removed from the server, only rejected
  (`review_state: rejected`), which the cache keeps and the gate refuses.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.errors import USAGE, MemexError
from git_memex.index.stores import (
    REMOTE_PREFIX as PREFIX,  # a remote memory's location is `remote:NAME`
)

STATE = "state.json"
STALE_AFTER_S = 3600
"""A cache last pulled longer ago than this gets a freshness note in human outputs."""
_HEX = frozenset("0123456789abcdef")


def location(name: str) -> str:
    return PREFIX + name


# ------------------------------------------------------------------ state
def empty_state(url: str | None) -> dict[str, Any]:
    return {"url": url, "cursor": None, "last_pull_at": None, "last_attempt_at": None, "last_error": None,
            "items": {}, "quarantined": {}}


def load_state(ctx: Context, name: str) -> dict[str, Any]:
    """The cache's state.json, or an empty one when there is none (never pulled) or it is unreadable."""
    state = empty_state(ctx.config.get(f"memex.remote.{name}.url"))
    try:
        from git_memex.core.files import read_private

        doc = json.loads(read_private(ctx.data_root, ctx.remote_cache(name) / STATE).decode("utf-8"))
    except (OSError, ValueError):
        return state
    if isinstance(doc, dict):
        for k in state:
            if k in doc:
                state[k] = doc[k]
    if not isinstance(state["items"], dict):
        state["items"] = {}
    if not isinstance(state["quarantined"], dict):
        state["quarantined"] = {}
    return state


def save_state(ctx: Context, name: str, state: dict[str, Any]) -> None:
    from git_memex.core.data_root import private_mkdir
    from git_memex.core.files import atomic_write_text

    private_mkdir(ctx.remote_cache(name))
    atomic_write_text(ctx.remote_cache(name) / STATE, json.dumps(state, indent=1, sort_keys=True) + "\n", mode=0o600)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _ts(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    import calendar

    try:
        return float(calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _ago(seconds: float) -> str:
    if seconds < 120:
        return "just now" if seconds < 60 else "1 min ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


def freshness(ctx: Context, name: str, now: float | None = None) -> dict[str, Any]:
    """How fresh remote `name`'s cache is: `{"remote", "last_pull_at", "age_s", "last_error",
    "stale", "note"}`. Stale when the last attempt failed, it was never pulled, or the last pull is
    over STALE_AFTER_S old; `note` is then the one line human outputs add."""
    state = load_state(ctx, name)
    now = time.time() if now is None else now
    pulled = _ts(state["last_pull_at"])
    attempt = _ts(state["last_attempt_at"])
    failed = bool(state["last_error"]) and attempt is not None and (pulled is None or attempt >= pulled)
    age = None if pulled is None else max(0.0, now - pulled)
    stale = failed or age is None or age > STALE_AFTER_S
    note = None
    if stale:
        when = "never pulled" if age is None else f"last pulled {_ago(age)}"
        note = f"remote {name} {when}" + ("; its last pull failed" if failed else "") + \
            f" (`git memex remote pull {name}`)"
    return {"remote": name, "last_pull_at": state["last_pull_at"], "age_s": None if age is None else int(age),
            "last_error": state["last_error"] if failed else None, "stale": stale, "note": note}


def notes_for(ctx: Context, locations: Any) -> list[dict[str, Any]]:
    """`freshness` of each remote among `locations` (the locations of what an output shows)."""
    names = sorted({str(loc)[len(PREFIX):] for loc in locations if str(loc or "").startswith(PREFIX)})
    return [freshness(ctx, n) for n in names if n in ctx.remote_names()]


# ------------------------------------------------------------------ the revisions this machine saw
BASES = ".bases"
"""`<cache>/.bases/<id>.json` (0600), what this machine knows of the server's revisions of `<id>`, so
that `propose --to remote` finds the revision a local file started from by its **content**, never
by the id alone (docs/remote.md, "Which revision it is based on"):
`{"format": BASE_FORMAT, "seen": {"<revision>": "<content_key>"}, "sent": null | {...},
"conflict": null | {...}}`.

- `seen`: every revision this machine saw, pulled (for a memory this project holds, or one it
  proposed), proposed, or fetched after a 409, with the `content_key` of its text (at most
  `SEEN_MAX`, the newest kept). A local file, or one of its versions in git, whose key is one of
  these holds that revision's content.
- `sent`: the last proposal this machine made of it: `revision`, `file` (the text sent), `path`
  and `head` (HEAD's commit then, or null outside git): a version that file held, counted while
  the file is at that path and HEAD still descends from `head` (not another clone sharing this
  data root, not a branch switched to since).
- `conflict`: a merge this machine left in a file with markers: `revision` and `file` (the
  server's revision and text merged in), `path`, `head` as above, and `ours` (the sha256 of the
  file before the merge). The file then counts as based on that revision while `path` and `head`
  hold and it is not the pre-merge file put back.

A record that cannot be read counts as empty: nothing is then known, never guessed."""
BASE_FORMAT = "git-memex-remote-base/2"
SEEN_MAX = 256
SERVER_FIELDS = ("review_state", "instruction_state", "revision", "updated_at")
"""What the server keeps for itself besides what a review writes (`store.REVIEW_KEYS`): a proposal's
value is replaced or dropped there, so it is never part of a revision's content."""


def server_field(key: object) -> bool:
    from git_memex.remote.store import REVIEW_KEYS

    k = str(key).strip().casefold().replace("-", "_")
    return k in REVIEW_KEYS or k in SERVER_FIELDS


def content_key(text: str) -> str | None:
    """``sha256:<hex>`` of what a memory file says, leaving out the fields the server keeps for
    itself (`server_field`): the file this machine proposed and the revision the server stored
    from it have one key. None for a file the reader cannot read."""
    from git_memex.core.digest import sha256_hex
    from git_memex.core.frontmatter import FrontmatterError, parse

    try:
        fm, body = parse(text)
    except (FrontmatterError, ValueError):
        return None
    kept = {str(k): v for k, v in fm.items() if not server_field(k)}
    doc = json.dumps({"fm": kept, "body": body}, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + sha256_hex(doc.encode("utf-8", "surrogateescape"))


def cached_id(ctx: Context, name: str, memory_id: str, state: dict[str, Any] | None = None) -> str:
    """The id of remote `name`'s cache that `memory_id` names: the id, or a unique prefix of 6 or
    more characters (any case). Exit 1 when the cache lacks it or the prefix is ambiguous."""
    items = (load_state(ctx, name) if state is None else state)["items"]
    t = memory_id.strip()
    ids = [i for i in items if i == t or (len(t) >= 6 and str(i).upper().startswith(t.upper()))]
    if len(ids) != 1:
        why = "matches several memories; give more of it" if ids else "is not in its cache"
        raise MemexError(f"{memory_id} {why} of remote {name}; `git memex remote pull {name}` brings its memories, "
                         "`git memex list --scope all` lists them; nothing was sent", USAGE)
    return str(ids[0])


def other_revisions(ctx: Context, mid: str, text: str) -> list[dict[str, Any]]:
    """The subscribed remotes whose cache holds `mid` at a revision that says something else than
    `text`, the copy held here (which every read shows: docs/remote.md, "The same id here and on the
    server"), compared by `content_key` (the fields the server keeps for itself left out):
    ``[{"remote", "revision", "review_state"}]``. Reads nothing when no remote is subscribed."""
    from git_memex.core.files import read_private
    from git_memex.remote.protocol import is_memory_id

    names = ctx.remote_names()
    if not names or not is_memory_id(mid):
        return []
    mine = content_key(text)
    out: list[dict[str, Any]] = []
    for name in names:
        item = load_state(ctx, name)["items"].get(mid)
        if not isinstance(item, dict):
            continue
        try:
            theirs = content_key(read_private(ctx.data_root, ctx.remote_cache(name) / f"{mid}.md")
                                 .decode("utf-8", "replace"))
        except OSError:
            continue
        if theirs is None or theirs != mine:
            out.append({"remote": name, "revision": item.get("revision"), "review_state": item.get("review_state")})
    return out


def others_shown(ctx: Context, shown: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """`other_revisions` for the memories a `search` or `list` shows, as (id, location, path): one
    ``{"id", "remote", "revision", "review_state", "note"}`` per remote revision that differs from
    a copy shown from here. Each remote's state is read once; a file is read only for an id both
    hold (the rare case). [] without a subscribed remote."""
    names = ctx.remote_names()
    if not names:
        return []
    held: set[str] = set()
    for name in names:
        held.update(str(i) for i in load_state(ctx, name)["items"])
    out: list[dict[str, Any]] = []
    from git_memex.core.files import read_bytes

    for mid, loc, path in shown:
        if mid not in held or str(loc).startswith(PREFIX):
            continue
        try:
            here = read_bytes(path).decode("utf-8", "replace")
        except (OSError, ValueError):
            continue
        out.extend({"id": mid, **o, "note": other_revision_note(mid, o)} for o in other_revisions(ctx, mid, here))
    return out


def other_revision_note(mid: str, other: dict[str, Any]) -> str:
    """One line naming a remote revision of `mid` that differs from the copy here (`other_revisions`)."""
    name, state, rev = other["remote"], other.get("review_state"), other.get("revision")
    state = state if state in ("proposed", "approved", "published", "rejected", "draft") else "not reviewed"
    rev = rev if isinstance(rev, int) and not isinstance(rev, bool) else "?"
    return (f"remote {name} holds revision {rev} of {mid}, {state} there, which says something "
            f"else than the copy here (the one every read here shows); `git memex show --remote {name} {mid}` "
            "shows it")


def _base_path(ctx: Context, name: str, mid: str) -> Path:
    from git_memex.remote.protocol import is_memory_id

    if not is_memory_id(mid):
        raise MemexError(f"{mid!r} is not a memory id", USAGE)
    return ctx.remote_cache(name) / BASES / f"{mid}.json"


def load_base(ctx: Context, name: str, mid: str) -> dict[str, Any]:
    """`{"seen": {revision: content key}, "conflict": dict | None}` of `mid` (see BASES); empty when
    there is no record or it cannot be read."""
    from git_memex.core.files import read_private

    out: dict[str, Any] = {"seen": {}, "sent": None, "conflict": None}
    try:
        doc = json.loads(read_private(ctx.data_root, _base_path(ctx, name, mid)).decode("utf-8"))
    except (OSError, ValueError):
        return out
    if not isinstance(doc, dict) or doc.get("format") != BASE_FORMAT or not isinstance(doc.get("seen"), dict):
        return out
    for rev, key in doc["seen"].items():
        if isinstance(rev, str) and rev.isdigit() and len(rev) < 12 and isinstance(key, str):
            out["seen"][int(rev)] = key
    for what, keys in (("sent", ("revision", "file", "path", "head")),
                       ("conflict", ("revision", "file", "path", "head", "ours"))):
        c = doc.get(what)
        if (isinstance(c, dict) and isinstance(c.get("revision"), int) and not isinstance(c.get("revision"), bool)
                and all(isinstance(c.get(k), str) for k in keys if k not in ("revision", "head"))
                and isinstance(c.get("head"), (str, type(None)))):
            out[what] = {k: c[k] for k in keys}
    return out


def _save_base(ctx: Context, name: str, mid: str, rec: dict[str, Any]) -> None:
    from git_memex.core.data_root import private_mkdir
    from git_memex.core.files import atomic_write_text

    target = _base_path(ctx, name, mid)
    private_mkdir(target.parent)
    seen = sorted(rec["seen"].items())[-SEEN_MAX:]
    doc = {"format": BASE_FORMAT, "seen": {str(r): k for r, k in seen}, "sent": rec["sent"], "conflict": rec["conflict"]}
    atomic_write_text(target, json.dumps(doc, indent=1, sort_keys=True) + "\n", mode=0o600)


def note_revision(ctx: Context, name: str, mid: str, revision: int, text: str, *,
                  conflict: dict[str, Any] | None | bool = False, sent: dict[str, Any] | None = None) -> None:
    """Record that revision `revision` of `mid` says `text` (its `content_key`); `conflict`: the
    conflict record to keep (a dict), to end (None), or False to leave it as it is; `sent`: the
    proposal this machine just made (it replaces the one recorded)."""
    rec = load_base(ctx, name, mid)
    key = content_key(text)
    if key is not None:
        rec["seen"][revision] = key
    if conflict is not False:
        rec["conflict"] = conflict
    if sent is not None:
        rec["sent"] = sent
    _save_base(ctx, name, mid, rec)


def _held(ctx: Context, name: str, mid: str) -> bool:
    """Whether this project holds its own file of `mid` (the memory folder or the outbox), or this
    machine proposed it: then the revisions a pull brings are recorded (`note_revision`)."""
    held = [ctx.outbox_dir / f"{mid}.md"] + ([ctx.memory_dir / f"{mid}.md"] if ctx.memory_dir is not None else [])
    return any(p.is_file() for p in held) or _base_path(ctx, name, mid).is_file()


# ------------------------------------------------------------------ admission
def admit(ctx: Context, change: object) -> tuple[str | None, dict[str, Any] | None, str]:
    """(id, item, text) of one pulled change that may be written, or (id or None, None, why not)."""
    from git_memex.core.digest import sha256_hex
    from git_memex.core.files import UnreadableMemory, parse_memory_bytes
    from git_memex.core.frontmatter import MAX_FILE_BYTES
    from git_memex.remote.protocol import is_memory_id

    if not isinstance(change, dict):
        return None, None, "is not an object"
    mid = change.get("id")
    if not isinstance(mid, str) or not is_memory_id(mid):
        return None, None, f"has an id {str(mid)[:40]!r} that is not a memory id"
    text, rev, state, sha = change.get("file"), change.get("revision"), change.get("review_state"), change.get("sha256")
    # review_state may be null: a file an operator put in the server's folder without one (unreviewed)
    if not isinstance(text, str) or not isinstance(rev, int) or isinstance(rev, bool) \
            or not isinstance(state, (str, type(None))) or not isinstance(sha, str):
        return mid, None, "lacks its file, revision, review_state or sha256"
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        return mid, None, "is not valid UTF-8"
    if len(raw) > MAX_FILE_BYTES:
        return mid, None, f"is larger than {MAX_FILE_BYTES // 1024} KiB"
    if len(sha) != 64 or not set(sha) <= _HEX or sha256_hex(raw) != sha:
        return mid, None, "does not hash to the sha256 the server sent with it"
    try:
        m = parse_memory_bytes(raw, Path(f"{mid}.md"))
    except UnreadableMemory as exc:
        return mid, None, str(exc)
    if str(m.fm.get("scope") or "").strip().lower() == "personal":
        return mid, None, "is a personal memory, which a remote never holds"
    from git_memex.secrets.admission import refusal

    why = refusal(f"{mid}.md", raw, m, ctx.redact_patterns)
    if why is not None:
        return mid, None, why
    return mid, {"revision": rev, "review_state": state, "sha256": sha}, text


# ------------------------------------------------------------------ pull
def provider(ctx: Context, name: str, timeout: float | None = None) -> Any:
    from git_memex.remote.client import TIMEOUT_S, RemoteProvider

    url = ctx.config.get(f"memex.remote.{name}.url")
    if url is None:
        raise MemexError(f"remote {name} is not subscribed here; `git memex remote list` shows the subscriptions",
                         USAGE)
    return RemoteProvider(name, url, ctx.config.get(f"memex.remote.{name}.tokenfile"),
                          timeout=TIMEOUT_S if timeout is None else timeout)


PAGE_LIMIT = 200
"""Memories asked for per page of a pull (`remote pull --page-size`)."""
MAX_PAGES = 100
"""Pages one `remote pull` reads at most; the next pull goes on from the cursor."""


def pull(ctx: Context, name: str, *, retry: int = 0, full: bool = False,
         page_size: int = PAGE_LIMIT) -> dict[str, Any]:
    """Pull what changed on remote `name` since the cursor into its cache, page by page (at most
    MAX_PAGES; the state, cursor included, is saved after each), then index it. `retry` more
    attempts after a failure to reach the server (none unless asked). A failure records the
    attempt in state.json, changes no memory file of that page, and raises (exit 2)."""
    from git_memex.core.data_root import prepare_data_root, private_mkdir
    from git_memex.core.files import atomic_write_text
    from git_memex.remote.client import RemoteUnreachable

    prepare_data_root(ctx.data_root)
    state = load_state(ctx, name)
    prov = provider(ctx, name)
    since = None if full else (state["cursor"] if isinstance(state["cursor"], str) else None)
    attempts = 0
    cache = ctx.remote_cache(name)
    landed: list[str] = []
    quarantined: list[dict[str, str]] = []
    received = pages = 0
    more = False
    while True:
        tries = 0
        while True:
            attempts += 1
            tries += 1
            try:
                doc = prov.pull(since, page_size)
                break
            except RemoteUnreachable as exc:
                if tries <= retry:
                    time.sleep(min(2.0 ** (tries - 1), 10.0))
                    continue
                _failed(ctx, name, state, exc.message)
                raise
            except MemexError as exc:
                _failed(ctx, name, state, exc.message)
                raise
        pages += 1
        received += len(doc["changes"])
        private_mkdir(cache)
        for change in doc["changes"]:
            mid, item, text = admit(ctx, change)
            if item is None or mid is None:
                quarantined.append({"id": mid or "?", "reason": text})
                if mid is not None:
                    state["quarantined"][mid] = text
                continue
            path = cache / f"{mid}.md"
            try:
                old: bytes | None = path.read_bytes()
            except OSError:
                old = None
            same = old == text.encode("utf-8")
            if not same:
                atomic_write_text(path, text, mode=0o600)
            with contextlib.suppress(MemexError, OSError):  # a record is a help, never a failed pull
                if _held(ctx, name, mid) and item["revision"] not in load_base(ctx, name, mid)["seen"]:
                    note_revision(ctx, name, mid, int(item["revision"]), text)
            state["items"][mid] = item
            state["quarantined"].pop(mid, None)
            landed.append(mid)
        more = bool(doc["more"])
        stuck = more and doc["cursor"] == since
        state.update(url=prov.url, cursor=doc["cursor"], last_pull_at=_now(), last_error=None)
        state["last_attempt_at"] = state["last_pull_at"]
        save_state(ctx, name, state)
        if not more or stuck or pages >= MAX_PAGES:
            break
        since = doc["cursor"]
    from git_memex.git import sharers
    from git_memex.git.org import recorded_in

    sharers.note(ctx, cache / sharers.USERS, recorded_in(ctx, name, "remote"))  # the cache is shared (git/sharers.py)
    stats = index(ctx, name)
    out = {"name": name, "url": prov.url, "cursor": doc["cursor"], "received": received, "pages": pages,
           "more": more, "landed": landed, "quarantined": quarantined, "attempts": attempts, "path": str(cache),
           **stats}
    if more:
        why = ("its cursor did not move" if stuck else f"this pull read its {MAX_PAGES} pages")
        out.setdefault("warnings", []).append(f"remote {name} has more changes ({why}); `git memex remote pull "
                                              f"{name}` goes on from the cursor")
    return out


def _failed(ctx: Context, name: str, state: dict[str, Any], why: str) -> None:
    """Record a failed attempt (the only write a failed pull makes) when the cache exists."""
    if not ctx.remote_cache(name).is_dir():
        return
    state["last_attempt_at"] = _now()
    state["last_error"] = why
    with contextlib.suppress(MemexError, OSError):
        save_state(ctx, name, state)


# ------------------------------------------------------------------ the index
def index(ctx: Context, name: str) -> dict[str, Any]:
    from git_memex.core.data_root import private_mkdir
    from git_memex.index.database import Index
    from git_memex.index.stores import refresh_remote

    private_mkdir(ctx.remote_index(name).parent)
    with Index(ctx.remote_index(name), root=ctx.remote_cache(name)) as idx:
        s = refresh_remote(ctx, name, idx)
        return {"added": s.added, "changed": s.changed, "removed": s.removed, "memories": idx.count(),
                **({"warnings": s.warnings} if s.warnings else {})}


def count(ctx: Context, name: str) -> int | None:
    from git_memex.index.database import Index

    if not ctx.remote_index(name).exists():
        return None
    with Index(ctx.remote_index(name), root=ctx.remote_cache(name)) as idx:
        return int(idx.count())


# ------------------------------------------------------------------ the gate
def verdicts(ctx: Context, rows: Any) -> dict[str, str | None]:
    """For each remote row: None when the server's review approved it and the cached file is
    byte for byte what was approved (its sha256 is the one the server sent with the approved
    revision, and the row served is what the file says); else why not. Fails closed."""
    from git_memex.core.digest import sha256_hex
    from git_memex.core.files import UnreadableMemory, read_bytes
    from git_memex.index.schema import matches_file

    out: dict[str, str | None] = {}
    states: dict[str, dict[str, Any]] = {}
    for r in rows:
        loc = str(r["location"] or "")
        if not loc.startswith(PREFIX):
            continue
        name, mid = loc[len(PREFIX):], str(r["id"])
        if name not in states:
            states[name] = load_state(ctx, name) if name in ctx.remote_names() else empty_state(None)
        item = states[name]["items"].get(mid)
        if not isinstance(item, dict) or item.get("review_state") != "approved":
            out[mid] = f"not approved by a reviewer of remote {name}"
            continue
        try:
            data = read_bytes(r["path"], root=ctx.remote_cache(name))
        except (UnreadableMemory, KeyError, TypeError):
            out[mid] = f"its cached file of remote {name} cannot be read"
            continue
        if sha256_hex(data) != item.get("sha256") or not matches_file(r, data):
            out[mid] = (f"its cached file differs from what remote {name}'s reviewer approved; "
                        f"`git memex remote pull {name} --full` fetches it again")
            continue
        out[mid] = None
    return out


def cache_problem(ctx: Context, name: str) -> str | None:
    """Why remote `name`'s cache cannot be read (None: it can, or was never pulled)."""
    cache = ctx.remote_cache(name)
    if cache.exists() and not cache.is_dir():
        return f"the cache of remote {name} ({cache}) is not a folder"
    if os.path.islink(cache):
        return f"the cache of remote {name} ({cache}) is a symbolic link"
    return None


def require(name: str, ctx: Context) -> None:
    if name not in ctx.remote_names():
        raise MemexError(f"remote {name} is not subscribed here; `git memex remote list` shows the subscriptions",
                         USAGE)




# ------------------------------------------------------------------ doctor
def doctor(ctx: Context, name: str) -> list[tuple[str, str]]:
    """(level, detail) of remote `name`'s cache for `git memex doctor`: its folders and files
    owner-only, its last pull, and each cached file through the admission barrier again (with
    today's team patterns and the sha256 the state vouches for)."""
    import stat

    problem = cache_problem(ctx, name)
    if problem is not None:
        return [("fail", problem)]
    folder = ctx.remote_cache(name)
    if not folder.is_dir():
        return [("warn", f"remote {name} was never pulled; run `git memex remote pull {name}`")]
    out: list[tuple[str, str]] = []
    open_: list[str] = []
    for here, dirs, files in os.walk(folder):
        for n in [*dirs, *files]:
            p = os.path.join(here, n)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if st.st_mode & 0o077 and not stat.S_ISLNK(st.st_mode):
                open_.append(f"{p} (mode {stat.S_IMODE(st.st_mode):04o})")
    try:
        top = os.lstat(folder).st_mode
        if top & 0o077:
            open_.insert(0, f"{folder} (mode {stat.S_IMODE(top):04o})")
    except OSError:
        pass
    if open_:
        out.append(("fail", f"remote {name}'s cache is open to group or others: {', '.join(open_[:3])}"
                    f"{' and more' if len(open_) > 3 else ''}; run `chmod -R go-rwx {folder}`"))
    fresh = freshness(ctx, name)
    if fresh["stale"]:
        out.append(("warn", str(fresh["note"])))
    else:
        out.append(("ok", f"remote {name} last pulled {_ago(float(fresh['age_s'] or 0))}"))
    state = load_state(ctx, name)
    bad: list[str] = []
    for md in sorted(folder.glob("*.md")):
        mid = md.stem
        item = state["items"].get(mid)
        try:
            text = md.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            bad.append(f"{mid} cannot be read")
            continue
        if not isinstance(item, dict):
            bad.append(f"{mid} is not vouched for by state.json")
            continue
        _mid, ok, why = admit(ctx, {"id": mid, "file": text, "revision": item.get("revision"),
                                    "review_state": item.get("review_state"), "sha256": item.get("sha256")})
        if ok is None:
            bad.append(f"{mid} {why}")
    if bad:
        out.append(("fail", f"remote {name}: {len(bad)} cached file(s) no longer pass admission ({'; '.join(bad[:3])}"
                    f"{'; …' if len(bad) > 3 else ''}); `git memex remote pull {name} --full` fetches them again"))
    elif not open_:
        out.append(("ok", f"remote {name}'s cache is owner-only and every cached file passes admission"))
    return out

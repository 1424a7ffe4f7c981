"""Remote subscriptions: `git memex remote add|list|pull|remove` (docs/remote.md, "The client").

A subscription is `memex.remote.NAME.url` and `memex.remote.NAME.tokenFile` in git config
(repo-local by default, or global), as an org subscription is. The token stays in its file.

Invariants: a failed `add` leaves no config and no cache behind; `pull` of several remotes pulls
each on its own (an unreachable one fails alone, exit 2, and its cache keeps serving); `remove`
takes the config and the whole cache folder (files, state, index), unless another project's
subscription recorded in its `users.json` still uses it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.data_root import prepare_data_root
from git_memex.errors import FAILED, USAGE, MemexError, UsageError


def _check_name(name: str) -> None:
    from git_memex.git.org import NAME_RE

    if not NAME_RE.match(name):
        raise UsageError(f"{name!r} is not a valid remote name; use lowercase letters, digits and dashes "
                         "(at most 40, starting with a letter or digit)")


# ------------------------------------------------------------------ add
def add(ctx: Context, name: str, url: str, token_file: str, *, global_: bool = False) -> dict[str, Any]:
    from git_memex.git.org import _first_line, _git, config_args
    from git_memex.remote import cache
    from git_memex.remote.client import RemoteProvider, check_url, read_token

    _check_name(name)
    url = check_url(url)
    if name in ctx.remote_names():
        from git_memex.remote.protocol import shown_url

        had = shown_url(str(ctx.config.get(f"memex.remote.{name}.url") or "")) or "a URL that is not one"
        raise MemexError(f"remote {name} is already subscribed (to {had}); "
                         f"`git memex remote remove {name}` first, or pick another name", USAGE)
    scope_flag, cwd = config_args(ctx, global_, "remote add")
    token_path = str(Path(os.path.abspath(os.path.expanduser(token_file))))
    read_token(token_path)  # missing, unreadable or open to others: refused before anything is written
    RemoteProvider(name, url, token_path).health()
    prepare_data_root(ctx.data_root)
    folder = ctx.remote_cache(name)
    if folder.exists() or os.path.islink(folder):
        cached = cache.load_state(ctx, name).get("url")
        if cached not in (None, url) or os.path.islink(folder):
            raise MemexError(f"{folder} already holds the cache of another remote ({cached or 'unknown'}); pick another "
                             f"name for {url}", USAGE)
    existed = folder.exists()
    try:
        for key, value in ((f"memex.remote.{name}.url", url), (f"memex.remote.{name}.tokenFile", token_path)):
            code, _, err = _git(["config", *scope_flag, key, value], cwd)
            if code != 0:
                raise MemexError(f"cannot record the subscription in git config ({_first_line(err)}); "
                                 "nothing was changed", FAILED)
        ctx.config[f"memex.remote.{name}.url"] = url
        ctx.config[f"memex.remote.{name}.tokenfile"] = token_path
        res = cache.pull(ctx, name)
    except BaseException:
        _git(["config", *scope_flag, "--remove-section", f"memex.remote.{name}"], cwd)
        ctx.config.pop(f"memex.remote.{name}.url", None)
        ctx.config.pop(f"memex.remote.{name}.tokenfile", None)
        if not existed:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return {**res, "recorded": scope_flag[0][2:], "token_file": token_path}


# ------------------------------------------------------------------ list
def list_remotes(ctx: Context) -> list[dict[str, Any]]:
    from git_memex.remote import cache
    from git_memex.remote.protocol import shown_url

    out = []
    for name in ctx.remote_names():
        state = cache.load_state(ctx, name)
        raw = str(ctx.config.get(f"memex.remote.{name}.url") or "")
        # shown without the user and password a hand-edited URL may carry (docs/remote.md)
        out.append({"name": name, "url": shown_url(raw) or ("(not an http(s) URL)" if raw else None),
                    "token_file": ctx.config.get(f"memex.remote.{name}.tokenfile"),
                    "path": str(ctx.remote_cache(name)), "last_pull_at": state["last_pull_at"],
                    "last_attempt_at": state["last_attempt_at"], "freshness": cache.freshness(ctx, name),
                    "memories": cache.count(ctx, name), "quarantined": state["quarantined"]})
    return out


# ------------------------------------------------------------------ pull
def pull(ctx: Context, name: str | None = None, *, retry: int = 0, full: bool = False,
         page_size: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pull each subscribed remote (or only `name`): (results, failures). Each remote is pulled
    on its own, so one that cannot be reached fails alone and keeps its cache."""
    from git_memex.remote import cache

    if name is not None:
        _check_name(name)
        cache.require(name, ctx)
    names = [name] if name is not None else ctx.remote_names()
    if not names:
        raise MemexError("no remote is subscribed here; `git memex remote add NAME URL --token-file F` subscribes "
                         "to one", USAGE)
    results: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for n in names:
        try:
            results.append(cache.pull(ctx, n, retry=retry, full=full, page_size=page_size or cache.PAGE_LIMIT))
        except MemexError as exc:
            if name is not None and exc.code != FAILED:
                raise  # one remote asked for, refused (a bad token): its own exit code
            failed.append({"name": n, "error": exc.message, "code": exc.code})
    return results, failed


# ------------------------------------------------------------------ remove
def remove(ctx: Context, name: str) -> dict[str, Any]:
    from git_memex.git import sharers
    from git_memex.git.org import recorded_in, unsubscribe
    from git_memex.remote import cache

    _check_name(name)
    where = recorded_in(ctx, name, "remote")
    if not where:
        raise MemexError(f"remote {name} is not subscribed here; `git memex remote list` shows the subscriptions",
                         USAGE)
    url = ctx.config.get(f"memex.remote.{name}.url")
    unsubscribe(ctx, name, where, "remote")
    folder = ctx.remote_cache(name)
    existed = folder.exists() or os.path.islink(folder)
    others = [] if os.path.islink(folder) else sharers.others(
        ctx, folder / sharers.USERS, "remote", name, where, cache.load_state(ctx, name).get("url") or url)
    if others:
        sharers.save(folder / sharers.USERS, others)
        return {"name": name, "removed_from": where, "path": str(folder), "cache_removed": False,
                "kept_for": others}
    if os.path.islink(folder):
        os.unlink(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return {"name": name, "removed_from": where, "path": str(folder), "cache_removed": existed, "kept_for": []}


# ------------------------------------------------------------------ propose
def propose(ctx: Context, memory_id: str, name: str) -> dict[str, Any]:
    """Send one project memory to remote `name` as a proposal (`POST /v1/propose`). The local
    admission barrier runs first: a personal or private memory, a file the reader refuses or one
    holding a secret is refused here (exit 1) and never sent.

    `base_revision` is the revision this file is known by its content to start from (`_base`):
    the newest of its versions (the work tree, the index, its commits on HEAD) whose content is a
    revision this machine saw (`cache.load_base`), or the revision a conflict left in it is being
    merged into; null when none is known. When the server holds a newer revision (409), its
    current file is fetched and passes the admission barrier (`cache.admit`) before anything is
    merged or written, then the file is three-way merged with the merge driver's engine (base:
    that version of this file, ours: this file, theirs: the server's file, the server-kept review
    fields set to ours' on every side), or two-way when no base is known, so that every
    difference is a conflict. A clean merge is proposed and written into this file; a conflict
    is written into this file with markers for the person to settle (exit 3, nothing sent).
    Another's change is never dropped, and a base is never guessed (docs/remote.md)."""
    from git_memex.core.files import UnreadableMemory, parse_memory_bytes, read_bytes
    from git_memex.errors import CONFLICT
    from git_memex.index.stores import Stores
    from git_memex.remote import cache
    from git_memex.remote.client import ProposeConflict

    _check_name(name)
    cache.require(name, ctx)
    from git_memex.remote.protocol import is_memory_id

    # a file left with conflict markers is not read by the index (`find` would find the cache's copy)
    pending = cache.load_base(ctx, name, memory_id)["conflict"] if is_memory_id(memory_id) else None
    if pending is not None and _has_markers(Path(pending["path"])):
        raise MemexError(f"{memory_id} is being merged with revision {pending['revision']} of remote {name}: settle "
                         f"the conflict markers in {pending['path']}, then propose it again; nothing was sent", CONFLICT)
    with Stores(ctx) as st:
        st.refresh()
        found = st.find(memory_id)
    row, loc = found.row, str(found.row["location"])
    mid = str(row["id"])
    if loc == "personal" or str(row["scope"] or "") == "personal":
        raise MemexError(f"{mid} is a personal memory, which never leaves this machine, so it was not sent to remote "
                         f"{name}; `git memex propose {mid}` copies it into the project outbox first, and that copy "
                         "can be proposed", USAGE)
    if loc == "private" or str(row["visibility"] or "") == "private":
        raise MemexError(f"{mid} is a private memory, which never leaves this machine; nothing was sent", USAGE)
    if loc.startswith(("org:", "remote:")):
        raise MemexError(f"{mid} is a memory of {loc}, not of this project; propose a project memory (nothing was "
                         "sent)", USAGE)
    rec = cache.load_base(ctx, name, mid)
    pending = rec["conflict"]
    if pending is not None and pending["path"] == str(found.path) and _has_markers(found.path):
        raise MemexError(f"{mid} is being merged with revision {pending['revision']} of remote {name}: settle the "
                         f"conflict markers in {found.path}, then propose it again; nothing was sent", CONFLICT)
    try:
        raw = read_bytes(found.path, root=found.index.root)
        parse_memory_bytes(raw, found.path)
    except UnreadableMemory as exc:
        raise MemexError(f"{mid} cannot be proposed: its file {exc}; nothing was sent", USAGE) from None
    _refuse_problems(ctx, mid, raw)
    ours = raw.decode("utf-8")
    base, base_text = _base(ctx, name, mid, found, ours, rec)
    prov = cache.provider(ctx, name)
    text, merged_with, merged_fields = ours, None, []
    for _attempt in range(3):  # the server may move again between the merge and its proposal
        try:
            doc = prov.propose(text, base)
            break
        except ProposeConflict as exc:
            if exc.current_revision is None:  # a hand edit on the server, or an unreadable file there
                raise MemexError(f"remote {name} refused {mid} ({exc.message}); nothing was sent", USAGE) from None
            theirs, current = _current(ctx, prov, name, mid)
            cache.note_revision(ctx, name, mid, current, theirs)
            result = _merge(base_text, text, theirs)
            if not result.clean:
                _refuse_secrets(ctx, mid, result.text, found.path)
                _write_local(ctx, found, result.text, check=False)
                cache.note_revision(ctx, name, mid, current, theirs, conflict={
                    "revision": current, "file": theirs, "path": str(found.path), "head": _head(ctx, found),
                    "ours": _sha(ours)})
                fields = ", ".join(c.field for c in result.conflicts) or "the text"
                if base_text is None:
                    raise MemexError(f"remote {name} holds {mid} at revision {current}, and this machine cannot tell "
                                     f"which of its revisions your file started from (no version of the file, in the "
                                     f"work tree or in git, is a revision it has seen), so every difference from "
                                     f"revision {current} ({fields}) is now in {found.path} between conflict markers; "
                                     f"keep what it should say, then `git memex propose {mid} --to remote {name}` "
                                     "again (nothing was sent)", CONFLICT) from None
                raise MemexError(f"remote {name} holds {mid} at revision {current}, changed by someone else since "
                                 f"revision {base}, and both changed {fields}: both sides are now in {found.path} "
                                 f"between conflict markers; edit it to what it should say, then `git memex propose "
                                 f"{mid} --to remote {name}` again (nothing was sent)", CONFLICT) from None
            _refuse_problems(ctx, mid, result.text.encode("utf-8"))
            text, base, base_text, merged_with = result.text, current, theirs, current
            merged_fields = list(result.auto_merged)
    else:
        raise MemexError(f"remote {name} kept changing {mid} while it was merged; nothing was sent, try again", FAILED)
    if text != ours:
        _write_local(ctx, found, text, check=True)
    rev = doc.get("revision")
    if isinstance(rev, int) and not isinstance(rev, bool):
        cache.note_revision(ctx, name, mid, rev, text, conflict=None, sent={
            "revision": rev, "file": text, "path": str(found.path), "head": _head(ctx, found)})
    out = {"id": mid, "remote": name, "url": prov.url, "base_revision": base, "revision": rev,
           "review_state": doc.get("review_state"), "sha256": doc.get("sha256"), "path": str(found.path)}
    if merged_with is not None:
        out["merged_with"] = {"revision": merged_with, "fields": merged_fields}
    return out


def _has_markers(path: Path) -> bool:
    from git_memex.core.files import conflict_marker_line

    try:
        return conflict_marker_line(path.read_text("utf-8", "replace")) is not None
    except OSError:
        return False


def _sha(text: str) -> str:
    from git_memex.core.digest import sha256_hex

    return sha256_hex(text.encode("utf-8", "surrogateescape"))


def _refuse_problems(ctx: Context, mid: str, raw: bytes) -> None:
    from git_memex.secrets.scan import check_bytes

    left = check_bytes(f"{mid}.md", raw, in_repo=True, patterns=ctx.redact_patterns)
    if left:
        f = left[0]
        what = "a secret" if f.secret else "a problem"
        raise MemexError(f"{mid} cannot be proposed: its file holds {what} ({f.rule}, line {f.line}); fix it, "
                         "nothing was sent", USAGE)


def _refuse_secrets(ctx: Context, mid: str, text: str, path: Path) -> None:
    """A merge left with conflict markers is written for the person only when no side of it brings
    a secret (an old version of this file used as base could): otherwise nothing is written (exit 2)."""
    from git_memex.secrets.scan import check_bytes

    left = [f for f in check_bytes(f"{mid}.md", text.encode("utf-8", "surrogateescape"), in_repo=True,
                                   patterns=ctx.redact_patterns) if f.secret]
    if left:
        raise MemexError(f"the merge of {mid} would write a secret ({left[0].rule}) into {path}; nothing was written or "
                         "sent", FAILED)


def _head(ctx: Context, found: Any) -> str | None:
    """HEAD's commit when `found` is a repository file (a conflict record is tied to it), else None."""
    if str(found.row["location"]) != "repo" or ctx.repo is None:
        return None
    from git_memex.core.gitcmd import run_git

    proc = run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], ctx.repo.work_tree, timeout=20)
    if proc is None or proc.returncode != 0:
        return None
    return proc.stdout.decode("ascii", "replace").strip() or None


def _still_there(ctx: Context, found: Any, rec: dict[str, Any] | None) -> bool:
    """Whether a version this machine recorded of the file (`sent`, `conflict`) is still this
    file's past: the same path (not another clone sharing this data root) and, for a repository
    file, HEAD still descending from the commit it was recorded at (not a branch switched to)."""
    if rec is None or rec["path"] != str(found.path):
        return False
    if rec["head"] is None:
        return str(found.row["location"]) != "repo"
    if ctx.repo is None:
        return False
    from git_memex.core.gitcmd import run_git

    proc = run_git(["merge-base", "--is-ancestor", rec["head"], "HEAD"], ctx.repo.work_tree, timeout=20)
    return proc is not None and proc.returncode == 0


def _versions(ctx: Context, found: Any, ours: str, sent: dict[str, Any] | None) -> list[str]:
    """This machine's versions of the memory's file, newest first: the work tree's, the index's,
    the commits on HEAD that changed it since the last proposal (`sent`, when `_still_there`),
    the text that proposal sent, then the older commits that changed it (the newest 64 in all),
    as git holds them (`gitcmd.log_changes`)."""
    out = [ours]
    if str(found.row["location"]) != "repo" or ctx.repo is None:
        return out + ([str(sent["file"])] if sent is not None else [])
    from git_memex.agents.approval_record import _batch
    from git_memex.core.gitcmd import log_changes

    work = ctx.repo.work_tree
    try:
        rel = Path(found.path).relative_to(work).as_posix()
    except ValueError:
        return out

    def blobs(args: list[str]) -> list[str]:
        log = log_changes([*args, "--", rel], work) or []
        return [blob for _c, _p, _f, changes in log for status, blob, path in changes if path == rel and status != "D"]

    head = sent["head"] if sent is not None else None
    later = blobs(["-n", "64", "HEAD", f"^{head}"]) if head else []
    older = blobs(["-n", "64", head or "HEAD"])
    # the index's version is newer than the proposal only when it is not what HEAD held then
    staged = _batch(work, [f":{rel}", f"{head or 'HEAD'}:{rel}"]) if "\n" not in rel else None
    index = staged[0] if staged and (head is None or staged[0] != staged[1]) else None
    texts = [index] + (_batch(work, later) or [])
    if sent is not None:
        texts.append(str(sent["file"]).encode("utf-8", "surrogateescape"))
    texts += _batch(work, older) or []
    out += [t.decode("utf-8", "replace") for t in texts if t is not None]
    return list(dict.fromkeys(out))


def _base(ctx: Context, name: str, mid: str, found: Any, ours: str,
          rec: dict[str, Any]) -> tuple[int | None, str | None]:
    """(base_revision, its text) of this file, found by content, never by the id alone: the
    revision a conflict left in the file is being merged into (while `_still_there` and the file
    is not the pre-merge one put back), else the newest version of the file (`_versions`) whose
    `cache.content_key` is a revision this machine saw (the base record's, and the cache's
    current file when the state vouches for it), with the newest revision of that content;
    (None, None) when no version is one: the server then says which revision it holds, and the
    file is merged two-way with it."""
    from git_memex.remote import cache

    pending = rec["conflict"]
    if pending is not None and pending["ours"] != _sha(ours) and _still_there(ctx, found, pending):
        return int(pending["revision"]), str(pending["file"])
    seen: dict[int, str] = dict(rec["seen"])
    item = cache.load_state(ctx, name)["items"].get(mid)
    if isinstance(item, dict) and isinstance(item.get("revision"), int) and not isinstance(item.get("revision"), bool):
        from git_memex.core.digest import sha256_hex
        from git_memex.core.files import read_private

        try:
            data = read_private(ctx.data_root, ctx.remote_cache(name) / f"{mid}.md")
            key = cache.content_key(data.decode("utf-8")) if sha256_hex(data) == item.get("sha256") else None
        except (OSError, UnicodeDecodeError):
            key = None
        if key is not None:
            seen.setdefault(int(item["revision"]), key)
    newest: dict[str, int] = {}
    for rev, key in seen.items():
        newest[key] = max(rev, newest.get(key, rev))
    if not newest:
        return None, None
    sent = rec["sent"] if _still_there(ctx, found, rec["sent"]) else None
    for version in _versions(ctx, found, ours, sent):
        key = cache.content_key(version)
        if key is not None and key in newest:
            return newest[key], version
    return None, None


def _current(ctx: Context, prov: Any, name: str, mid: str) -> tuple[str, int]:
    """The server's current file of `mid` and its revision (`GET /v1/memories/ID`), through the
    admission barrier a pulled file passes (`cache.admit`: its sha256, the reader, secrets,
    `<private>` parts, scope): nothing a server sends reaches this machine's file unchecked."""
    from git_memex.remote import cache

    doc = prov.get(mid)
    got, item, text = cache.admit(ctx, doc)
    if item is None or got != mid:
        why = text if item is None else f"it names {got}"
        raise MemexError(f"remote {name} sent a current file of {mid} that the admission barrier refuses ({why}); "
                         "nothing was sent or written", FAILED)
    return text, int(item["revision"])


def _merge(base: str | None, ours: str, theirs: str) -> Any:
    """`merge.merge_texts` of the three, with the fields the server keeps (review, trust,
    revision, times) set to ours' on base and theirs: those are the server's bookkeeping, never a
    teammate's change, and this file keeps its own."""
    from git_memex.core.frontmatter import FrontmatterError, parse, serialize
    from git_memex.git.merge import merge_texts
    from git_memex.remote.cache import server_field as _server_field

    try:
        mine = parse(ours)[0]

        def as_ours(text: str | None) -> str | None:
            if text is None:
                return None
            fm, body = parse(text)
            for k in [k for k in fm if _server_field(k)]:
                fm.pop(k)
            fm.update({k: v for k, v in mine.items() if _server_field(k)})
            return serialize(fm, body)

        base, theirs = as_ours(base), as_ours(theirs) or theirs
    except (FrontmatterError, ValueError):
        pass  # a side the reader cannot read: the plain merge, reported as a conflict
    return merge_texts(base, ours, theirs)


def _write_local(ctx: Context, found: Any, text: str, *, check: bool) -> None:
    """Write the merge into this machine's file of the memory (its own folder, its own mode);
    `check`: it must read as a memory file first. The index then reads it again (a new `Stores`:
    the one `propose` found the memory with is closed by now)."""
    from git_memex.core.files import UnreadableMemory, atomic_write_text, parse_memory_bytes
    from git_memex.index.stores import Stores

    private = str(found.row["location"]) != "repo"
    if check:
        try:
            parse_memory_bytes(text.encode("utf-8"), found.path)
        except UnreadableMemory as exc:
            raise MemexError(f"the merge of {found.row['id']} would not be a memory file ({exc}); nothing was sent",
                             FAILED) from None
    atomic_write_text(found.path, text, mode=0o600 if private else None)
    if check:
        with Stores(ctx) as st:
            st.refresh()


# ------------------------------------------------------------------ review
def local_copy(ctx: Context, mid: str) -> str | None:
    """The text of the copy of `mid` held here that `git memex show ID` shows (the repository, the
    outbox, a private or personal memory, an org clone), or None when only a remote holds it."""
    from git_memex.core.files import read_bytes
    from git_memex.errors import NotFound
    from git_memex.index.stores import REMOTE_PREFIX, opened

    with opened(ctx) as st:
        st.refresh()
        try:
            found = st.find(mid)
        except NotFound:
            return None
        if str(found.row["location"]).startswith(REMOTE_PREFIX):
            return None
        try:
            return read_bytes(found.path).decode("utf-8", "replace")
        except (OSError, ValueError):  # unreadable (UnreadableMemory): `show ID` shows none either
            return None


def review(ctx: Context, name: str, memory_id: str, decision: str, note: str | None = None, *,
           read_remote: bool = False) -> dict[str, Any]:
    """A reviewer's decision on remote `name` (`POST /v1/review/ID`) about the revision this
    machine's cache holds, i.e. the one the person could read (`show --remote NAME ID`): the server
    refuses it when it holds a newer one (nothing changed; pull and read it again). The cached
    file must be the bytes the server sent with that revision. When a copy of ID is held here
    (`show ID` shows that one, docs/remote.md) and says something else than the cached revision,
    nothing is sent unless `read_remote` (the person says they read the remote revision): a
    reviewer never approves a text `show ID` did not show them unawares. The server records the
    token's name as the reviewer. Then the cache is pulled, so the decision is what this machine serves."""
    from git_memex.core.digest import sha256_hex
    from git_memex.core.files import read_private
    from git_memex.remote import cache
    from git_memex.remote.client import ReviewConflict

    _check_name(name)
    cache.require(name, ctx)
    if decision not in ("approve", "reject"):
        raise UsageError(f"a review decision is approve or reject, not {decision!r}")
    if note is not None:
        note = note.strip()
        if len(note) > 4096:
            raise UsageError("--note takes at most 4096 characters")
        from git_memex.secrets.admission import secret_field

        found = secret_field({"review_note": note}, "", ctx.redact_patterns)
        if found is not None:
            what = "a part marked private" if found[1] == "private" else f"a secret ({found[1]})"
            raise MemexError(f"the note holds {what}, which a relay never stores; nothing was sent", USAGE)
    state = cache.load_state(ctx, name)
    mid = cache.cached_id(ctx, name, memory_id, state)
    item = state["items"][mid]
    rev = item.get("revision") if isinstance(item, dict) else None
    if not isinstance(rev, int) or isinstance(rev, bool):
        raise MemexError(f"the cache of remote {name} has no revision for {mid}; `git memex remote pull {name} "
                         "--full`, then review it", USAGE)
    try:
        data = read_private(ctx.data_root, ctx.remote_cache(name) / f"{mid}.md")
    except OSError:
        data = None
    if data is None or sha256_hex(data) != item.get("sha256"):
        raise MemexError(f"the cached file of {mid} is not what remote {name} sent with revision {rev}, so what you "
                         f"read is not what you would review; `git memex remote pull {name} --full`, read it again, "
                         "then review it; nothing was sent", FAILED)
    if not read_remote:
        here = local_copy(ctx, mid)
        if here is not None and cache.content_key(here) != cache.content_key(data.decode("utf-8", "replace")):
            raise MemexError(f"{mid} is also held here, and `git memex show {mid}` shows that copy, which says something "
                             f"else than revision {rev} of remote {name} you would {decision}; read that revision with "
                             f"`git memex show --remote {name} {mid}`, then review it with --read-remote; nothing was "
                             "sent", FAILED)
    prov = cache.provider(ctx, name)
    try:
        doc = prov.review(mid, decision, rev, note)
    except ReviewConflict as exc:
        if exc.current_revision is not None and exc.current_revision != rev:
            raise MemexError(f"remote {name} holds {mid} at revision {exc.current_revision}, newer than revision {rev} "
                             f"you read; `git memex remote pull {name}`, read it again (`git memex show {mid}`), "
                             "then review it; nothing was changed", FAILED) from None
        raise MemexError(f"remote {name} did not take the review of {mid} ({exc.message}); nothing was changed",
                         FAILED) from None
    out: dict[str, Any] = {"id": mid, "remote": name, "url": prov.url, "decision": decision, "reviewed_revision": rev,
                           "revision": doc.get("revision"), "review_state": doc.get("review_state"),
                           "sha256": doc.get("sha256"), "pulled": False, "warnings": []}
    try:
        cache.pull(ctx, name)
        out["pulled"] = True
    except MemexError as exc:
        out["warnings"].append(f"the review is recorded, but the pull after it failed ({exc.message}); "
                               f"`git memex remote pull {name}` brings it")
    return out

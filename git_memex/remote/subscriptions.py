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
    """Send one project memory to remote `name` as a proposal (`POST /v1/propose`), its file as it
    is, with the revision the cache last saw for that id as `base_revision` (null: the server never
    had it). The local admission barrier runs first: a personal or private memory, a file the
    reader refuses or one holding a secret is refused here (exit 1) and never sent."""
    from git_memex.core.files import UnreadableMemory, parse_memory_bytes, read_bytes
    from git_memex.index.stores import Stores
    from git_memex.remote import cache
    from git_memex.remote.client import ProposeConflict
    from git_memex.secrets.scan import check_bytes

    _check_name(name)
    cache.require(name, ctx)
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
    try:
        raw = read_bytes(found.path, root=found.index.root)
        parse_memory_bytes(raw, found.path)
    except UnreadableMemory as exc:
        raise MemexError(f"{mid} cannot be proposed: its file {exc}; nothing was sent", USAGE) from None
    left = check_bytes(f"{mid}.md", raw, in_repo=True, patterns=ctx.redact_patterns)
    if left:
        f = left[0]
        what = "a secret" if f.secret else "a problem"
        raise MemexError(f"{mid} cannot be proposed: its file holds {what} ({f.rule}, line {f.line}); fix it, "
                         "nothing was sent", USAGE)
    state = cache.load_state(ctx, name)
    item = state["items"].get(mid)
    base = item.get("revision") if isinstance(item, dict) and isinstance(item.get("revision"), int) else None
    prov = cache.provider(ctx, name)
    try:
        doc = prov.propose(raw.decode("utf-8"), base)
    except ProposeConflict as exc:
        said = "no revision (as a new memory)" if exc.base_revision is None else f"revision {exc.base_revision}"
        cur = "revision ?" if exc.current_revision is None else f"revision {exc.current_revision}"
        raise MemexError(f"remote {name} holds {mid} at {cur} but this proposal was based on {said}; run "
                         f"`git memex remote pull {name}`, then propose again", USAGE) from None
    return {"id": mid, "remote": name, "url": prov.url, "base_revision": base, "revision": doc.get("revision"),
            "review_state": doc.get("review_state"), "sha256": doc.get("sha256"), "path": str(found.path)}

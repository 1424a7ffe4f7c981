"""Who shares a folder of the data root: an org clone (`org/NAME/`) or a remote cache (`remote/NAME/`).

The data root is the user's, not a project's, so every project subscribed to the same NAME (and
URL) uses the same folder. Each subscription that adds or pulls it records the git config file it
is written in (a repository's own config file, or "global") in the folder's record, `users.json`
(for an org clone inside its git dir, so the work tree stays clean). `remove` then deletes the
folder only when no other recorded config still subscribes to NAME at that URL (`others`).

Invariants:

- A record is only ever a hint for keeping a folder: an unreadable record, a config file that is
  gone or no longer names NAME at that URL, counts as no other user, so the folder goes as it
  did before records existed. A project that subscribed before this record and never pulled
  since is not counted (pull once).
- Writing the record is owner-only (0600) and atomic; a failure to write it never fails the add
  or pull that asked for it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from git_memex.core.context import Context

USERS = "users.json"


def keys(ctx: Context, where: list[str]) -> list[str]:
    """The record's names for the configs in `where` ("repo", "global": `git.org.recorded_in`)."""
    out = []
    for scope in where:
        if scope == "global":
            out.append("global")
        elif ctx.repo is not None:
            out.append(str(ctx.repo.common_dir / "config"))
    return out


def read(record: Path) -> list[str]:
    try:
        doc = json.loads(record.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    found = doc.get("users") if isinstance(doc, dict) else None
    return [u for u in found if isinstance(u, str)] if isinstance(found, list) else []


def save(record: Path, users: list[str]) -> None:
    from git_memex.core.files import atomic_write_text

    atomic_write_text(record, json.dumps({"users": sorted(set(users))}, indent=1) + "\n", mode=0o600)


def note(ctx: Context, record: Path, where: list[str]) -> None:
    """Record that this project's subscription, in the configs `where`, uses the folder."""
    mine = keys(ctx, where)
    known = read(record)
    if mine and not set(mine) <= set(known):
        with contextlib.suppress(OSError, ValueError):
            save(record, [*known, *mine])


def subscribes(user: str, section: str, name: str, url: str | None) -> bool:
    """Whether the config `user` still names `memex.<section>.NAME` at `url` (any URL when None)."""
    from git_memex.core.gitcmd import git_text

    flag = ["--global"] if user == "global" else ["--file", user]
    if user != "global" and not os.path.isfile(user):
        return False
    r = git_text(["config", *flag, "--get", f"memex.{section}.{name}.url"], timeout=30)
    return r is not None and r.returncode == 0 and (url is None or r.stdout.strip() == url)


def others(ctx: Context, record: Path, section: str, name: str, where: list[str], url: str | None) -> list[str]:
    """The recorded configs other than this project's (`where`) that still subscribe to `name` at
    `url`: the users a `remove` here must keep the folder for."""
    mine = set(keys(ctx, where))
    return [u for u in read(record) if u not in mine and subscribes(u, section, name, url)]

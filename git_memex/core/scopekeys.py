"""This clone's key in the data root, kept when the origin URL changes (docs/identity.md).

Drafts (the outbox) and private memories live in `<data root>/memories/{outbox,private}/<key>/`,
where the natural key is computed from the origin URL (`paths.Context.natural_key`). A rename,
a transfer or pointing a clone at a fork changes the URL, hence the key, and would hide those
files. So:

- `git memex init` pins the key in the repository's git config (`memex.projectKey`); a pinned
  key is used whatever the URL becomes.
- Every clone is remembered in the data root (`scopes.json`: main work tree -> key and
  normalised origin). A clone that was never pinned and whose natural key no longer matches the
  one it used is *carried over*: its old key is pinned (one stderr line, once), and anything
  already written under the new key is moved to it.
- `git memex scopes` lists every key with its counts; `doctor` reports keys whose drafts no
  clone uses any more; `git memex scopes --adopt KEY` carries such a key's files over by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from git_memex.core.paths import KEY_RE, Context, normalize_remote_url
from git_memex.core.record import record
from git_memex.errors import MemexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REGISTRY = "scopes.json"
FOLDERS = ("outbox", "private")


@record(frozen=True)
class Scope:
    key: str
    drafts: int
    private: int
    clone: str | None  # the main work tree that uses this key, when known
    origin: str | None  # its normalised origin when last seen
    current: bool
    clone_exists: bool

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "drafts": self.drafts, "private": self.private, "clone": self.clone,
                "clone_exists": self.clone_exists, "origin": self.origin, "current": self.current}


# ------------------------------------------------------------------ registry
def _registry_path(ctx: Context) -> Path:
    return ctx.data_root / REGISTRY


def read_registry(ctx: Context) -> dict[str, dict[str, Any]]:
    """main work tree -> {"key", "origin"}; empty when missing or unreadable."""
    try:
        doc = json.loads(_registry_path(ctx).read_text(encoding="utf-8"))
        clones = doc.get("clones") if isinstance(doc, dict) else None
        if not isinstance(clones, dict):
            return {}
        return {str(k): v for k, v in clones.items() if isinstance(v, dict) and isinstance(v.get("key"), str)}
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def _write_registry(ctx: Context, clones: dict[str, dict[str, Any]]) -> None:
    from git_memex.core.files import atomic_write_text

    # a record for later diagnosis: an unwritable data root is reported elsewhere
    with contextlib.suppress(OSError, MemexError):
        atomic_write_text(_registry_path(ctx), json.dumps({"version": 1, "clones": clones}, indent=1, sort_keys=True))


def _origin(ctx: Context) -> str | None:
    url = ctx.origin_url
    return normalize_remote_url(url) if url else None


def _has_files(ctx: Context, key: str) -> bool:
    for folder in FOLDERS:
        d = ctx.data_root / "memories" / folder / key
        try:
            with os.scandir(d) as it:
                if any(e.name.endswith(".md") for e in it):
                    return True
        except OSError:
            continue
    return False


# ------------------------------------------------------------------ settle
def settle(ctx: Context) -> None:
    """Keep this clone on the key it has used (called when the stores open in a repository).

    Costs one small file read when nothing changed."""
    if ctx.repo is None:
        return
    root = str(ctx.project_root)
    clones = read_registry(ctx)
    entry = clones.get(root)
    origin = _origin(ctx)
    if ctx.pinned_key is None and entry is not None and entry["key"] != ctx.natural_key and KEY_RE.fullmatch(entry["key"]):
        old = entry["key"]
        if _has_files(ctx, old):
            if not pin(ctx, old):
                return  # cannot write git config: leave everything as it is
            moved = move_scope(ctx, ctx.natural_key, old) if _has_files(ctx, ctx.natural_key) else (0, 0, 0)
            extra = f"; {moved[0]} written meanwhile under the new key moved there too" if moved[0] else ""
            print(f"git-memex: this clone's origin is now {origin or 'gone'}, which would give it a new key; its "
                  f"drafts and private memories stay under its key {old}, now pinned as memex.projectKey{extra}",
                  file=sys.stderr)
    want = {"key": ctx.project_key, "origin": origin}
    if entry is None or {k: entry.get(k) for k in want} != want:
        clones[root] = {**(entry or {}), **want}
        _write_registry(ctx, clones)


def pin(ctx: Context, key: str) -> bool:
    """Write `memex.projectKey` into the repository's git config; False when git refuses."""

    assert ctx.repo is not None
    from git_memex.git.gitcmd import git_text

    r = git_text(["config", "--local", "memex.projectKey", key], ctx.repo.work_tree, timeout=30)
    if r is None or r.returncode != 0:
        return False
    ctx.config["memex.projectkey"] = key
    return True


# ------------------------------------------------------------------ listing
def _count(folder: Path) -> int:
    try:
        with os.scandir(folder) as it:
            return sum(1 for e in it if e.name.endswith(".md") and e.is_file())
    except OSError:
        return 0


def count_personal(ctx: Context) -> int:
    return _count(ctx.personal_dir)


def scopes(ctx: Context) -> list[Scope]:
    """Every key in the data root (a folder of drafts or private memories, or a known clone)."""
    base = ctx.data_root / "memories"
    keys: set[str] = set()
    for folder in FOLDERS:
        with contextlib.suppress(OSError):
            keys |= {e.name for e in os.scandir(base / folder) if e.is_dir()}
    clones = read_registry(ctx)
    owner: dict[str, tuple[str | None, str | None]] = {}
    for root, entry in sorted(clones.items()):
        keys.add(entry["key"])
        owner.setdefault(entry["key"], (root, entry.get("origin")))
    current = ctx.project_key if ctx.repo is not None else None
    if current:
        keys.add(current)
        if ctx.repo is not None:
            owner[current] = (str(ctx.project_root), _origin(ctx))
    out = []
    for key in sorted(keys):
        clone, origin = owner.get(key, (None, None))
        out.append(Scope(key=key, drafts=_count(base / "outbox" / key), private=_count(base / "private" / key),
                         clone=clone, origin=origin, current=key == current,
                         clone_exists=clone is not None and Path(clone).is_dir()))
    return out


# ------------------------------------------------------------------ carrying over
def move_scope(ctx: Context, src: str, dst: str) -> tuple[int, int, int]:
    """Move the drafts and private memories of key `src` to key `dst`: (moved, identical
    skipped, kept because `dst` has a different file with that id). Each move is one rename."""
    from git_memex.core.paths import private_mkdir

    moved = same = kept = 0
    for folder in FOLDERS:
        a = ctx.data_root / "memories" / folder / src
        b = ctx.data_root / "memories" / folder / dst
        try:
            names = sorted(e.name for e in os.scandir(a) if e.name.endswith(".md") and e.is_file())
        except OSError:
            continue
        if names:
            private_mkdir(b)
        for name in names:
            target = b / name
            if target.exists():
                try:
                    identical = (a / name).read_bytes() == target.read_bytes()
                except OSError:
                    identical = False
                if identical:
                    (a / name).unlink()
                    same += 1
                else:
                    kept += 1
                continue
            os.replace(a / name, target)
            moved += 1
        with contextlib.suppress(OSError):
            a.rmdir()  # only when empty
    return moved, same, kept


def adopt(ctx: Context, key: str) -> dict[str, Any]:
    """`scopes --adopt KEY`: carry another key's files over to this clone's key."""
    ctx.require_repo("scopes --adopt")
    key = key.strip()
    current = ctx.project_key
    if key == current:
        raise UsageError(f"{key} is already this clone's key")
    known = {s.key for s in scopes(ctx)}
    if not KEY_RE.fullmatch(key) or key not in known:
        raise UsageError(f"there is no key {key!r} in the data root; `git memex scopes` lists them")
    if ctx.pinned_key is None:
        pin(ctx, current)  # adopting says which key this clone is: keep it
    moved, same, kept = move_scope(ctx, key, current)
    clones = read_registry(ctx)
    stale = [root for root, e in clones.items() if e.get("key") == key and not Path(root).is_dir()]
    if stale or any(e.get("key") == key and root == str(ctx.project_root) for root, e in clones.items()):
        for root in stale:
            clones.pop(root, None)
        _write_registry(ctx, clones)
    return {"from": key, "to": current, "moved": moved, "skipped_identical": same, "kept": kept}

"""This clone's key in the data root, kept when the origin URL changes (docs/project-keys.md).

Drafts (the outbox) and private memories live in `<data root>/memories/{outbox,private}/<key>/`,
where the natural key is computed from the origin URL (`context.Context.natural_key`). A rename,
a transfer or pointing a clone at a fork changes the URL, hence the key, and would hide those
files. So:

- `git memex init` pins the key in the repository's git config (`memex.projectKey`); a pinned
  key is used whatever the URL becomes.
- Every clone is remembered in the data root (`scopes.json`: main work tree -> key and
  normalised origin). A clone that was never pinned and whose natural key no longer matches the
  one it used is *carried over*: its old key is pinned (one stderr line, once), and anything
  already written under the new key is moved to it.
- A draft made in a folder before it was a git repository (or before it had an origin) is filed
  under the folder's own key (`project.key_for(None, folder)`); when that folder first opens its
  memories as a clone whose natural key differs, that key is pinned the same way.
- A pinned clone also carries a clone id (`memex.cloneId`, local config) bound to the .git
  directory that got it (`memex.cloneDir`: device, inode, path; `scopes.json` records the device
  and inode beside the id). A clone keeps its id, and with it its key, only while its own .git is
  that one (`project.is_that_git`); any other .git carrying the id (`cp -a` copies .git/config,
  never the inode) is a copy and takes a fresh key and id, whether or not the original is still
  at its old path, whichever data root runs first. `mv` keeps the inode, so a moved clone keeps
  its key; a move to another filesystem cannot be told from a copy of a clone that has moved since,
  and takes a fresh key with one line naming `scopes --adopt`. `Context.project_key` checks this
  (`check_owner`) before any command names a key.
- Drafts under a new natural key are carried over only when no other recorded clone uses it.
- `git memex scopes` lists every key with its counts; `doctor` reports keys whose drafts no
  clone uses any more (never one that a clone at its recorded path still uses);
  `git memex scopes --adopt KEY` carries such a key's files over by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from git_memex.core.project import is_that_git as _is_mine
from git_memex.core.project import key_for, normalize_remote_url
from git_memex.core.project import parse_clone_dir as _parse_stamp
from git_memex.core.record import record
from git_memex.core.settings import KEY_RE
from git_memex.errors import MemexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # Context only in annotations: `Context.project_key` imports this module
    from typing import Any

    from git_memex.core.context import Context

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
        from git_memex.core.files import loads_json, read_private

        doc = loads_json(read_private(ctx.data_root, _registry_path(ctx)).decode("utf-8"))
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


def _config_at(root: Path) -> dict[str, str] | None:
    """memex.projectkey, memex.cloneid, memex.clonedir and remote.origin.url from the git config of the clone
    whose main work tree is `root` (its own `.git/config`, read as git writes it; no git run);
    None when `root` holds no clone any more."""
    import re

    dot = root / ".git"
    gitdir = dot
    try:
        if dot.is_file():  # a submodule: `gitdir: ../.git/modules/NAME`
            line = dot.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                return None
            gitdir = Path(line[len("gitdir:"):].strip())
            gitdir = gitdir if gitdir.is_absolute() else root / gitdir
        text = (gitdir / "config").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    want = {("memex", "projectkey"), ("memex", "cloneid"), ("memex", "clonedir"), ('remote "origin"', "url")}
    out: dict[str, str] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        m = re.fullmatch(r"\[\s*([A-Za-z0-9.-]+)(\s+\"(?:[^\"\\]|\\.)*\")?\s*\]\s*(?:[#;].*)?", line)
        if m:
            section = m.group(1).lower() + (" " + m.group(2).strip() if m.group(2) else "")
            continue
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)", line)
        if m and (section, m.group(1).lower()) in want:
            value = m.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            name = {"remote \"origin\"": "remote.origin"}.get(section, section)
            out[f"{name}.{m.group(1).lower()}"] = value
    return out


def uses_key(root: Path, key: str) -> bool:
    """A clone still lives at `root` and uses `key` (pinned, else its natural key)."""
    conf = _config_at(root)
    if conf is None:
        return False
    pinned = conf.get("memex.projectkey")
    if pinned and KEY_RE.fullmatch(pinned):
        return pinned == key
    return key_for(conf.get("remote.origin.url") or None, root) == key


def _set_clone_id(ctx: Context) -> str | None:
    """Give this clone a new id (memex.cloneId) bound to its .git directory; None when git refuses."""
    import secrets

    assert ctx.repo is not None
    from git_memex.core.gitcmd import git_text

    cid = secrets.token_hex(8)
    r = git_text(["config", "--local", "memex.cloneId", cid], ctx.repo.work_tree, timeout=30)
    if r is None or r.returncode != 0:
        return None
    ctx.config["memex.cloneid"] = cid
    _stamp(ctx)
    return cid


# ------------------------------------------------------------------ which .git directory owns the id
STAMP = "memex.cloneDir"
"""`DEV:INO:ROOT`: the device and inode of the .git directory that owns `memex.cloneId`, and the
main work tree it was at. `cp -a` gives the copy's .git a new inode; `mv` on one filesystem keeps
it. So a clone tells whether it is the one that got the id from its own .git alone, whatever data
root it runs for."""


def _gitdir_of(root: Path) -> Path:
    dot = root / ".git"
    try:
        if dot.is_file():
            line = dot.read_text(encoding="utf-8").strip()
            if line.startswith("gitdir:"):
                g = Path(line[len("gitdir:"):].strip())
                return g if g.is_absolute() else root / g
    except (OSError, UnicodeDecodeError):
        pass
    return dot


def _inode(gitdir: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(gitdir)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _here(ctx: Context) -> tuple[int, int] | None:
    assert ctx.repo is not None
    return _inode(ctx.repo.common_dir)


def _owns(ctx: Context) -> bool:
    """This clone's .git directory is the one its clone id was given to."""
    return ctx.owns_clone_id()


def _ident(ctx: Context) -> str | None:
    """`DEV:INO` of this clone's .git directory, as the registry records it beside the clone id."""
    here = _here(ctx)
    return f"{here[0]}:{here[1]}" if here else None


def _parse_ident(raw: object, root: str) -> tuple[tuple[int, int], str] | None:
    return _parse_stamp(f"{raw}:{root}") if isinstance(raw, str) else None


def _stamp(ctx: Context) -> bool:
    """Bind this clone's id to its .git directory (and remember where it is)."""
    assert ctx.repo is not None
    from git_memex.core.gitcmd import git_text

    ino = _here(ctx)
    if ino is None:
        return False
    value = f"{ino[0]}:{ino[1]}:{ctx.project_root}"
    r = git_text(["config", "--local", STAMP, value], ctx.repo.work_tree, timeout=30)
    if r is None or r.returncode != 0:
        return False
    ctx.config[STAMP.lower()] = value
    return True


def _proven(root: Path, cid: str) -> bool:
    """The clone at `root` carries `cid` and its own .git directory owns it."""
    conf = _config_at(root)
    if conf is None or conf.get("memex.cloneid") != cid:
        return False
    return _is_mine(_parse_stamp(conf.get(STAMP.lower())), _inode(_gitdir_of(root)), str(root))


def _carries(root: str, cid: str) -> bool:
    return (_config_at(Path(root)) or {}).get("memex.cloneid") == cid


def _settle_clone_id(ctx: Context, clones: dict[str, dict[str, Any]], entry: dict[str, Any] | None,
                     cid: str) -> tuple[bool, bool]:
    """Copy or move? Decided by the .git directory (docs/project-keys.md, *Copies and moves*).
    Returns (this .git owns the id now, records of the old path dropped).

    The one rule: a clone keeps its id, and with it its key, only while its own .git directory is
    the one that id was given to (`_is_mine`), as named in `memex.cloneDir` or, for an id from an
    older version that has no `memex.cloneDir`, in this data root's record of the id. Any other
    .git carrying the id is a copy (`cp -a` copies .git/config, never the inode) and takes a fresh
    key of its own, whether or not the original is still at its old path: an original that moved
    meanwhile cannot be told from one that is gone, and guessing "gone" let a copy share the
    original's drafts. So two clones never keep one id, and never share a key through a copy."""
    root = str(ctx.project_root)
    mine = _parse_stamp(ctx.config.get(STAMP.lower()))
    here = _here(ctx)
    twins = sorted(r for r, e in clones.items() if r != root and e.get("clone") == cid)
    if mine is None:
        # an id given before ids were bound to their .git (an older version): a .git this data root
        # saw owning the id decides; else the records, as before (the limit in docs/project-keys.md)
        seen = [(r, _parse_ident(clones[r].get("gitdir"), r)) for r in (root, *twins)
                if r in clones and clones[r].get("clone") == cid]
        known = [(r, s) for r, s in seen if s is not None]
        if known and not any(_is_mine(s, here, root) for _, s in known):
            live = [r for r, _ in known if r != root and _carries(r, cid)]
            _fork(ctx, clones, live[0] if live else None, known[0][0])
            return True, False
        if not known:
            if entry is not None:
                return (entry.get("clone") == cid and _stamp(ctx)), False
            others = sorted(r for r in clones if r != root)
            live = [r for r in twins if _carries(r, cid)]
            live += [r for r in others if r not in twins and _proven(Path(r), cid)]
            if live:
                _fork(ctx, clones, live[0], live[0])
                return True, False
            if not twins:
                return False, False
        if not _stamp(ctx):
            return False, False
        mine = _parse_stamp(ctx.config.get(STAMP.lower()))
    if _is_mine(mine, here, root):
        assert mine is not None
        if mine[1] != root or mine[0] != here:  # moved on one filesystem, or the device renumbered
            _stamp(ctx)
        gone = [r for r in twins if not _proven(Path(r), cid)]
        for r in gone:
            clones.pop(r, None)
        return True, bool(gone)
    assert mine is not None
    places = sorted({mine[1], *twins} - {root})
    live = [r for r in places if _carries(r, cid)]
    if not live and here is not None and mine[0][1] == here[1] and mine[0][0] != here[0]:
        # the same inode on another device number, and no other clone with the id in sight: this
        # .git seen through another mount (a container's bind mount), not a copy, which on one
        # device always has an inode of its own
        _stamp(ctx)
        return True, False
    # another .git directory got this id: this one is a copy of it
    _fork(ctx, clones, live[0] if live else None, mine[1])
    return True, False


def _fresh_key(ctx: Context, clones: dict[str, dict[str, Any]], old: str) -> str:
    """A key for a copy that no clone recorded here uses and that holds no files: the key of its
    folder, else that name with random hex (a copy put where the original was)."""
    import secrets

    new = key_for(None, ctx.project_root)
    taken = {old} | {str(e.get("key")) for e in clones.values()}
    while new in taken or _has_files(ctx, new):
        new = f"{new.rsplit('-', 1)[0]}-{secrets.token_hex(6)}"
    return new


def _fork(ctx: Context, clones: dict[str, dict[str, Any]], original: str | None, was: str) -> None:
    """This clone carries the clone id (and key) of another .git directory: give it a fresh key of
    its own and a new clone id. `original` is the live clone with that id, when one is found;
    `was` is where the id's owner was last seen."""
    old = ctx.project_key
    new = _fresh_key(ctx, clones, old)
    if not pin(ctx, new) or _set_clone_id(ctx) is None:
        from git_memex.errors import FAILED

        who = original or f"the clone last at {was}"
        raise MemexError(f"this clone is a copy of {who} and carries that clone's key {old}, and its own key "
                         "could not be written to .git/config; make .git/config writable, then run the command "
                         "again (nothing was changed)", FAILED)
    if original is not None:
        print(f"git-memex: this clone is a copy of {original} (its .git/config came along, as with `cp -a`), so it "
              f"now has its own key {new} and {original}'s drafts and private memories stay that clone's alone; to "
              f"move them here instead, run `git memex scopes --adopt {old}`", file=sys.stderr)
    else:
        print(f"git-memex: this clone's .git is not the one its clone id was given to (that one was at {was}): it is "
              f"a copy (`cp -a`) of a clone that has moved since, or this clone itself moved to another filesystem or "
              f"was restored from a copy, so it now has its own key {new} and the drafts and private memories under "
              f"{old} stay there; if this is that clone moved, run `git memex scopes --adopt {old}` to bring them "
              "here", file=sys.stderr)


def check_owner(ctx: Context) -> None:
    """Settle first when this clone carries a clone id its .git directory does not own (a copy):
    `Context.project_key` calls this before it names a key, so no command, whether or not it opens
    the stores, acts on the original's drafts in a copy."""
    if ctx.repo is not None and ctx.pinned_key is not None and ctx.config.get("memex.cloneid") and not _owns(ctx):
        settle(ctx)


# ------------------------------------------------------------------ settle
def settle(ctx: Context) -> None:
    """Keep this clone on the key it has used (called when the stores open in a repository).

    Costs one small file read when nothing changed."""
    if ctx.repo is None:
        return
    ctx.owner_checked = True  # this settles it: `Context.project_key` need not call back in here
    root = str(ctx.project_root)
    clones = read_registry(ctx)
    entry = clones.get(root)
    origin = _origin(ctx)
    cid = ctx.config.get("memex.cloneid") or None
    dropped = stamped = False
    if cid is not None and ctx.pinned_key is not None:
        stamped, dropped = _settle_clone_id(ctx, clones, entry, cid)
        cid = ctx.config.get("memex.cloneid") or None
    if ctx.pinned_key is None and entry is None:
        plain = key_for(None, ctx.project_root)
        if (plain != ctx.natural_key and _has_files(ctx, plain)
                and not any(e.get("key") == plain for r, e in clones.items() if r != root)):
            if not pin(ctx, plain):
                return  # cannot write git config: leave everything as it is
            extra = _carry_meanwhile(ctx, clones, plain)
            print(f"git-memex: the drafts and private memories made in this folder before it had an origin stay "
                  f"this clone's: their key {plain} is now pinned as memex.projectKey{extra}", file=sys.stderr)
    if ctx.pinned_key is None and entry is not None and entry["key"] != ctx.natural_key and KEY_RE.fullmatch(entry["key"]):
        old = entry["key"]
        if _has_files(ctx, old):
            if not pin(ctx, old):
                return  # cannot write git config: leave everything as it is
            extra = _carry_meanwhile(ctx, clones, old)
            print(f"git-memex: this clone's origin is now {origin or 'gone'}, which would give it a new key; its "
                  f"drafts and private memories stay under its key {old}, now pinned as memex.projectKey{extra}",
                  file=sys.stderr)
    if ctx.pinned_key is not None and cid is None:
        cid = _set_clone_id(ctx)  # once per clone, the first time its key is pinned
        stamped = cid is not None
    want: dict[str, Any] = {"key": ctx.project_key, "origin": origin}
    if cid is not None and (stamped or _owns(ctx)):
        want["clone"] = cid  # only an id this .git directory is known to own, and which .git that is
        want["gitdir"] = _ident(ctx)
    if dropped or entry is None or {k: entry.get(k) for k in want} != want:
        clones[root] = {**(entry or {}), **want}
        _write_registry(ctx, clones)


def _carry_meanwhile(ctx: Context, clones: dict[str, dict[str, Any]], key: str) -> str:
    """Move what was written under the natural key to `key` (just pinned), unless another clone
    recorded in this data root still uses the natural key: those drafts are (or may be) that
    clone's, e.g. a clone of the fork this clone now points at. The tail of the stderr line."""
    natural = ctx.natural_key
    if natural == key or not _has_files(ctx, natural):
        return ""
    root = str(ctx.project_root)
    users = sorted(r for r in clones if r != root and uses_key(Path(r), natural))
    if users:
        return (f"; the drafts under the new key {natural} stay there, since the clone at {users[0]} uses that "
                "key")
    moved = move_scope(ctx, natural, key)
    return f"; {moved[0]} written meanwhile under the new key moved there too" if moved[0] else ""


def pin(ctx: Context, key: str) -> bool:
    """Write `memex.projectKey` into the repository's git config; False when git refuses."""

    assert ctx.repo is not None
    from git_memex.core.gitcmd import git_text

    r = git_text(["config", "--local", "memex.projectKey", key], ctx.repo.work_tree, timeout=30)
    if r is None or r.returncode != 0:
        return False
    ctx.config["memex.projectkey"] = key
    if not ctx.config.get("memex.cloneid"):
        _set_clone_id(ctx)
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
    users: dict[str, list[str]] = {}
    for root, entry in sorted(clones.items()):
        keys.add(entry["key"])
        users.setdefault(entry["key"], []).append(root)
    current = ctx.project_key if ctx.repo is not None else None
    here = str(ctx.project_root) if ctx.repo is not None else None
    if current:
        keys.add(current)
    out = []
    for key in sorted(keys):
        clone: str | None
        if key == current:
            clone, origin, live = here, _origin(ctx), True
        else:
            roots = users.get(key, [])
            # a clone recorded for the key that still lives at its path and uses it (a copy or a
            # second clone of the same origin); the first recorded one only when none does
            alive = [r for r in roots if r != here and uses_key(Path(r), key)]
            clone = (alive or roots)[0] if alive or roots else None
            origin = clones[clone].get("origin") if clone in clones else None
            live = bool(alive)
        out.append(Scope(key=key, drafts=_count(base / "outbox" / key), private=_count(base / "private" / key),
                         clone=clone, origin=origin, current=key == current, clone_exists=live))
    return out


# ------------------------------------------------------------------ carrying over
def move_scope(ctx: Context, src: str, dst: str) -> tuple[int, int, int]:
    """Move the drafts and private memories of key `src` to key `dst`: (moved, identical
    skipped, kept because `dst` has a different file with that id). Each move is one rename."""
    from git_memex.core.data_root import private_mkdir

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

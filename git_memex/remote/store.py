"""The remote server's folder `DIR` (docs/remote.md): memory files, revisions, the audit log.

Invariants:

- The memory files are the truth: `DIR/<id>.md`, or `DIR/<sub folder>/<id>.md` for a file put
  there by hand (read like a project memory folder, any depth, hidden folders skipped). A
  memory's revision is its file's `revision` field; `DIR/.remote/` holds only what can be rebuilt
  from the files (the search index, the lock).
- `DIR/audit.jsonl` is append-only: each write appends `begun` (fsynced), writes the file
  atomically (temp file beside it, fsync, rename) and appends `committed`. Nothing ever rewrites
  or truncates it. On opening, every `begun` left without its outcome (a killed server) is
  settled with a `recover` line: `committed` when the file's bytes hash to the `begun` line's
  sha256 (the rename happened), else `aborted` (the old file, or none, is what is there).
- One process serves a folder (an exclusive lock on `DIR/.remote/lock`, held while open), and
  one thread calls a Store (the server runs every call on one worker thread): writes are
  serialised, so a `begun` line is settled by the next line or by recovery.
- Every proposed file goes through the one reader (`core.frontmatter` + `core.files.checked_memory`,
  i.e. `check_fields`), the admission barrier's masking decision (`secrets.admission.mask_fields`
  and `secrets.redact`, applied field by field) and the write path's own `core.files.file_text`.
  A file the reader rejects, or with anything the barrier would mask, is refused (422) before a
  line is written; the sentence names the field, never the value.
- Trust a proposer claims is never kept (docs/remote.md, "Approval on the server").
- Hand edits are seen at the next request (`refresh`: one stat walk, then only the changed files
  read again). Every served file passed the admission barrier (`_admit_file`: the reader, the
  commit checks with `patterns`, no personal memory); a file that fails is left out and named.
  Each served file's bytes are what its id's last committed audit line says: a hand edit gets an
  `edit` line, so a pull from an older cursor carries it.
- `patterns` are the built-in detectors' companions a local write in DIR uses (`team_patterns`)
  plus the server's `--redact-pattern`s.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from git_memex.core import model
from git_memex.core.files import crash_point, pause_point
from git_memex.errors import FAILED, MemexError

AUDIT = "audit.jsonl"
STATE = ".remote"
OUTCOMES = ("committed", "aborted")
POINTS = ("remote.before_begun", "remote.after_begun", "remote.after_tmp", "remote.after_rename",
          "remote.after_committed")
"""The fault-injection points of a write, in order (GIT_MEMEX_PAUSE_AT / GIT_MEMEX_CRASH_AT)."""


class StoreError(Exception):
    """An answer other than success: the HTTP status, the one sentence, any extra JSON keys."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra

    def body(self, patterns: tuple[str, ...] = ()) -> dict[str, Any]:
        from git_memex.remote.protocol import error_body

        return error_body(_masked(self.message, patterns), **self.extra)


def _masked(text: str, patterns: tuple[str, ...] = ()) -> str:
    """A sentence as it leaves: a reader's message may quote a value; a secret in it is masked."""
    from git_memex.secrets.redact import redact

    return redact(text, patterns).text


def _point(name: str) -> None:
    pause_point(name)
    crash_point(name)


def _sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _revision(fm: dict[str, Any]) -> int:
    rev = fm.get("revision")
    return rev if type(rev) is int else 0


# Keys a review writes (or that read as one): a proposal never carries them, whatever their case,
# `-` or `_` (`Approved_by`, `review-note`, `reviewed_by`, `trust`).
REVIEW_KEYS = frozenset({"approved_by", "approved_at", "review_note", "reviewed_by", "reviewed_at",
                         "trust", "trust_level", "proposed_by"})


def _review_key(key: str) -> bool:
    return key.strip().casefold().replace("-", "_") in REVIEW_KEYS


def _sig(st: os.stat_result) -> tuple[int, ...]:
    """What a stat walk keeps of a file to see a change: a hand edit changes one of these."""
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


class _HandEdit(Exception):
    """The file a write would replace changed by hand since this request's stat walk."""


def _unprocessable(message: str) -> StoreError:
    return StoreError(422, message + "; nothing was written")


def team_patterns(root: Path) -> tuple[str, ...]:
    """The `memex.redactPattern`s a local write in `root` uses: git's system and global config,
    and the repository's own when `root` is inside a work tree (a refused one is warned about
    once and skipped, as on every local write path)."""
    from git_memex.core.context import read_config
    from git_memex.core.userregex import usable

    raw = read_config(root).get("memex.redactpattern")
    return usable("redactPattern", tuple(raw.split("\0"))) if raw else ()


class Store:
    """One served folder. Not thread-safe: call it from one thread (the server's worker)."""

    def __init__(self, root: Path, patterns: tuple[str, ...] = (), team: tuple[str, ...] | None = None) -> None:
        """`patterns` from the command line; `team`, the git-config patterns already read (and
        timed) by the caller, or None to read them here (`team_patterns`)."""
        self.root = Path(os.path.abspath(root))
        self.warnings: list[str] = []
        self.recovered: list[dict[str, Any]] = []
        self._prepare()
        if team is None:
            team = team_patterns(self.root)
        self.patterns = tuple(dict.fromkeys((*patterns, *team)))
        self._lock_fd = self._lock()
        try:
            self.paths: dict[str, Path] = {}
            self.id_at: dict[Path, str] = {}  # the reverse of `paths`: one lookup per file, never a scan of all
            self.committed_rev: dict[str, int | None] = {}  # id -> the revision of its last committed line
            self.sigs: dict[str, tuple[int, ...]] = {}  # what the last stat walk saw of each file
            self.shas: dict[Path, str] = {}  # the sha256 of each admitted file as last read
            self.left_out: dict[Path, str] = {}  # files the admission barrier refused, and why
            self.known: dict[str, str] = {}  # id -> the sha256 of its last committed audit line
            self.latest: dict[str, int] = {}  # id -> the seq of its last committed audit line
            self._scan()
            self.lines: list[dict[str, Any]] = []
            self.count = 0  # lines in the file (a line that is not JSON counts: seq is the line number)
            self._audit_fd = self._open_audit()
            self._recover()
            self._note_edits(list(self.paths.values()))
            self._open_index()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------ opening
    def _prepare(self) -> None:
        if self.root.is_symlink():
            raise MemexError(f"--root {self.root} is a symbolic link; give the folder itself", FAILED)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise MemexError(f"--root {self.root} is not a folder", FAILED) from None
        except OSError as exc:
            raise MemexError(f"cannot create --root {self.root} ({exc.strerror})", FAILED) from None
        if not self.root.is_dir():
            raise MemexError(f"--root {self.root} is not a folder", FAILED)
        state = self.root / STATE
        if state.is_symlink() or (state.exists() and not state.is_dir()):
            raise MemexError(f"{state} is not a folder; remove it (the server rebuilds it)", FAILED)
        try:
            state.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise MemexError(f"cannot create {state} ({exc.strerror}); check that --root is writable", FAILED) from None

    def _lock(self) -> int | None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return None
        path = self.root / STATE / "lock"
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            raise MemexError(f"cannot create the lock {path} ({exc.strerror})", FAILED) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise MemexError(f"another remote-server is serving {self.root} (it holds {path}); stop it first",
                             FAILED) from None
        return fd

    def _sources(self) -> list[Any]:
        from git_memex.index.stores import tree_sources

        return tree_sources("repo", self.root, None, self.warnings)

    def _scan(self) -> None:
        """Which file holds which id; the temp files of a killed write are removed (the lock is
        held, so none is live)."""
        from git_memex.core.files import leftovers

        for src in self._sources():
            for tmp, _old in leftovers(src.folder):
                with contextlib.suppress(OSError):
                    tmp.unlink()
        self.sigs = self._walk()
        for path in sorted(map(Path, self.sigs), key=lambda p: p.name):
            why = self._take(path)
            if why is not None:
                self.warnings.append(f"left out {path}: {why}")

    def _walk(self) -> dict[str, tuple[int, ...]]:
        """One `lstat` of every memory file in the folder, listing each folder once, by the rules
        of `index.stores.tree_sources` (hidden folders, links to folders and names that are not
        UTF-8 skipped) and `core.files.list_md`."""
        from git_memex.index.stores import valid_name

        out: dict[str, tuple[int, ...]] = {}
        todo = [str(self.root)]
        while todo:
            here = todo.pop()
            try:
                it = os.scandir(here)
            except OSError:
                continue
            with it:
                for e in it:
                    name = e.name
                    if name.startswith("."):
                        continue
                    try:
                        if e.is_dir(follow_symlinks=False):
                            if valid_name(name):
                                todo.append(e.path)
                            continue
                        if not name.endswith(".md"):
                            continue
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    out[e.path] = _sig(st)
        return out

    def _admit_file(self, path: Path) -> tuple[model.Memory | None, str]:
        """The memory in `path` through the admission barrier a pulled file passes (the one reader,
        the commit checks with the team's patterns, no personal memory), or (None, why not)."""
        from git_memex.core.files import UnreadableMemory, parse_memory_bytes, read_bytes
        from git_memex.secrets.admission import refusal

        try:
            raw = read_bytes(path, root=self.root)
            m = parse_memory_bytes(raw, path)
        except UnreadableMemory as exc:
            return None, f"it {exc}"
        why = refusal(path.name, raw, m, self.patterns)
        if why is not None:
            return None, f"it {why}"
        if m.scope == "personal":
            return None, "it is a personal memory, which a relay never holds"
        self.shas[path] = _sha(raw)
        return m, ""

    def _take(self, path: Path) -> str | None:
        """Admit `path` into the served set (None), or leave it out (why)."""
        m, why = self._admit_file(path)
        self._unserve(path)
        self.left_out.pop(path, None)
        if m is None:
            self.shas.pop(path, None)
            self.left_out[path] = why
            return why
        other = self.paths.get(m.id)
        if other is not None and other != path and str(other) in self.sigs:
            self.shas.pop(path, None)
            self.left_out[path] = f"{other} has the same id"
            return self.left_out[path]
        self._serve(m.id, path)
        return None

    def _serve(self, mid: str, path: Path) -> None:
        old = self.paths.get(mid)
        if old is not None and self.id_at.get(old) == mid:
            del self.id_at[old]
        self.paths[mid] = path
        self.id_at[path] = mid

    def _unserve(self, path: Path) -> None:
        mid = self.id_at.pop(path, None)
        if mid is not None and self.paths.get(mid) == path:
            del self.paths[mid]

    def _note_edits(self, paths: list[Path]) -> None:
        """An `edit` line for each served file whose bytes are not what its id's last committed
        line says (a hand edit, or a file put in DIR by hand): so a pull from an older cursor
        carries it."""
        lines: list[dict[str, Any]] = []
        for path in paths:
            mid, sha = self.id_at.get(path), self.shas.get(path)
            if mid is None or sha is None or self.known.get(mid) == sha:
                continue
            cur = self._current(mid)
            if cur is None:
                continue
            line = {"who": "operator", "role": "operator", "event": "edit", "id": mid,
                    "from_revision": self._committed_revision(mid), "revision": _revision(cur[2].fm),
                    "sha256": sha, "outcome": "committed"}
            lines.append(line)
        self._append_many(lines)

    def _committed_revision(self, mid: str) -> int | None:
        return self.committed_rev.get(mid)

    def refresh(self) -> None:
        """See hand edits of DIR before a read: one stat walk; a file whose stat changed (or that
        is new or gone) is admitted again, logged when left out, re-indexed, and given an `edit`
        line when its bytes changed."""
        now = self._walk()
        if now == self.sigs:
            return
        changed = [Path(p) for p, sig in now.items() if self.sigs.get(p) != sig]
        gone = [Path(p) for p in self.sigs if p not in now]
        self.sigs = now
        for path in gone:
            self._unserve(path)
            self.left_out.pop(path, None)
            self.shas.pop(path, None)
        for path in sorted(changed, key=lambda p: p.name):
            why = self._take(path)
            if why is not None:
                print(f"git-memex remote-server: warning: left out {path}: {why}; it is not served",
                      file=sys.stderr, flush=True)
        # a duplicate id left out earlier may be served now that its twin is gone
        for path in [p for p, why in self.left_out.items() if why.endswith("has the same id")]:
            self._take(path)
        self._note_edits(changed)
        self._reindex_all([*changed, *gone])

    def _open_audit(self) -> int:
        path = self.root / AUDIT
        flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise MemexError(f"cannot open the audit log {path} ({exc.strerror})", FAILED) from None
        try:
            chunks: list[bytes] = []
            size = 0
            while chunk := os.pread(fd, 1 << 20, size):
                chunks.append(chunk)
                size += len(chunk)
            raw = b"".join(chunks)
            if raw and not raw.endswith(b"\n"):
                # a line torn by a power loss: ended, never removed (the log is never rewritten)
                os.write(fd, b"\n")
                os.fsync(fd)
                raw += b"\n"
                torn = raw.count(b"\n")
                self.warnings.append(f"{path} ended in a torn line (line {torn}); it is kept, ended with a "
                                     "newline, and ignored")
        except OSError as exc:
            os.close(fd)
            raise MemexError(f"cannot read the audit log {path} ({exc.strerror})", FAILED) from None
        for n, line in enumerate(raw.split(b"\n")[:-1], 1):
            try:
                doc = json.loads(line)
            except (ValueError, RecursionError):
                doc = None
            if not isinstance(doc, dict):
                self.warnings.append(f"{path} line {n} is not a JSON object; it is ignored")
                doc = {}
            self.lines.append(doc)
            self._learn(doc)
        self.count = len(self.lines)
        return fd

    def _dangling(self) -> list[dict[str, Any]]:
        """`begun` lines without a later `committed`/`aborted` (or `recover`) line of the same write."""
        open_: list[dict[str, Any]] = []
        for doc in self.lines:
            if doc.get("outcome") == "begun":
                open_.append(doc)
            elif doc.get("outcome") in OUTCOMES:
                key = (doc.get("id"), doc.get("revision"), doc.get("sha256"))
                for b in open_:
                    if (b.get("id"), b.get("revision"), b.get("sha256")) == key:
                        open_.remove(b)
                        break
        return open_

    def _recover(self) -> None:
        for b in self._dangling():
            mid = b.get("id")
            path = self.paths.get(mid) if isinstance(mid, str) else None
            raw = self._raw(path)
            done = raw is not None and _sha(raw) == b.get("sha256")
            line = {k: b.get(k) for k in ("who", "role", "id", "from_revision", "revision", "sha256")}
            line.update(event="recover", outcome="committed" if done else "aborted", of=b.get("event"),
                        settles=b.get("seq"))
            if b.get("decision") is not None:
                line["decision"] = b["decision"]
            self.recovered.append(self._append(line))

    def _quarantine_state(self) -> None:
        """Move each hand-added file of `.remote/` that is not what the server keeps there (the
        index and its SQLite companions as regular files, the lock) into `.remote/quarantine/`,
        with a warning naming it and why: SQLite waits on or fails at a FIFO, a device or a folder
        in the index's place, and `.remote/` holds only what can be rebuilt."""
        import stat
        import time

        state = self.root / STATE
        for name in ("index.db", "index.db-wal", "index.db-shm", "index.db-journal"):
            path = state / name
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                continue
            kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode)
                    else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file")
            folder = state / "quarantine"
            target = folder / f"{name}.{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
            try:
                folder.mkdir(mode=0o700, exist_ok=True)
                os.rename(path, target)
            except OSError as exc:
                raise MemexError(f"{path} is {kind}, not the server's index, and cannot be moved aside "
                                 f"({exc.strerror}); remove it (the server rebuilds it)", FAILED) from None
            self.warnings.append(f"{path} is {kind}, not the server's index: moved to {target}; the index is "
                                 "rebuilt from the files")

    def _open_index(self) -> None:
        from git_memex.index.database import Index
        from git_memex.index.stores import Stores

        self._quarantine_state()

        self.index = Index(self.root / STATE / "index.db", root=self.root)
        store = self

        class FolderStores(Stores):
            """The search engine's view of one plain folder: one index, no context."""

            def __init__(self) -> None:  # noqa: D401 - no Context: the engine asks only for these
                self.repo = self.home = store.index
                self.orgs = []
                self.remotes = []
                self.warnings = []
                self.degraded = None
                self.unwritable = []
                self._failed = False

            def dbs(self) -> list[tuple[Any, str, tuple[Any, ...]]]:
                return [(store.index, "1", ())]

            def refresh(self, trigger: str | None = None) -> Any:
                return store.index.refresh(store._sources(), trigger=trigger)

        self.stores = FolderStores()
        self.stores.refresh("remote-server start")

    def close(self) -> None:
        for name in ("_audit_fd", "_lock_fd"):
            fd = getattr(self, name, None)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
                setattr(self, name, None)
        index = getattr(self, "index", None)
        if index is not None:
            index.close()

    # ------------------------------------------------------------ the log
    def _append(self, line: dict[str, Any]) -> dict[str, Any]:
        doc = {"seq": self.count + 1, "at": model.now(), **line}
        data = (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            n = os.write(self._audit_fd, data)  # one write on an O_APPEND file: a kill never tears it
            if n != len(data):
                raise OSError(28, "short write")
            os.fsync(self._audit_fd)
        except OSError as exc:
            raise StoreError(500, f"cannot append to the audit log ({exc.strerror}); nothing was written") from None
        self.count += 1
        self.lines.append(doc)
        self._learn(doc)
        return doc

    def _append_many(self, lines: list[dict[str, Any]]) -> None:
        """`_append` of many lines (the `edit` lines of a folder's hand-added files) in one write and
        one fsync: a line per file each fsynced took ~7 ms a file, minutes for a large folder. A
        kill mid-write can tear only the last line, which the next start ends and ignores; an edit
        line lost that way is noted again then (the file's bytes still differ from the log)."""
        if not lines:
            return
        docs = [{"seq": self.count + n, "at": model.now(), **line} for n, line in enumerate(lines, 1)]
        data = b"".join((json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n").encode() for d in docs)
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._audit_fd, view)
                if n <= 0:
                    raise OSError(28, "short write")
                view = view[n:]
            os.fsync(self._audit_fd)
        except OSError as exc:
            raise StoreError(500, f"cannot append to the audit log ({exc.strerror}); nothing was written") from None
        for d in docs:
            self.count += 1
            self.lines.append(d)
            self._learn(d)

    def _learn(self, doc: dict[str, Any]) -> None:
        if doc.get("outcome") == "committed" and isinstance(doc.get("id"), str):
            rev = doc.get("revision")
            self.committed_rev[doc["id"]] = rev if type(rev) is int else None
        if doc.get("outcome") == "committed" and isinstance(doc.get("id"), str) and isinstance(doc.get("seq"), int):
            self.latest[doc["id"]] = doc["seq"]
            if isinstance(doc.get("sha256"), str):
                self.known[doc["id"]] = doc["sha256"]

    @property
    def cursor(self) -> int:
        """The seq of the last committed line (0: none yet)."""
        for doc in reversed(self.lines):
            if doc.get("outcome") == "committed" and isinstance(doc.get("seq"), int):
                return int(doc["seq"])
        return 0

    # ------------------------------------------------------------ files
    def _raw(self, path: Path | None) -> bytes | None:
        from git_memex.core.files import UnreadableMemory, read_bytes

        if path is None:
            return None
        try:
            return read_bytes(path, root=self.root)
        except UnreadableMemory:
            return None

    def _current(self, mid: str) -> tuple[Path, bytes, model.Memory] | None:
        """The file of `mid` as it is now (read again: the files are the truth), or None."""
        from git_memex.core.files import UnreadableMemory, parse_memory_bytes

        path = self.paths.get(mid)
        raw = self._raw(path)
        if path is None or raw is None:
            return None
        try:
            return path, raw, parse_memory_bytes(raw, path)
        except UnreadableMemory:
            return None

    @staticmethod
    def check_id(mid: str) -> None:
        from git_memex.remote.protocol import is_memory_id

        if not is_memory_id(mid):
            raise StoreError(400, "that is not a memory id (letters, digits, - and _, at most 64, never a path)")

    def _item(self, mid: str) -> tuple[Path, bytes, model.Memory]:
        self.check_id(mid)
        cur = self._current(mid)
        if cur is None:
            raise StoreError(404, f"no memory {mid} on this server")
        return cur

    @staticmethod
    def _view(mid: str, raw: bytes, m: model.Memory, *, file: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"id": mid, "revision": _revision(m.fm), "review_state": m.review_state,
                               "sha256": _sha(raw)}
        if file:
            out["file"] = raw.decode("utf-8")
        return out

    def _write(self, event: str, who: str, role: str, m: model.Memory, path: Path, from_revision: int | None,
               decision: str | None = None) -> dict[str, Any]:
        """begun → atomic file write → committed, the fault points between them."""
        from git_memex.core.files import create_temp_beside, file_text, fsync_dir
        from git_memex.core.model import ValidationError

        try:
            text = file_text(m, path)
        except ValidationError as exc:
            raise _unprocessable(f"the file cannot be stored: {exc.message}") from None
        raw = text.encode("utf-8")
        line: dict[str, Any] = {"who": who, "role": role, "event": event, "id": m.id, "from_revision": from_revision,
                                "revision": _revision(m.fm), "sha256": _sha(raw)}
        if decision is not None:
            line["decision"] = decision
        _point("remote.before_begun")
        self._append({**line, "outcome": "begun"})
        _point("remote.after_begun")
        tmp = None
        try:
            fd, tmp = create_temp_beside(path)
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            _point("remote.after_tmp")
            if self._changed_since_walk(path):
                raise _HandEdit
            os.replace(tmp, path)  # the window left for a hand edit to be lost: this one call
            tmp = None
            fsync_dir(path.parent)
        except (OSError, _HandEdit) as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            self._append({**line, "outcome": "aborted"})
            if isinstance(exc, _HandEdit):
                raise StoreError(409, f"{path.name} was changed on the server (a hand edit) while this {event} was "
                                 f"checked; get it and {event} again; nothing was written", id=m.id,
                                 base_revision=from_revision, current_revision=None) from None
            raise StoreError(500, f"cannot write {path.name} ({exc.strerror}); nothing was written") from None
        _point("remote.after_rename")
        self._serve(m.id, path)
        self.left_out.pop(path, None)
        self.shas[path] = line["sha256"]
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            self.sigs[str(path)] = _sig(st)
        self._append({**line, "outcome": "committed"})
        _point("remote.after_committed")
        self._reindex(path)
        return {"id": m.id, "revision": line["revision"], "review_state": m.review_state, "sha256": line["sha256"]}

    def _changed_since_walk(self, path: Path) -> bool:
        """Whether `path` differs from what the last stat walk (the request's `refresh`) saw: made,
        removed or changed by hand since. Checked just before a write replaces it."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return str(path) in self.sigs
        except OSError:
            return True
        return self.sigs.get(str(path)) != _sig(st)

    def _reindex(self, path: Path) -> None:
        self._reindex_all([path])

    def _reindex_all(self, paths: list[Path]) -> None:
        import sqlite3

        from git_memex.index.database import Source

        if not paths or getattr(self, "index", None) is None:
            return
        try:
            self.index.apply_files([(Source("repo", p.parent, None), p) for p in paths],
                                   folders=sorted({p.parent for p in paths}))
        except sqlite3.Error as exc:  # the file and the log are written; the index is a cache
            print(f"git-memex remote-server: warning: the search index was not updated ({exc}); "
                  "restart the server to rebuild it", file=sys.stderr)

    # ------------------------------------------------------------ reads
    def get(self, mid: str) -> dict[str, Any]:
        self.refresh()
        _path, raw, m = self._item(mid)
        return self._view(mid, raw, m)

    def history(self, mid: str) -> dict[str, Any]:
        self.check_id(mid)
        self.refresh()
        events = [doc for doc in self.lines if doc.get("id") == mid and doc.get("outcome") == "committed"]
        if not events and self._current(mid) is None:
            raise StoreError(404, f"no memory {mid} on this server")
        return {"id": mid, "events": events}

    def pull(self, since: str | None, limit: int | None = None) -> dict[str, Any]:
        """The memories changed after `since` (all without it), oldest change first, at most
        `limit` of them and about PULL_PAGE_BYTES of files: `{"cursor", "changes", "more"}`. With
        `more`, `cursor` is the seq of the last change sent, and a pull from it goes on."""
        from git_memex.remote.protocol import PULL_LIMIT_DEFAULT, PULL_PAGE_BYTES

        self.refresh()
        limit = PULL_LIMIT_DEFAULT if limit is None else limit
        after = 0
        if since is not None:
            if not (since.isascii() and since.isdigit() and len(since) <= 18) or int(since) > self.count:
                raise StoreError(400, "since is not a cursor of this server (give the cursor a pull answered, "
                                 "or leave it out to pull everything)")
            after = int(since)
        order = sorted((seq, mid) for mid, seq in self.latest.items() if seq > after)
        if since is None:  # a served file no line names (never, once opened): first
            order = [(0, mid) for mid in self.paths if mid not in self.latest] + order
        changes: list[dict[str, Any]] = []
        size, last, more = 0, after, False
        for seq, mid in order:
            if len(changes) >= limit or (changes and size >= PULL_PAGE_BYTES):
                more = True
                break
            last = max(last, seq)
            cur = self._current(mid)
            if cur is not None:
                changes.append(self._view(mid, cur[1], cur[2]))
                size += len(cur[1])
        return {"cursor": str(last if more else self.cursor), "changes": changes, "more": more}

    def search(self, query: str, limit: int) -> dict[str, Any]:
        from git_memex.search.engine import search
        from git_memex.secrets.admission import mask_value

        self.refresh()
        result = search(self.stores, query, limit=limit, refresh=False, semantic=False)
        hits = []
        for h in result.hits:
            cur = self._current(h.id)
            if cur is None:
                continue
            _path, raw, m = cur
            title = m.fm.get("title")
            if not isinstance(title, str) or not title.strip():
                title = next((ln.strip().lstrip("# ") for ln in m.body.splitlines() if ln.strip()), "")[:80]
            hits.append({"id": h.id, "title": mask_value(title, self.patterns)[0], "type": h.type, "role": h.role,
                         "status": h.status, "review_state": m.review_state, "revision": _revision(m.fm),
                         "score": round(h.score, 6), "snippet": mask_value(h.snippet, self.patterns)[0]})
        return {"query": query, "hits": hits}

    # ------------------------------------------------------------ writes
    def _admitted(self, text: str) -> model.Memory:
        """The proposed file through the reader and the barrier, or a 422 naming what is wrong."""
        from git_memex.core import frontmatter
        from git_memex.core.files import UnreadableMemory, checked_memory, conflict_marker_line

        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            raise _unprocessable("the file is not valid Unicode text (it holds a lone surrogate)") from None
        if "\x00" in text:
            raise _unprocessable("the file holds a NUL byte, which a memory file cannot contain")
        line = conflict_marker_line(text)
        if line is not None:
            raise _unprocessable(f"the file has conflict markers at line {line}; finish the merge first")
        try:
            fm, body = frontmatter.parse_bytes(raw)
        except frontmatter.FrontmatterError as exc:
            raise _unprocessable(f"the file cannot be read: {exc}") from None
        from git_memex.secrets.admission import secret_field

        found = secret_field(fm, body, self.patterns)
        if found is not None:
            name, rule = found
            what = "a span marked private" if rule == "private" else f"a secret ({rule})"  # no tag: masking eats it
            raise _unprocessable(f"the file holds {what} in its {name} field; a relay never stores one")
        mid = fm.get("id")
        if not isinstance(mid, str) or not model.is_valid_id(mid):
            raise _unprocessable("the file's id field is missing or not a memory id (letters, digits, - and _)")
        path = self.paths.get(mid) or self.root / f"{mid}.md"
        try:
            m = checked_memory(fm, body, path)
        except UnreadableMemory as exc:
            raise _unprocessable(f"the file {exc}") from None
        if m.scope == "personal":
            raise _unprocessable("the file has scope personal; a relay never holds personal memories")
        try:
            model.validate(copy.deepcopy(m))
        except model.ValidationError as exc:
            raise _unprocessable(f"the file cannot be stored: {exc.message}") from None
        return m

    def propose(self, who: str, role: str, text: str, base_revision: int | None) -> dict[str, Any]:
        self.refresh()
        m = self._admitted(text)
        cur = self._current(m.id)
        if m.id in self.paths and cur is None:
            raise StoreError(409, f"memory {m.id} is unreadable on the server; an operator must fix its file",
                             id=m.id, base_revision=base_revision, current_revision=None)
        current = None if cur is None else _revision(cur[2].fm)
        if base_revision is None and current is not None:
            raise StoreError(409, f"memory {m.id} already exists at revision {current}; propose it with "
                             f"base_revision {current}", id=m.id, base_revision=None, current_revision=current)
        if base_revision is not None and base_revision != current:
            now = "does not exist on this server" if current is None else f"is at revision {current}"
            raise StoreError(409, f"memory {m.id} {now}, not {base_revision}; merge your change into that revision "
                             "and propose the merge (`git memex propose ID --to remote NAME` does)",
                             id=m.id, base_revision=base_revision, current_revision=current)
        fm = m.fm
        fm["revision"] = 1 if current is None else current + 1
        fm["review_state"] = "proposed"
        if fm.get("instruction_state") == "approved":
            fm["instruction_state"] = "draft"
        for key in [k for k in fm if isinstance(k, str) and _review_key(k)]:
            fm.pop(key)  # what a review writes is never taken from a proposer, in any spelling
        fm["trust_level"] = "untrusted"
        fm["proposed_by"] = who
        fm["updated_at"] = model.now()
        path = cur[0] if cur is not None else self.root / f"{m.id}.md"
        if path in self.left_out:
            raise StoreError(409, f"the server's file {path.name} is left out ({self.left_out[path]}); an operator "
                             "must fix it", id=m.id, base_revision=base_revision, current_revision=None)
        return self._write("propose", who, role, m, path, current)

    def review(self, who: str, role: str, mid: str, decision: str, revision: int,
               note: str | None) -> dict[str, Any]:
        self.check_id(mid)
        self.refresh()
        path, _raw, m = self._item(mid)
        current = _revision(m.fm)
        if revision != current:
            raise StoreError(409, f"memory {mid} is at revision {current}, not {revision}; get it and review again",
                             id=mid, revision=revision, current_revision=current)
        if m.review_state != "proposed":
            raise StoreError(409, f"memory {mid} is {m.review_state or 'not proposed'}, not proposed; only a "
                             "proposed revision is reviewed", id=mid, revision=revision, current_revision=current)
        if note is not None:
            from git_memex.secrets.admission import secret_field

            found = secret_field({"review_note": note}, "", self.patterns)
            if found is not None:
                what = "a span marked private" if found[1] == "private" else f"a secret ({found[1]})"
                raise _unprocessable(f"the note holds {what}; a relay never stores one")
        fm = m.fm
        if decision == "approve":
            fm["review_state"] = "approved"
            if fm.get("role") == "instruction":
                fm["instruction_state"] = "approved"
                fm["trust_level"] = "reviewed"
                fm["approved_by"] = who
                fm["approved_at"] = model.now()
        else:
            fm["review_state"] = "rejected"
        if note is not None:
            fm["review_note"] = note
        else:
            fm.pop("review_note", None)  # a note is this review's, never an earlier one's
        fm["revision"] = current + 1
        fm["updated_at"] = model.now()
        return self._write("review", who, role, m, path, current, decision)

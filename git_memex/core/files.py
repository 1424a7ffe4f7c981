"""Memory files on disk: atomic writes, careful reads, deletes.

A write is a temp file in the same folder, fsynced, then renamed over the target,
so a reader (or a crash) sees the old file or the new one, never half of either.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from git_memex.core import frontmatter
from git_memex.core.model import (
    ULID_RE,
    FieldError,
    Memory,
    ValidationError,
    check_fields,
    from_parsed,
    is_valid_id,
    validate,
)
from git_memex.errors import FAILED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class UnreadableMemory(ValueError):
    """A file in a memory folder that cannot be used; the message says why (quarantine reason).

    The reason may quote what the file holds (a bad id, a field's value): every secret in it is
    masked here, where each reason is made (`secrets.admission.mask_text`), so doctor, status and
    the quarantine list never show one."""

    def __init__(self, reason: str) -> None:
        super().__init__(said(reason))


def said(message: str) -> str:
    """A message built from what a file holds, with every secret in it masked (the reader's
    validation messages and lenient-reading notes go through it)."""
    if message.isascii() and len(message) < 16:
        return message
    from git_memex.secrets.admission import mask_text

    return mask_text(message)


def conflict_marker_line(text: str) -> int | None:
    """The line (1-based) of the first unresolved merge conflict in `text`, or None.

    A conflict is the full triple git (and the memex merge driver) writes, in order: a line
    starting with `<<<<<<<` (alone or followed by a space and a label), later a line that is
    exactly `=======`, later one starting with `>>>>>>>`. A lone `=======` is a markdown setext
    heading underline, not a conflict.
    """
    if "<<<<<<<" not in text:
        return None
    start = None
    seen_middle = False
    for n, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if line.startswith("<<<<<<<") and line[7:8] in ("", " "):
            start, seen_middle = n, False
        elif start is not None and line == "=======":
            seen_middle = True
        elif start is not None and seen_middle and line.startswith(">>>>>>>") and line[7:8] in ("", " "):
            return start
    return None


def conflict_reason(line: int) -> str:
    return f"has conflict markers at line {line}; run `git memex resolve` to finish the merge"


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_TEMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))


def create_temp_beside(path: Path) -> tuple[int, str]:
    """A new, empty, private (0600) file next to `path`, named ``.<name>.<random>.tmp`` so that no
    folder scan takes it for a memory. `tempfile.mkstemp` does the same but imports shutil and
    random (~4 ms) into every command that writes."""
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to `path` in one step. A file in the data root is always 0600 in 0700
    folders, and a failure there is one sentence (MemexError, exit 2); elsewhere `mode`, or
    0666 less the umask."""
    from git_memex.core.data_root import in_data_root

    if in_data_root(path):
        from git_memex.core.data_root import data_root, prepare_data_root, refuse_link_out
        from git_memex.errors import MemexError

        prepare_data_root(data_root())
        refuse_link_out(data_root(), path.parent)
        try:
            _write(path, text, 0o600)
        except OSError as exc:
            raise MemexError(f"cannot write {path} ({exc.strerror}); nothing was changed", FAILED) from None
        return
    _write(path, text, mode)


def _write(path: Path, text: str, mode: int | None) -> None:
    if mode is not None and not mode & 0o077:
        from git_memex.core.data_root import private_mkdir

        private_mkdir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        crash_point("store.before_rename")
        os.replace(tmp, path)
        WRITTEN.append(str(path))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_dir(path.parent)


_DEFERRED: list[set[str]] = []
"""The folders of the open `one_folder_sync` blocks, innermost last."""


def _sync_dir(folder: Path) -> None:
    if _DEFERRED:
        _DEFERRED[-1].add(str(folder))
    else:
        fsync_dir(folder)


@contextlib.contextmanager
def one_folder_sync() -> Iterator[None]:
    """Inside, a write or delete of a memory file fsyncs its folder once, at the end of the block,
    instead of after each rename (for a batch writer: `import` of N memories into one folder
    pays one folder fsync, not N). Each file's own bytes are still fsynced before its rename, so a
    file is whole or absent; what the block defers is only the durability of the renames through
    a power loss, which every folder touched has once the block ends, by success or failure. One
    thread writes at a time (the MCP server serialises its calls)."""
    folders: set[str] = set()
    _DEFERRED.append(folders)
    try:
        yield
    finally:
        _DEFERRED.pop()
        for folder in sorted(folders):
            _sync_dir(Path(folder))


WRITTEN: list[str] = []
"""Files this process has written (a failure after one must not say "nothing changed")."""


def crash_point(name: str) -> None:
    """Fault injection for crash-safety tests: GIT_MEMEX_CRASH_AT=<name> kills the process here."""
    if os.environ.get("GIT_MEMEX_CRASH_AT") == name:
        os._exit(137)


def pause_point(name: str) -> None:
    """Fault injection for race tests: with GIT_MEMEX_PAUSE_AT=<name> and GIT_MEMEX_PAUSE_DIR=DIR,
    the process creates DIR/<name>.reached here and waits (at most 120 s) until DIR/<name>.go exists,
    so a test can run another real process in exactly this window."""
    if os.environ.get("GIT_MEMEX_PAUSE_AT") != name or not os.environ.get("GIT_MEMEX_PAUSE_DIR"):
        return
    import time

    folder = os.environ["GIT_MEMEX_PAUSE_DIR"]
    with open(os.path.join(folder, f"{name}.reached"), "w"):
        pass
    end = time.monotonic() + 120
    while not os.path.exists(os.path.join(folder, f"{name}.go")) and time.monotonic() < end:
        time.sleep(0.02)


def memory_path(folder: Path, memory_id: str) -> Path:
    if not is_valid_id(memory_id):
        raise ValidationError(f"{memory_id!r} is not a memory id")
    return folder / f"{memory_id}.md"


def size_problem(body: str, fm: object = None) -> str | None:
    """Why a memory about to be written is over a write path's size limits, measured on the text
    as given, before anything masks it; None when it is not. The secret detector's cost grows with
    the text it reads (~1 s a MiB), so a path that masks (`secrets.admission.admit`) asks this
    first: a 50 MB body is refused at once, not after a minute of CPU. The limits are the ones
    `file_text` holds the written file to: the body's UTF-8 bytes (MAX_BODY_BYTES) and, for
    `fm`, the text of every key and string value at any depth (MAX_FRONTMATTER_BYTES, which the
    written block, holding each of them at least once, could not stay under)."""
    limit = frontmatter.MAX_BODY_BYTES
    n = len(body.encode("utf-8", "surrogatepass"))
    if n > limit:
        return f"memory text is {n:,} bytes; the limit is {limit:,} bytes ({limit // 1024} KiB)"
    if fm is None:
        return None
    cap = frontmatter.MAX_FRONTMATTER_BYTES
    total, todo = 0, [fm]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            total += len(v.encode("utf-8", "surrogatepass"))
            if total > cap:
                return (f"memory frontmatter holds more than {cap:,} bytes of text; the limit of its block is "
                        f"{cap:,} bytes ({cap // 1024} KiB)")
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return None


def file_text(m: Memory, path: Path) -> str:
    """The exact text `write_memory` writes for `m` at `path`, once the reader accepts it.

    The bytes go through the index's own reader (`parse_for_index`, which falls
    back to `parse_memory_bytes`), so a memory that a write path accepts is one a full reindex reads back,
    never one it quarantines. Every string of `m` is masked first, in place
    (`secrets.admission.admit`): the backstop behind each write path's own call with the team's
    patterns. Raises ValidationError with one sentence."""
    from git_memex.secrets.admission import admit

    admit(m)
    validate(m)
    try:
        text = frontmatter.serialize(m.fm, m.body)  # PyYAML's emitter refuses a surrogate in a field
        raw = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(exc.object[exc.start]) if isinstance(exc.object, str) else 0xD800
        raise ValidationError(f"memory holds U+{bad:04X}, a lone surrogate that is not valid Unicode; "
                              "it cannot be written as UTF-8") from None
    if "\x00" in text:
        raise ValidationError("memory holds a NUL byte, which a memory file cannot contain")
    body_bytes = len(m.body.encode("utf-8"))
    if body_bytes > frontmatter.MAX_BODY_BYTES:
        raise ValidationError(f"memory text is {body_bytes:,} bytes; the limit is "
                              f"{frontmatter.MAX_BODY_BYTES:,} bytes ({frontmatter.MAX_BODY_BYTES // 1024} KiB)")
    if _ACCEPTED.get(path.name) == text:
        return text  # this process's reader accepted exactly this text under this name already
    try:
        parse_for_index(path, raw)
    except UnreadableMemory as exc:
        raise ValidationError(f"memory cannot be saved: its file would be unreadable ({exc})") from None
    if len(_ACCEPTED) >= 65536:
        _ACCEPTED.clear()
    _ACCEPTED[path.name] = text
    return text


_ACCEPTED: dict[str, str] = {}
"""File name -> the last text `file_text` made for it that the reader accepted, in this process:
the reader's verdict depends on the name and the bytes alone, so a write that makes the same
text again (import plans every memory, then writes it) is not read back twice."""


def write_memory(folder: Path, m: Memory, *, private: bool = False) -> Path:
    """Validate and write one memory into folder as <id>.md; refuse what the reader would not read."""
    path = memory_path(folder, m.id)
    text = file_text(m, path)
    atomic_write_text(path, text, mode=0o600 if private else None)
    m.path = path
    sweep_once(folder)
    return path


LEFTOVER_AGE_S = 60
"""A live writer's temp file lives for milliseconds; one older than this is a killed write's."""
_LEFTOVER_RE = None


def leftovers(folder: Path) -> list[tuple[Path, bool]]:
    """Temp files of a write killed before its rename (`.<id>.md.<12 hex>.tmp`, named by
    `create_temp_beside`) in `folder`, each with whether it is older than LEFTOVER_AGE_S.
    They hold memory text, so they must not stay."""
    global _LEFTOVER_RE
    import re
    import time

    if _LEFTOVER_RE is None:
        _LEFTOVER_RE = re.compile(r"^\..+\.md\.[0-9a-f]{12}\.tmp$")
    out: list[tuple[Path, bool]] = []
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.name.startswith(".") and _LEFTOVER_RE.match(e.name))
    except OSError:
        return out
    now = time.time()
    for name in names:
        p = Path(folder) / name
        try:
            out.append((p, now - p.lstat().st_mtime > LEFTOVER_AGE_S))
        except OSError:
            continue
    return out


_SWEPT: dict[str, float] = {}
"""Folders this process swept for leftovers, with when (`time.monotonic`)."""


def sweep_once(folder: Path) -> list[Path]:
    """`sweep_leftovers` after a memory write, once per command and folder: the first write of a
    process into a folder sweeps it, later ones do not (a sweep lists the whole folder, so one per
    write made an import of N memories cost N listings of up to N names). A long-lived process
    (the MCP server) sweeps a folder again at its first write there once LEFTOVER_AGE_S has passed
    since its last sweep, so a killed write's temp file never outlives the next command that writes
    beside it by more than that."""
    import time

    key, now = str(folder), time.monotonic()
    last = _SWEPT.get(key)
    if last is not None and now - last < LEFTOVER_AGE_S:
        return []
    _SWEPT[key] = now
    return sweep_leftovers(folder)


def sweep_leftovers(folder: Path) -> list[Path]:
    """Remove the killed writes' temp files in `folder` older than LEFTOVER_AGE_S (the first memory
    write of each command into the folder does, after its own rename, `sweep_once`; `doctor` too,
    naming them). Returns what it removed."""
    gone: list[Path] = []
    for p, old in leftovers(folder):
        if old:
            with contextlib.suppress(OSError):
                p.unlink()
                gone.append(p)
    return gone


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """`path`, every link resolved, is `root` (resolved) or lies under it."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read_bytes(path: str | os.PathLike[str], *, limit: int = frontmatter.MAX_FILE_BYTES,
               root: str | os.PathLike[str] | None = None, resolved: dict[str, bool] | None = None) -> bytes:
    """The bytes of a memory file: the one safe reader of a file in a memory folder.

    Invariants: the file is opened only as a regular file (lstat, then `O_NOFOLLOW | O_NONBLOCK`
    so that neither a link nor a FIFO or device is followed or waited on, then fstat that it is
    regular), never more than `limit` bytes are read, and with `root` the folder it lies in,
    every link resolved, is inside `root` (the work tree, the data root or an org clone).
    `resolved` is a pass's record of that answer per folder (a refresh reading 10,000 files of
    one folder resolves the folder once, not 10,000 times: each resolution is an lstat per path
    component). Raises UnreadableMemory with the quarantine reason."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UnreadableMemory("file is gone") from None
    except OSError as exc:
        raise UnreadableMemory(f"cannot be read ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnreadableMemory("is a symbolic link; memory files must be regular files")
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableMemory("is not a regular file (a FIFO, device or folder is never read)")
    refuse_size(st.st_size, limit)
    if root is not None:
        folder = os.path.dirname(os.path.abspath(path))
        ok = resolved.get(folder) if resolved is not None else None
        if ok is None:
            ok = inside(folder, root)
            if resolved is not None:
                resolved[folder] = ok
        if not ok:
            raise UnreadableMemory(f"lies outside {root}; its folder is reached through a symbolic link")
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise UnreadableMemory("file is gone") from None
    except OSError as exc:
        raise UnreadableMemory(f"cannot be read ({exc.strerror})") from None
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):  # swapped between lstat and open
            raise UnreadableMemory("is not a regular file (a FIFO, device or folder is never read)")
        chunks: list[bytes] = []
        left = limit + 1
        ask = max(fst.st_size + 1, 4096)  # the whole file in one read: os.read allocates what is asked
        while left > 0:
            chunk = os.read(fd, min(left, ask))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            ask = 1 << 16
    except OSError as exc:
        raise UnreadableMemory(f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    refuse_size(len(raw), limit)
    return raw


def refuse_size(size: int, limit: int = frontmatter.MAX_FILE_BYTES) -> None:
    """UnreadableMemory with the reader's reason when a file (or a blob) of `size` bytes is over
    `limit`: the first check on any memory file, made from its size alone (`os.lstat`, git's
    `cat-file --batch-check`) before a byte of it is read."""
    if size > limit:
        raise UnreadableMemory(f"is larger than {limit // 1024} KiB")


def judge_bytes(raw: bytes, path: Path | str) -> Memory:
    """The Memory the reader makes of `raw`, the bytes a memory file named `path` holds or would
    hold (a staged or incoming blob, a file a team sends): the size limit, then exactly what the
    index reads a file with (`parse_for_index`, the fast reader that falls back to the full one),
    so a file this accepts is one every command reads and one it refuses is one they quarantine.
    Raises UnreadableMemory with the quarantine reason."""
    refuse_size(len(raw))
    return parse_for_index(Path(path), raw)


def read_raw(path: Path) -> tuple[dict, str]:
    """Parse a memory file as written (no normalisation); refuses links and oddities."""
    return _parse_raw(read_bytes(path))


def _parse_raw(raw: bytes) -> tuple[dict, str]:
    if b"<<<<<<<" in raw:
        line = conflict_marker_line(raw.decode("utf-8", "replace"))
        if line is not None:
            raise UnreadableMemory(conflict_reason(line))
    try:
        return frontmatter.parse_bytes(raw)
    except frontmatter.FrontmatterError as exc:
        raise UnreadableMemory(str(exc)) from None


def read_memory(path: Path) -> Memory:
    """Read a memory file for use: parsed, normalised, its id checked against its name."""
    fm, body = read_raw(path)
    return _checked(fm, body, path)


def parse_memory_bytes(raw: bytes, path: Path) -> Memory:
    """`read_memory` on bytes already read from the regular file `path` (or about to be written)."""
    fm, body = _parse_raw(raw)
    return _checked(fm, body, path)


def secret_id(mid: str) -> bool:
    """Whether the id (or file name stem) `mid` is something the secret detector takes for a secret
    (`ghp_…` fits the id rule): such a file is quarantined, never indexed, since an id is shown
    by every list, search, log and agent answer. A ULID, which every id git-memex makes is, never
    is; the detector runs only for other ids."""
    if len(mid) < 8 or ULID_RE.match(mid):
        return False
    from git_memex.secrets.admission import mask_text

    return mask_text(mid) != mid


def mask_id(mid: str) -> str:
    """A secret-shaped id as output shows it: masked the way the detector masks a value, kept to
    the id's own characters (`ghp_xxxx…`)."""
    from git_memex.secrets.admission import mask_text

    masked = mask_text(mid)
    return masked if masked != mid and is_valid_id(masked) else "x" * len(mid)


def _checked(fm: dict, body: str, path: Path) -> Memory:
    mid = fm.get("id")
    if mid is None:
        raise UnreadableMemory("has no id in its frontmatter")
    if not is_valid_id(str(mid)):
        raise UnreadableMemory(f"has an id {mid!r} that is not a valid memory id")
    if secret_id(str(mid)) or secret_id(path.stem):
        raise UnreadableMemory("has an id that looks like a secret, and an id is shown by every list, search and "
                               "agent answer, so the file is not used: rotate the secret, and save the memory again "
                               "under a new id (`git memex add`)")
    if str(mid) != path.stem:
        raise UnreadableMemory(f"has id {mid} but is named {path.name}; the id must equal the file name")
    fm["id"] = str(mid)
    try:
        check_fields(fm)
    except FieldError as exc:
        raise UnreadableMemory(str(exc)) from None
    m = from_parsed(fm, body, path)
    if m.warnings:  # the lenient reading's notes quote the values it mapped (`type "…" → knowledge`)
        m.warnings = [said(w) for w in m.warnings]
    return m


def checked_memory(fm: dict, body: str, path: Path) -> Memory:
    """A Memory from frontmatter another reader parsed (the index's fast reader): the same id and
    field checks as `read_memory`, UnreadableMemory with the reason otherwise."""
    return _checked(fm, body, path)


def _fast_reader() -> Any:
    """`core.plainyaml.fast_frontmatter`, imported on the first file read or written (a command
    that reads none never compiles its patterns), then kept: not an import statement per file."""
    if not _FAST:
        from git_memex.core.plainyaml import fast_frontmatter

        _FAST.append(fast_frontmatter)
    return _FAST[0]


_FAST: list[Any] = []


def parse_for_index(path: Path, raw: bytes) -> Memory:
    """The Memory in `raw` (the bytes read from the regular file `path`); the full reader decides
    anything unusual. `file_text` runs it on every file before it is written."""
    fast_frontmatter = _fast_reader()

    try:
        if len(raw) > frontmatter.MAX_FILE_BYTES or b"<<<<<<<" in raw:  # the full reader refuses conflicts
            raise ValueError
        fm_text, body = frontmatter.split(raw.decode("utf-8"))
    except (ValueError, frontmatter.FrontmatterError):  # UnicodeDecodeError is a ValueError
        return parse_memory_bytes(raw, path)
    fm = fast_frontmatter(fm_text) if len(fm_text) <= frontmatter.MAX_FRONTMATTER_BYTES else None
    mid = fm.get("id") if fm is not None else None
    if fm is None or mid is None or not is_valid_id(str(mid)) or str(mid) != path.stem:
        return parse_memory_bytes(raw, path)  # the full reader, with its exact reasons for refusing a file
    return checked_memory(fm, body, path)


def delete_file(path: Path) -> bool:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    WRITTEN.append(str(path))
    _sync_dir(path.parent)
    return True


def list_md(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return [e for e in it if e.name.endswith(".md") and not e.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []


def loads_json(text: str | bytes) -> Any:
    """`json.loads` for a file we read (a data-root record, a bundle): anything it cannot take is
    a ValueError, so every reader treats it as a damaged file. That covers invalid JSON, an
    integer longer than Python converts (4300 digits) and nesting deeper than the stack
    (`[[[[…]]]]`, a RecursionError otherwise)."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


# ----------------------------------------------------------------- data-root files that are not memories
class UnsafeDataRootFile(OSError):
    """A file of the data root that is not read: a link, not a regular file, or reached through a
    folder link leading out of the data root (`read_private`). An OSError, so that every reader of
    a cache, receipt or record takes it for a file that is not there."""


def read_private(root: Path, path: Path, limit: int = 64 << 20) -> bytes:
    """The bytes of the data-root file `path` read the way memory files are (`core.files.read_bytes`:
    no link followed, only a regular file, its folder inside `root`); UnsafeDataRootFile (an
    OSError) otherwise."""
    try:
        return read_bytes(path, limit=limit, root=root)
    except UnreadableMemory as exc:
        raise UnsafeDataRootFile(f"{path} {exc}") from None

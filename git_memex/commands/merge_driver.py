"""`git-memex merge-driver %O %A %B %P`: the git merge driver for memory files.

git runs this once per file that both branches changed and reads the result back from %A.
Exit 0 tells git the file is merged, any other status up to 128 that a conflict remains; git's
documentation says above 128 means a crash that fails the merge (git 2.39 treats it as a
conflict and keeps ours untouched). So this never exits above 1 and never lets an
exception out: whatever happens, %A ends up holding something a human can finish (a
conflict-marked merge) or is left as it was. Only `os`/`sys` and the pure merge engine are
imported, because this runs in a fresh process for every conflicted file.
"""

from __future__ import annotations

import contextlib
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse (and `typing`) stay out of the merge driver's start-up
    import argparse

PREFIX = "git-memex merge-driver"


def _say(path: str, reason: str) -> None:
    with contextlib.suppress(Exception):  # stderr closed: nothing else to do
        print(f"{PREFIX}: {path}: {reason}", file=sys.stderr)


def _decode(raw: bytes) -> str:
    """Lossless: bytes that are not UTF-8 become lone surrogates and are written back as they were."""
    return raw.decode("utf-8", errors="surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _write_atomic(target: str, data: bytes) -> None:
    """Replace `target` in one step (temp file in its directory + os.replace), keeping its mode."""
    try:
        mode: int | None = os.stat(target).st_mode & 0o7777
    except OSError:
        mode = None
    directory = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    for n in range(100):
        tmp = os.path.join(directory, f".{base}.memex-{os.getpid()}-{n}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        break
    else:
        raise OSError(f"could not create a temporary file next to {target}")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        if os.environ.get("GIT_MEMEX_CRASH_AT") == "merge_driver.before_replace":
            os._exit(137)  # fault injection for the crash-safety tests
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _plain_merge(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The last-resort result: a conflict-marked line merge of the raw bytes."""
    from git_memex.git.merge import merge2_lines, merge3_lines, split_lines

    o, t = split_lines(_decode(ours)), split_lines(_decode(theirs))
    lines, _ = merge3_lines(split_lines(_decode(base)), o, t) if base else merge2_lines(o, t)
    return _encode("".join(lines))


def _team_patterns() -> tuple[str, ...]:
    """The repository's `memex.redactPattern` values (docs/team-patterns.md): one `git config`
    call, made only for a merge whose result is a memory file."""
    from pathlib import Path

    from git_memex.core.context import Context, read_config
    from git_memex.core.data_root import data_root

    ctx = Context(data_root=data_root(), cwd=Path.cwd(), repo=None, config=read_config())
    return ctx.redact_patterns


def run(base_path: str, ours_path: str, theirs_path: str, path: str) -> int:
    """Merge, write %A, report: 0 clean, 1 anything a human must look at."""
    try:
        with open(base_path, "rb") as fh:
            base = fh.read()
        with open(ours_path, "rb") as fh:
            ours = fh.read()
        with open(theirs_path, "rb") as fh:
            theirs = fh.read()
    except OSError as exc:
        _say(path, f"cannot read the merge inputs ({exc.strerror or exc}); left as it was")
        return 1

    try:
        from git_memex.git.merge import merge_texts

        # git hands an empty %O when the file was added on both sides.
        result = merge_texts(_decode(base) if base else None, _decode(ours), _decode(theirs))
        data = _encode(result.text)
        masked: tuple[str, ...] = ()
        if not result.fallback:
            # The driver writes a memory file, so secrets are masked here as on every write path:
            # a side committed with --no-verify cannot carry one through a merge.
            from git_memex.secrets.redact import redact

            red = redact(result.text, _team_patterns())
            if red.masked:
                masked = red.masked
                data = _encode(red.text)
    except Exception as exc:  # the engine never raises; this guards against the impossible
        try:
            data = _plain_merge(base, ours, theirs)
        except Exception:
            _say(path, f"merge failed ({type(exc).__name__}); left as it was")
            return 1
        if _write_or_report(ours_path, data, path):
            _say(
                path, f"merge failed ({type(exc).__name__}); merged as plain text, check it by hand"
            )
        return 1

    if data != ours and not _write_or_report(ours_path, data, path):
        return 1
    if masked:
        _say(path, f"masked {len(masked)} secret(s) in the merge result ({', '.join(sorted(set(masked)))})")
    if result.fallback:
        _say(path, f"not a memory file ({result.note}); merged as plain text, check it by hand")
        return 1
    if not result.clean:
        fields = ", ".join(c.field for c in result.conflicts)
        _say(path, f"conflict in {fields}; edit the file or run `git memex resolve {path}`")
        return 1
    return 0


def _write_or_report(target: str, data: bytes, path: str) -> bool:
    try:
        _write_atomic(target, data)
    except OSError as exc:
        _say(path, f"cannot write the merge result ({exc.strerror or exc}); left as it was")
        return False
    return True


def main(argv: list[str]) -> int:
    """Entry point; argv is [BASE, OURS, THEIRS, PATH] as git passes `%O %A %B %P`."""
    if len(argv) != 4 and any(a in ("-h", "--help") for a in argv):
        return _help()
    try:
        if len(argv) != 4 or "--json" in argv:
            _usage(argv)
            return 1
        return run(*argv)
    except BaseException as exc:  # KeyboardInterrupt, MemoryError...: exit 1, never above 128
        _say(argv[3] if len(argv) == 4 else "?", f"interrupted ({type(exc).__name__})")
        return 1


def _usage(argv: list[str]) -> None:
    """The usage error: one sentence on stderr, and with `--json` also one JSON document on stdout
    (`{"error", "code": 1}`, as every `--json` error; the driver itself has no JSON output)."""
    if "--json" in argv:
        said = ("takes no --json: git runs it with the 4 paths BASE OURS THEIRS PATH (%O %A %B %P) and reads "
                "the result from OURS and its exit code (0 merged, 1 a conflict remains)")
    else:
        said = f"expected 4 arguments BASE OURS THEIRS PATH (git passes %O %A %B %P), got {len(argv)}."
    with contextlib.suppress(Exception):  # stderr or stdout closed: the exit code still says it
        print(f"{PREFIX}: {said}", file=sys.stderr)
    if "--json" in argv:
        import json

        with contextlib.suppress(Exception):
            sys.stdout.write(json.dumps({"error": said, "code": 1}) + "\n")
            sys.stdout.flush()


def _help() -> int:
    """`git memex merge-driver --help`: the usage argparse would print, exit 0. The parser is this
    module's `register` under `git-memex` (what `main.build_parser("merge-driver")` builds; main
    dispatches here, so this module does not import main)."""
    import argparse

    parser = argparse.ArgumentParser(prog="git-memex")
    register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    try:
        parser.parse_args(["merge-driver", "--help"])
    except SystemExit as exc:  # argparse exits 0 after printing the help
        return 0 if exc.code in (0, None) else 1
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Only for --help and the man page: git-memex's main() runs main() above before argparse."""
    p = sub.add_parser("merge-driver", help="git merge driver for memory files (%%O %%A %%B %%P)",
                       description="Field-level 3-way merge of one memory file, as git's merge driver "
                       "(`merge.memex.driver = git-memex merge-driver %O %A %B %P`). The result is written to "
                       "OURS; exit 0 when clean, 1 on a conflict (markers show both sides), never above 1. It takes no options: "
                       "--json is a usage error (exit 1, its JSON document on stdout).")
    for name in ("base", "ours", "theirs", "path"):
        p.add_argument(name, metavar=name.upper())

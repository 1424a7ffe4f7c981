"""Git hooks: installing shims that chain to existing hooks, and what each hook does.

The post-* hooks keep the index in step with what git just wrote (a tree diff, not a
rescan); they never fail the git command and print at most one line. The
pre-commit hook refuses memory files that must not be committed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

from git_memex.core.record import record
from git_memex.errors import FAILED, MemexError

HOOK_NAMES = ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite")
# Hooks whose failure stops git: an automatic merge commit runs pre-merge-commit, not pre-commit,
# so both scan the staged memory files.
BLOCKING = ("pre-commit", "pre-merge-commit")
MARKER = "# git-memex hook shim"
CHAINED_SUFFIX = ".memex-chained"


# ------------------------------------------------------------------ command resolution
def memex_command() -> list[str]:
    """How hooks and the merge driver should call us, as an absolute command.

    The script installed beside this interpreter first (the git-memex that is running `init`),
    then `git-memex` on PATH, then this interpreter with `-m git_memex`. Absolute, because git
    runs hooks and drivers with whatever PATH its caller had (a GUI client, cron, a terminal
    without the venv); the shims and the driver fall back to `git-memex` on PATH when this path
    is gone (see shim_text and driver_command).
    """
    beside = Path(sys.executable).with_name("git-memex")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    found = shutil.which("git-memex")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "git_memex"]


# sh: `runs FILE` is true when FILE exists, is executable and, for a `#!` script, its interpreter
# is executable too (a moved or upgraded venv leaves scripts whose python is gone). Mirrored by
# doctor._runnable.
_RUNS_SH = ('runs() { [ -f "$1" ] && [ -x "$1" ] || return 1; IFS= read -r l <"$1" || return 0;'
            ' case $l in "#!"*) set -- ${l#??}; [ -x "$1" ];; esac; }')


# sh: after `"$memex" ...; ran=$?`, try `git-memex` on PATH when the absolute command could not
# be executed at all (126/127: not run, or could not start; our own commands never exit with
# those codes).
def _path_fallback(args: str) -> str:
    return f'case $ran in 126|127) if command -v git-memex >/dev/null 2>&1; then git-memex {args}; ran=$?; fi;; esac'


def driver_command(command: list[str] | None = None) -> str:
    """The whole `merge.memex.driver` value: a small sh program git runs through `sh -c`.

    It runs the absolute command, else `git-memex` on PATH. When neither can run, or the driver
    dies without its 0 (clean) or 1 (conflict), git would report a conflict and keep our side
    without a marker (a later `git add` then loses theirs; git 2.39 does this for exit 127 and
    for 129 alike). So the program then lets `git merge-file` write a conflict-marked plain-text
    merge into %A (or, should even that fail, both sides whole between markers), says so in one
    line and exits 1: the file is conflicted and carries both sides. It exits 0 or 1, nothing else.
    """
    command = command or memex_command()
    # git expands %O, %A... anywhere in the value and turns %% into %: a path keeps its % signs.
    quoted = [shlex.quote(c).replace("%", "%%") for c in command]
    rest = "".join(" " + c for c in quoted[1:])
    return "; ".join([
        "set -- %O %A %B %P",
        f"memex={quoted[0]}",
        _RUNS_SH,
        "ran=127",
        f'if runs "$memex"; then "$memex"{rest} merge-driver "$@"; ran=$?; fi',
        _path_fallback('merge-driver "$@"'),
        'case $ran in 0|1) exit "$ran";; esac',
        'git merge-file --diff3 -L ours -L base -L theirs "$2" "$1" "$3"',
        'if [ $? -gt 127 ]; then { echo "<<<<<<< ours"; cat "$2"; echo "======="; cat "$3";'
        ' echo ">>>>>>> theirs"; } >"$2.memex" && mv "$2.memex" "$2"; fi',
        'echo "git-memex merge-driver: $4: git-memex did not run or did not finish (exit $ran; 127: $memex'
        ' is missing or broken and no git-memex is on PATH), so git merge-file merged it as plain text with'
        ' conflict markers; check it by hand, and run \\`git memex init\\` if git-memex moved" >&2',
        "exit 1",
    ])


def registered_command(text: str) -> str | None:
    """The absolute command a shim or driver value written by this module runs (its `memex=`)."""
    import re

    m = re.search(r"(?:^|[;\n]) *memex=(.*)", text)
    if m is None:
        return None
    lex = shlex.shlex(m.group(1), posix=True, punctuation_chars=";")
    lex.whitespace_split = True
    try:
        return next(iter(lex), None)
    except ValueError:
        return None


# ------------------------------------------------------------------ install
def hooks_dir(work_tree: Path) -> Path:
    """The folder git really runs hooks from (core.hooksPath respected)."""
    from git_memex.git.gitcmd import git_text

    r = git_text(["rev-parse", "--git-path", "hooks"], work_tree, timeout=30)
    if r is None or r.returncode != 0:
        raise MemexError("cannot find the git hooks folder; is this a git repository?", FAILED)
    p = Path(r.stdout.strip())
    return p if p.is_absolute() else (work_tree / p)


# The shims `init` installs are real files in git_memex/hooks/, one per hook, readable as they
# land in .git/hooks: `init` changes only the `memex=git-memex` line (to the absolute command it
# found) and, for a `python -m git_memex` command, the arguments on the line that runs it.
SHIMS_DIR = Path(__file__).resolve().parents[1] / "hooks"
_PLACEHOLDER = "\nmemex=git-memex\n"


def shim_text(name: str, command: list[str]) -> str:
    """The hook file `init` writes for one git hook: run the chained hook, then git-memex.

    git-memex is run by the absolute command `init` found, else by `git-memex` on PATH (the tool
    moved, or the hooks folder is committed and shared through `core.hooksPath`). When neither
    can run, a post-* hook does nothing, and a blocking hook lets through a commit that stages no
    memory file (`git diff --cached` reads the index git exported in GIT_INDEX_FILE) and refuses
    one that does, in one line that says how to fix it.
    """
    text = (SHIMS_DIR / name).read_text(encoding="utf-8")
    rest = "".join(" " + shlex.quote(c) for c in command[1:])
    text = text.replace(_PLACEHOLDER, f"\nmemex={shlex.quote(command[0])}\n", 1)
    return text.replace('"$memex" hook ', f'"$memex"{rest} hook ', 1)


def is_ours(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return MARKER in fh.read(4096)
    except OSError:
        return False


@record
class HookAction:
    name: str
    action: str  # installed | updated | unchanged | chained | skipped | removed | restored
    detail: str = ""


def install_hooks(work_tree: Path, *, skip_pre_commit: bool = False) -> list[HookAction]:
    folder = hooks_dir(work_tree)
    folder.mkdir(parents=True, exist_ok=True)
    command = memex_command()
    out: list[HookAction] = []
    for name in HOOK_NAMES:
        path = folder / name
        if name == "pre-commit" and skip_pre_commit:
            out.append(HookAction(name, "skipped", ".pre-commit-config.yaml manages this hook"))
            continue
        text = shim_text(name, command)
        action = "installed"
        if path.exists() or path.is_symlink():
            if is_ours(path):
                if path.read_text(encoding="utf-8") == text:
                    out.append(HookAction(name, "unchanged"))
                    continue
                action = "updated"
            else:
                chained = folder / (name + CHAINED_SUFFIX)
                if chained.exists():
                    raise MemexError(f"{path} exists and {chained.name} too; move one of them away and rerun init", FAILED)
                os.replace(path, chained)
                action = "chained"
        from git_memex.core.files import atomic_write_text

        atomic_write_text(path, text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        out.append(HookAction(name, action))
    return out


def uninstall_hooks(work_tree: Path) -> list[HookAction]:
    folder = hooks_dir(work_tree)
    out: list[HookAction] = []
    for name in HOOK_NAMES:
        path = folder / name
        chained = folder / (name + CHAINED_SUFFIX)
        if is_ours(path):
            path.unlink()
            if chained.exists():
                os.replace(chained, path)
                out.append(HookAction(name, "restored"))
            else:
                out.append(HookAction(name, "removed"))
    return out


def hook_status(work_tree: Path) -> dict[str, bool]:
    try:
        folder = hooks_dir(work_tree)
    except MemexError:
        return dict.fromkeys(HOOK_NAMES, False)
    return {name: is_ours(folder / name) for name in HOOK_NAMES}


# ------------------------------------------------------------------ runtime
def run(name: str, args: list[str]) -> int:
    """Entry point of `git memex hook NAME ARGS`."""
    if name in BLOCKING:
        return pre_commit()
    if name in ("post-merge", "post-checkout", "post-rewrite"):
        try:
            return post_update(name, args)
        except Exception as exc:  # noqa: BLE001 - a post hook must never fail the git command
            print(f"git-memex: {name}: index not updated ({exc}); `git memex reindex` fixes it", file=sys.stderr)
            return 0
    print(f"git-memex: unknown hook {name!r}; known hooks: {', '.join(HOOK_NAMES)}", file=sys.stderr)
    return 1


def pre_commit() -> int:
    """Refuse the commit when a memory file it records fails the checks (`scan.check_bytes`).

    What the commit records is the index git names in GIT_INDEX_FILE (a temporary one for
    `commit -a`, `commit -- PATHS`, `-i`, `-o`), read through `gitcmd`; a commit that stages no
    memory file costs one `git diff-index` and no memory check can refuse it.
    """
    from git_memex.core.paths import load_context
    from git_memex.git.gitcmd import staged_memory_changes
    from git_memex.secrets.checks import check_bytes, dangling_pointers

    ctx = load_context()
    repo_info = ctx.require_repo("the pre-commit hook")
    findings = []
    try:
        staged, deleted = staged_memory_changes(repo_info.work_tree, ctx.memory_dir_rel)
        for path, data in staged:
            findings.extend(check_bytes(path, data, patterns=ctx.redact_patterns))
        findings.extend(dangling_pointers(repo_info.work_tree, ctx.memory_dir_rel, staged, deleted))
    except OSError as exc:
        print(f"git-memex: {exc}; commit refused (run `git memex scan --staged` to retry, or commit "
              "with --no-verify)", file=sys.stderr)
        return 1
    for f in findings:
        print(str(f), file=sys.stderr)
    if findings:
        secret = any(f.secret for f in findings)
        print(f"git-memex: {len(findings)} problem(s) in staged memory files; commit refused"
              + (" (secrets are never shown)" if secret else ""), file=sys.stderr)
        return 1
    return 0


def post_update(name: str, args: list[str]) -> int:
    from git_memex.core.paths import load_context

    ctx = load_context()
    if ctx.repo is None or ctx.repo_index is None or ctx.memory_dir is None:
        return 0
    indexed = ctx.repo_index.exists()  # if not, the first search builds it; the check below still runs
    from git_memex.git import pygit

    repo = pygit.open_repo(ctx.repo.work_tree)
    if name == "post-checkout":
        if len(args) >= 3 and args[2] == "0":
            return 0  # a file checkout: the next search notices it by stat
        old, new = (args + ["", ""])[:2]
        pairs: list[tuple[str | None, str]] = [(old, new)]
    elif name == "post-rewrite" and args[:1] == ["rebase"]:
        steps = pygit.rebase_steps(repo)  # HEAD before the rebase to now, and every step between
        pairs = [(steps[-1][0], "HEAD"), *steps] if steps else [("ORIG_HEAD", "HEAD")]
    else:  # post-merge, post-rewrite after amend
        pairs = [(pygit.head_reflog_previous(repo), "HEAD")]
    paths: list[str] = []
    for before, after in pairs:  # a file any step touched may be stale in the index: reread it
        paths.extend(p for p in pygit.changed_memory_files(repo, before, after, ctx.memory_dir_rel) if p not in paths)
    if not paths:
        return 0
    from git_memex.git.sync import incoming_problems, reindex_paths, report_incoming

    report_incoming(incoming_problems(ctx, paths), name.replace("post-", "the "))
    if not indexed:
        return 0
    stats = reindex_paths(ctx, paths, trigger=name)
    msg = f"git-memex: index updated ({stats.added} added, {stats.changed} changed, {stats.removed} removed)"
    if stats.quarantined:
        msg += f"; {stats.quarantined} unreadable (see `git memex doctor`)"
    print(msg, file=sys.stderr)
    if ctx.repo_index.with_name("vectors.db").exists() or ctx.home_index.with_name("vectors.db").exists():
        from git_memex.search import semantic  # the lane is in use here: embed the new memories

        semantic.spawn_build(ctx)
    return 0

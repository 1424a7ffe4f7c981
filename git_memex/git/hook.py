"""Git hooks: installing shims that chain to existing hooks, and what each hook does.

The post-* hooks keep the index in step with what git just wrote (a tree diff, not a
rescan); they never fail the git command and print at most one line. The
pre-commit hook refuses memory files that must not be committed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
import sys
from pathlib import Path

from git_memex.core.record import record
from git_memex.errors import FAILED, MemexError
from git_memex.git.reach import SHIM_MARKER

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

    from git_memex.core.context import Context

HOOK_NAMES = ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite")
# Hooks whose failure stops git: an automatic merge commit runs pre-merge-commit, not pre-commit,
# so both scan the staged memory files.
BLOCKING = ("pre-commit", "pre-merge-commit")
MARKER = SHIM_MARKER
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
    import shutil  # installing hooks only: a hook's own run never needs it (bz2, lzma: ~2 ms)

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
    from git_memex.core.gitcmd import git_text

    r = git_text(["rev-parse", "--git-path", "hooks"], work_tree, timeout=30)
    if r is None or r.returncode != 0:
        raise MemexError("cannot find the git hooks folder; is this a git repository?", FAILED)
    p = Path(r.stdout.strip())
    return p if p.is_absolute() else (work_tree / p)


# The shims `init` installs are real files in hooks/ at the top of the repository, one per hook,
# readable as they land in .git/hooks: `init` changes only the `memex=git-memex` line (to the
# absolute command it found) and, for a `python -m git_memex` command, the arguments on the line
# that runs it. A wheel ships them inside the package, as git_memex/hooks/ (build_hooks.py); an
# editable install or a checkout on PYTHONPATH reads them where they are.
_PACKAGE = Path(__file__).resolve().parents[1]


def shims_dir() -> Path:
    """The folder of the shim files: git_memex/hooks/ in an installed wheel, else the checkout's hooks/."""
    shipped = _PACKAGE / "hooks"
    return shipped if shipped.is_dir() else _PACKAGE.parent / "hooks"


_PLACEHOLDER = "\nmemex=git-memex\n"


def shim_text(name: str, command: list[str]) -> str:
    """The hook file `init` writes for one git hook: run the chained hook, then git-memex.

    git-memex is run by the absolute command `init` found, else by `git-memex` on PATH (the tool
    moved, or the hooks folder is committed and shared through `core.hooksPath`). When neither
    can run, a post-* hook does nothing, and a blocking hook lets through a commit that stages no
    memory file (`git diff --cached` reads the index git exported in GIT_INDEX_FILE) and refuses
    one that does, in one line that says how to fix it.
    """
    text = (shims_dir() / name).read_text(encoding="utf-8")
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


# Where the shims go. git runs hooks from one folder: `core.hooksPath` when set, else
# $GIT_COMMON_DIR/hooks. Only that default folder belongs to this repository alone; any other
# (husky's `.husky/_`, a committed `.githooks/`, a user-wide `~/team-hooks` from the global or
# system config) is shared or generated by a hook manager. So:
# - default folder: a team hook found there (lefthook's, the pre-commit framework's, a hand-written
#   one) is renamed NAME.memex-chained and our shim runs it first (those hooks name their own hook
#   type inside the file, so the new name changes nothing);
# - any other folder is never written to: the shims go to $GIT_COMMON_DIR/memex-hooks, this
#   repository's own `core.hooksPath` (local config) points there, and each shim runs the hook of
#   the same name in the folder it replaced, in place and by its own name (husky's `h` runs
#   `.husky/<its own file name>`). memex.hooksChain records that folder; memex.hooksPathBefore
#   the local value it replaced, which `--uninstall` puts back.
OWN_DIR = "memex-hooks"
# Every other hook git runs (githooks(5)): in the memex-hooks set-up each gets a pass-through shim,
# or the team's commit-msg, pre-push... would stop running. The three git runs on every index or
# ref change get one only when the chained folder has that hook at init.
PASS_THROUGH = ("applypatch-msg", "pre-applypatch", "post-applypatch", "prepare-commit-msg", "commit-msg",
                "post-commit", "pre-rebase", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
                "post-update", "push-to-checkout", "pre-auto-gc", "sendemail-validate", "p4-changelist",
                "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit")
PASS_THROUGH_IF_THERE = ("reference-transaction", "post-index-change", "fsmonitor-watchman")


def _pass_through_text(name: str, chain: str) -> str:
    target = shlex.quote(chain.rstrip("/") + "/" + name)
    return (f"#!/bin/sh\n{MARKER} (pass-through, {name}): runs the hook of the folder `git memex init` found in\n"
            f"# core.hooksPath, in place and by its own name; `git memex init --uninstall` removes it.\n"
            f"[ -x {target} ] || exit 0\nexec {target} \"$@\"\n")


def _git(work_tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from git_memex.core.gitcmd import Fail, git_text

    r = git_text(list(args), work_tree, timeout=None, literal=False,
                 fail=Fail("git is not installed or not on PATH; the hooks were not changed", "git did not finish"))
    assert r is not None  # `fail` raises instead
    return r


def _common_dir(work_tree: Path) -> Path:
    r = _git(work_tree, "rev-parse", "--git-common-dir")
    if r.returncode != 0:
        raise MemexError("cannot find the git folder; is this a git repository?", FAILED)
    p = Path(r.stdout.strip())
    return (p if p.is_absolute() else work_tree / p).resolve()


def _local(work_tree: Path, key: str) -> str | None:
    r = _git(work_tree, "config", "--local", "--get", key)
    return r.stdout.rstrip("\n") if r.returncode == 0 else None


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(os.path.realpath(a)) == os.path.abspath(os.path.realpath(b))


def _is_own_value(work_tree: Path, value: str | None) -> bool:
    """A local core.hooksPath set by `init`: this clone's memex-hooks folder, or (a moved or
    copied clone) another one named so while memex.hooksChain is recorded."""
    if not value:
        return False
    if _same(Path(value), _common_dir(work_tree) / OWN_DIR):
        return True
    return Path(value).name == OWN_DIR and _local(work_tree, "memex.hookschain") is not None


def _chain_line(name: str, chain: str | None) -> str:
    if chain is None:
        return f'chained="${{0%/*}}/{name}{CHAINED_SUFFIX}"'  # git runs a hook by its path: no `dirname` process
    return f"chained={shlex.quote(chain.rstrip('/') + '/' + name)}"


def _write_shim(path: Path, text: str) -> str:
    from git_memex.core.files import atomic_write_text

    if is_ours(path) and path.read_text(encoding="utf-8") == text:
        return "unchanged"
    action = "updated" if is_ours(path) else "installed"
    atomic_write_text(path, text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return action


def _manager_leftovers(folder: Path, name: str, apply: bool = True) -> list[HookAction]:
    """In a folder where a hook manager now runs `name` (and runs git-memex through its own
    committed file): our shim goes (the hook it chained back in place), and so do our shims a
    manager renamed aside (lefthook's `NAME.old`, the pre-commit framework's `NAME.legacy`) and a
    chained copy of the manager's own hook that an older init left (`NAME.memex-chained`)."""
    from git_memex.git.reach import is_framework_hook, is_lefthook_hook, read_head

    out: list[HookAction] = []
    path, chained = folder / name, folder / (name + CHAINED_SUFFIX)
    if is_ours(path):
        if apply:
            path.unlink()
        if chained.exists() or chained.is_symlink():
            if apply:
                os.replace(chained, path)
            out.append(HookAction(name, "restored", "previous hook restored"))
        else:
            out.append(HookAction(name, "removed"))
    for aside in (name + ".old", name + ".legacy"):
        if is_ours(folder / aside):
            if apply:
                (folder / aside).unlink()
            out.append(HookAction(aside, "removed", "our shim, renamed aside by a hook manager"))
    if (chained.exists() or chained.is_symlink()) and not is_ours(path) and path.exists():
        current, old = read_head(path), read_head(chained)
        if current == old or (is_lefthook_hook(current) and is_lefthook_hook(old)) or (
                is_framework_hook(current) and is_framework_hook(old)):
            if apply:
                chained.unlink()
            out.append(HookAction(chained.name, "removed", "an older copy of the hook manager's own hook"))
        else:
            out.append(HookAction(chained.name, "kept", f"a hook init once chained; {name} is now another "
                                  "tool's: run it from there if you still need it"))
    return out


def _husky_active(work_tree: Path, local_value: str | None, husky: Path) -> bool:
    """husky's folder `husky/_` is the one git runs hooks from (or the one our memex-hooks folder chains)."""
    value = _local(work_tree, "memex.hookschain") if _is_own_value(work_tree, local_value) else (
        _git(work_tree, "config", "--get", "core.hookspath").stdout.rstrip("\n"))
    if not value:
        return False
    p = Path(os.path.expanduser(value))
    p = p if p.is_absolute() else work_tree / p
    return _same(p, husky / "_")


def install_hooks(work_tree: Path, *, managed: frozenset[str] | set[str] = frozenset(),
                  owner: str | None = None, manager: str = "the hook manager",
                  husky: Path | None = None) -> list[HookAction]:
    """Install our shims where this repository alone runs them (see the comment above OWN_DIR).

    `managed`: hooks a joined hook manager runs in the folder git uses (it runs git-memex through
    its committed file): no shim for those, and what an older init or the manager's reinstall left
    is tidied (`_manager_leftovers`). `owner="husky"`: husky, joined, owns core.hooksPath: while
    its folder (`husky`/_, default `.husky/_`) is the one git uses no shim is installed anywhere (a
    memex-hooks set-up of an older init is taken down, core.hooksPath put back); before its first
    `npm install` the shims go to `.git/hooks` as usual, and git stops running them once husky sets
    core.hooksPath."""
    command = memex_command()
    common = _common_dir(work_tree)
    local_value = _local(work_tree, "core.hookspath")
    out: list[HookAction] = []
    husky = husky or work_tree / ".husky"
    if owner == "husky" and _husky_active(work_tree, local_value, husky):
        rel = os.path.relpath(husky, work_tree).replace(os.sep, "/")
        if _is_own_value(work_tree, local_value):
            out.extend(a for a in uninstall_hooks(work_tree) if a.action != "removed")
            out.append(HookAction("folder (core.hooksPath)", "restored", f"husky's {rel}/_ again"))
        for name in HOOK_NAMES:
            out.extend(_manager_leftovers(common / "hooks", name))
        out.append(HookAction(", ".join(HOOK_NAMES), "skipped", f"husky runs git-memex from {rel}/NAME"))
        return out
    folder = hooks_dir(work_tree)
    names = [n for n in HOOK_NAMES if n not in managed]
    for name in HOOK_NAMES:
        if name in managed:
            out.extend(_manager_leftovers(folder, name))
    if managed:
        out.append(HookAction(", ".join(n for n in HOOK_NAMES if n in managed), "skipped",
                              f"{manager} runs git-memex from its committed file"))
    if _same(folder, common / "hooks"):
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            path = folder / name
            text = shim_text(name, command)
            if (path.exists() or path.is_symlink()) and not is_ours(path):
                chained = folder / (name + CHAINED_SUFFIX)
                if chained.exists():
                    raise MemexError(f"{path} exists and {chained.name} too; move one of them away and rerun init",
                                     FAILED)
                os.replace(path, chained)
                _write_shim(path, text)
                out.append(HookAction(name, "chained"))
            else:
                out.append(HookAction(name, _write_shim(path, text)))
        return out
    own = common / OWN_DIR
    if _is_own_value(work_tree, local_value):
        chain = _local(work_tree, "memex.hookschain") or str(common / "hooks")
    else:  # a hook manager's, a committed or a user-wide folder: chain it, never write in it
        raw = _git(work_tree, "config", "--get", "core.hookspath").stdout.rstrip("\n")
        chain = os.path.expanduser(raw) if raw.startswith("~") else raw
        steps = [("memex.hooksChain", chain)]
        if local_value is not None:
            steps.append(("memex.hooksPathBefore", local_value))
        for key, value in steps:
            if _git(work_tree, "config", "--local", key, value).returncode != 0:
                raise MemexError(f"could not write git config {key}; check that .git/config is writable", FAILED)
    own.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = shim_text(name, command).replace(_chain_line(name, None), _chain_line(name, chain), 1)
        action = _write_shim(own / name, text)
        out.append(HookAction(name, action, f"chains {chain}/{name}" if action != "unchanged" else ""))
    chain_dir = Path(chain) if os.path.isabs(chain) else work_tree / chain
    passed = [name for name in PASS_THROUGH + PASS_THROUGH_IF_THERE
              if (name in PASS_THROUGH or os.access(chain_dir / name, os.X_OK) or is_ours(own / name))
              and _write_shim(own / name, _pass_through_text(name, chain)) != "unchanged"]
    if passed:
        out.append(HookAction("pass-through for every other hook", "installed", f"they run {chain}/NAME"))
    if local_value is None or not _same(Path(local_value), own):
        if _git(work_tree, "config", "--local", "core.hooksPath", str(own)).returncode != 0:
            raise MemexError("could not write git config core.hooksPath; check that .git/config is writable", FAILED)
        if _is_own_value(work_tree, local_value):  # a moved or copied clone named its old folder
            out.append(HookAction("folder (core.hooksPath)", "updated", f"was {local_value}, now {own}"))
    return out


def foreign_hooks_folder(work_tree: Path) -> str | None:
    """The memex-hooks folder of another path that core.hooksPath still names (this clone was
    moved or copied: the value is absolute), else None."""
    try:
        folder = hooks_dir(work_tree)
        if folder.name == OWN_DIR and not _same(folder, _common_dir(work_tree) / OWN_DIR):
            return str(folder)
    except MemexError:
        pass
    return None


def hooks_path_taken_back(work_tree: Path) -> str | None:
    """The core.hooksPath another tool set after `init` chained the previous one (husky's
    install sets `.husky/_` again on every `npm install`), else None."""
    if _local(work_tree, "memex.hookschain") is None:
        return None
    value = _git(work_tree, "config", "--get", "core.hookspath").stdout.rstrip("\n")
    return value if value and not _is_own_value(work_tree, value) else None


def uninstall_hooks(work_tree: Path, *, apply: bool = True) -> list[HookAction]:
    """Remove our shims. In the memex-hooks set-up: the folder, and this repository's
    core.hooksPath back to what it was (the chained folder was never touched). In the default
    folder (also when another folder is in use: shims `init` put there before a hook manager took
    core.hooksPath): each renamed hook back in place, our shims a manager renamed aside
    (`NAME.old`, `NAME.legacy`) and stale chained copies of a manager's own hook gone
    (`_manager_leftovers`). A folder another config scope set (global, system) is never written
    to, whatever an older git-memex left there."""
    out: list[HookAction] = []
    local_value = _local(work_tree, "core.hookspath")
    common = _common_dir(work_tree)
    folders = [common / "hooks"]
    if _is_own_value(work_tree, local_value):
        own = common / OWN_DIR  # never another clone's (a `cp -a` copy names the original's)
        before = _local(work_tree, "memex.hookspathbefore")
        for name in HOOK_NAMES + PASS_THROUGH + PASS_THROUGH_IF_THERE:
            if is_ours(own / name):
                if apply:
                    (own / name).unlink()
                if name in HOOK_NAMES:
                    out.append(HookAction(name, "removed"))
        if apply:
            with contextlib.suppress(OSError):
                own.rmdir()  # kept if something not ours is in it
            if before is not None:
                _git(work_tree, "config", "--local", "core.hooksPath", before)
            else:
                _git(work_tree, "config", "--local", "--unset-all", "core.hooksPath")
            for key in ("memex.hooksChain", "memex.hooksPathBefore"):
                _git(work_tree, "config", "--local", "--unset-all", key)
    else:
        folder = hooks_dir(work_tree)
        scope = _git(work_tree, "config", "--show-scope", "--get", "core.hookspath").stdout.split("\t", 1)[0]
        if not _same(folder, common / "hooks") and scope in ("local", "worktree"):
            folders.insert(0, folder)
    for folder in folders:
        if folder.is_dir():
            for name in HOOK_NAMES:
                out.extend(_manager_leftovers(folder, name, apply))
    return out


def hook_status(work_tree: Path) -> dict[str, bool]:
    try:
        folder = hooks_dir(work_tree)
    except MemexError:
        return dict.fromkeys(HOOK_NAMES, False)
    if folder.name == OWN_DIR and not _same(folder, _common_dir(work_tree) / OWN_DIR):
        return dict.fromkeys(HOOK_NAMES, False)  # another clone's shims (a moved or copied clone): init again
    from git_memex.git.reach import reached

    return {name: reached(work_tree, folder, name) for name in HOOK_NAMES}


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
    """Refuse the commit when a memory file it records fails the checks (`scan.commit_problems`,
    which `submit` runs on everything it commits too: the reader's own verdict on its bytes,
    `core.files.judge_bytes`, then secrets); one over the size limit is refused from its blob's
    size, before anything is read.

    What the commit records is the index git names in GIT_INDEX_FILE (a temporary one for
    `commit -a`, `commit -- PATHS`, `-i`, `-o`), read through `gitcmd`; a commit that stages no
    memory file costs one `git diff-index` and no memory check can refuse it.
    """
    from git_memex.core.context import load_context
    from git_memex.core.gitcmd import is_team_record_path, staged_memory_changes
    from git_memex.secrets.scan import (
        commit_problems,
        dangling_pointers,
        size_findings,
        supersede_rings,
        unreviewed_claims,
    )

    ctx = load_context()
    repo_info = ctx.require_repo("the pre-commit hook")
    findings = []
    try:  # a blob over the size limit is refused from its size alone, never read
        both, deleted, oversized = staged_memory_changes(repo_info.work_tree, ctx.memory_dir_rel, records=True)
        findings.extend(size_findings(oversized))
        staged = [(p, d) for p, d in both if not is_team_record_path(p, ctx.memory_dir_rel)]
        for path, data in both:
            if is_team_record_path(path, ctx.memory_dir_rel):  # only when a record is staged
                from git_memex.agents.approval_record import staged_record_problems

                findings.extend(staged_record_problems(path, data, ctx.memory_dir_rel, ctx.redact_patterns))
        for path, data in staged:
            findings.extend(commit_problems(path, data, ctx.redact_patterns))
        findings.extend(dangling_pointers(repo_info.work_tree, ctx.memory_dir_rel, staged, deleted,
                                          patterns=ctx.redact_patterns, reference_keys=ctx.reference_keys))
        findings.extend(supersede_rings(repo_info.work_tree, ctx.memory_dir_rel, staged))
        findings.extend(unreviewed_claims(repo_info.work_tree, staged))
    except OSError as exc:
        print(f"git-memex: {exc}; commit refused (run `git memex scan --staged` to retry, or commit "
              "with --no-verify)", file=sys.stderr)
        return 1
    refused = _data_root_staged(ctx, repo_info.work_tree)
    if refused:
        return 1
    for f in findings:
        print(str(f), file=sys.stderr)
    if findings:
        secret = any(f.secret for f in findings)
        print(f"git-memex: {len(findings)} problem(s) in staged memory files; commit refused"
              + (" (secrets are never shown)" if secret else ""), file=sys.stderr)
        return 1
    return 0


def _data_root_staged(ctx: Context, work_tree: Path) -> bool:
    """A data root inside this work tree (`GIT_MEMEX_HOME=$repo/.memdata`, ignored until a
    teammate's `.gitignore` change) never enters a commit: every staged path under it is named and
    the commit refused. One `git diff-index` more, only when the data root is in the tree."""
    from git_memex.core.files import inside
    from git_memex.core.gitcmd import run_git

    if not inside(ctx.data_root, work_tree):
        return False
    rel = os.path.relpath(os.path.realpath(ctx.data_root), os.path.realpath(work_tree)).replace(os.sep, "/")
    if rel in (".", ""):
        return False
    r = run_git(["diff-index", "--cached", "--ita-invisible-in-index", "--name-only", "-z", "HEAD", "--", rel + "/"],
                cwd=work_tree)
    if r is not None and r.returncode != 0:  # unborn branch: whatever is staged is new
        r = run_git(["ls-files", "--cached", "-z", "--", rel + "/"], cwd=work_tree)
    if r is None or r.returncode != 0:
        print(f"git-memex: git could not list what is staged under the data root {rel}/; commit refused",
              file=sys.stderr)
        return True
    names = [n for n in r.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    for n in names[:20]:
        print(f"git-memex: {n}: in the data root (personal memories and the index live there)", file=sys.stderr)
    if names:
        print(f"git-memex: {len(names)} file(s) of the data root {rel}/ are staged; commit refused (unstage them "
              f"with `git rm -r --cached {shlex.quote(rel)}`, and ignore the folder)", file=sys.stderr)
    return bool(names)


def post_update(name: str, args: list[str]) -> int:
    """What git just wrote into the work tree, applied to this work tree's index: the memory files
    that differ between HEAD before the update and now (for a rebase, every step of it), found
    with `git cat-file --batch-check` and `git diff-tree` (or `ls-tree` from nothing) through
    `core.gitcmd`, and the old HEAD read from the reflog files: no libgit2, whose import alone
    costs ~0.1 s of CPU (ssl, socket). Each such file is read and parsed once, then checked for
    incoming secrets and conflict markers, indexed, and named when the index cannot read it."""
    from git_memex.core.context import load_context
    from git_memex.core.gitcmd import changed_memory_files, head_reflog_previous, rebase_steps

    ctx = load_context()
    if ctx.repo is None or ctx.repo_index is None or ctx.memory_dir is None:
        return 0
    indexed = ctx.repo_index.exists()  # if not, the first search builds it; the check below still runs
    if name == "post-checkout":
        if len(args) >= 3 and args[2] == "0":
            return 0  # a file checkout: the next search notices it by stat
        old, new = (args + ["", ""])[:2]
        pairs: list[tuple[str | None, str]] = [(old, new)]
    elif name == "post-rewrite" and args[:1] == ["rebase"]:
        steps = rebase_steps(ctx.repo.git_dir)  # HEAD before the rebase to now, and every step between
        pairs = [(steps[-1][0], "HEAD"), *steps] if steps else [("ORIG_HEAD", "HEAD")]
    else:  # post-merge, post-rewrite after amend
        pairs = [(head_reflog_previous(ctx.repo.git_dir, ctx.repo.common_dir), "HEAD")]
    paths = changed_memory_files(ctx.repo.work_tree, pairs, ctx.memory_dir_rel)
    if not paths:
        return 0
    from git_memex.git.sync import (
        incoming_problems,
        left_out,
        read_incoming,
        reindex_paths,
        report_incoming,
        report_left_out,
    )

    how = name.replace("post-", "the ")
    loaded = read_incoming(ctx, paths)
    report_incoming(incoming_problems(ctx, paths, loaded), how)
    if indexed:
        stats = reindex_paths(ctx, paths, trigger=name, loaded=loaded)
        print(f"git-memex: index updated ({stats.added} added, {stats.changed} changed, {stats.removed} removed)",
              file=sys.stderr)
    report_left_out(left_out(ctx, paths, loaded), how)  # named with the reason, indexed or not
    if not indexed:
        return 0
    if ctx.repo_index.with_name("vectors.db").exists() or ctx.home_index.with_name("vectors.db").exists():
        from git_memex.search import semantic  # the lane is in use here: embed the new memories

        semantic.spawn_build(ctx)
    return 0

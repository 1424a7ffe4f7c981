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
import subprocess
import sys
from pathlib import Path

from git_memex.errors import MemexError
from git_memex.record import record

HOOK_NAMES = ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite")
# Hooks whose failure stops git: an automatic merge commit runs pre-merge-commit, not pre-commit,
# so both scan the staged memory files.
BLOCKING = ("pre-commit", "pre-merge-commit")
MARKER = "# git-memex hook shim"
CHAINED_SUFFIX = ".memex-chained"


# ------------------------------------------------------------------ command resolution
def memex_command() -> list[str]:
    """How hooks and the merge driver should call us: an installed script, else this Python."""
    found = shutil.which("git-memex")
    if found:
        return [found]
    beside = Path(sys.executable).with_name("git-memex")
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-m", "git_memex"]


def driver_command() -> str:
    """`git-memex` when it is on PATH (portable across machines), else an absolute command."""
    if shutil.which("git-memex"):
        return "git-memex"
    return " ".join(shlex.quote(p) for p in memex_command())


# ------------------------------------------------------------------ install
def hooks_dir(work_tree: Path) -> Path:
    """The folder git really runs hooks from (core.hooksPath respected)."""
    r = subprocess.run(["git", "rev-parse", "--git-path", "hooks"], cwd=work_tree, capture_output=True,
                       text=True, check=False)  # fmt: skip
    if r.returncode != 0:
        raise MemexError("cannot find the git hooks folder; is this a git repository?", 2)
    p = Path(r.stdout.strip())
    return p if p.is_absolute() else (work_tree / p)


def shim_text(name: str, command: list[str]) -> str:
    cmd = " ".join(shlex.quote(c) for c in command)
    stdin_buffer = name == "post-rewrite"
    lines = [
        "#!/bin/sh",
        f"{MARKER} ({name}). Installed by `git memex init`; `git memex init --uninstall` removes it",
        "# and restores the hook it replaced, which still runs first (chained).",
        f'chained="$(dirname "$0")/{name}{CHAINED_SUFFIX}"',
        "status=0",
    ]
    if stdin_buffer:
        lines += ['input="$(cat)"', 'if [ -x "$chained" ]; then printf "%s\\n" "$input" | "$chained" "$@"; status=$?; fi']
    else:
        lines += ['if [ -x "$chained" ]; then "$chained" "$@"; status=$?; fi']
    if name in BLOCKING:
        lines += [
            '[ "$status" -eq 0 ] || exit "$status"',
            f"if ! command -v {shlex.quote(command[0])} >/dev/null 2>&1; then",
            "  echo 'git-memex: not installed, so staged memory files cannot be checked; reinstall it, or commit with --no-verify' >&2",
            "  exit 1",
            "fi",
            f'exec {cmd} hook {name} "$@"',
        ]
    else:
        lines += [
            f'if command -v {shlex.quote(command[0])} >/dev/null 2>&1; then {cmd} hook {name} "$@" || true; fi',
            'exit "$status"',
        ]
    return "\n".join(lines) + "\n"


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
                    raise MemexError(f"{path} exists and {chained.name} too; move one of them away and rerun init", 2)
                os.replace(path, chained)
                action = "chained"
        from git_memex.store import atomic_write_text

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
    from git_memex.gitcmd import staged_memory_files
    from git_memex.paths import load_context
    from git_memex.scan import check_bytes

    ctx = load_context()
    repo_info = ctx.require_repo("the pre-commit hook")
    try:
        staged = staged_memory_files(repo_info.work_tree, ctx.memory_dir_rel)
    except OSError as exc:
        print(f"git-memex: {exc}; commit refused (run `git memex scan --staged` to retry, or commit "
              "with --no-verify)", file=sys.stderr)  # fmt: skip
        return 1
    findings = []
    for path, data in staged:
        findings.extend(check_bytes(path, data))
    for f in findings:
        print(str(f), file=sys.stderr)
    if findings:
        secret = any(f.secret for f in findings)
        print(f"git-memex: {len(findings)} problem(s) in staged memory files; commit refused"
              + (" (secrets are never shown)" if secret else ""), file=sys.stderr)  # fmt: skip
        return 1
    return 0


def post_update(name: str, args: list[str]) -> int:
    from git_memex.paths import load_context

    ctx = load_context()
    if ctx.repo is None or ctx.repo_index is None or ctx.memory_dir is None:
        return 0
    if not ctx.repo_index.exists():
        return 0  # nothing indexed yet: the first search builds it
    from git_memex import git

    repo = git.open_repo(ctx.repo.work_tree)
    if name == "post-checkout":
        if len(args) >= 3 and args[2] == "0":
            return 0  # a file checkout: the next search notices it by stat
        old, new = (args + ["", ""])[:2]
        pairs: list[tuple[str | None, str]] = [(old, new)]
    elif name == "post-rewrite" and args[:1] == ["rebase"]:
        steps = git.rebase_steps(repo)  # HEAD before the rebase to now, and every step between
        pairs = [(steps[-1][0], "HEAD"), *steps] if steps else [("ORIG_HEAD", "HEAD")]
    else:  # post-merge, post-rewrite after amend
        pairs = [(git.head_reflog_previous(repo), "HEAD")]
    paths: list[str] = []
    for old, new in pairs:  # a file any step touched may be stale in the index: reread it
        paths.extend(p for p in git.changed_memory_files(repo, old, new, ctx.memory_dir_rel) if p not in paths)
    if not paths:
        return 0
    from git_memex.sync import reindex_paths

    stats = reindex_paths(ctx, paths, trigger=name)
    msg = f"git-memex: index updated ({stats.added} added, {stats.changed} changed, {stats.removed} removed)"
    if stats.quarantined:
        msg += f"; {stats.quarantined} unreadable (see `git memex doctor`)"
    print(msg, file=sys.stderr)
    return 0

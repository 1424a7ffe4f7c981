"""Does a commit in this clone reach git-memex's secret scan? (docs/git.md, "Hook managers")

Cheap on purpose, since every command asks (`main`'s notice, the session block): no subprocess,
no YAML parser, the git config the command already loaded, and a few small file reads: the hook
git runs for pre-commit (core.hooksPath respected) and, for a hook manager's hook, the manager's
committed file, which must hold our marked entry (`managers` writes it). The names of those
files and markers live here; `managers` edits the files.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context

SHIM_MARKER = "# git-memex hook shim"  # hook.MARKER: the first lines of every shim `init` installs
HOOKS = ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite")
BLOCKING = ("pre-commit", "pre-merge-commit")
BEGIN = "# >>> git-memex"
END = "# <<< git-memex"
BEGIN_LINE = BEGIN + " (added by `git memex init`; `git memex init --uninstall` removes it)"
HUSKY_DIR = ".husky"
LEFTHOOK_FILES = ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
                  ".config/lefthook.yml", ".config/lefthook.yaml")
LEFTHOOK_OTHER = ("lefthook.json", "lefthook.jsonc", "lefthook.toml", ".lefthook.json", ".lefthook.jsonc",
                  ".lefthook.toml", ".config/lefthook.json", ".config/lefthook.jsonc", ".config/lefthook.toml")
FRAMEWORK_FILE = ".pre-commit-config.yaml"
FRAMEWORK_ID = "memex-secrets"


def read_text(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def blocks(text: str) -> list[str]:
    """The BEGIN..END blocks of `text`, each as its text."""
    found: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith(BEGIN):
            j = i
            while j < len(lines) and not lines[j].strip().startswith(END):
                j += 1
            found.append("".join(lines[i:j + 1]))
            i = j + 1
        else:
            i += 1
    return found


def lefthook_config(work_tree: Path) -> Path | None:
    for rel in (*LEFTHOOK_FILES, *LEFTHOOK_OTHER):
        if (work_tree / rel).is_file():
            return work_tree / rel
    return None


def read_head(path: Path, size: int = 8192) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def is_lefthook_hook(text: str) -> bool:
    return "call_lefthook" in text or "lefthook run" in text or 'lefthook" run' in text


def is_husky_stub(text: str) -> bool:
    return '/h"' in text and len(text) < 200


def is_framework_hook(text: str) -> bool:
    return "pre-commit.com" in text or "pre_commit" in text



# ------------------------------------------------------------------ reached (cheap)
def reached(work_tree: Path, folder: Path, hook: str) -> bool:
    """Whether the hook git runs from `folder` for `hook` reaches git-memex: our shim, a hand
    hook that runs git-memex, or a manager's hook whose committed config holds our entry."""
    path = folder / hook
    text = read_head(path)
    if not text and hook != "pre-commit" and is_lefthook_hook(read_head(folder / "pre-commit")):
        config = lefthook_config(work_tree)  # lefthook installs the hooks its file names on its next run
        return config is not None and lefthook_has(read_text(config) or "", hook)
    if not text or not os.access(path, os.X_OK):
        return False
    if SHIM_MARKER in text or "git-memex hook" in text or "git memex hook" in text:
        return True
    if is_husky_stub(text):
        return BEGIN in (read_text(folder.parent / hook) or "")
    if is_lefthook_hook(text):
        config = lefthook_config(work_tree)
        if config is None:
            return False
        return BEGIN in (read_text(config) or "") and lefthook_has(read_text(config) or "", hook)
    if is_framework_hook(text):
        if hook not in BLOCKING:
            return False
        legacy = folder / f"{hook}.legacy"  # the framework's migration mode runs the hook it replaced
        return FRAMEWORK_ID in (read_text(work_tree / FRAMEWORK_FILE) or "") or SHIM_MARKER in read_head(legacy)
    return False


def lefthook_has(text: str, hook: str) -> bool:
    """A cheap look (no YAML parser): one of our blocks in the file mentions `hook`."""
    return any(f" hook {hook}" in b and ("\n" + hook + ":") in ("\n" + text) for b in blocks(text))


# ------------------------------------------------------------------ is the scan missing?
FIX = "git memex init"


def has_memories(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(e.name.endswith(".md") and e.is_file() for e in it)
    except OSError:
        return False


def scan_missing(ctx: Context) -> str | None:
    """Why no pre-commit hook of this clone reaches git-memex's check, in a repository whose
    memory folder holds memory files; None when one does, when there are none, or when
    `init --no-hooks` chose so (memex.hooks=false). Reads git config from `ctx` (no git call), the
    hook file git runs and, for a hook manager's hook, the manager's file: a few small reads."""
    repo = ctx.repo
    if repo is None or (ctx.config.get("memex.hooks") or "").lower() == "false":
        return None
    memory = ctx.memory_dir
    if memory is None or not has_memories(memory):
        return None
    value = ctx.config.get("core.hookspath") or ""
    if value.startswith("~"):
        value = os.path.expanduser(value)
    folder = (Path(value) if os.path.isabs(value) else repo.work_tree / value) if value else repo.common_dir / "hooks"
    if reached(repo.work_tree, folder, "pre-commit"):
        return None
    hook = folder / "pre-commit"
    text = read_head(hook)
    if not text:
        where = f"git runs no pre-commit hook here ({hook} does not exist)"
    elif is_husky_stub(text):
        where = f"husky runs {HUSKY_DIR}/pre-commit, which has no git-memex line"
    elif is_lefthook_hook(text):
        where = "lefthook's configuration has no git-memex command"
    elif is_framework_hook(text):
        where = f"{FRAMEWORK_FILE} has no {FRAMEWORK_ID} hook"
    elif not os.access(hook, os.X_OK):
        where = f"{hook} is not executable"
    else:
        where = f"{hook} does not run git-memex"
    return where


def scan_notice(ctx: Context) -> str | None:
    """The one stderr line a command prints when `scan_missing` says why, else None."""
    why = scan_missing(ctx)
    if why is None:
        return None
    return (f"git-memex: warning: memory files committed in this clone are not checked for secrets, since "
            f"{why}; run `{FIX}` to set the check up")


def agent_note(ctx: Context) -> str | None:
    """The line the session-start block carries for the agent when the scan is missing."""
    why = scan_missing(ctx)
    if why is None:
        return None
    return (f"Note: commits in this clone do not check memory files for secrets, since {why}. Before "
            f"committing a memory file, ask the user to run `{FIX}`.")

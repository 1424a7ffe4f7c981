"""Setting a repository up for git-memex, idempotently: folder, attributes, driver, hooks, pointer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import FAILED, MemexError

AGENTS_POINTER = "> Project memory lives in {dir}/ — query it with memory_search before answering."
# `language: system` runs the entry with the PATH of whoever commits (a GUI client, a shell
# without the venv), so the entry asks this clone's git config for the absolute command `init`
# recorded (memex.command, machine-local, never committed) and falls back to git-memex on PATH.
_ENTRY = ("sh -c 'eval \"exec $(git config memex.command || echo git-memex) scan {flag} \\\"\\$@\\\"\"' --")
PRE_COMMIT_SNIPPET = """\
  - repo: local
    hooks:
      - id: memex-secrets
        name: git-memex secret scan
        entry: """ + _ENTRY.format(flag="--secrets-only") + """
        language: system
        files: ^{dir_re}/.+\\.md$
      - id: memex-validate
        name: git-memex memory validation
        entry: """ + _ENTRY.format(flag="--format-only") + """
        language: system
        files: ^{dir_re}/.+\\.md$"""


@record
class Step:
    what: str
    action: str  # created | updated | unchanged | skipped | removed | restored | kept | printed
    detail: str = ""


@record
class InitReport:
    steps: list[Step] = field(default_factory=list)
    snippets: list[str] = field(default_factory=list)

    def add(self, what: str, action: str, detail: str = "") -> None:
        self.steps.append(Step(what, action, detail))

    @property
    def changed(self) -> bool:
        return any(s.action not in ("unchanged", "skipped", "kept") for s in self.steps)


def _git_config(work_tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from git_memex.core.gitcmd import Fail, git_text

    r = git_text(["config", *args], work_tree, timeout=None, literal=False,
                 fail=Fail("git is not installed or not on PATH; nothing was changed", "git config did not finish"))
    assert r is not None  # `fail` raises instead
    return r


def _ensure_line(path: Path, line: str, header: str | None = None) -> str:
    """Append line to a text file once; return created/updated/unchanged."""
    from git_memex.core.files import atomic_write_text

    if path.exists():
        text = path.read_text(encoding="utf-8")
        if any(existing.strip() == line.strip() for existing in text.splitlines()):
            return "unchanged"
        sep = "" if text.endswith("\n") or not text else "\n"
        atomic_write_text(path, text + sep + line + "\n")
        return "updated"
    atomic_write_text(path, ((header + "\n\n") if header else "") + line + "\n")
    return "created"


def attributes_line(mem_rel: str) -> str:
    """The `.gitattributes` line of the merge driver: every memory file of the folder, at any depth
    (`**/` matches no folder too), so that an org repo's subfolders merge like its top folder."""
    return f"{mem_rel}/**/*.md merge=memex"


def _flat_line(mem_rel: str) -> str:
    """The line `init` wrote before subfolders were covered: files directly in the folder only."""
    return f"{mem_rel}/*.md merge=memex"


def _ensure_attributes(path: Path, mem_rel: str) -> str:
    """Add the merge driver's line once; an older flat line is replaced by it ("updated")."""
    from git_memex.core.files import atomic_write_text

    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        flat = [i for i, x in enumerate(lines) if x.strip() == _flat_line(mem_rel)]
        if flat and not any(x.strip() == attributes_line(mem_rel) for x in lines):
            lines[flat[0]] = attributes_line(mem_rel) + "\n"
            atomic_write_text(path, "".join(lines))
            return "updated"
    return _ensure_line(path, attributes_line(mem_rel))


def _share_memory_dir(ctx: Context, work: Path, mem_rel: str, rep: InitReport) -> None:
    """A memory folder other than the default, chosen in this clone's config only, is written
    into the committed `settings.TEAM_FILE`, so that a teammate's fresh clone uses the same folder."""
    from git_memex.core.settings import (
        DEFAULT_MEMORY_DIR,
        TEAM_FILE,
        read_team_file,
        write_team_setting,
    )

    if mem_rel == DEFAULT_MEMORY_DIR or read_team_file(work).get("memex.memorydir") is not None:
        return  # the default, or the team's choice (a local value that differs only overrides it here)
    existed = (work / TEAM_FILE).exists()
    write_team_setting(work, "memoryDir", mem_rel)
    rep.add(TEAM_FILE, "updated" if existed else "created", f"memoryDir = {mem_rel}: commit it")


def _set_local(work: Path, key: str, value: str) -> None:
    r = _git_config(work, "--local", key, value)
    if r.returncode != 0:
        raise MemexError(f"could not write git config {key} ({r.stderr.strip()})", FAILED)


def _unset_local(work: Path, key: str) -> None:
    _git_config(work, "--local", "--unset-all", key)


def init_repo(ctx: Context, *, hooks: bool = True) -> InitReport:
    import shlex

    from git_memex.git.hook import driver_command, install_hooks, memex_command

    repo = ctx.require_repo("init")
    work = repo.work_tree
    rep = InitReport()
    mem_rel = ctx.memory_dir_rel
    folder = work / mem_rel
    if folder.exists() and not folder.is_dir() or any(p.is_file() for p in folder.parents if p.is_relative_to(work)):
        raise MemexError(f"the memory folder {mem_rel} (memex.memoryDir) is a file in the work tree, not a folder; "
                         "set memex.memoryDir to a folder (nothing was changed)", FAILED)
    _share_memory_dir(ctx, work, mem_rel, rep)
    if folder.is_dir():
        rep.add(f"{mem_rel}/", "unchanged")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        rep.add(f"{mem_rel}/", "created")
    keep = folder / ".gitkeep"
    if not keep.exists() and not any(folder.rglob("*.md")):  # an org repo may hold only subfolders
        keep.write_text("")
    rep.add(".gitattributes", _ensure_attributes(work / ".gitattributes", mem_rel))
    _record_init_branch(ctx, work, rep)
    _pin_project_key(ctx, rep)
    cmd = driver_command()
    current = _git_config(work, "--local", "--get", "merge.memex.driver").stdout.strip()
    if current == cmd:
        rep.add("merge driver (git config merge.memex)", "unchanged")
    else:
        for key, value in (("merge.memex.name", "git-memex memory file merge"), ("merge.memex.driver", cmd)):
            r = _git_config(work, "--local", key, value)
            if r.returncode != 0:
                raise MemexError(f"could not write git config {key} ({r.stderr.strip()})", FAILED)
        rep.add("merge driver (git config merge.memex)", "updated" if current else "created")
    command = shlex.join(memex_command())
    was = _git_config(work, "--local", "--get", "memex.command").stdout.strip()
    if was != command:
        _set_local(work, "memex.command", command)  # the pre-commit framework snippet runs it
        rep.add("git-memex command for the pre-commit framework (git config memex.command)",
                "updated" if was else "created", command)
    if hooks:
        _unset_local(work, "memex.hooks")
        framework = work / ".pre-commit-config.yaml"
        try:
            pasted = "memex-secrets" in framework.read_text(encoding="utf-8", errors="replace")
        except OSError:
            pasted = False
        for h in install_hooks(work, skip_pre_commit=pasted):
            rep.add(f"hook {h.name}", {"installed": "created", "chained": "created"}.get(h.action, h.action),
                    "existing hook kept and chained" if h.action == "chained" else h.detail)
        if framework.exists() and not pasted:
            dir_re = mem_rel.replace(".", "\\.")
            rep.snippets.append(
                "This repository uses the pre-commit framework; git-memex's pre-commit hook runs its installed "
                "hook first. To let the framework run git-memex's checks instead, add these hooks to "
                ".pre-commit-config.yaml (they work without git-memex on PATH):\n"
                + PRE_COMMIT_SNIPPET.format(dir_re=dir_re)
            )
    else:
        _set_local(work, "memex.hooks", "false")  # deliberate: doctor accepts it with a note
        rep.add("hooks", "skipped", "--no-hooks")
    rep.add("AGENTS.md", _ensure_line(work / "AGENTS.md", AGENTS_POINTER.format(dir=mem_rel), header="# AGENTS.md"))
    return rep


def uninstall(ctx: Context, *, apply: bool = True, home: Path | None = None, codex_hooks: bool = False) -> InitReport:
    """Undo `init`: our hooks (chained ones restored), the merge driver, the `.gitattributes` line,
    and what `init --client` wrote for editors and agents, merging out only our part (see
    `clients.removals`). The memory folder and its memories stay. With apply=False nothing is
    changed and the report says what would be. Codex's user-level hooks stay unless `codex_hooks`."""
    import os
    import re

    from git_memex.agents import clients
    from git_memex.git.hook import uninstall_hooks

    repo = ctx.require_repo("init --uninstall")
    work = repo.work_tree
    rep = InitReport()
    for h in uninstall_hooks(work, apply=apply):
        rep.add(f"hook {h.name}", h.action, "previous hook restored" if h.action == "restored" else "")
    if apply:
        for key in ("memex.command", "memex.hooks"):
            _unset_local(work, key)
    if _git_config(work, "--local", "--get-regexp", r"^merge\.memex\.").returncode == 0:
        if apply:
            _git_config(work, "--local", "--remove-section", "merge.memex")
        rep.add("merge driver (git config merge.memex)", "removed")
    else:
        rep.add("merge driver (git config merge.memex)", "unchanged")
    attrs = work / ".gitattributes"
    if attrs.is_file():
        ours = re.compile(r"^\S+/\*\.md\s+merge=memex\s*$")
        lines = attrs.read_text(encoding="utf-8").splitlines(keepends=True)
        rest = [x for x in lines if not ours.match(x.strip())]
        if len(rest) != len(lines):
            if apply:
                from git_memex.core.files import atomic_write_text

                if "".join(rest).strip():
                    atomic_write_text(attrs, "".join(rest))
                else:
                    os.unlink(attrs)
            rep.add(".gitattributes", "updated" if "".join(rest).strip() else "removed", "merge=memex line")
    framework = work / ".pre-commit-config.yaml"
    try:
        pasted = "memex-secrets" in framework.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pasted = False
    if pasted:  # the snippet init printed, pasted by the user: theirs to remove
        rep.add("pre-commit framework hooks .pre-commit-config.yaml", "kept",
                "you pasted them; remove the memex-secrets and memex-validate hooks yourself")
    for r in clients.removals(work, ctx.memory_dir_rel, Path.home() if home is None else home, codex_hooks=codex_hooks):
        if apply:
            clients.apply_removal(r, work)
        rep.add(r.what, r.action, r.detail)
        if r.action == "printed":
            rep.snippets.append(f"{r.path}: {r.detail}")
    return rep


def merge_driver_configured(ctx: Context) -> bool:
    if ctx.repo is None:
        return False
    r = _git_config(ctx.repo.work_tree, "--get", "merge.memex.driver")
    return r.returncode == 0 and "merge-driver" in r.stdout


def attributes_configured(ctx: Context) -> bool:
    if ctx.repo is None:
        return False
    attrs = ctx.repo.work_tree / ".gitattributes"
    lines = (attributes_line(ctx.memory_dir_rel), _flat_line(ctx.memory_dir_rel))
    return attrs.exists() and any(x.strip() in lines for x in attrs.read_text(encoding="utf-8").splitlines())


def attributes_flat_only(ctx: Context) -> bool:
    """`.gitattributes` holds only the older line, which leaves files in subfolders of the memory
    folder to git's own merge (`git memex init` replaces it)."""
    if ctx.repo is None:
        return False
    attrs = ctx.repo.work_tree / ".gitattributes"
    if not attrs.exists():
        return False
    lines = {x.strip() for x in attrs.read_text(encoding="utf-8").splitlines()}
    return _flat_line(ctx.memory_dir_rel) in lines and attributes_line(ctx.memory_dir_rel) not in lines


def _pin_project_key(ctx: Context, rep: InitReport) -> None:
    """Pin this clone's project key (memex.projectKey), so that a new origin URL (a rename, a
    transfer, a fork) keeps its drafts and private memories in view (docs/project-keys.md)."""
    from git_memex.core import scopekeys

    if ctx.pinned_key is not None:
        return
    scopekeys.settle(ctx)  # a clone whose origin already changed pins the key it used
    if ctx.pinned_key is not None:
        return
    key = ctx.natural_key
    if not scopekeys.pin(ctx, key):
        raise MemexError("could not write git config memex.projectKey; check that .git/config is writable", FAILED)
    scopekeys.settle(ctx)
    rep.add("project key of the drafts and private memories (git config memex.projectKey)", "created", key)


def _record_init_branch(ctx: Context, work: Path, rep: InitReport) -> None:
    """Remember the branch init ran on (memex.initBranch): the instruction gate's default branch
    when origin has no HEAD and memex.defaultBranch is unset (see `gate.default_branch`)."""
    if ctx.config.get("memex.initbranch"):
        return
    from git_memex.agents.workspace import current_branch

    branch = current_branch(ctx)
    if not branch:
        return
    r = _git_config(work, "--local", "memex.initBranch", branch)
    if r.returncode != 0:
        raise MemexError(f"could not write git config memex.initBranch ({r.stderr.strip()})", FAILED)
    rep.add("default branch for reviewed rules (git config memex.initBranch)", "created", branch)

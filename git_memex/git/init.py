"""Setting a repository up for git-memex, idempotently: folder, attributes, driver, hooks, pointer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from git_memex.core.context import Context
from git_memex.core.record import field, record
from git_memex.errors import FAILED, MemexError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from git_memex.git.managers import Joined

AGENTS_POINTER = "> Project memory lives in {dir}/ — query it with memory_search before answering."


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
    """Append line to a text file once; return created/updated/unchanged. The file's own line
    ending is kept, and a file that did not end with a newline still does not (our line goes last,
    without one), so that `--uninstall` gives it back byte for byte (`core.textlines`)."""
    from git_memex.core.files import atomic_write_text
    from git_memex.core.textlines import append_line, read

    if path.exists():
        text = read(path)
        if any(existing.strip() == line.strip() for existing in text.splitlines()):
            return "unchanged"
        atomic_write_text(path, append_line(text, line))
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
    from git_memex.core.textlines import read

    if path.exists():
        lines = read(path).splitlines(keepends=True)
        flat = [i for i, x in enumerate(lines) if x.strip() == _flat_line(mem_rel)]
        if flat and not any(x.strip() == attributes_line(mem_rel) for x in lines):
            old = lines[flat[0]]
            lines[flat[0]] = attributes_line(mem_rel) + old[len(old.rstrip("\r\n")):]
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


def init_repo(ctx: Context, *, hooks: bool = True,
              ask: Callable[[str, Path], bool] | None = None) -> InitReport:
    import shlex

    from git_memex.git.hook import driver_command, memex_command

    repo = ctx.require_repo("init")
    work = repo.work_tree
    rep = InitReport()
    mem_rel = ctx.memory_dir_rel
    folder = work / mem_rel
    if folder.exists() and not folder.is_dir() or any(p.is_file() for p in folder.parents if p.is_relative_to(work)):
        raise MemexError(f"the memory folder {mem_rel} (memex.memoryDir) is a file in the work tree, not a folder; "
                         "set memex.memoryDir to a folder (nothing was changed)", FAILED)
    plan = _hooks_plan(work) if hooks else None
    _preflight(work, mem_rel, plan)
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
        _set_local(work, "memex.command", command)  # the hook managers' committed lines run it
        rep.add("git-memex command for hook managers (git config memex.command)",
                "updated" if was else "created", command)
    if plan is not None:
        _unset_local(work, "memex.hooks")
        _install_hooks(work, rep, ask, plan)
    else:
        _set_local(work, "memex.hooks", "false")  # deliberate: doctor accepts it with a note
        rep.add("hooks", "skipped", "--no-hooks")
    rep.add("AGENTS.md", _ensure_line(work / "AGENTS.md", AGENTS_POINTER.format(dir=mem_rel), header="# AGENTS.md"))
    return rep


def _rel(work: Path, path: Path) -> str:
    try:
        return path.relative_to(work).as_posix()
    except ValueError:
        return str(path)


@record
class HooksPlan:
    """Where the hooks go: the folder git runs them from (for an earlier init's memex-hooks folder,
    the one it chains), core.hooksPath as git reads it, and what joining the managers would change."""

    folder: Path
    value: str | None
    joined: Joined


def _hooks_plan(work: Path) -> HooksPlan:
    from git_memex.git import managers
    from git_memex.git.hook import OWN_DIR, hooks_dir

    value = _git_config(work, "--get", "core.hooksPath").stdout.strip() or None  # git missing: one sentence
    folder = hooks_dir(work)
    if folder.name == OWN_DIR:  # our own folder (an earlier init): look at the one it chains
        chain = _git_config(work, "--local", "--get", "memex.hooksChain").stdout.strip()
        if chain:
            value, folder = chain, (Path(chain) if Path(chain).is_absolute() else work / chain)
        else:
            folder = folder.parent / "hooks"
    return HooksPlan(folder, value, managers.join(work, folder, value, apply=False))


def _preflight(work: Path, mem_rel: str, plan: HooksPlan | None) -> None:
    """Everything init writes can be written: a file it writes is not a folder (or a FIFO), nor
    is a folder on its way a file. Checked before anything is changed, so that a failure really
    changes nothing (exit 2)."""
    from git_memex.git import blockedit, managers
    from git_memex.git.hook import HOOK_NAMES, hooks_dir

    problems: list[str] = []
    for rel in (".gitattributes", "AGENTS.md", ".gitmemex", f"{mem_rel}/.gitkeep"):
        bad = managers.unwritable("init", work / rel, work)
        if bad is not None:
            problems.append(bad.detail.replace("init's hook file", "a file init writes"))
    if plan is not None:
        problems += [c.detail for c in plan.joined.changes if c.action == "error"]
        shims = hooks_dir(work)
        for name in HOOK_NAMES:
            for path in dict.fromkeys((shims / name, plan.folder / name)):
                if blockedit.state(path) in ("folder", "other") and name not in plan.joined.managed:
                    problems.append(f"{path} is a folder where git's {name} hook goes; move it away")
    if problems:
        raise MemexError("cannot set up git-memex here: " + "; ".join(dict.fromkeys(problems))
                         + "; then rerun `git memex init` (nothing was changed)", FAILED)


def _install_hooks(work: Path, rep: InitReport, ask: Callable[[str, Path], bool] | None, plan: HooksPlan) -> None:
    """Join the hook managers this repository uses through their committed files
    (`managers.join`), then install our shims for what no manager runs (`hook.install_hooks`)."""
    from git_memex.git import managers
    from git_memex.git.hook import install_hooks

    joined = managers.join(work, plan.folder, plan.value, ask=ask)
    edited: dict[str, list[str]] = {}
    for c in joined.changes:
        rel = _rel(work, c.path)
        rep.add(f"{c.manager} {rel}", c.action, "git-memex's line" if c.action in ("created", "updated") else c.detail)
        if c.action in ("created", "updated"):
            edited.setdefault(c.manager, []).append(rel)
        if c.action == "printed":
            rep.snippets.append(f"{c.manager}: {rel} was left alone ({c.detail}); to run git-memex's checks in "
                                f"every clone, add this to it yourself:\n{c.snippet}")
    for manager, rels in edited.items():
        rep.snippets.append(f"Commit {' '.join(rels)}: every clone's {manager} then runs git-memex's secret scan "
                            "(a clone without git-memex refuses a commit that stages a memory file the person "
                            "changed, saying how to install it).")
    rep.snippets.extend(f"Warning: {w}" for w in joined.warnings)
    for h in install_hooks(work, managed=joined.managed, owner=joined.hooks_path_owner,
                           manager=joined.managed_by, husky=joined.husky):
        rep.add(f"hook {h.name}", {"installed": "created", "chained": "created"}.get(h.action, h.action),
                "existing hook kept and chained" if h.action == "chained" else h.detail)


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
    _settings_removal(ctx, work, rep, apply)
    if _git_config(work, "--local", "--get-regexp", r"^merge\.memex\.").returncode == 0:
        if apply:
            _git_config(work, "--local", "--remove-section", "merge.memex")
        rep.add("merge driver (git config merge.memex)", "removed")
    else:
        rep.add("merge driver (git config merge.memex)", "unchanged")
    attrs = work / ".gitattributes"
    if attrs.is_file():
        ours = re.compile(r"^\S+/\*\.md\s+merge=memex\s*$")
        from git_memex.core.textlines import read, without_lines

        text = read(attrs)
        rest = without_lines(text, lambda x: ours.match(x) is not None)
        if rest != text:
            if apply:
                from git_memex.core.files import atomic_write_text

                if rest.strip():
                    atomic_write_text(attrs, rest)
                else:
                    os.unlink(attrs)
            rep.add(".gitattributes", "updated" if rest.strip() else "removed", "merge=memex line")
    from git_memex.git import managers

    hooks_path = _git_config(work, "--local", "--get", "memex.hooksChain").stdout.strip() or (
        _git_config(work, "--get", "core.hooksPath").stdout.strip() or None)
    for c in managers.leave(work, hooks_path, apply=apply):
        rep.add(f"{c.manager} {_rel(work, c.path)}", c.action, c.detail)
    codex_used = _git_config(work, "--local", "--get", "memex.codex").returncode == 0
    for r in clients.removals(work, ctx.memory_dir_rel, Path.home() if home is None else home,
                              codex_hooks=codex_hooks, codex_used=codex_used):
        if apply:
            clients.apply_removal(r, work)
        rep.add(r.what, r.action, r.detail)
        if r.action == "printed":
            rep.snippets.append(f"{r.path}: {r.detail}")
    if codex_used and apply:
        _unset_local(work, "memex.codex")
    index = repo.git_dir / "memex"
    if index.is_dir():
        if apply:
            import shutil

            shutil.rmtree(index, ignore_errors=True)
        rep.add(f"index of this clone ({_rel(work, index)}/)", "removed", "a cache of the memory files")
    return rep


# The git config keys `init` writes in this clone (local), besides merge.memex and the hooks'.
_INIT_KEYS = ("memex.command", "memex.hooks", "memex.initBranch")
_PIN_KEYS = ("memex.projectKey", "memex.cloneId", "memex.cloneDir")


def _settings_removal(ctx: Context, work: Path, rep: InitReport, apply: bool) -> None:
    """`init`'s own keys leave this clone's git config. The pinned project key (and the clone id
    bound to it) goes too when the origin gives the same key anyway; when it does not (the
    origin changed since), it stays, since this clone's drafts and private memories are filed
    under it (docs/project-keys.md)."""
    keys = [k for k in _INIT_KEYS if _git_config(work, "--local", "--get", k).returncode == 0]
    pinned = _git_config(work, "--local", "--get", "memex.projectKey").stdout.strip()
    if pinned and pinned != ctx.natural_key:
        rep.add("project key (git config memex.projectKey)", "kept",
                f"{pinned}: this clone's drafts and private memories are filed under it, and its origin now "
                f"gives {ctx.natural_key}")
    else:
        keys += [k for k in _PIN_KEYS if _git_config(work, "--local", "--get", k).returncode == 0]
    if not keys:
        return
    if apply:
        for key in keys:
            _unset_local(work, key)
    rep.add("settings of this clone (git config " + ", ".join(keys) + ")", "removed")


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

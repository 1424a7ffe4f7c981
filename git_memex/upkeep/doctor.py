"""`doctor`: every check that something is wrong, each with the command that fixes it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from git_memex.core.context import Context
from git_memex.core.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.index.stores import Stores


@record
class Check:
    name: str
    level: str  # ok | warn | fail
    detail: str = ""


@record
class Report:
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, level: str, detail: str = "") -> None:
        self.checks.append(Check(name, level, detail))

    @property
    def ok(self) -> bool:
        return not any(c.level == "fail" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


def run(ctx: Context) -> Report:
    from git_memex.index.stores import Stores

    rep = Report()
    _check_orgs(ctx, rep)  # before Stores: its refresh would bring a stale org index in line unseen
    _check_remotes(ctx, rep)
    with Stores(ctx) as st:
        if st.degraded:
            rep.add("data root", "fail", st.degraded)
        damaged = [(index.path, why) for index in [st.home] + ([st.repo] if st.repo else [])
                   if (why := index.check()) is not None]
        stats = st.refresh(trigger="doctor")
        moved = [i.relocated for i in [st.home, st.repo, *(o for _, o in st.orgs)] if i is not None and i.relocated]
        if moved:
            rep.add("index", "warn", f"an index was built for {moved[0]} (a copied or moved folder); rebuilt from the files here")
        for db, why in damaged:
            rep.add("index", "warn", f"{db} was damaged ({why}); rebuilt it from the memory files")
        if not (moved or damaged):
            if stats.touched:
                rep.add("index", "warn", f"index was behind the files by {stats.touched} change(s); refreshed")
            else:
                rep.add("index", "ok", "in step with the files")
        _check_leftovers(st, rep)
        for index in [st.home] + ([st.repo] if st.repo else []):
            for path, why in index.quarantined():
                rep.add("unreadable file", "fail", f"{path}: {why}")
        _check_org_files(st, rep)
        _check_chains(st, rep)
        _check_duplicates(st, rep)
        _check_contradictions(ctx, st, rep)
    if ctx.repo is not None:
        _check_scopes(ctx, rep)
        _check_editor_configs(ctx, rep)
    if ctx.repo is not None and ctx.memory_dir is not None:
        _check_repo(ctx, rep)
        _check_default_branch(ctx, rep)
        _check_driver_command(ctx, rep)
        _check_hook_commands(ctx, rep)
        _check_submit_journal(ctx, rep)
        _check_memory_folders(ctx, rep)
    return rep


def _check_remotes(ctx: Context, rep: Report) -> None:
    """Each subscribed remote's cache (docs/remote.md, "The cache"): modes, last pull, admission."""
    if not ctx.remote_names():
        return
    from git_memex.remote import cache

    for name in ctx.remote_names():
        for level, detail in cache.doctor(ctx, name):
            rep.add(f"remote {name}", level, detail)


def _check_editor_configs(ctx: Context, rep: Report) -> None:
    """Each file an editor reads that starts our server: the reference tool's server beside it
    (two identical tool sets over two data roots), and a shared file naming a path of this machine."""
    from git_memex.agents import clients

    assert ctx.repo is not None
    work, home = ctx.repo.work_tree, Path.home()
    for client in clients.CLIENTS:
        seen = clients.servers_seen(client, work, home)
        if not any(s.ours or (s.reference and s.name == clients.SERVER_NAME) for s in seen):
            continue
        written = clients.config_path(client, work, home)
        for s in seen:
            if s.reference:
                rep.add("editor config", "warn", clients.reference_note(s, replaced_by_init=s.path == written))
            elif s.ours and s.where == "project" and os.sep in s.command:
                rep.add("editor config", "warn", f"{s.path} is shared but starts {s.command}, a path of this "
                        f"machine; run `git memex init --client {client}` to write `{clients.PORTABLE_COMMAND}` instead")


def _check_memory_folders(ctx: Context, rep: Report) -> None:
    """One memory folder per repository: a second one holding memory files (the default one, the
    committed `TEAM_FILE`'s or this clone's own choice) is memories nobody here sees."""
    from git_memex.core.settings import DEFAULT_MEMORY_DIR, TEAM_FILE, read_team_file

    assert ctx.repo is not None
    work, used = ctx.repo.work_tree, ctx.memory_dir_rel
    team = read_team_file(work).get("memex.memorydir")
    others = {DEFAULT_MEMORY_DIR, team or DEFAULT_MEMORY_DIR} - {used}
    for rel in sorted(others):
        folder = work / rel
        n = sum(1 for _ in folder.rglob("*.md")) if folder.is_dir() else 0
        if n:
            why = (f"{TEAM_FILE} names {team}, and this clone's config overrides it" if rel == team
                   else f"memex.memoryDir is {used}")
            rep.add("memory folders", "warn", f"two memory folders: {used}/ is used ({why}), and {rel}/ holds {n} "
                    f"memory file{'s' if n != 1 else ''} nobody here sees; move them, or set memex.memoryDir "
                    f"(`git memex config set memex.memoryDir DIR` writes {TEAM_FILE}, commit it)")


def _check_leftovers(st: Stores, rep: Report) -> None:
    """Temp files of a write killed before its rename (`.<id>.md.<hex>.tmp`, `files.create_temp_beside`)
    hold memory text: each is named, and removed once older than `files.LEFTOVER_AGE_S`."""
    from git_memex.core.files import leftovers

    folders = [src.folder for src in st.home_sources()]
    if st.ctx.memory_dir is not None and st.repo is not None:  # its subfolders too: a write goes where the file is
        folders.extend(src.folder for src in st.repo_sources())
    for folder in dict.fromkeys(folders):
        for path, old in leftovers(Path(folder)):
            if old:
                try:
                    path.unlink()
                except OSError:
                    continue
            what = "removed it" if old else "left in place, a write may be under way"
            rep.add("leftover temp file", "warn", f"{path}: an interrupted write's temp file; {what}")


def _rows(st: Stores) -> list[Any]:
    return st.rows()


def _check_chains(st: Stores, rep: Report) -> None:
    from git_memex.search.chains import disagreements

    rows = {r["id"]: r for r in _rows(st)}
    found = disagreements(rows)
    for r in rows.values():  # hidden as superseded, with nothing in its place
        if r["superseded_by"] and r["superseded_by"] not in rows:
            found.append(("warn", f"{r['id']} names {r['superseded_by']} as its successor, which does not exist, "
                                  "so it is hidden for nothing; `git memex audit` lists such chains"))
    for severity, message in found:
        rep.add("supersede chain", severity, message)
    if not any(sev == "fail" for sev, _ in found):
        rep.add("supersede chains", "ok")


def _check_duplicates(st: Stores, rep: Report) -> None:
    seen: dict[str, list[str]] = {}
    for r in _rows(st):
        seen.setdefault(r["id"], []).append(r["path"])
    dups = {k: v for k, v in seen.items() if len(v) > 1}
    for mid, paths in dups.items():
        rep.add("duplicate id", "warn", f"{mid} exists in {len(paths)} places: {', '.join(paths)}")
    if not dups:
        rep.add("unique ids", "ok")


def _check_contradictions(ctx: Context, st: Stores, rep: Report) -> None:
    """One line: the active memories that disagree (review/contradictions.py), never resolved here."""
    from git_memex.review.contradictions import contradictions, summary

    stats: dict[str, int] = {}
    pairs = contradictions(ctx, stores=st, stats=stats)
    if pairs or stats.get("unchecked"):
        rep.add("contradictions", "warn", summary(pairs, stats.get("unchecked", 0)))


def _check_scopes(ctx: Context, rep: Report) -> None:
    """Drafts and private memories stranded under a key no clone uses (docs/project-keys.md)."""
    from git_memex.core.scopekeys import scopes

    root = str(ctx.project_root)
    name = ctx.natural_key.rsplit("-", 1)[0]
    unknown: list[str] = []
    stranded = 0
    for s in scopes(ctx):
        if s.current or not (s.drafts or s.private):
            continue
        what = f"{s.drafts} draft(s) and {s.private} private memor{'y' if s.private == 1 else 'ies'}"
        fix = f"`git memex scopes --adopt {s.key}`"
        if s.clone == root:
            stranded += 1
            rep.add("stranded drafts", "warn", f"{what} of this clone are under its old key {s.key} "
                    f"(origin then: {s.origin or 'none'}); run {fix} to carry them over")
        elif s.clone is not None and not s.clone_exists:
            stranded += 1
            state = "is gone" if not Path(s.clone).is_dir() else "no longer uses it"
            rep.add("stranded drafts", "warn", f"{what} are under key {s.key}, whose clone {s.clone} {state}; "
                    f"if they are this repository's, run {fix}")
        elif s.clone is None and s.key.rsplit("-", 1)[0] == name:
            stranded += 1
            rep.add("stranded drafts", "warn", f"{what} are under key {s.key}, which carries this repository's "
                    f"name but no known clone uses; if they are this repository's, run {fix}")
        elif s.clone is None:
            unknown.append(f"{s.key} ({s.drafts + s.private})")
    if unknown:
        rep.add("project keys", "ok", f"no known clone uses {', '.join(unknown)} (`git memex scopes` lists "
                "them; `git memex scopes --adopt KEY` from the clone they belong to)")
    elif not stranded:
        rep.add("project keys", "ok", f"this clone's key is {ctx.project_key}; no drafts stranded under another")


def _check_repo(ctx: Context, rep: Report) -> None:
    from git_memex.core import frontmatter
    from git_memex.core.files import UnreadableMemory, conflict_marker_line, read_bytes
    from git_memex.core.gitcmd import in_memory_dir
    from git_memex.git.hook import (
        HOOK_NAMES,
        foreign_hooks_folder,
        hook_status,
        hooks_path_taken_back,
    )
    from git_memex.git.init import (
        attributes_configured,
        attributes_flat_only,
        merge_driver_configured,
    )
    from git_memex.secrets.scan import check_text

    assert ctx.repo is not None and ctx.memory_dir is not None
    set_up = ctx.memory_dir.is_dir() or attributes_configured(ctx)
    if not set_up:
        rep.add("repository", "warn", "not set up for git-memex; run `git memex init`")
        return
    rep.add(".gitattributes", "ok" if attributes_configured(ctx) else "fail",
            "" if attributes_configured(ctx) else "missing the merge=memex line; run `git memex init`")
    rep.add("merge driver", "ok" if merge_driver_configured(ctx) else "fail",
            "" if merge_driver_configured(ctx) else "not registered in this clone's git config; run `git memex init`")
    missing = [name for name, ok in hook_status(ctx.repo.work_tree).items() if not ok]
    if missing and len(missing) == len(hook_status(ctx.repo.work_tree)) and (
            ctx.config.get("memex.hooks") or "").lower() == "false":
        rep.add("git hooks", "ok", "not installed, as `init --no-hooks` chose: commits are not checked for "
                "secrets (`git memex scan --staged` does it by hand) and pulls refresh the index on the next "
                "command; `git memex init` installs them")
    elif missing:
        pre_commit_framework = (ctx.repo.work_tree / ".pre-commit-config.yaml").exists()
        level = "warn" if missing == ["pre-commit"] and pre_commit_framework else "fail"
        taken = hooks_path_taken_back(ctx.repo.work_tree)
        why = (f" (core.hooksPath was set to {taken} after init, as husky's install does; init chains it "
               "again)") if taken else ""
        foreign = None if taken else foreign_hooks_folder(ctx.repo.work_tree)
        if foreign:
            why = (f" (core.hooksPath still names {foreign}, " + (
                "which is gone: this clone was moved, and git runs none of its hooks" if not Path(foreign).is_dir()
                else "another clone's folder: this clone was copied or moved") + ")")
        rep.add("git hooks", level, f"not installed: {', '.join(missing)}{why}; run `git memex init`")
    else:
        rep.add("git hooks", "ok")
    if not (missing and len(missing) == len(HOOK_NAMES) and (ctx.config.get("memex.hooks") or "").lower() == "false"):
        from git_memex.git.reach import bypasses, hooks_folder

        folder = hooks_folder(ctx)
        for why in bypasses(ctx.repo.work_tree, folder) if folder is not None else []:
            rep.add("git hooks", "warn", f"the secret scan is switched off: {why}")
    if attributes_flat_only(ctx) and any(p.parent != ctx.memory_dir for p in ctx.memory_dir.rglob("*.md")):
        rep.add(".gitattributes", "warn", f"the merge=memex line covers only the files directly in "
                f"{ctx.memory_dir_rel}/, not those in its subfolders; run `git memex init`")
    problems = 0
    for path in sorted(ctx.memory_dir.rglob("*.md")):
        try:
            text = read_bytes(path, root=ctx.repo.work_tree).decode("utf-8")
        except (UnreadableMemory, UnicodeDecodeError):
            continue  # a FIFO, link or oversized file: the index reports it, with the reason
        rel = str(path.relative_to(ctx.repo.work_tree))
        nested = not in_memory_dir(path.relative_to(ctx.repo.work_tree).as_posix(), ctx.memory_dir_rel)  # a file the index does not read: not reported yet
        if conflict_marker_line(text) is not None and not nested:
            continue  # already reported as unreadable, with the line and `git memex resolve`
        try:
            frontmatter.parse(text)
        except frontmatter.FrontmatterError:
            if not nested:
                continue  # already reported as unreadable
        advised = False
        for f in check_text(rel, text, patterns=ctx.redact_patterns):
            problems += 1
            if f.secret and not advised:  # once per file: what removes it, history included
                from git_memex.upkeep.audit import secret_fix

                advised = True
                rep.add("memory file", "fail", f"{f}; {secret_fix(ctx, rel)[1]}")
            else:
                rep.add("memory file", "fail", str(f))
    if not problems:
        rep.add("memory files in the repository", "ok", "no secrets, no personal or private memories")


def _check_default_branch(ctx: Context, rep: Report) -> None:
    """The branch the instruction gate serves from and pr-status follows (`gate.branch_check`)."""
    if ctx.memory_dir is None or not ctx.memory_dir.is_dir():
        return  # not set up: `_check_repo` says so
    from git_memex.agents.gate import branch_check

    rep.add("default branch", *branch_check(ctx))


def _runnable(command: str) -> bool:
    """Whether `command` (a path, or a bare name looked up on PATH) can be executed: it exists,
    is executable, and a `#!` script's interpreter does too (a moved or upgraded venv leaves
    scripts whose interpreter is gone)."""
    import os
    import shutil

    path = command if os.sep in command else shutil.which(command)
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return False
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return True
    words = first[2:].decode("utf-8", "replace").split()
    return bool(words) and os.path.isfile(words[0]) and os.access(words[0], os.X_OK)


def _command_state(command: str | None) -> tuple[str, str]:
    """(level, why) for a command a hook or the driver runs, with `git-memex` on PATH as fallback."""
    import shutil

    if command is not None and _runnable(command):
        return "ok", ""
    on_path = shutil.which("git-memex") is not None and _runnable("git-memex")
    gone = f"{command} cannot be run" if command else "no absolute command is recorded"
    if on_path:
        return "warn", f"{gone}; git-memex on PATH is used instead, which only works where PATH has it"
    return "fail", f"{gone} and no git-memex is on PATH"


def _check_driver_command(ctx: Context, rep: Report) -> None:
    """The registered merge driver can really be run by git, whatever PATH git is started with."""
    import shlex

    from git_memex.git.hook import registered_command
    from git_memex.git.init import _git_config

    assert ctx.repo is not None
    value = _git_config(ctx.repo.work_tree, "--get", "merge.memex.driver").stdout.strip()
    if not value or "merge-driver" not in value:
        return  # not registered: _check_repo says so
    command = registered_command(value)
    if command is None:  # written by an older git-memex: `CMD merge-driver %O %A %B %P`
        try:
            first = shlex.split(value)[0]
        except (ValueError, IndexError):
            first = ""
        if _runnable(first):
            level, why = "warn", ("registered by bare name, so only git started with git-memex on PATH can run it"
                                  if "/" not in first else "registered without a fallback")
        else:
            level, why = "fail", f"{first or 'the registered command'} cannot be run"
        rep.add("merge driver command", level, f"{why}; when git cannot run the driver it keeps our side "
                "without conflict markers; run `git memex init` to register it by absolute path with fallbacks")
        return
    command = command.replace("%%", "%")  # as git expands it
    level, why = _command_state(command)
    if level == "ok":
        rep.add("merge driver command", "ok", command)
    else:
        rep.add("merge driver command", level, f"{why}: memory files would be merged as plain text with "
                "conflict markers; run `git memex init` (with git-memex installed) to register it again")


def _check_hook_commands(ctx: Context, rep: Report) -> None:
    """Each installed shim's command can be run (a dangling shim refuses memory-file commits)."""
    import re

    from git_memex.errors import MemexError
    from git_memex.git.hook import HOOK_NAMES, hooks_dir, is_ours, registered_command

    assert ctx.repo is not None
    try:
        folder = hooks_dir(ctx.repo.work_tree)
    except MemexError:
        return
    states: dict[tuple[str, str], list[str]] = {}
    for name in HOOK_NAMES:
        path = folder / name
        if not is_ours(path):
            continue  # not installed: _check_repo says so
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        command = registered_command(text)
        if command is None:  # an older shim: `command -v CMD` then `exec CMD hook NAME`
            m = re.search(r"command -v ('[^']*'|\S+)", text)
            old = m.group(1).strip("'") if m else None
            level = "fail" if old is None or not _runnable(old) else "warn"
            why = ("written by an older git-memex, which refuses every commit once the tool moves"
                   + ("" if level == "warn" else f", and {old} cannot be run"))
            states.setdefault((level, why), []).append(name)
            continue
        level, why = _command_state(command)
        if level == "fail":
            why = f"dangling: {why}, so commits that stage memory files are refused"
        states.setdefault((level, why), []).append(name)
    for (level, why), names in sorted(states.items()):
        if level == "ok":
            rep.add("hook commands", "ok", ", ".join(names))
        else:
            rep.add("hook commands", level, f"{', '.join(names)}: {why}; run `git memex init`")
def _check_submit_journal(ctx: Context, rep: Report) -> None:
    """A submit journal left behind (an interrupted submit) and plans set aside as `.failed`."""
    import json

    from git_memex.core.files import read_private
    from git_memex.git import pygit
    from git_memex.review.submit_replay import journal_path as _journal_path
    from git_memex.review.submit_replay import plan_problem

    assert ctx.repo is not None
    journal = _journal_path(ctx)
    if journal.exists():
        try:
            why = plan_problem(ctx, pygit.open_repo(ctx.repo.work_tree), json.loads(read_private(ctx.data_root, journal).decode("utf-8")))
        except (OSError, UnicodeDecodeError, ValueError):
            why = "it is not readable JSON"
        if why:
            rep.add("submit journal", "warn", f"{journal} holds a plan that cannot be completed ({why}); "
                    "the next `git memex submit` sets it aside")
        else:
            rep.add("submit journal", "warn", f"an interrupted submit left {journal}; rerun "
                    "`git memex submit ID` to finish it")
    failed = sorted(journal.parent.glob(journal.name + "*.failed")) if journal.parent.is_dir() else []
    for f in failed:
        rep.add("submit journal", "warn", f"{f} is a submit plan that was set aside; read it, then delete it")
    if not journal.exists() and not failed:
        rep.add("submit journal", "ok", "no interrupted submit")


# ------------------------------------------------------------------ org memory repos (docs/org.md)
def _clone_git(clone: Path, *args: str) -> tuple[int, str]:
    from git_memex.core.gitcmd import git_text

    r = git_text(list(args), clone, timeout=60)
    return (-1, "") if r is None else (r.returncode, r.stdout.strip())


def _check_orgs(ctx: Context, rep: Report) -> None:
    """Each subscription's clone, origin, upstream and index, and the committed file's entries:
    one line each, with the command that fixes it. Reads only what is on this machine (no fetch)."""
    import shlex

    from git_memex.core.settings import DEFAULT_MEMORY_DIR
    from git_memex.git.orgfile import same_url
    from git_memex.index.stores import org_folders

    q = shlex.quote
    for name in ctx.org_names():
        url = ctx.config.get(f"memex.org.{name}.url") or ""
        clone = ctx.org_clone(name)
        where = f"org {name}"
        if not org_folders(clone):
            gone = "is missing (deleted by hand?)" if not clone.exists() else f"has no {DEFAULT_MEMORY_DIR}/ folder"
            rep.add(where, "fail", f"the clone {clone} {gone}, so its memories are left out; run "
                    f"`git memex org remove {name} && git memex org add {name} {q(url)}`")
            continue
        git_c = f"git -C {q(str(clone))}"
        code, origin = _clone_git(clone, "config", "--get", "remote.origin.url")
        if code != 0 or not same_url(origin, url):
            rep.add(where, "fail", f"the clone's origin is {origin or 'not set'} but the subscription is to {url}; "
                    f"run `{git_c} remote set-url origin {q(url)} && git memex org pull {name}`")
            continue
        problems = len(rep.checks)
        moved = _check_org_upstream(ctx, name, clone, git_c, rep)
        code, dirty = _clone_git(clone, "status", "--porcelain", "--untracked-files=no")
        if code == 0 and dirty:
            rep.add(where, "warn", f"the clone has changes of its own ({len(dirty.splitlines())} file(s)), which a "
                    f"search may not see and `org pull` may refuse; `{git_c} reset --hard` drops them (change org "
                    "memories in the org repository)")
        if not moved:  # a clone moved by hand: its index is stale as a consequence, said above
            _check_org_index(ctx, name, rep)
        if len(rep.checks) == problems:
            rep.add(where, "ok", f"{clone} follows {url}")
    _check_org_file(ctx, rep)


def _check_org_upstream(ctx: Context, name: str, clone: Path, git_c: str, rep: Report) -> bool:
    """Reports a clone `org pull` cannot fast-forward; whether it did."""
    where = f"org {name}"
    branch = ctx.config.get(f"memex.org.{name}.branch")
    if not branch:
        code, out = _clone_git(clone, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
        branch = out.removeprefix("origin/") if code == 0 and out else "main"
    code, on = _clone_git(clone, "symbolic-ref", "--quiet", "--short", "HEAD")
    if code != 0:
        rep.add(where, "fail", f"the clone's HEAD is detached, so `org pull` cannot fast-forward it; run "
                f"`{git_c} checkout {branch}`")
        return True
    if on != branch:  # e.g. a proposal branch checked out by hand: moving it would lose that work
        rep.add(where, "fail", f"the clone is on branch {on}, not on {branch}, the branch the subscription follows, "
                f"so its memories are not the org's; run `{git_c} checkout {branch}` (branch {on} is kept)")
        return True
    code, upstream = _clone_git(clone, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    if code != 0 or not upstream:
        rep.add(where, "fail", f"the clone's branch has no upstream, so `org pull` refuses it; run "
                f"`{git_c} branch --set-upstream-to origin/{branch}`")
        return True
    code, counts = _clone_git(clone, "rev-list", "--left-right", "--count", "HEAD...@{upstream}")
    parts = counts.split()
    if code != 0 or len(parts) != 2:
        rep.add(where, "fail", f"the clone's upstream {upstream} cannot be read (fetched by hand, then pruned?); "
                f"run `{git_c} fetch origin && git memex org pull {name}`")
        return True
    ahead, behind = int(parts[0]), int(parts[1])
    if ahead:
        state = f"has diverged from {upstream}" if behind else f"has {ahead} commit(s) that {upstream} lacks"
        rep.add(where, "fail", f"the clone {state}, so `org pull` refuses it; `{git_c} reset --hard {upstream}` "
                f"drops its own commits (propose org changes in the org repository), then "
                f"`git memex org pull {name}`")
        return True
    if behind:
        rep.add(where, "warn", f"the clone is {behind} commit(s) behind {upstream}, fetched but not applied; "
                f"run `git memex org pull {name}`")
    return False


def _check_org_index(ctx: Context, name: str, rep: Report) -> None:
    """Stale (built from another commit than the clone's HEAD) or unreadable, read without opening
    it for writing: `Stores` would rebuild or refresh it before anything could be said."""
    import sqlite3

    from git_memex.index.stores import ORG_COMMIT, org_head

    where = f"org {name}"
    path = ctx.org_index(name)
    if not path.exists():
        rep.add(where, "warn", f"its index {path} is missing; run `git memex reindex` (the next search builds it)")
        return
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (ORG_COMMIT,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        rep.add(where, "fail", f"its index {path} is unreadable ({exc}); run `git memex reindex`, which "
                "rebuilds it from the clone")
        return
    built, head = (row[0] if row else None), org_head(ctx.org_clone(name))
    if head is not None and built != head:
        was = f"built from {built[:12]}" if built else "not built from any commit yet"
        rep.add(where, "warn", f"its index is stale ({was}, the clone is at {head[:12]}); run "
                "`git memex reindex` (doctor has refreshed it)")


def _check_org_file(ctx: Context, rep: Report) -> None:
    """The committed file naming the project's org repos: entries not subscribed here, subscribed
    to another URL, or unusable."""
    if ctx.repo is None:
        return
    from git_memex.git import orgfile

    named, problems = orgfile.read(ctx)
    for why in problems:
        rep.add("org file", "warn", why)
    where = orgfile.rel_path(ctx)
    for n in named:
        if n.state == "not-subscribed":
            rep.add("org file", "warn", f"{where} names org {n.name}, which this clone is not subscribed to; run "
                    f"`{n.command}` (or `git memex init --subscribe`)")
        elif n.state == "other-url":
            rep.add("org file", "warn", f"{where} names org {n.name} at {n.url}, but this clone subscribes to it "
                    f"at {n.subscribed_url}; if the file is right, run `git memex org remove {n.name} && {n.command}`")


def _check_org_files(st: Stores, rep: Report) -> None:
    """Org memory files the index could not read (conflict markers, bad frontmatter) and org memory
    bodies that hold a secret (masked wherever they are shown, never fixed from here)."""
    from git_memex.secrets.guard import safe_bodies

    for name, index in st.orgs:
        for path, why in index.quarantined():
            rep.add("unreadable file", "fail", f"org {name}: {path}: {why}; fix it in the org repository, "
                    f"then `git memex org pull {name}`")
        rows = st.rows(columns="m.id, m.path, m.body", index=index)
        safe = safe_bodies(st, [(r["id"], r["body"]) for r in rows])
        for r in rows:
            if safe[r["id"]] != (r["body"] or ""):
                rep.add("org memory", "fail", f"org {name}: {r['path']} holds a secret or a <private> part (masked "
                        "wherever it is shown); remove it in the org repository and rotate the secret, then "
                        f"`git memex org pull {name}`")

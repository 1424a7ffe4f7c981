"""Hook managers joined through their own committed configuration (docs/git.md, "Hook managers").

A hook manager owns the folder git runs hooks from and rewrites it whenever it likes: husky v9
sets `core.hooksPath=DIR/_` again on every `npm install`, `lefthook install` renames a hook it
did not write to `NAME.old`. A shim of ours in that folder is therefore lost sooner or later. So
`git memex init` joins the manager the way its users add a check, in the file the team commits,
which travels with the repository to every clone and survives every reinstall:

=================  ==============================  ==================================================
manager            file (committed)                what init adds, between its two marker lines
=================  ==============================  ==================================================
husky v9           `DIR/<hook>` (DIR: `.husky`,    one line, `sh -c '<program>' git-memex "$@"`, at
                   or `husky DIR` in `prepare`)    the top of each of the five hooks' files
lefthook           `lefthook.yml` (or `.yaml`,     a `git-memex` command under `<hook>: commands:`
                   `.lefthook.yml`, `.config/…`)   for each of the five hooks
pre-commit         `.pre-commit-config.yaml`       a `repo: local` entry with hook `memex-secrets`,
framework (and                                     and `pre-commit`, `pre-merge-commit` in
prek)                                              `default_install_hook_types`
=================  ==============================  ==================================================

The five hooks are `hook.HOOK_NAMES`; the pre-commit framework runs only the two blocking ones (its
post-* hook types need `pre-commit install -t TYPE` in every clone), so the post-* shims stay in
`.git/hooks` there. Every addition sits between `BEGIN` and `END` comment lines: `--uninstall`
removes exactly those lines and puts back a line a block replaced (`reach.WAS`); a file init
created goes when nothing else was added to it (`reach.CREATED_LINE`), so each file is byte for
byte what it was. A YAML file is edited as text in its own layout and line ending; the result is
parsed again (PyYAML, duplicate keys refused as lefthook's parser refuses them): it must equal
the old document plus our entry, or nothing is written and the snippet is printed instead (a
flow-style mapping, a layout we cannot follow). Neither is a file that is a symbolic link (its
target may be shared; the link would become a copy), nor one whose marker lines are broken.

The committed line names no path of any machine (`reach.program`): it runs `git config
memex.command` (the absolute command `init` recorded in this clone, machine-local), else
`git-memex` on PATH. Where neither exists (a teammate's clone without git-memex), a blocking hook
refuses a commit that stages a memory file the person changed, in one sentence saying how to
install git-memex, and lets the rest through (memory files a merge brings in: with one warning
line): a secret never passes silently, and a teammate who never touches memory files is never
stopped. A post-* hook then does nothing.

Whether the hook git will run reaches our check is `reach.reached`, cheap enough for every
command (`reach.scan_notice`, the session block, `doctor`).
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memex.core.record import field, record
from git_memex.git import blockedit, managerfiles
from git_memex.git.reach import (
    BLOCKING,
    FRAMEWORK_FILE,
    FRAMEWORK_ID,
    FRAMEWORK_TYPES,
    HOOKS,
    HUSKY_DIR,
    LEFTHOOK_FILES,
    MISSING_SENTENCE,
    hook_level_settings,
    husky_dir,
    husky_line,
    is_framework_hook,
    is_lefthook_hook,
    lefthook_config,
    parse_blocks,
    read_head,
    read_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["MISSING_SENTENCE", "Change", "Joined", "detect", "join", "leave"]


# ------------------------------------------------------------------ reports
@record
class Change:
    """One file a manager's join (or leave) changes: `action` is created, updated, unchanged,
    removed, printed (left alone: `snippet` says what to add by hand), kept, or error (a file
    init cannot write at all, such as a folder where the hook file goes: init stops before it
    changes anything)."""

    manager: str
    path: Path
    action: str
    detail: str = ""
    snippet: str = ""


@record
class Joined:
    """What `join` did, and which hooks a manager now runs for us in the folder git uses."""

    changes: list[Change] = field(default_factory=list)
    managed: set[str] = field(default_factory=set)
    managers: list[str] = field(default_factory=list)
    hooks_path_owner: str | None = None  # "husky" when husky's folder is (or should be) core.hooksPath
    husky: Path | None = None  # husky's folder (`.husky`, or the one its prepare script names)
    managed_by: str = "the hook manager"
    warnings: list[str] = field(default_factory=list)


def unwritable(manager: str, path: Path, stop: Path) -> Change | None:
    """An `error` Change when `path` cannot be a file init writes: a folder, a FIFO, a file where
    one of its folders below `stop` goes. None when it can (missing, a regular file, a link)."""
    s = blockedit.state(path)
    if s == "folder":
        return Change(manager, path, "error", f"{path} is a folder where {manager}'s hook file goes; move it away")
    if s == "other":
        return Change(manager, path, "error", f"{path} is not a regular file; move it away")
    problem = blockedit.parent_problem(path, stop)
    if problem:
        return Change(manager, path, "error", problem)
    return None


# ------------------------------------------------------------------ detection
def husky_used(work_tree: Path, hooks_path: str | None) -> Path | None:
    """husky v9's folder in this repository, or None (`reach.husky_dir`)."""
    return husky_dir(work_tree, hooks_path)


def lefthook_used(work_tree: Path, hooks_folder: Path) -> bool:
    return lefthook_config(work_tree) is not None or is_lefthook_hook(read_head(hooks_folder / "pre-commit"))


def framework_used(work_tree: Path) -> bool:
    return os.path.lexists(work_tree / FRAMEWORK_FILE)


# ------------------------------------------------------------------ join
def _husky_join(work_tree: Path, folder: Path, hook: str, apply: bool) -> Change:
    path = folder / hook
    bad = unwritable("husky", path, work_tree)
    if bad is not None:
        return bad
    if blockedit.state(path) == "link":
        return Change("husky", path, "printed", "a symbolic link: init never replaces a link with a copy; add the "
                      "line to the file it points to yourself", _husky_snippet(folder, work_tree, hook))
    text = read_text(path)
    if text is None and blockedit.state(path) == "missing":
        if apply:
            blockedit.write(path, "".join(blockedit.block("", [husky_line(hook) + "\n"], created=True)))
        return Change("husky", path, "created")
    if text is None:
        return Change("husky", path, "printed", "not UTF-8 text", _husky_snippet(folder, work_tree, hook))
    found, problem = parse_blocks(text)
    if problem is not None:
        return Change("husky", path, "printed", f"its git-memex marker lines are broken ({problem}): fix or remove "
                      "them and rerun `git memex init`", _husky_snippet(folder, work_tree, hook))
    for b in found:
        inner = "".join(x + "\n" for x in b.inner)
        if inner == husky_line(hook) + "\n" and b.was is None and len(found) == 1:
            return Change("husky", path, "unchanged")
    base, created = blockedit.strip_blocks(text)
    lines = base.splitlines(keepends=True)
    at = 1 if lines and lines[0].startswith("#!") else 0
    block = blockedit.block("", [husky_line(hook) + "\n"], created=created)
    new = blockedit.insert(base, at, block) if base else "".join(block)
    if new == text:
        return Change("husky", path, "unchanged")
    if apply:
        blockedit.write(path, new)
    return Change("husky", path, "updated")


def _husky_snippet(folder: Path, work_tree: Path, hook: str | None = None) -> str:
    rel = _rel(work_tree, folder)
    return "\n".join(f"{rel}/{h}:\n  " + husky_line(h) for h in HOOKS if hook is None or h == hook)


def _rel(work_tree: Path, path: Path) -> str:
    try:
        return path.relative_to(work_tree).as_posix()
    except ValueError:
        return str(path)


def _yaml_join(manager: str, path: Path, work_tree: Path, add: Callable[[str, Any], str | None],
               expected: Callable[[Any], Any], snippet: str, apply: bool) -> Change:
    bad = unwritable(manager, path, work_tree)
    if bad is not None:
        return bad
    if blockedit.state(path) == "link":
        return Change(manager, path, "printed", "a symbolic link: init never replaces a link with a copy; add this "
                      "to the file it points to yourself", snippet)
    text = read_text(path)
    existed = text is not None
    if not existed and blockedit.state(path) != "missing":
        return Change(manager, path, "printed", "not UTF-8 text", snippet)
    text = text or ""
    found, problem = parse_blocks(text)
    if problem is not None:
        return Change(manager, path, "printed", f"its git-memex marker lines are broken ({problem}): fix or remove "
                      "them and rerun `git memex init`", snippet)
    try:
        doc = blockedit.strict_yaml(text)
    except Exception as exc:  # noqa: BLE001 - any YAML error: the file is theirs to fix; we print
        return Change(manager, path, "printed", f"not YAML we can read: {blockedit.first_line(exc)}", snippet)
    if text and doc is not None and not isinstance(doc, dict):
        return Change(manager, path, "printed", "not a YAML mapping", snippet)
    base, _created = blockedit.strip_blocks(text)
    try:
        base_doc = blockedit.strict_yaml(base)
    except Exception:  # noqa: BLE001
        return Change(manager, path, "printed", "a layout init cannot edit safely", snippet)
    taken = _taken_name(manager, base_doc)
    if taken:
        return Change(manager, path, "printed", taken, snippet)
    want = expected(base_doc)
    new = add(base, base_doc) if want is not None else None
    ok = False
    if new is not None:
        try:
            ok = blockedit.strict_yaml(new) == want
        except Exception:  # noqa: BLE001 - e.g. a key given twice: never written
            ok = False
    if not ok or new is None:
        return Change(manager, path, "printed", "a layout init cannot edit safely", snippet)
    if not existed:
        new = blockedit.mark_created(new)
    if new == text:
        return Change(manager, path, "unchanged")
    if apply:
        blockedit.write(path, new)
    return Change(manager, path, "updated" if existed else "created")


def _taken_name(manager: str, doc: Any) -> str | None:
    """Why our entry's name is not ours to use in `doc`: lefthook, a command of theirs already
    called `git-memex` (outside our blocks)."""
    if manager != "lefthook" or not isinstance(doc, dict):
        return None
    for hook in HOOKS:
        section = doc.get(hook)
        commands = section.get("commands") if isinstance(section, dict) else None
        if isinstance(commands, dict) and "git-memex" in commands:
            return (f"its {hook} already has a command named git-memex that init did not write; rename yours, "
                    "or add ours under another name")
    return None


def _lefthook_join(work_tree: Path, apply: bool) -> list[Change]:
    config = lefthook_config(work_tree)
    snippet = lefthook_snippet()
    if config is not None and config.name.rsplit(".", 1)[-1] not in ("yml", "yaml"):
        return [Change("lefthook", config, "printed", "not YAML", snippet)]
    path = config or work_tree / "lefthook.yml"

    def add(text: str, _doc: Any) -> str | None:
        for hook in HOOKS:
            out = managerfiles.lefthook_add(text, hook)
            if out is None:
                return None
            text = out
        return text

    def expected(doc: Any) -> Any:
        for hook in HOOKS:
            doc = managerfiles.lefthook_expected(doc, hook)
            if doc is None:
                return None
        return doc

    return [_yaml_join("lefthook", path, work_tree, add, expected, snippet, apply)]


def _framework_join(work_tree: Path, apply: bool) -> list[Change]:
    path = work_tree / FRAMEWORK_FILE
    if blockedit.state(path) == "file":
        text = read_text(path) or ""
        try:
            theirs = managerfiles.hand_entry(blockedit.strict_yaml(blockedit.strip_blocks(text)[0])) if parse_blocks(text)[1] is None else False
        except Exception:  # noqa: BLE001 - _yaml_join says what is wrong with it
            theirs = False
        if theirs:  # the person's own hook runs our check (init's older snippet, pasted by hand)
            return [Change("pre-commit", path, "unchanged", f"your {FRAMEWORK_ID} hook runs the check")]

    def add(text: str, doc: Any) -> str | None:  # the hook types first: they go before `repos:` when it is there
        out = managerfiles.types_add(text, doc)
        return managerfiles.framework_repo_add(out, managerfiles.entry_stages(doc)) if out is not None else None

    def expected(doc: Any) -> Any:
        import copy

        new = copy.deepcopy(doc) if isinstance(doc, dict) else {}
        repos = new.get("repos")
        repos = [] if repos is None else repos
        if not isinstance(repos, list):
            return None
        new["repos"] = [*repos, managerfiles.framework_dict(managerfiles.entry_stages(doc))]
        types = new.get(FRAMEWORK_TYPES)
        if types is None:
            new[FRAMEWORK_TYPES] = list(managerfiles.NEW_STAGES)
        elif isinstance(types, list):
            new[FRAMEWORK_TYPES] = [*types, *(t for t in managerfiles.NEW_STAGES if t not in types)]
        else:
            return None
        return new

    return [_yaml_join("pre-commit", path, work_tree, add, expected, framework_snippet(), apply)]


def lefthook_snippet() -> str:
    body: list[str] = []
    for hook in HOOKS:
        body += [f"{hook}:\n", "  commands:\n", *managerfiles.lefthook_command(hook, "    ", "  ")]
    return "".join(blockedit.block("", body)).rstrip("\n")


def framework_snippet() -> str:
    item = "".join(blockedit.block("  ", managerfiles.framework_item("  ", "  ", None))).rstrip("\n")
    return (f"under repos:\n{item}\nand, at the top level (so that `pre-commit install` installs the merge "
            f"hook too):\n{FRAMEWORK_TYPES}: [{', '.join(managerfiles.NEW_STAGES)}]")


def husky_snippet(work_tree: Path | None = None, folder: Path | None = None) -> str:
    if work_tree is None or folder is None:
        return "\n".join(f"{HUSKY_DIR}/{hook}:\n  " + husky_line(hook) for hook in HOOKS)
    return _husky_snippet(folder, work_tree)


def detect(work_tree: Path, hooks_folder: Path, hooks_path: str | None) -> list[str]:
    """The managers this repository uses, in the order init joins them."""
    found = []
    if husky_used(work_tree, hooks_path) is not None:
        found.append("husky")
    if lefthook_used(work_tree, hooks_folder):
        found.append("lefthook")
    if framework_used(work_tree):
        found.append("pre-commit")
    return found


def join(work_tree: Path, hooks_folder: Path, hooks_path: str | None, *,
         ask: Callable[[str, Path], bool] | None = None, apply: bool = True) -> Joined:
    """Add our entry to each manager's committed file (`ask(manager, file)` may decline one: its
    snippet is printed instead). `managed`: the hooks a joined manager runs for us in the folder
    git uses now; a hook it has not installed yet keeps our shim meanwhile (lefthook installs the
    ones its file names on its next run, the pre-commit framework on `pre-commit install`).
    With apply=False nothing is written (and nobody is asked): what would change, and any `error`."""
    out = Joined()
    husky = husky_used(work_tree, hooks_path)
    out.husky = husky
    for manager in detect(work_tree, hooks_folder, hooks_path):
        out.managers.append(manager)
        where = {"husky": husky or work_tree / HUSKY_DIR,
                 "lefthook": lefthook_config(work_tree) or work_tree / "lefthook.yml",
                 "pre-commit": work_tree / FRAMEWORK_FILE}[manager]
        if apply and ask is not None and not ask(manager, where):
            snippet = {"husky": husky_snippet(work_tree, where), "lefthook": lefthook_snippet(),
                       "pre-commit": framework_snippet()}[manager]
            out.changes.append(Change(manager, where, "printed", "you declined", snippet))
            continue
        if manager == "husky":
            assert husky is not None
            if husky.is_dir() or blockedit.state(husky) == "missing":
                changes = [_husky_join(work_tree, husky, hook, apply) for hook in HOOKS]
            else:
                changes = [Change("husky", husky, "error", f"{husky} is not a folder, and husky's hooks go in it")]
        elif manager == "lefthook":
            changes = _lefthook_join(work_tree, apply)
        else:
            changes = _framework_join(work_tree, apply)
        out.changes.extend(changes)
        if manager == "lefthook":
            config = lefthook_config(work_tree) or work_tree / "lefthook.yml"
            for hook in BLOCKING:
                for s in hook_level_settings(read_text(config) or "", hook):
                    out.warnings.append(
                        f"{_rel(work_tree, config)} sets `{s}` on {hook} at hook level: lefthook then runs none of "
                        f"that hook's commands, git-memex's secret scan included (`skip: merge` on pre-commit: a "
                        f"conflicted merge concluded with `git commit` goes unchecked). Move the setting onto the "
                        f"commands that need it; `git memex doctor` warns while it is there.")
        if any(c.action in ("printed", "error") for c in changes):
            continue
        installed = {h: read_head(hooks_folder / h) for h in HOOKS}
        if manager == "husky":
            out.hooks_path_owner = "husky"
        elif manager == "lefthook":
            theirs = {h for h, t in installed.items() if is_lefthook_hook(t)}
            if theirs:
                out.managed.update(theirs)
                out.managed_by = "lefthook"
        elif manager == "pre-commit":
            theirs = {h for h in BLOCKING if is_framework_hook(installed[h])}
            if theirs:
                out.managed.update(theirs)
                out.managed_by = "the pre-commit framework"
    return out


# ------------------------------------------------------------------ leave
def leave(work_tree: Path, hooks_path: str | None = None, *, apply: bool = True) -> list[Change]:
    """Take our blocks out of every manager's file, each line a block replaced put back (a file
    init created, that held nothing else, goes). A file whose marker lines are broken is left
    alone and named; nothing is claimed that was not done."""
    out: list[Change] = []
    folders = [work_tree / HUSKY_DIR]
    found = husky_dir(work_tree, hooks_path)
    if found is not None and found not in folders:
        folders.insert(0, found)
    paths = [("husky", folder / hook) for folder in folders for hook in HOOKS]
    paths += [("lefthook", work_tree / rel) for rel in LEFTHOOK_FILES]
    paths.append(("pre-commit", work_tree / FRAMEWORK_FILE))
    for manager, path in paths:
        state = blockedit.state(path)
        if state != "file":
            continue  # a link init never wrote through, a folder: nothing of ours
        text = read_text(path)
        if text is None:
            continue
        found_blocks, problem = parse_blocks(text)
        if problem is not None:
            out.append(Change(manager, path, "kept", f"its git-memex marker lines are broken ({problem}); remove "
                              "git-memex's lines yourself"))
            continue
        if not found_blocks:
            if manager == "pre-commit" and FRAMEWORK_ID in text:
                try:
                    pasted = managerfiles.hand_entry(blockedit.strict_yaml(text))
                except Exception:  # noqa: BLE001
                    pasted = False
                if pasted:  # the older snippet, pasted by hand
                    out.append(Change(manager, path, "kept", f"you pasted it; remove the {FRAMEWORK_ID} and "
                                      "memex-validate hooks yourself"))
            continue
        rest, created = blockedit.strip_blocks(text)
        gone = created and not rest
        if rest == text:
            continue
        if apply:
            if gone:
                path.unlink()
                if manager == "husky":
                    _rmdir_if_empty(path.parent, work_tree)
            else:
                blockedit.write(path, rest)
        out.append(Change(manager, path, "removed" if gone else "updated", "git-memex's entry"))
    return out


def _rmdir_if_empty(folder: Path, stop: Path) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        if folder != stop and not any(folder.iterdir()):
            folder.rmdir()

"""Hook managers joined through their own committed configuration (docs/git.md, "Hook managers").

A hook manager owns the folder git runs hooks from and rewrites it whenever it likes: husky v9
sets `core.hooksPath=.husky/_` again on every `npm install`, `lefthook install` renames a hook it
did not write to `NAME.old`. A shim of ours in that folder is therefore lost sooner or later. So
`git memex init` joins the manager the way its users add a check, in the file the team commits,
which travels with the repository to every clone and survives every reinstall:

=================  ==============================  ==================================================
manager            file (committed)                what init adds, between its two marker lines
=================  ==============================  ==================================================
husky v9           `.husky/<hook>`                 one line, `sh -c '<program>' git-memex "$@"`, at
                                                   the top of each of the five hooks' files
lefthook           `lefthook.yml` (or `.yaml`,     a `git-memex` command under `<hook>: commands:`
                   `.lefthook.yml`, `.config/…`)   for each of the five hooks
pre-commit         `.pre-commit-config.yaml`       a `repo: local` entry with hook `memex-secrets`,
framework                                          stages pre-commit and pre-merge-commit
=================  ==============================  ==================================================

The five hooks are `hook.HOOK_NAMES`; the pre-commit framework runs only the two blocking ones (its
post-* hook types need `pre-commit install -t TYPE` in every clone), so the post-* shims stay in
`.git/hooks` there. Every addition sits between `BEGIN` and `END` comment lines: `--uninstall`
removes exactly those lines (a file init created and nothing else was added to goes), so the
file is byte for byte what it was. A YAML file is edited as text and the result is parsed again
(PyYAML): it must equal the old document plus our entry, or nothing is written and the snippet
is printed instead (a flow-style mapping, a layout we cannot follow).

The committed line names no path of any machine: `program` runs `git config memex.command` (the
absolute command `init` recorded in this clone, machine-local), else `git-memex` on PATH. Where
neither exists (a teammate's clone without git-memex), a blocking hook lets a commit through only
when it stages no memory file, and otherwise refuses it in one sentence saying how to install
git-memex: a secret never passes silently. A post-* hook then does nothing.

Whether the hook git will run reaches our check is `reach.reached`, cheap enough for every
command (`reach.scan_notice`, the session block, `doctor`).
"""

from __future__ import annotations

import re
from pathlib import Path

from git_memex.core.record import field, record
from git_memex.git.reach import (
    BEGIN,
    BEGIN_LINE,
    BLOCKING,
    END,
    FRAMEWORK_FILE,
    FRAMEWORK_ID,
    HOOKS,
    HUSKY_DIR,
    LEFTHOOK_FILES,
    SHIM_MARKER,
    blocks,
    is_framework_hook,
    is_lefthook_hook,
    lefthook_config,
    read_head,
    read_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MISSING_SENTENCE = ("git-memex is not installed in this clone, so the staged memory files cannot be checked "
                    "for secrets and the commit is refused; install git-memex (its README, Set up) and run "
                    "\\`git memex init\\` here, or commit with --no-verify")

# sh, run as `sh -c PROGRAM git-memex ARGS...`: the command this clone's init recorded, else
# git-memex on PATH; neither: a blocking hook refuses a commit that stages a memory file (the
# folder from this clone's config, else the committed .gitmemex, else the default).
_FIND = ('c=$(git config memex.command) && (eval "set -- $c" && [ -x "$1" ]) || c=git-memex; '
         'if [ "$c" != git-memex ] || command -v git-memex >/dev/null 2>&1; then ')


def program(hook: str) -> str:
    """The one-line sh program every manager runs for `hook` (no single quote in it)."""
    if hook in BLOCKING:
        return (_FIND + f'eval "$c hook {hook}"; exit; fi; '
                'd=$(git config memex.memoryDir || git config -f .gitmemex memex.memoryDir) || d=.ai/open-memex; '
                'git diff --cached --quiet --diff-filter=d -- ":(top,glob)${d%/}/**/*.md" && exit 0; '
                f'echo "{MISSING_SENTENCE}" >&2; exit 1')
    return _FIND + f'eval "$c hook {hook} \\"\\$@\\""; fi; exit 0'


def husky_line(hook: str) -> str:
    return f"sh -c '{program(hook)}' git-memex \"$@\""


def lefthook_run(hook: str) -> str:
    return f"sh -c '{program(hook)}' git-memex {{0}}"


def framework_entry() -> str:
    return f"sh -c '{program('pre-commit')}' git-memex"


# ------------------------------------------------------------------ reports
@record
class Change:
    """One file a manager's join (or leave) changes: `action` is created, updated, unchanged,
    removed, printed (left alone: `snippet` says what to add by hand) or kept."""

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
    managed_by: str = "the hook manager"


# ------------------------------------------------------------------ text blocks
def _strip_blocks(text: str) -> tuple[str, int]:
    """`text` without every BEGIN..END block (marker lines included); when a block ends the file
    without a newline, the newline before it goes too (what `_insert` added). Returns (text, count)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    count = 0
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith(BEGIN):
            j = i
            while j < len(lines) and not lines[j].strip().startswith(END):
                j += 1
            if j == len(lines):  # no end marker: leave it, never guess
                out.extend(lines[i:])
                break
            count += 1
            if not lines[j].endswith("\n") and out and out[-1].endswith("\n"):
                out[-1] = out[-1][:-1]
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    return "".join(out), count


def _block(indent: str, body: list[str]) -> list[str]:
    return [indent + BEGIN_LINE + "\n", *body, indent + END + "\n"]


def _insert(text: str, at: int, block: list[str]) -> str:
    """`block` (whole lines) inserted before line `at` of `text` (at == len: appended)."""
    lines = text.splitlines(keepends=True)
    if at >= len(lines):
        if lines and not lines[-1].endswith("\n"):
            block = [*block]
            block[-1] = block[-1].rstrip("\n")
            return text + "\n" + "".join(block)
        return text + "".join(block)
    return "".join(lines[:at] + block + lines[at:])


def _write(path: Path, text: str) -> None:
    from git_memex.core.files import atomic_write_text

    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text, mode=mode)


# ------------------------------------------------------------------ detection
def husky_used(work_tree: Path, hooks_path: str | None) -> bool:
    """husky v9 in this repository: its `.husky/` folder, and either its `core.hooksPath`
    (`.husky/_`, as `npm install` sets it) or package.json naming husky (a clone before its
    first `npm install`)."""
    if not (work_tree / HUSKY_DIR).is_dir():
        return False
    if hooks_path and hooks_path.rstrip("/") in (f"{HUSKY_DIR}/_", str(work_tree / HUSKY_DIR / "_")):
        return True
    return '"husky"' in (read_text(work_tree / "package.json") or "")


def lefthook_used(work_tree: Path, hooks_folder: Path) -> bool:
    return lefthook_config(work_tree) is not None or is_lefthook_hook(read_head(hooks_folder / "pre-commit"))


def framework_used(work_tree: Path) -> bool:
    return (work_tree / FRAMEWORK_FILE).is_file()


# ------------------------------------------------------------------ YAML helpers
def _yaml(text: str) -> Any:
    import yaml

    return yaml.safe_load(text) if text.strip() else None


def _unit(lines: list[str]) -> int:
    widths = [len(x) - len(x.lstrip(" ")) for x in lines if x.strip() and not x.lstrip().startswith("#")]
    positive = [w for w in widths if w > 0]
    return min(positive) if positive else 2


def _key_line(lines: list[str], key: str, indent: int, start: int = 0, stop: int | None = None) -> int | None:
    pat = re.compile(rf"^ {{{indent}}}{re.escape(key)}:\s*(#.*)?$")
    for i in range(start, len(lines) if stop is None else stop):
        if pat.match(lines[i].rstrip("\r\n")):
            return i
    return None


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The line after the block that begins at `start` (a key at `indent`): the first content
    line at `indent` or less."""
    for i in range(start + 1, len(lines)):
        s = lines[i]
        if s.strip() and not s.lstrip().startswith("#") and len(s) - len(s.lstrip(" ")) <= indent:
            return i
    return len(lines)


def _child_indent(lines: list[str], start: int, stop: int, parent: int) -> int | None:
    for i in range(start + 1, stop):
        s = lines[i]
        if s.strip() and not s.lstrip().startswith("#"):
            w = len(s) - len(s.lstrip(" "))
            return w if w > parent else None
    return None


def _lefthook_command(hook: str, indent: str, unit: str) -> list[str]:
    return [f"{indent}git-memex:\n", f"{indent}{unit}run: |-\n", f"{indent}{unit * 2}{lefthook_run(hook)}\n"]


def _lefthook_add(text: str, hook: str) -> str | None:
    """`text` with our command for `hook` added, or None when the layout cannot be followed."""
    lines = text.splitlines(keepends=True)
    u = _unit(lines)
    unit = " " * u
    top = _key_line(lines, hook, 0)
    if top is None:
        body = [f"{hook}:\n", f"{unit}commands:\n", *_lefthook_command(hook, unit * 2, unit)]
        return _insert(text, len(lines), _block("", body))
    end = _block_end(lines, top, 0)
    ci = _child_indent(lines, top, end, 0) or u
    commands = _key_line(lines, "commands", ci, top + 1, end)
    if commands is None:
        pad = " " * ci
        body = [f"{pad}commands:\n", *_lefthook_command(hook, pad + unit, unit)]
        return _insert(text, top + 1, _block(pad, body))
    cend = _block_end(lines, commands, ci)
    gi = _child_indent(lines, commands, cend, ci) or ci + u
    pad = " " * gi
    return _insert(text, commands + 1, _block(pad, _lefthook_command(hook, pad, unit)))


def _lefthook_expected(doc: Any, hook: str) -> Any:
    import copy

    new = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    section = new.get(hook)
    if not isinstance(section, dict):
        section = {} if section is None else section
    if not isinstance(section, dict):
        return None
    cmds = section.get("commands")
    cmds = {} if cmds is None else cmds
    if not isinstance(cmds, dict):
        return None
    cmds["git-memex"] = {"run": lefthook_run(hook)}
    section["commands"] = cmds
    new[hook] = section
    return new


def _framework_item(indent: str, unit: str) -> list[str]:
    """Our `repos:` item at `indent`; a key after `- ` sits two columns in, whatever the file's unit."""
    k = indent + "  "
    h = k + unit
    i = h + "  "
    return [f"{indent}- repo: local\n", f"{k}hooks:\n", f"{h}- id: {FRAMEWORK_ID}\n",
            f"{i}name: git-memex secret scan of memory files\n", f"{i}entry: |-\n",
            f"{i}{unit}{framework_entry()}\n", f"{i}language: system\n", f"{i}pass_filenames: false\n",
            f"{i}always_run: true\n", f"{i}stages: [pre-commit, pre-merge-commit]\n"]


def _framework_dict() -> dict[str, Any]:
    return {"repo": "local", "hooks": [{"id": FRAMEWORK_ID, "name": "git-memex secret scan of memory files",
                                        "entry": framework_entry(), "language": "system", "pass_filenames": False,
                                        "always_run": True, "stages": ["pre-commit", "pre-merge-commit"]}]}


def _framework_add(text: str) -> str | None:
    """`text` with our entry appended to the `repos:` list (block style only), or None."""
    lines = text.splitlines(keepends=True)
    u = _unit(lines)
    unit = " " * u
    top = _key_line(lines, "repos", 0)
    if top is None:
        if re.search(r"(?m)^repos\s*:", text):
            return None  # `repos: [...]` in flow style: not edited
        return _insert(text, len(lines), _block("", ["repos:\n", *_framework_item(unit, unit)]))
    end, item = top + 1, None
    for i in range(top + 1, len(lines)):
        s = lines[i]
        if not s.strip() or s.lstrip().startswith("#"):
            continue
        w = len(s) - len(s.lstrip(" "))
        if item is None:
            if not s.lstrip().startswith("- ") and s.strip() != "-":
                break  # the next key: an empty list
            item = w
        if w < item or (w == item and not s.lstrip().startswith("-")):
            break
        end = i + 1
    pad = " " * (u if item is None else item)
    return _insert(text, end, _block(pad, _framework_item(pad, unit)))


# ------------------------------------------------------------------ join / leave
def _husky_join(work_tree: Path, hook: str, apply: bool) -> Change:
    path = work_tree / HUSKY_DIR / hook
    ours = _block("", [husky_line(hook) + "\n"])
    text = read_text(path)
    if text is None:
        if apply:
            _write(path, "".join(ours))
        return Change("husky", path, "created")
    found = blocks(text)
    if found == ["".join(ours)]:
        return Change("husky", path, "unchanged")
    base, _ = _strip_blocks(text) if found else (text, 0)
    lines = base.splitlines(keepends=True)
    at = 1 if lines and lines[0].startswith("#!") else 0
    if apply:
        _write(path, _insert(base, at, ours))
    return Change("husky", path, "updated")


def _yaml_join(manager: str, path: Path, add: Callable[[str], str | None],
               expected: Callable[[Any], Any], snippet: str, apply: bool) -> Change:
    text = read_text(path)
    existed = text is not None
    text = text or ""
    try:
        doc = _yaml(text)
    except Exception:  # noqa: BLE001 - any YAML error: the file is theirs to fix; we print
        return Change(manager, path, "printed", "not YAML we can read", snippet)
    if text and doc is not None and not isinstance(doc, dict):
        return Change(manager, path, "printed", "not a YAML mapping", snippet)
    want = expected(doc)
    base, had = _strip_blocks(text)
    try:
        base_doc = _yaml(base)
    except Exception:  # noqa: BLE001
        base_doc = None
    new = add(base) if want is not None else None
    ok = False
    if new is not None:
        try:
            ok = _yaml(new) == expected(base_doc)
        except Exception:  # noqa: BLE001
            ok = False
    if not ok or new is None:
        return Change(manager, path, "printed", "a layout init cannot edit safely", snippet)
    if new == text:
        return Change(manager, path, "unchanged")
    if apply:
        _write(path, new)
    return Change(manager, path, "updated" if existed else "created")


def _lefthook_join(work_tree: Path, apply: bool) -> list[Change]:
    config = lefthook_config(work_tree)
    snippet = lefthook_snippet()
    if config is not None and config.name.rsplit(".", 1)[-1] not in ("yml", "yaml"):
        return [Change("lefthook", config, "printed", "not YAML", snippet)]
    path = config or work_tree / "lefthook.yml"

    def add(text: str) -> str | None:
        for hook in HOOKS:
            out = _lefthook_add(text, hook)
            if out is None:
                return None
            text = out
        return text

    def expected(doc: Any) -> Any:
        for hook in HOOKS:
            doc = _lefthook_expected(doc, hook)
            if doc is None:
                return None
        return doc

    return [_yaml_join("lefthook", path, add, expected, snippet, apply)]


def _framework_join(work_tree: Path, apply: bool) -> list[Change]:
    path = work_tree / FRAMEWORK_FILE
    text = read_text(path) or ""
    if FRAMEWORK_ID in text and not blocks(text):  # init's older snippet, pasted by hand: theirs
        return [Change("pre-commit", path, "unchanged", f"your {FRAMEWORK_ID} hook runs the check")]

    def expected(doc: Any) -> Any:
        import copy

        new = copy.deepcopy(doc) if isinstance(doc, dict) else {}
        repos = new.get("repos")
        repos = [] if repos is None else repos
        if not isinstance(repos, list):
            return None
        new["repos"] = [*repos, _framework_dict()]
        return new

    return [_yaml_join("pre-commit", path, _framework_add, expected, framework_snippet(), apply)]


def lefthook_snippet() -> str:
    body: list[str] = []
    for hook in HOOKS:
        body += [f"{hook}:\n", "  commands:\n", *_lefthook_command(hook, "    ", "  ")]
    return "".join(_block("", body)).rstrip("\n")


def framework_snippet() -> str:
    return "".join(_block("  ", _framework_item("  ", "  "))).rstrip("\n")


def husky_snippet() -> str:
    return "\n".join(f"{HUSKY_DIR}/{hook}:\n  " + husky_line(hook) for hook in HOOKS)


def detect(work_tree: Path, hooks_folder: Path, hooks_path: str | None) -> list[str]:
    """The managers this repository uses, in the order init joins them."""
    found = []
    if husky_used(work_tree, hooks_path):
        found.append("husky")
    if lefthook_used(work_tree, hooks_folder):
        found.append("lefthook")
    if framework_used(work_tree):
        found.append("pre-commit")
    return found


def join(work_tree: Path, hooks_folder: Path, hooks_path: str | None, *,
         ask: Callable[[str, Path], bool] | None = None, apply: bool = True) -> Joined:
    """Add our entry to each manager's committed file (`ask(manager, file)` may decline one: its
    snippet is printed instead). `managed`: the hooks a joined manager runs in the folder git uses."""
    out = Joined()
    for manager in detect(work_tree, hooks_folder, hooks_path):
        out.managers.append(manager)
        where = {"husky": work_tree / HUSKY_DIR, "lefthook": lefthook_config(work_tree) or work_tree / "lefthook.yml",
                 "pre-commit": work_tree / FRAMEWORK_FILE}[manager]
        if ask is not None and not ask(manager, where):
            snippet = {"husky": husky_snippet(), "lefthook": lefthook_snippet(),
                       "pre-commit": framework_snippet()}[manager]
            out.changes.append(Change(manager, where, "printed", "you declined", snippet))
            continue
        if manager == "husky":
            changes = [_husky_join(work_tree, hook, apply) for hook in HOOKS]
        elif manager == "lefthook":
            changes = _lefthook_join(work_tree, apply)
        else:
            changes = _framework_join(work_tree, apply)
        out.changes.extend(changes)
        if any(c.action == "printed" for c in changes):
            continue
        hook_text = read_head(hooks_folder / "pre-commit")
        if SHIM_MARKER in hook_text:  # our shim of an earlier init: the hook it chained is the installed one
            hook_text = read_head(hooks_folder / "pre-commit.memex-chained")
        if manager == "husky":
            out.hooks_path_owner = "husky"
        elif manager == "lefthook" and is_lefthook_hook(hook_text):
            out.managed.update(HOOKS)  # lefthook installs the hooks its file names on its next run
            out.managed_by = "lefthook"
        elif manager == "pre-commit" and is_framework_hook(hook_text):
            out.managed.add("pre-commit")
            out.managed_by = "the pre-commit framework"
    return out


def leave(work_tree: Path, *, apply: bool = True) -> list[Change]:
    """Take our blocks out of every manager's file (a file that held nothing else goes)."""
    out: list[Change] = []
    paths = [("husky", work_tree / HUSKY_DIR / hook) for hook in HOOKS]
    paths += [("lefthook", work_tree / rel) for rel in LEFTHOOK_FILES]
    paths.append(("pre-commit", work_tree / FRAMEWORK_FILE))
    for manager, path in paths:
        text = read_text(path)
        if text is None:
            if manager == "pre-commit" and path.exists():
                out.append(Change(manager, path, "kept", "unreadable; remove the git-memex entry yourself"))
            continue
        if not blocks(text):
            if manager == "pre-commit" and FRAMEWORK_ID in text:  # the older snippet, pasted by hand
                out.append(Change(manager, path, "kept", f"you pasted it; remove the {FRAMEWORK_ID} and "
                                  "memex-validate hooks yourself"))
            continue
        rest, _ = _strip_blocks(text)
        if apply:
            if rest.strip():
                _write(path, rest)
            else:
                path.unlink()
                if manager == "husky":
                    _rmdir_if_empty(path.parent, work_tree)
        out.append(Change(manager, path, "updated" if rest.strip() else "removed", "git-memex's entry"))
    return out


def _rmdir_if_empty(folder: Path, stop: Path) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        if folder != stop and not any(folder.iterdir()):
            folder.rmdir()



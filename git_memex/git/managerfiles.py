"""What `init` adds to lefthook's and the pre-commit framework's YAML files, as text in the
file's own layout (`blockedit`), and the document each must parse to afterwards (docs/git.md,
"Hook managers"). `managers` checks the one against the other before anything is written.

lefthook: a `git-memex` command under `<hook>: commands:` for each of the five hooks; a key with
an empty value (`post-checkout: {}`, `~`, `null`) is replaced by the block, which keeps the line.
The pre-commit framework: a `repo: local` entry with hook `memex-secrets` (no `stages` unless the
file's `default_stages` leaves a commit stage out, `entry_stages`), and pre-commit and
pre-merge-commit in `default_install_hook_types`, so that a plain `pre-commit install` (or
`prek install`) in every clone installs the merge hook too.
"""

from __future__ import annotations

import re

from git_memex.git.blockedit import (
    block,
    block_end,
    child_indent,
    has_empty_value,
    insert,
    key_line,
    unit_of,
)
from git_memex.git.reach import FRAMEWORK_ID, FRAMEWORK_TYPES, framework_entry, lefthook_run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def lefthook_command(hook: str, indent: str, unit: str) -> list[str]:
    return [f"{indent}git-memex:\n", f"{indent}{unit}run: |-\n", f"{indent}{unit * 2}{lefthook_run(hook)}\n"]


def lefthook_add(text: str, hook: str) -> str | None:
    """`text` with our command for `hook` added, or None when the layout cannot be followed. A
    key with an empty value (`post-checkout: {}`, `~`, `null`) is replaced by the block, which
    keeps that line to put back (a second key of the same name would make lefthook refuse the file)."""
    lines = text.splitlines(keepends=True)
    u = unit_of(lines)
    unit = " " * u
    top = key_line(lines, hook, 0, empty=True)
    if top is None:
        if re.search(rf"(?m)^{re.escape(hook)}\s*:", text):
            return None  # `hook: {commands: …}` in flow style, or a value we cannot follow
        body = [f"{hook}:\n", f"{unit}commands:\n", *lefthook_command(hook, unit * 2, unit)]
        return insert(text, len(lines), block("", body))
    if has_empty_value(lines[top]):
        body = [f"{hook}:\n", f"{unit}commands:\n", *lefthook_command(hook, unit * 2, unit)]
        return insert(text, top, block("", body, was=lines[top].rstrip("\r\n")), replace=True)
    end = block_end(lines, top, 0)
    ci = child_indent(lines, top, end, 0) or u
    commands = key_line(lines, "commands", ci, top + 1, end, empty=True)
    if commands is None:
        if re.search(r"^ *commands\s*:", "".join(lines[top + 1:end]), re.MULTILINE):
            return None
        pad = " " * ci
        body = [f"{pad}commands:\n", *lefthook_command(hook, pad + unit, unit)]
        return insert(text, top + 1, block(pad, body))
    if has_empty_value(lines[commands]):
        pad = " " * ci
        body = [f"{pad}commands:\n", *lefthook_command(hook, pad + unit, unit)]
        return insert(text, commands, block(pad, body, was=lines[commands].rstrip("\r\n")), replace=True)
    cend = block_end(lines, commands, ci)
    gi = child_indent(lines, commands, cend, ci) or ci + u
    pad = " " * gi
    return insert(text, commands + 1, block(pad, lefthook_command(hook, pad, unit)))


def lefthook_expected(doc: Any, hook: str) -> Any:
    import copy

    new = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    section = new.get(hook)
    if not isinstance(section, dict):
        section = {} if section is None else section
    if not isinstance(section, dict):
        return None
    cmds = section.get("commands")
    cmds = {} if cmds is None else cmds
    if not isinstance(cmds, dict) or "git-memex" in cmds:
        return None
    cmds["git-memex"] = {"run": lefthook_run(hook)}
    section["commands"] = cmds
    new[hook] = section
    return new


# ------------------------------------------------------------------ the pre-commit framework's file
NEW_STAGES = ("pre-commit", "pre-merge-commit")
OLD_STAGES = ("commit", "merge-commit")


def entry_stages(doc: Any) -> tuple[str, ...] | None:
    """The `stages` our entry needs, or None (no key: the framework then runs it at every hook type
    it installed, and the program skips the non-commit ones). Only a top-level `default_stages`
    that leaves out a commit stage needs the key; it is written in the spelling `default_stages`
    uses, which the team's framework evidently accepts (pre-commit < 3.2 knows only `commit` and
    `merge-commit`; 3.2 and later warn about those on every run)."""
    stages = doc.get("default_stages") if isinstance(doc, dict) else None
    if not isinstance(stages, list):
        return None
    if any(s in stages for s in NEW_STAGES + OLD_STAGES) and all(
            a in stages or b in stages for a, b in zip(NEW_STAGES, OLD_STAGES, strict=True)):
        return None
    return OLD_STAGES if any(s in OLD_STAGES + ("push",) for s in stages) else NEW_STAGES


def framework_item(indent: str, unit: str, stages: tuple[str, ...] | None) -> list[str]:
    """Our `repos:` item at `indent`; a key after `- ` sits two columns in, whatever the file's unit."""
    k = indent + "  "
    h = k + unit
    i = h + "  "
    out = [f"{indent}- repo: local\n", f"{k}hooks:\n", f"{h}- id: {FRAMEWORK_ID}\n",
           f"{i}name: git-memex secret scan of memory files\n", f"{i}entry: |-\n",
           f"{i}{unit}{framework_entry()}\n", f"{i}language: system\n", f"{i}pass_filenames: false\n",
           f"{i}always_run: true\n"]
    if stages:
        out.append(f"{i}stages: [{', '.join(stages)}]\n")
    return out


def framework_dict(stages: tuple[str, ...] | None) -> dict[str, Any]:
    hook: dict[str, Any] = {"id": FRAMEWORK_ID, "name": "git-memex secret scan of memory files",
                            "entry": framework_entry(), "language": "system", "pass_filenames": False,
                            "always_run": True}
    if stages:
        hook["stages"] = list(stages)
    return {"repo": "local", "hooks": [hook]}


def framework_repo_add(text: str, stages: tuple[str, ...] | None) -> str | None:
    """`text` with our entry appended to the `repos:` list (block style only), or None."""
    lines = text.splitlines(keepends=True)
    u = unit_of(lines)
    unit = " " * u
    top = key_line(lines, "repos", 0)
    if top is None:
        if re.search(r"(?m)^repos\s*:", text):
            return None  # `repos: [...]` in flow style: not edited
        return insert(text, len(lines), block("", ["repos:\n", *framework_item(unit, unit, stages)]))
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
    while end < len(lines) and not lines[end].strip():
        end += 1  # past blank lines: a `|+` scalar of the last item keeps them
    pad = " " * (u if item is None else item)
    return insert(text, end, block(pad, framework_item(pad, unit, stages)))


def types_add(text: str, doc: Any) -> str | None:
    """`text` with pre-commit and pre-merge-commit in `default_install_hook_types`, so that a plain
    `pre-commit install` in every clone installs the merge hook too (the framework honours the
    key since 2.18): appended as a new key, added as items of a block list, or a flow list line
    replaced (the old line kept to put back). None when the value cannot be followed."""
    have = doc.get(FRAMEWORK_TYPES) if isinstance(doc, dict) else None
    if have is not None and not isinstance(have, list):
        return None
    want = [t for t in NEW_STAGES if t not in (have or [])]
    if have is None:
        lines = text.splitlines(keepends=True)
        if re.search(rf"(?m)^{FRAMEWORK_TYPES}\s*:", text):
            return None
        repos = key_line(lines, "repos", 0)  # before `repos:`, where the top-level settings usually are
        return insert(text, len(lines) if repos is None else repos,
                       block("", [f"{FRAMEWORK_TYPES}: [{', '.join(NEW_STAGES)}]\n"]))
    if not want:
        return text
    lines = text.splitlines(keepends=True)
    key = key_line(lines, FRAMEWORK_TYPES, 0)
    if key is not None:  # a block list: our items after the key line, at its items' indent
        end = block_end(lines, key, 0)
        first = next((x for x in lines[key + 1:end] if x.strip() and not x.lstrip().startswith("#")), None)
        if first is None or not first.lstrip().startswith("- "):
            return None
        pad = " " * (len(first) - len(first.lstrip(" ")))
        return insert(text, key + 1, block(pad, [f"{pad}- {t}\n" for t in want]))
    flow = next((i for i, x in enumerate(lines) if re.match(rf"^{FRAMEWORK_TYPES}\s*:\s*\[[^\]#]*\]\s*(#.*)?$",
                                                             x.rstrip("\r\n"))), None)
    if flow is None:
        return None
    items = [*have, *want]
    return insert(text, flow, block("", [f"{FRAMEWORK_TYPES}: [{', '.join(items)}]\n"],
                                      was=lines[flow].rstrip("\r\n")), replace=True)


def hand_entry(doc: Any) -> bool:
    """A hook `memex-secrets` of the person's own runs git-memex's check at commit time: a `repo:
    local` entry whose `entry` runs git-memex (init's older snippet, pasted), or a repository of
    git-memex's own hooks (`.pre-commit-hooks.yaml`)."""
    repos = doc.get("repos") if isinstance(doc, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict) or not isinstance(repo.get("hooks"), list):
            continue
        for h in repo["hooks"]:
            if not isinstance(h, dict) or h.get("id") != FRAMEWORK_ID:
                continue
            stages = h.get("stages")
            if isinstance(stages, list) and not any(s in ("pre-commit", "commit") for s in stages):
                continue
            if repo.get("repo") == "local":
                entry = str(h.get("entry", ""))
                if "git-memex" in entry or "git memex" in entry:
                    return True
            elif "memex" in str(repo.get("repo", "")):
                return True
    return False



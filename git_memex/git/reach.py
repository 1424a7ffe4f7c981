"""Does a commit in this clone reach git-memex's secret scan? (docs/git.md, "Hook managers")

Cheap on purpose, since every command asks (`main`'s notice, the session block): no subprocess,
no YAML parser, the git config the command already loaded, and a few small file reads: the hooks
git runs for pre-commit and pre-merge-commit (core.hooksPath respected) and, for a hook manager's
hook, the manager's committed file, which must hold our entry, uncommented, where the manager
reads it (`managers` writes it, and checks what it wrote with a real YAML parser). The names of
those files, the marker lines and the committed sh program live here; `managers` edits the files.

What a person switches off on purpose is named too (`bypasses`): husky's `HUSKY=0` (in this
environment, or exported by `~/.config/husky/init.sh`), lefthook's `LEFTHOOK=0` and
`LEFTHOOK_EXCLUDE`, a `lefthook-local.yml` that overrides our command, a hook-level `skip`/`only`
in lefthook's file (it skips every command of that hook, ours included), the pre-commit
framework's `SKIP`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from git_memex.core.context import Context

SHIM_MARKER = "# git-memex hook shim"  # hook.MARKER: the first lines of every shim `init` installs
HOOKS = ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite")
BLOCKING = ("pre-commit", "pre-merge-commit")
BEGIN = "# >>> git-memex"
END = "# <<< git-memex"
BEGIN_LINE = BEGIN + " (added by `git memex init`; `git memex init --uninstall` removes it)"
# The BEGIN line of a block in a file `init` created: `--uninstall` deletes the file when nothing
# else is in it (a file that was there before, even empty, is given back as it was).
CREATED_LINE = BEGIN + " (added by `git memex init`, which created this file; `git memex init --uninstall` removes it)"
# Inside a block, right after BEGIN: a line of the person's that the block replaces, verbatim
# (`post-checkout: {}`, a flow-style list); `--uninstall` puts it back where the block was.
WAS = "# git-memex replaced: "
HUSKY_DIR = ".husky"
LEFTHOOK_FILES = ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
                  ".config/lefthook.yml", ".config/lefthook.yaml")
LEFTHOOK_OTHER = ("lefthook.json", "lefthook.jsonc", "lefthook.toml", ".lefthook.json", ".lefthook.jsonc",
                  ".lefthook.toml", ".config/lefthook.json", ".config/lefthook.jsonc", ".config/lefthook.toml")
# lefthook merges these over its main file (lefthook's config loader: LocalConfigNames x extensions)
LEFTHOOK_LOCAL = tuple(f"{stem}.{ext}" for stem in ("lefthook-local", ".lefthook-local", ".config/lefthook-local")
                       for ext in ("yml", "yaml", "json", "jsonc", "toml"))
FRAMEWORK_FILE = ".pre-commit-config.yaml"
FRAMEWORK_ID = "memex-secrets"
FRAMEWORK_TYPES = "default_install_hook_types"

# ------------------------------------------------------------------ the committed sh program
MISSING_SENTENCE = ("git-memex is not installed in this clone, so the staged memory files cannot be checked "
                    "for secrets and the commit is refused; install git-memex (its README, Set up) and run "
                    "\\`git memex init\\` here, or commit with --no-verify")
MERGE_SENTENCE = ("git-memex: warning: git-memex is not installed in this clone, so the memory files this merge "
                  "brings in were not checked for secrets (you changed none of them); install git-memex (its "
                  "README, Set up) and run \\`git memex scan\\`")

# sh, run as `sh -c PROGRAM git-memex ARGS...`: the command this clone's init recorded, else
# git-memex on PATH; neither: a blocking hook refuses a commit that stages a memory file the person
# changed (the folder from this clone's config, else the committed .gitmemex, else the default).
_FIND = ('c=$(git config memex.command) && (eval "set -- $c" && [ -x "$1" ]) || c=git-memex; '
         'if [ "$c" != git-memex ] || command -v git-memex >/dev/null 2>&1; then ')
# Which staged memory files are the person's own change: `n`, those the commit changes (HEAD to the
# index). A merge git makes by itself (pre-merge-commit: `m` set) changes none of them by hand.
# Concluding a merge (`git commit` while MERGE_HEAD exists): only those that differ from every
# merged head and from git's own merge result (AUTO_MERGE, git 2.38+) as well.
_MINE = ('d=$(git config memex.memoryDir || git config -f .gitmemex memex.memoryDir) || d=.ai/open-memex; '
         'p=":(top,glob)${d%/}/**/*.md"; '
         'n=$(git diff --cached --name-only --diff-filter=d -- "$p") || n=?; [ -z "$n" ] && exit 0; '
         'o=; if [ -z "$m" ]; then o=$n; h=$(git rev-parse --git-path MERGE_HEAD); '
         'if [ -f "$h" ]; then for r in $(cat "$h") $(git rev-parse -q --verify AUTO_MERGE); do '
         '[ -n "$o" ] && o=$(git diff --cached --name-only --diff-filter=d "$r" -- "$p" | grep -Fx -e "$o"); '
         'done; fi; fi; '
         f'if [ -z "$o" ]; then w="{MERGE_SENTENCE}"; $SAY; exit 0; fi; '
         f'echo "{MISSING_SENTENCE}" >&2; exit 1')
# How the merge warning is said: on stderr, which husky and lefthook show; the pre-commit framework
# shows a passing hook's output only with --verbose, so there it goes to the terminal (/dev/tty)
# when there is one.
_SAY_STDERR = 'echo "$w" >&2'
_SAY_TTY = '{ echo "$w" >/dev/tty; } 2>/dev/null || echo "$w" >&2'
# The pre-commit framework runs an entry without `stages` at every hook type it installed; these
# variables say it runs for a push, a checkout, a merge's or a rewrite's post hook, or a rebase:
# nothing to scan then (pre-commit 3.0 to 4.x set them; so does prek).
_NOT_A_COMMIT = ('[ -n "${PRE_COMMIT_FROM_REF-}${PRE_COMMIT_ORIGIN-}${PRE_COMMIT_REMOTE_NAME-}'
                 '${PRE_COMMIT_CHECKOUT_TYPE-}${PRE_COMMIT_IS_SQUASH_MERGE-}${PRE_COMMIT_REWRITE_COMMAND-}'
                 '${PRE_COMMIT_PRE_REBASE_UPSTREAM-}" ] && exit 0; ')


def program(hook: str) -> str:
    """The one-line sh program husky and lefthook run for `hook` (no single quote in it)."""
    if hook == "pre-merge-commit":
        return _FIND + f'eval "$c hook {hook}"; exit; fi; m=1; ' + _MINE.replace("$SAY", _SAY_STDERR)
    if hook in BLOCKING:
        return _FIND + f'eval "$c hook {hook}"; exit; fi; m=; ' + _MINE.replace("$SAY", _SAY_STDERR)
    return _FIND + f'eval "$c hook {hook} \\"\\$@\\""; fi; exit 0'


def framework_program() -> str:
    """The program of the pre-commit framework's entry: one entry serves pre-commit and
    pre-merge-commit (a merge git makes by itself exports GITHEAD_<sha> to its hooks)."""
    return (_NOT_A_COMMIT + _FIND + 'eval "$c hook pre-commit"; exit; fi; '
            'm=; env | grep -q "^GITHEAD_" && m=1; ' + _MINE.replace("$SAY", _SAY_TTY))


def husky_line(hook: str) -> str:
    return f"sh -c '{program(hook)}' git-memex \"$@\""


def lefthook_run(hook: str) -> str:
    return f"sh -c '{program(hook)}' git-memex {{0}}"


def framework_entry() -> str:
    return f"sh -c '{framework_program()}' git-memex"


def our_command(line: str, hook: str) -> bool:
    """`line` runs git-memex's check for `hook` the way init writes it (any version of the program)."""
    s = line.strip()
    return s.startswith("sh -c '") and f" hook {hook}" in s and "git-memex" in s and not s.startswith("#")


# ------------------------------------------------------------------ files
def read_text(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def read_head(path: Path, size: int = 8192) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def newline(text: str) -> str:
    """The line ending a text uses (its first line's): CRLF or LF."""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


class Block:
    """One BEGIN..END block: line numbers of its markers, the BEGIN line, the replaced line (WAS)."""

    def __init__(self, start: int, end: int, lines: list[str]) -> None:
        self.start, self.end = start, end
        self.begin = lines[start].rstrip("\r\n")
        inner = lines[start + 1:end]
        self.was: str | None = None
        if inner and inner[0].strip().startswith(WAS):
            self.was = inner[0].rstrip("\r\n").split(WAS, 1)[1]
            inner = inner[1:]
        self.inner = [x.rstrip("\r\n") for x in inner]
        self.indent = _indent(lines[start])

    @property
    def created(self) -> bool:
        return self.begin.strip() == CREATED_LINE


def parse_blocks(text: str) -> tuple[list[Block], str | None]:
    """Our blocks in `text`, and what is wrong with its marker lines (a BEGIN without its END, an
    END without its BEGIN, one block inside another), else None."""
    lines = text.splitlines(keepends=True)
    found: list[Block] = []
    start: int | None = None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith(BEGIN):
            if start is not None:
                return found, f"line {start + 1} opens a git-memex block (`{BEGIN}`) that line {i + 1} opens again"
            start = i
        elif s.startswith(END):
            if start is None:
                return found, f"line {i + 1} closes a git-memex block (`{END}`) that no `{BEGIN}` line opened"
            found.append(Block(start, i, lines))
            start = None
    if start is not None:
        return found, f"line {start + 1} opens a git-memex block (`{BEGIN}`) that no `{END}` line closes"
    return found, None


# ------------------------------------------------------------------ hook managers
def husky_dir(work_tree: Path, hooks_path: str | None) -> Path | None:
    """husky's folder in this repository (`husky DIR` in the prepare script, default `.husky`):
    from core.hooksPath, which husky sets to `DIR/_` (its runner `h` is there), else from the
    package.json `prepare` script that runs husky (a clone before its first `npm install`), else
    `.husky` where that folder exists and package.json names husky. None: husky is not used."""
    if hooks_path:
        p = Path(os.path.expanduser(hooks_path))
        p = p if p.is_absolute() else work_tree / p
        if p.name == "_" and (p / "h").is_file():
            return p.parent
    prepare = _husky_prepare(work_tree)
    if prepare is not None:
        return work_tree / prepare
    if (work_tree / HUSKY_DIR).is_dir() and '"husky"' in (read_text(work_tree / "package.json") or ""):
        return work_tree / HUSKY_DIR
    return None


def _husky_prepare(work_tree: Path) -> str | None:
    """The folder package.json's `prepare` script gives husky (`husky` alone: `.husky`), else None."""
    import json

    text = read_text(work_tree / "package.json")
    if not text or "husky" not in text:
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    scripts = doc.get("scripts") if isinstance(doc, dict) else None
    script = scripts.get("prepare") if isinstance(scripts, dict) else None
    if not isinstance(script, str):
        return None
    for part in re.split(r"&&|\|\||;", script):
        words = part.split()
        if words and words[0] == "husky" and (len(words) == 1 or words[1] == "install"):
            return HUSKY_DIR
        if len(words) >= 2 and words[0] == "husky" and not words[1].startswith("-"):
            rel = words[1].strip("'\"").rstrip("/")
            return rel if ".." not in rel else None  # husky refuses `..` itself
    return None


def lefthook_config(work_tree: Path) -> Path | None:
    for rel in (*LEFTHOOK_FILES, *LEFTHOOK_OTHER):
        if (work_tree / rel).is_file():
            return work_tree / rel
    return None


def is_lefthook_hook(text: str) -> bool:
    return "call_lefthook" in text or "lefthook run" in text or 'lefthook" run' in text


def is_husky_stub(text: str) -> bool:
    return '/h"' in text and len(text) < 200


def is_framework_hook(text: str) -> bool:
    """The pre-commit framework's hook (pre-commit.com), or prek's (a drop-in reimplementation
    that reads the same `.pre-commit-config.yaml`)."""
    return "pre-commit.com" in text or "pre_commit" in text or "File generated by prek" in text or (
        "prek" in text and "hook-impl" in text)


def husky_has(text: str, hook: str) -> bool:
    """`text` (husky's `DIR/<hook>`) holds our block with our line, uncommented."""
    found, problem = parse_blocks(text)
    return problem is None and any(b.inner and all(our_command(x, hook) for x in b.inner) and len(b.inner) == 1
                                   for b in found)


def _parent(lines: list[str], at: int, indent: int) -> tuple[int, str] | None:
    """The nearest content line before `at` indented less than `indent`: (its indent, its text)."""
    for i in range(at - 1, -1, -1):
        if _content(lines[i]) and _indent(lines[i]) < indent:
            return _indent(lines[i]), lines[i].strip()
    return None


def _key(line: str, key: str) -> bool:
    return re.match(rf"^{re.escape(key)}:\s*(#.*)?$", line) is not None


def lefthook_has(text: str, hook: str) -> bool:
    """A cheap look (no YAML parser): one of our blocks holds our command for `hook`, uncommented,
    under `<hook>: commands:` (the block may carry the keys itself)."""
    found, problem = parse_blocks(text)
    if problem is not None:
        return False
    lines = text.splitlines()
    for b in found:
        s = [x.strip() for x in b.inner]
        if len(s) < 3 or not all(_content(x) for x in b.inner) or not our_command(s[-1], hook):
            continue
        widths = [_indent(x) for x in b.inner]
        if widths != sorted(widths) or len(set(widths)) != len(widths):
            continue
        head = s[:-1]
        if head == [f"{hook}:", "commands:", "git-memex:", "run: |-"]:
            if widths[0] == 0:
                return True
        elif head == ["commands:", "git-memex:", "run: |-"]:
            up = _parent(lines, b.start, widths[0])
            if up is not None and up[0] == 0 and _key(up[1], hook):
                return True
        elif head == ["git-memex:", "run: |-"]:
            up = _parent(lines, b.start, widths[0])
            if up is not None and _key(up[1], "commands"):
                top = _parent(lines, b.start, up[0])
                if top is not None and top[0] == 0 and _key(top[1], hook):
                    return True
    return False


_ID_LINE = re.compile(r"^\s*(-\s+)?id:\s*[\"']?" + re.escape(FRAMEWORK_ID) + r"[\"']?\s*(#.*)?$")


def framework_has(text: str) -> bool:
    """A cheap look (no YAML parser) at `.pre-commit-config.yaml`: our block with our entry,
    uncommented, as an item of `repos:`; or an uncommented hook `id: memex-secrets` whose item
    runs git-memex (a `repo: local` entry pasted by hand, or a repo of git-memex's own hooks)."""
    found, problem = parse_blocks(text)
    lines = text.splitlines()
    if problem is None:
        for b in found:
            s = [x.strip() for x in b.inner]
            if not s or s[0] != "- repo: local" or not all(_content(x) for x in b.inner):
                continue
            if f"- id: {FRAMEWORK_ID}" not in s or not any(our_command(x, "pre-commit") for x in s):
                continue
            if _in_repos(lines, b.start, b.indent):
                return True
    for i, line in enumerate(lines):
        if not _ID_LINE.match(line):
            continue
        item = _indent(line)
        stop = next((j for j in range(i + 1, len(lines)) if _content(lines[j]) and _indent(lines[j]) <= item),
                    len(lines))
        body = [x.strip() for x in lines[i + 1:stop] if _content(x)]
        stages = [x for x in body if x.startswith("stages:")]
        if stages and "commit" not in stages[0]:
            continue  # e.g. `stages: [manual]`: no commit runs it
        if any(x.startswith("entry:") for x in body):
            if any("git-memex" in x or "git memex" in x for x in body):
                return True
        elif _remote_memex(lines, i):
            return True
    return False


def _in_repos(lines: list[str], at: int, indent: int) -> bool:
    for i in range(at - 1, -1, -1):
        x = lines[i]
        if not _content(x) or _indent(x) > indent:
            continue
        if _indent(x) == indent and x.lstrip().startswith("- "):
            continue
        return _indent(x) == 0 and _key(x.strip(), "repos")
    return False


def _remote_memex(lines: list[str], at: int) -> bool:
    """The `repo:` of the item that holds line `at` is a repository of git-memex's own hooks."""
    for i in range(at - 1, -1, -1):
        m = re.match(r"^\s*-?\s*repo:\s*(\S+)", lines[i])
        if m:
            return m.group(1).strip("'\"") != "local" and "memex" in m.group(1)
    return False


def hook_level_settings(text: str, hook: str) -> list[str]:
    """The hook-level `skip:`/`only:` lines of `hook:` in a lefthook YAML file (cheap, by text):
    lefthook checks them before any command, so they switch git-memex's command off too."""
    lines = text.splitlines()
    top = next((i for i, x in enumerate(lines) if _indent(x) == 0 and _key(x.strip(), hook)), None)
    if top is None:
        return []
    child: int | None = None
    out: list[str] = []
    for x in lines[top + 1:]:
        if not _content(x):
            continue
        w = _indent(x)
        if w == 0:
            break
        child = w if child is None else child
        if w == child and re.match(r"^(skip|only)\s*:", x.strip()):
            out.append(x.strip())
    return out


# ------------------------------------------------------------------ reached (cheap)
def runs_git_memex(text: str) -> bool:
    """A hand-written hook runs git-memex's check: an uncommented line calling `git-memex hook`."""
    return any(_content(x) and re.search(r"git[- ]memex[\"']?\s+hook\b", x) for x in text.splitlines())


def reached(work_tree: Path, folder: Path, hook: str) -> bool:
    """Whether the hook git runs from `folder` for `hook` reaches git-memex: our shim, a hand
    hook that runs git-memex, or a manager's hook whose committed config holds our entry. A hook
    a manager has not installed yet is not reached (nothing runs it)."""
    path = folder / hook
    text = read_head(path)
    if not text or not os.access(path, os.X_OK):
        return False
    if SHIM_MARKER in text or husky_has(text, hook):  # our shim; our line in the hook itself (husky v8)
        return True
    if is_husky_stub(text):
        return husky_has(read_text(folder.parent / hook) or "", hook)
    if is_lefthook_hook(text):
        config = lefthook_config(work_tree)
        return config is not None and lefthook_has(read_text(config) or "", hook)
    if is_framework_hook(text):
        if hook not in BLOCKING:
            return False
        legacy = folder / f"{hook}.legacy"  # the framework's migration mode runs the hook it replaced
        return framework_has(read_text(work_tree / FRAMEWORK_FILE) or "") or SHIM_MARKER in read_head(legacy)
    return runs_git_memex(text)


# ------------------------------------------------------------------ switched off on purpose
def bypasses(work_tree: Path, folder: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """What switches the scan off for this person although the hooks reach it: a setting that
    persists (husky's init.sh, a lefthook-local file, a hook-level `skip`/`only`) or a variable in
    `env` (this process's environment: a commit made from it would skip the scan)."""
    env = os.environ if env is None else env
    text = read_head(folder / "pre-commit")
    out: list[str] = []
    if is_husky_stub(text):
        home = env.get("HOME") or os.path.expanduser("~")
        init_sh = Path(env.get("XDG_CONFIG_HOME") or Path(home) / ".config") / "husky" / "init.sh"
        if any(_content(x) and re.search(r"(^|[\s;])(export\s+)?HUSKY=[\"']?0[\"']?(\s|;|$)", x)
               for x in (read_text(init_sh) or "").splitlines()):
            out.append(f"{init_sh} sets HUSKY=0, so husky runs no hook for you (git-memex's scan included); "
                       "remove that line")
        if env.get("HUSKY") == "0":
            out.append("HUSKY=0 is set in this environment, so husky runs no hook for a commit made from it")
    if is_lefthook_hook(text):
        if env.get("LEFTHOOK") in ("0", "false"):
            out.append(f"LEFTHOOK={env.get('LEFTHOOK')} is set in this environment, so lefthook runs no hook "
                       "for a commit made from it")
        if "git-memex" in [x.strip() for x in env.get("LEFTHOOK_EXCLUDE", "").split(",")]:
            out.append("LEFTHOOK_EXCLUDE names git-memex in this environment, so lefthook skips its scan")
        for rel in LEFTHOOK_LOCAL:
            local = read_text(work_tree / rel)
            if local is None:
                continue
            if "git-memex" in local:
                out.append(f"{rel} (your own lefthook settings, not committed) changes git-memex's command; "
                           "lefthook then may not run the scan for you")
            for hook in BLOCKING:
                for s in hook_level_settings(local, hook):
                    out.append(f"{rel} sets `{s}` on {hook}, which skips every command of that hook there, "
                               "git-memex's scan included")
        config = lefthook_config(work_tree)
        main = read_text(config) if config is not None else None
        for hook in BLOCKING:
            for s in hook_level_settings(main or "", hook):
                assert config is not None
                out.append(f"{config.relative_to(work_tree).as_posix()} sets `{s}` on {hook} (hook level), "
                           "which skips git-memex's scan too whenever it applies (`skip: merge` on pre-commit: "
                           "a conflicted merge concluded with `git commit`)")
    if is_framework_hook(text) and FRAMEWORK_ID in [x.strip() for x in env.get("SKIP", "").split(",")]:
        out.append(f"SKIP names {FRAMEWORK_ID} in this environment, so the pre-commit framework skips the scan")
    return out


# ------------------------------------------------------------------ is the scan missing?
FIX = "git memex init"


def has_memories(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(e.name.endswith(".md") and e.is_file() for e in it)
    except OSError:
        return False


def hooks_folder(ctx: Context) -> Path | None:
    repo = ctx.repo
    if repo is None:
        return None
    value = ctx.config.get("core.hookspath") or ""
    if value.startswith("~"):
        value = os.path.expanduser(value)
    return (Path(value) if os.path.isabs(value) else repo.work_tree / value) if value else repo.common_dir / "hooks"


def _why(work_tree: Path, folder: Path, hook: str) -> str:
    path = folder / hook
    text = read_head(path)
    pre = read_head(folder / "pre-commit")
    if not text:
        if is_lefthook_hook(pre):
            return f"lefthook has not installed its {hook} hook here yet (`lefthook install` does)"
        if is_framework_hook(pre):
            return (f"the pre-commit framework has not installed its {hook} hook here "
                    f"(`pre-commit install -t {hook}` does)")
        return f"git runs no {hook} hook here ({path} does not exist)"
    if is_husky_stub(text):
        rel = _rel(work_tree, folder.parent / hook)
        if read_text(folder.parent / hook) is None:
            return f"husky runs {rel}, which does not exist"
        return f"husky runs {rel}, which has no git-memex line (or only a commented-out one)"
    if is_lefthook_hook(text):
        return f"lefthook's configuration has no git-memex command for {hook}"
    if is_framework_hook(text):
        return f"{FRAMEWORK_FILE} has no {FRAMEWORK_ID} hook that runs git-memex"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable"
    return f"{path} does not run git-memex"


def _rel(work_tree: Path, path: Path) -> str:
    try:
        return path.relative_to(work_tree).as_posix()
    except ValueError:
        return str(path)


def scan_missing(ctx: Context) -> str | None:
    """Why a commit or a merge in this clone does not reach git-memex's check (pre-commit, then
    pre-merge-commit), in a repository whose memory folder holds memory files; None when both
    do, when there are none, or when `init --no-hooks` chose so (memex.hooks=false). Reads git
    config from `ctx` (no git call), the hook files and a manager's file: a few small reads."""
    repo = ctx.repo
    if repo is None or (ctx.config.get("memex.hooks") or "").lower() == "false":
        return None
    memory = ctx.memory_dir
    if memory is None or not has_memories(memory):
        return None
    folder = hooks_folder(ctx)
    assert folder is not None
    for hook in BLOCKING:
        if not reached(repo.work_tree, folder, hook):
            return _why(repo.work_tree, folder, hook)
    return None


def switched_off(ctx: Context) -> list[str]:
    """`bypasses` where the scan is otherwise set up, in a repository with memory files."""
    repo = ctx.repo
    if repo is None or ctx.memory_dir is None or not has_memories(ctx.memory_dir):
        return []
    folder = hooks_folder(ctx)
    return bypasses(repo.work_tree, folder) if folder is not None else []


def scan_notice(ctx: Context) -> str | None:
    """The one stderr line a command prints when the scan is missing or switched off, else None."""
    why = scan_missing(ctx)
    if why is not None:
        return (f"git-memex: warning: memory files committed in this clone are not checked for secrets, since "
                f"{why}; run `{FIX}` to set the check up")
    off = switched_off(ctx)
    if off:
        return "git-memex: warning: commits may skip the secret scan of memory files here: " + "; ".join(off)
    return None


def agent_note(ctx: Context) -> str | None:
    """The line the session-start block carries for the agent when the scan is missing or off."""
    why = scan_missing(ctx)
    if why is not None:
        return (f"Note: commits in this clone do not check memory files for secrets, since {why}. Before "
                f"committing a memory file, ask the user to run `{FIX}`.")
    off = switched_off(ctx)
    if off:
        return ("Note: commits in this clone may skip the secret scan of memory files (" + "; ".join(off)
                + "). Before committing a memory file, run `git memex scan --staged`.")
    return None

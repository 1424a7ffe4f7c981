"""Where a command runs: the repository around the cwd, its settings, and the folders of its
memories (`Context`, built once per process by `load_context`).

Repository discovery asks the user's `git` (two short subprocess calls) rather than
importing pygit2, so that short-lived commands such as `search` start fast; only when no `git`
can be started does libgit2 answer instead (`_libgit2_view`), so a machine without git still sees
the repository, its committed memories and its project key. The settings are in `settings`, the
data root in `data_root`, the project's names in `project`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from git_memex.core.data_root import data_root
from git_memex.core.gitcmd import (  # standard library only; starts every git
    current_folder,
    finish_git,
    start_git,
)
from git_memex.core.project import (
    is_that_git,
    key_for,
    normalize_remote_url,
    parse_clone_dir,
    reference_scope,
    repo_id,
)
from git_memex.core.record import field, record
from git_memex.core.settings import (
    KEY_RE,
    MULTI,
    SETTINGS,
    TEAM_FILE,
    read_team_file,
    validate_setting,
)
from git_memex.errors import FAILED, USAGE, MemexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: gitcmd starts git without the subprocess module
    import subprocess

INDEX_NAME = "index.db"


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
_CONFIG = ["config", "-z", "--show-scope", "--get-regexp",
           r"^(memex\.|remote\.origin\.url$|(user|author)\.(name|email)$|core\.hookspath$)"]
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



def _with_team_file(repo: Repo | None, config: dict[str, str], scopes: dict[str, str]) -> dict[str, str]:
    if repo is None:
        return config
    for key, value in read_team_file(repo.work_tree).items():
        if scopes.get(key) not in _OWN_SCOPES:
            config[key] = value
    return config


# ----------------------------------------------------------------- context
@record
class Context:
    """Everything a command needs to know about where it runs; built once per process."""

    data_root: Path
    cwd: Path
    repo: Repo | None
    config: dict[str, str] = field(default_factory=dict)
    owner_checked: bool = False  # `project_key` has made sure this .git owns its clone id

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
        return repo_id(self.origin_url, self.project_root)

    @property
    def project_name(self) -> str:
        url = self.origin_url
        if url:
            return normalize_remote_url(url).rsplit("/", 1)[-1]
        return self.project_root.name

    @property
    def natural_key(self) -> str:
        """The project key the origin URL (or, without one, the path) gives (docs/project-keys.md)."""
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
        """The key of this clone's outbox and private folders: pinned, else natural.

        A pinned key counts only in the clone whose .git directory owns its clone id
        (docs/project-keys.md, *Copies and moves*): the first time, in a clone whose
        `memex.cloneDir` names another .git (a `cp -a` copy), the key is settled first, so the copy
        takes a key of its own before any command names one. One stat when nothing changed."""
        pinned = self.pinned_key
        if pinned is not None and not self.owner_checked and self.repo is not None:
            self.owner_checked = True
            if self.config.get("memex.cloneid") and not self.owns_clone_id():
                from git_memex.core.scopekeys import check_owner

                check_owner(self)
                pinned = self.pinned_key
        return pinned or self.natural_key

    def owns_clone_id(self) -> bool:
        """This clone's .git directory is the one its clone id (`memex.cloneId`) was given to."""
        assert self.repo is not None
        try:
            st = os.stat(self.repo.common_dir)
        except OSError:
            return False
        return is_that_git(parse_clone_dir(self.config.get("memex.clonedir")), (st.st_dev, st.st_ino),
                           str(self.project_root))

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

    def require_project(self, instead: str = "or use --scope personal for a memory of your own") -> Repo:
        """The repository a project memory belongs to. Outside one a project draft would be filed
        under a key made from the folder's path, which no repository's commands ever read: refused
        (exit 1) before anything is written; personal memories need no repository. `instead`
        ends the sentence with what the caller can do instead ("" for nothing)."""
        if self.repo is None:
            raise MemexError(f"{self.cwd} is not inside a git repository, so a project memory would belong to no "
                             "project; run it inside your project's repository" + (f", {instead}" if instead else ""),
                             USAGE)
        return self.repo


LAST: list[Context] = []
"""The context this process loaded last, if any (`main` reads it for the scan notice)."""


def load_context(cwd: Path | None = None) -> Context:
    ctx = _load_context(cwd)
    LAST[:] = [ctx]
    return ctx


def _load_context(cwd: Path | None = None) -> Context:
    here = Path(cwd or current_folder())
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


def context_stamp(ctx: Context) -> tuple[object, ...] | None:
    """The stamps (mtime, ctime, size, inode) of everything `load_context` read to build `ctx`:
    the repository's config files (`config`, `config.worktree`), the global ones (the file
    GIT_CONFIG_GLOBAL names, else `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config`), the system
    one (GIT_CONFIG_SYSTEM, else /etc/gitconfig; none with GIT_CONFIG_NOSYSTEM), the team file,
    the work tree's `.git` and the git dir. While they are equal, `load_context` in the same
    process (same environment, same folder) builds the same Context: a long-lived process (the MCP
    server) may keep it. None when it may not: outside a repository (one may be created), when a
    config file includes another (`include.path`, `includeIf`: files not stamped here), or when one
    of them changed in the last two seconds (it may have changed while git read it)."""
    if ctx.repo is None:
        return None
    env = os.environ
    files = [ctx.repo.common_dir / "config", ctx.repo.git_dir / "config.worktree", ctx.repo.git_dir,
             ctx.repo.work_tree / ".git", ctx.repo.work_tree / TEAM_FILE]
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        files += [home / ".gitconfig", Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "git" / "config"]
    import stat
    import time

    out: list[object] = []
    newest = 0
    for f in files:
        try:
            st = os.stat(f)
        except FileNotFoundError:
            out.append(None)
            continue
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):  # the git dir, a `.git` folder: which one it is, not what it holds
            out.append((str(f), st.st_ino, st.st_dev))
            continue
        out.append((str(f), st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino))
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        if f.name in ("config", "config.worktree", ".gitconfig", "gitconfig") and st.st_size < (1 << 20):
            try:
                if b"include" in f.read_bytes().lower():
                    return None
            except OSError:
                return None
    if time.time_ns() - newest < SETTLED_NS:
        return None  # written a moment ago, maybe while git read it: a write in the same granule would not show
    return tuple(out)


SETTLED_NS = 2_000_000_000
"""How old the newest file `context_stamp` looks at must be for the stamp to be trusted."""


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

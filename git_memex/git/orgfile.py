"""The committed file naming the org memory repos a project uses (docs/org.md, "Naming a project's
org repos").

`<memory folder>/orgs.gitconfig` is in git config syntax, like `.gitmodules`, one section per org:

    [org "acme"]
        url = https://git.example.com/acme/memory.git
        branch = main          # optional

It is not a memory file (only `.md` files are), so the index and the memory checks leave it
alone. `org add … --share` writes an entry, `org remove … --share` drops it; `init` offers to
subscribe to every entry this clone is not subscribed to, and `doctor` names those. A bad entry is
one sentence (`problems`), never a failure of the command that reads the file. The file is read
with `git config --file` (includes are not followed), never executed; its URLs are passed to
`git clone` after `--`, and the `ext::`/`fd::` transports (which run commands) are refused.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from git_memex.core.context import Context
from git_memex.core.record import record
from git_memex.errors import FAILED, USAGE, MemexError

FILE_NAME = "orgs.gitconfig"
_RUNS_COMMANDS = ("ext::", "fd::")


@record(frozen=True)
class Named:
    """One org the committed file names, and how it stands in this clone."""

    name: str
    url: str
    branch: str | None
    state: str  # "not-subscribed" | "subscribed" | "other-url" (subscribed here to another URL)
    subscribed_url: str | None = None

    @property
    def command(self) -> str:
        """The `git memex org add` line that subscribes to it, safe to paste."""
        q = shlex.quote
        return f"git memex org add {q(self.name)} {q(self.url)}" + (f" --branch {q(self.branch)}" if self.branch else "")


def path_of(ctx: Context) -> Path:
    repo = ctx.require_repo("the org file")
    return repo.work_tree / ctx.memory_dir_rel / FILE_NAME


def rel_path(ctx: Context) -> str:
    return f"{ctx.memory_dir_rel}/{FILE_NAME}"


def same_url(a: str, b: str) -> bool:
    from git_memex.core.project import normalize_remote_url

    return a == b or normalize_remote_url(a) == normalize_remote_url(b)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be cloned as an org memory repo named in a committed file, or None."""
    if not url.strip():
        return "has no url"
    if url.startswith("-"):
        return f"has a url starting with '-' ({url!r}), which git would read as an option"
    if any(url.lower().startswith(t) for t in _RUNS_COMMANDS):
        return f"uses the {url.split('::', 1)[0]}:: transport, which runs a command; give an https, ssh or path URL"
    if any(c in url for c in "\n\r\0"):
        return "has a url with a line break in it"
    return None


def read(ctx: Context) -> tuple[list[Named], list[str]]:
    """(the orgs the committed file names, in file order; one sentence per entry that cannot be
    used). No file: ([], [])."""
    from git_memex.core.gitcmd import git_text
    from git_memex.git.org import NAME_RE

    path = path_of(ctx)
    if not path.is_file():
        return [], []
    where = rel_path(ctx)
    r = git_text(["config", "--file", str(path), "--null", "--list"], ctx.repo.work_tree if ctx.repo else None)
    if r is None or r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["git could not read it"])[-1] if r is not None else "git did not run"
        why = why.removeprefix("fatal: ").rstrip(".")
        return [], [f"{where} cannot be read ({why}); fix it, `git config --file {where} --list` shows what git sees"]
    entries: dict[str, dict[str, str]] = {}
    problems: list[str] = []
    for rec in r.stdout.split("\0"):
        if not rec:
            continue
        key, _, value = rec.partition("\n")
        section, _, rest = key.partition(".")
        name, _, var = rest.rpartition(".")
        if section != "org" or not name:
            problems.append(f"{where}: {key} is not an org entry (`[org \"NAME\"]` with url and branch); skipped")
            continue
        entries.setdefault(name, {})[var] = value
    out: list[Named] = []
    subscribed = set(ctx.org_names())
    for name, fields in entries.items():
        if not NAME_RE.match(name):
            problems.append(f"{where}: {name!r} is not a valid org name (lowercase letters, digits and dashes, "
                            "at most 40); skipped")
            continue
        url = fields.get("url", "")
        bad = url_problem(url)
        if bad is not None:
            problems.append(f"{where}: org {name} {bad}; skipped")
            continue
        branch = fields.get("branch") or None
        if branch is not None and branch.startswith("-"):
            problems.append(f"{where}: org {name} has a branch starting with '-' ({branch!r}); skipped")
            continue
        if name not in subscribed:
            out.append(Named(name, url, branch, "not-subscribed"))
            continue
        have = ctx.config.get(f"memex.org.{name}.url") or ""
        out.append(Named(name, url, branch, "subscribed" if same_url(have, url) else "other-url", have))
    return out, problems


def _git_file(ctx: Context, *args: str) -> None:
    from git_memex.core.gitcmd import git_text

    r = git_text(["config", "--file", str(path_of(ctx)), *args], ctx.repo.work_tree if ctx.repo else None)
    if r is not None and args[0] == "--remove-section" and "no such section" in r.stderr:
        return  # nothing to remove
    if r is None or r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["no message"])[-1] if r is not None else "git did not run"
        raise MemexError(f"cannot write {rel_path(ctx)} ({why.removeprefix('fatal: ')}); nothing was changed", FAILED)


def snapshot(ctx: Context) -> str | None:
    """The file's text (None when there is none), to put back should the caller fail."""
    try:
        return path_of(ctx).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:  # a folder in its place, no permission…: one sentence, not a traceback
        raise MemexError(f"cannot read {rel_path(ctx)} ({exc.strerror or exc}); nothing was changed", FAILED) from None


def restore(ctx: Context, before: str | None) -> None:
    from git_memex.core.files import atomic_write_text

    path = path_of(ctx)
    if before is None:
        path.unlink(missing_ok=True)
    else:
        atomic_write_text(path, before)


def share(ctx: Context, name: str, url: str, branch: str | None) -> None:
    """Record org `name` in the committed file (replacing an entry of that name)."""
    why = url_problem(url)
    if why is not None:
        raise MemexError(f"the org repository URL {why}; nothing was changed", USAGE)
    try:
        path_of(ctx).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemexError(f"cannot write {rel_path(ctx)} ({exc.strerror or exc}); nothing was changed", FAILED) from None
    before = snapshot(ctx)
    try:  # each `git config` write is atomic; together they are made so by putting the file back
        _git_file(ctx, "--remove-section", f"org.{name}")
        _git_file(ctx, f"org.{name}.url", url)
        if branch:
            _git_file(ctx, f"org.{name}.branch", branch)
    except BaseException:
        restore(ctx, before)
        raise


def unshare(ctx: Context, name: str) -> bool:
    """Drop org `name` from the committed file; whether it was there. An emptied file is deleted."""
    path = path_of(ctx)
    if not path.is_file():
        return False
    named = {n.name for n in read(ctx)[0]}
    _git_file(ctx, "--remove-section", f"org.{name}")
    if not path.read_text(encoding="utf-8", errors="replace").strip():
        path.unlink()
    return name in named

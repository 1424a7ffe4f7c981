"""What names a project: `repo_id` (the SPEC's field), the natural project key, and the scope
key the reference tool files it under. Pure functions of the origin URL (or, without one, the
path); `Context` applies them to the repository it found (docs/project-keys.md).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

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


def repo_id(origin_url: str | None, fallback_path: Path) -> str:
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
    return f"{_slug(name)}-{repo_id(origin_url, root).split(':', 1)[1][:12]}"


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()
    return s[:40] or "project"


def parse_clone_dir(raw: str | None) -> tuple[tuple[int, int], str] | None:
    """`memex.cloneDir` (`DEV:INO:ROOT`, docs/project-keys.md) as ((dev, ino), root); None if malformed."""
    parts = (raw or "").split(":", 2)
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit() or not parts[2]:
        return None
    return (int(parts[0]), int(parts[1])), parts[2]


def is_that_git(stamp: tuple[tuple[int, int], str] | None, here: tuple[int, int] | None, root: str) -> bool:
    """The .git directory with (dev, ino) `here`, at main work tree `root`, is the one `stamp` names:
    the same device and inode, or the same inode at the same path (a device renumbered in place, as
    some container and network filesystems do). Two .git directories that exist at once never both
    pass: on one device their inodes differ, and two clones never share a path. The one rule by
    which a clone keeps its clone id, hence its key (`scopekeys`, `Context.project_key`)."""
    if stamp is None or here is None:
        return False
    (dev, ino), path = stamp
    return (dev, ino) == here or (ino == here[1] and path == root)

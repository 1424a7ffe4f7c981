"""Shared fixtures: every test runs with its own data root, HOME and git user (user.name, user.email)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
PEER_CASES = SHARED / "bench" / "peer-cases" / "open-memex-cases.json"
OWN_CASES = Path(__file__).resolve().parent / "data" / "protocol-cases.json"
PEER_MISSING = (
    f"the reference tool's vectors are not beside this checkout ({PEER_CASES}); "
    "our own vectors (tests/data/protocol-cases.json) ran instead"
)


# The developer's own data root and git config, as they are before any fixture changes HOME:
# no test may write there (`real_places_untouched`).
_REAL_HOME = Path(os.path.expanduser("~"))
_REAL_XDG_CONFIG = Path(os.environ.get("XDG_CONFIG_HOME") or _REAL_HOME / ".config")
REAL_PLACES = (
    _REAL_HOME / ".local" / "share" / "git-memex",
    *([Path(os.environ["XDG_DATA_HOME"]) / "git-memex"] if os.environ.get("XDG_DATA_HOME") else []),
    _REAL_HOME / ".gitconfig",
    _REAL_XDG_CONFIG / "git" / "config",
)


def _signature(place: Path, depth: int = 3) -> object:
    """What changes when anything is written in `place`: the file's (mtime, size, inode), or for a
    folder the same of every folder down to `depth` levels and of every file in the top two (a
    memory file written anywhere renames into its folder, which changes that folder's mtime;
    index.db is rewritten in place at the top). A few dozen stat calls; None when missing."""
    try:
        st = os.lstat(place)
    except OSError:
        return None
    sig: dict[str, tuple[int, int, int]] = {"": (st.st_mtime_ns, st.st_size, st.st_ino)}
    if not os.path.isdir(place) or os.path.islink(place):
        return sig
    todo = [(str(place), 0)]
    while todo:
        folder, level = todo.pop()
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        est = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if e.is_dir(follow_symlinks=False):
                        sig[e.path] = (est.st_mtime_ns, 0, est.st_ino)
                        if level + 1 < depth:
                            todo.append((e.path, level + 1))
                    elif level < 2:
                        sig[e.path] = (est.st_mtime_ns, est.st_size, est.st_ino)
        except OSError:
            continue
    return sig


@pytest.fixture(autouse=True)
def real_places_untouched() -> Iterator[None]:
    """Fail any test that writes into the developer's real `~/.local/share/git-memex` (or
    `$XDG_DATA_HOME/git-memex`) or their real git config (~/.gitconfig, ~/.config/git/config)."""
    before = [_signature(p) for p in REAL_PLACES]
    yield
    changed = [str(p) for p, b in zip(REAL_PLACES, before, strict=True) if _signature(p) != b]
    if changed:
        pytest.fail(f"this test wrote into the real {', '.join(changed)}; tests must use the temp HOME and "
                    "GIT_MEMEX_HOME that `isolated_env` sets", pytrace=False)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path_factory.mktemp("env")
    home = base / "home"
    home.mkdir()
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_MEMEX_HOME", str(base / "data"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    monkeypatch.delenv("GIT_MEMEX_CRASH_AT", raising=False)
    for agent in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):  # an agent's own folder: never the developer's
        monkeypatch.delenv(agent, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test User")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.com")
    return base


def git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def bare_and_clone(tmp_path: Path, clone: str = "org-seed") -> tuple[Path, Path]:
    """A bare repository `tmp_path/org.git` on main and a clone of it (org memory tests)."""
    remote = tmp_path / "org.git"
    git("init", "-q", "--bare", "-b", "main", str(remote))
    seed = tmp_path / clone
    git("clone", "-q", str(remote), str(seed))
    return remote, seed


def two_clones(tmp_path: Path) -> tuple[Path, Path]:
    """(mine, theirs): two clones of one bare remote on main, both set up by `git memex init`
    (mine's set-up committed and pushed first), mine's index built."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    git("clone", "-q", str(bare), str(mine))
    (mine / "README.md").write_text("x\n")
    git("add", "README.md", cwd=mine)
    git("commit", "-qm", "init", cwd=mine)
    assert run_cli("init", "--yes", cwd=mine).code == 0
    git("add", "-A", cwd=mine)
    git("commit", "-qm", "memex init", cwd=mine)
    git("push", "-q", "-u", "origin", "main", cwd=mine)
    git("clone", "-q", str(bare), str(theirs))
    assert run_cli("init", "--yes", cwd=theirs).code == 0
    assert run_cli("list", cwd=mine).code == 0  # the index exists
    return mine, theirs


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository with one commit, and the cwd inside it."""
    work = one_commit_repo(tmp_path / "work")
    monkeypatch.chdir(work)
    return work


def one_commit_repo(work: Path) -> Path:
    """`work` made a git repository on main with one commit (a README)."""
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "README.md").write_text("demo\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "init", cwd=work)
    return work


@pytest.fixture
def ready(repo: Path) -> Path:
    """`repo` set up by `git memex init` (hooks installed), the set-up committed."""
    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "set up git-memex", cwd=repo)
    return repo


@pytest.fixture
def nogit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "plain"
    d.mkdir()
    monkeypatch.chdir(d)
    return d


# What a build of the package reads: a copy of these is a clean source tree (tests that build a
# wheel or install into a new venv work on the copy, never in the checkout).
CHECKOUT_SOURCES = ("pyproject.toml", "README.md", "MANIFEST.in", "build_hooks.py", "man", "hooks", "git_memex")


def from_registry(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    """An install from a package registry (npm, pip's build download), tried once more after a
    pause when it fails: a registry's passing hiccup is not the failure a test looks for."""
    import time

    r = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if r.returncode != 0:
        time.sleep(5)
        r = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    return r


# What a user's default ~/.profile says about ~/.local/bin (Debian's /etc/skel/.profile; Ubuntu's is
# the same): a new login shell then finds what is linked there. Root's default ~/.profile lacks it.
USER_PROFILE = ('# set PATH so it includes user\'s private bin if it exists\n'
                'if [ -d "$HOME/.local/bin" ] ; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n')


def user_profile(home: Path) -> None:
    """Give `home` a user's login profile that puts ~/.local/bin on PATH (see USER_PROFILE)."""
    profile = home / ".profile"
    text = profile.read_text() if profile.is_file() else ""
    if USER_PROFILE not in text:
        profile.write_text(text + USER_PROFILE)


def copy_checkout(dest: Path) -> Path:
    """Copy this checkout's package sources (CHECKOUT_SOURCES, no caches) into `dest`; returns it."""
    root = Path(__file__).resolve().parents[1]
    dest.mkdir()
    for name in CHECKOUT_SOURCES:
        s = root / name
        if s.is_dir():
            shutil.copytree(s, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(s, dest / name)
    return dest


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> dict:
        return json.loads(self.out)


def run_cli(*args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None) -> Result:
    """Run the real command as a user (or git) would, in this process: `git_memex.main.main(argv)`
    with its own stdin, stdout and stderr, cwd and environment, the exit code and output exactly
    as `python -m git_memex` gives them (see tests/inprocess.py). Use `run_cli_process` where the
    process boundary is what is tested."""
    from inprocess import call_main

    merged = {**os.environ, **(env or {})}
    if merged.get("GIT_MEMEX_CRASH_AT") or merged.get("GIT_MEMEX_PAUSE_AT"):
        raise AssertionError("a crash or pause point ends or stops the process: use run_cli_process")
    code, out, err = call_main(list(args), input=input, cwd=cwd, env=env)
    return Result(code, out, err)


def run_cli_process(*args: str, input: str | None = None, cwd: Path | None = None,
                    env: dict | None = None) -> Result:
    """Run the real command in a new process (`python -m git_memex`): for what only a process
    shows (crash and pause points, start-up cost, signals, real file descriptors, concurrency)."""
    p = subprocess.run(
        [sys.executable, "-m", "git_memex", *args],
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=True,
        cwd=cwd or os.getcwd(),
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    return Result(p.returncode, p.stdout, p.stderr)


@pytest.fixture
def cli():
    return run_cli


def peer_cases() -> dict | None:
    """The reference tool's vectors, or None where ../shared is not beside the checkout."""
    if not PEER_CASES.is_file():
        return None
    return json.loads(PEER_CASES.read_text(encoding="utf-8"))


def own_cases() -> dict:
    return json.loads(OWN_CASES.read_text(encoding="utf-8"))


def _section(doc: dict, path: tuple[str, ...]) -> list:
    for key in path:
        doc = doc[key]
    return list(doc)


def vectors(*path: str, keep=None, ids=None) -> list:
    """pytest params for one section of the protocol vectors: ours always, then the peer's.

    Our own vectors (tests/data/protocol-cases.json) always run. The reference tool's run as
    an extra check when ../shared is beside the checkout; when it is not, one param stands in
    for them and is skipped with a visible reason, so a clone alone still passes.
    """
    out = []
    for origin, doc in (("own", own_cases()), ("peer", peer_cases())):
        if doc is None:
            out.append(pytest.param(None, id="peer-vectors-absent", marks=pytest.mark.skip(reason=PEER_MISSING)))
            continue
        cases = [c for c in _section(doc, path) if keep is None or keep(c)]
        assert cases, f"no {origin} vectors in section {'/'.join(path)}"
        out += [pytest.param(c, id=f"{origin}:{ids(c) if ids else i}") for i, c in enumerate(cases)]
    return out


# ------------------------------------------------------------------ the cross-index case (issue 14)
CROSS_INDEX_QUERY = "pangolin gateway timeout kestrel proxy"


def cross_index_case() -> tuple[str, str]:
    """Issue 14's repro, in the current repository: 30 personal fillers and one personal memory
    holding two of CROSS_INDEX_QUERY's words in the data root's index, one published memory
    holding all five alone in the repository's index. Returns (repository id, personal id)."""

    def add(*args: str) -> str:
        r = run_cli("add", *args, "--json")
        assert r.code == 0, r.err
        return r.json()["id"]

    fillers = ["backups", "coffee", "standup", "laptop", "invoices", "holidays", "printer", "badge"]
    for i in range(30):
        add(f"personal note {i}: remember the {fillers[i % 8]} on day {i * 7} of the {fillers[(i + 3) % 8]} plan",
            "--scope", "personal")
    personal = add("pangolin gateway has a dashboard", "--scope", "personal")
    shared = add("pangolin gateway timeout is 45 seconds behind the kestrel proxy")
    assert run_cli("submit", shared).code == 0
    for _ in ("approved", "published"):
        r = run_cli("promote", shared)
        assert r.code == 0, r.err
    return shared, personal



def grows_linearly(run, n: int, tries: int = 3, children: bool = False) -> tuple[bool, float, float]:
    """Whether `run`'s cost is linear in its size, by a reference measured here: `run(n // 4)` then
    `run(n)` are timed one after the other, and a linear cost grows ~4 times where a quadratic one
    grows 16 times; under 10 times passes. The time is this process's CPU time, not the wall
    clock: other processes loading the machine (CI shares it) do not count, though a cache or
    scheduling hiccup still can, so a pair that looks quadratic is timed again (up to `tries`
    pairs); a real quadratic cost fails every pair. Below 50 ms the larger run is too short to be
    a quadratic blow-up at the sizes these tests use (seconds to minutes), and timer noise would
    rule the ratio. `run` must do its work in this process (a child's CPU is not counted), or,
    with `children`, in child processes it waits for (a `git commit` and the hook git runs: the
    CPU of waited-for descendants is counted too).
    Returns (linear, seconds of the quarter-size run, seconds of the full one) of the last pair."""
    import os
    import time

    def cpu() -> float:
        if not children:
            return time.process_time()
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    small = big = 0.0
    for _ in range(tries):
        took = []
        for size in (n // 4, n):
            t = cpu()
            run(size)
            took.append(cpu() - t)
        small, big = took
        if big < 0.05 or big < 10 * small:
            return True, small, big
    return False, small, big


def commit_memory_files(work: Path, bodies: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Each body in its own project memory file (proposed) in the default memory folder, all
    staged, then one real `git commit` (the hooks `init` installed run): git's answer, and each
    name's path relative to the work tree (what the hook names a file by)."""
    from git_memex.core import frontmatter, model

    folder = work / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, body in bodies.items():
        m = model.create(body, scope="project", review_state="proposed")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), "utf-8")
        paths[name] = f".ai/open-memex/{m.id}.md"
    git("add", "-A", cwd=work)
    return git("commit", "-q", "-m", "notes", cwd=work, check=False), paths

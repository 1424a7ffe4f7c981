"""Hooks and the merge driver when git runs without git-memex on PATH, or after it moved.

git runs hooks and merge drivers with its caller's PATH: a GUI client, cron or a new terminal
usually lacks the venv. Every test here runs the real `git` with PATH=/usr/bin:/bin against
what `git memex init` really installed; "the tool moved" is simulated by pointing the
installed shim or driver at a path that does not exist (another machine's venv, an old one).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from git_memex.core.frontmatter import serialize
from git_memex.git.hook import driver_command

from conftest import run_cli

VENV_BIN = Path(sys.executable).parent
TOOL = VENV_BIN / "git-memex"
BARE_PATH = "/usr/bin:/bin"
GONE = "/nonexistent/old-venv/bin/git-memex"
MID = "01JHFQ8PMWKVX6KGZH2MXR6QJA"
REL = f".ai/open-memex/{MID}.md"
BODY = "Use sqitch for migrations.\n\nRollbacks run in CI.\n"
FM = {
    "id": MID, "schema_version": 2, "revision": 1, "scope": "project", "visibility": "internal",
    "type": "decision", "status": "active", "review_state": "proposed",
    "created_at": "2026-03-01T09:00:00Z", "updated_at": "2026-03-01T09:00:00Z",
    "tags": ["db", "postgres"],
}

pytestmark = pytest.mark.skipif(not TOOL.exists(), reason="needs the installed git-memex script (make install)")


@pytest.fixture(autouse=True)
def _no_tool_on_bare_path() -> None:
    for d in BARE_PATH.split(":"):
        assert not (Path(d) / "git-memex").exists(), f"{d}/git-memex exists; these tests need it absent"


def memory(body: str = BODY, **changes: object) -> str:
    return serialize({**FM, **changes}, body)


def git(cwd: Path, *args: str, path: str = BARE_PATH, check: bool = True):
    import subprocess

    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "PATH": path})
    if check:
        assert r.returncode == 0, f"git {' '.join(args)}: {r.stdout}{r.stderr}"
    return r


def init(repo: Path) -> None:
    """`git memex init` from a terminal where the venv is on PATH, as users run it."""
    r = run_cli("init", "--yes", cwd=repo, env={"PATH": f"{VENV_BIN}:{BARE_PATH}"})
    assert r.code == 0, r.err


def write(repo: Path, text: str, rel: str = REL) -> None:
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def hooks_folder(repo: Path) -> Path:
    p = Path(git(repo, "rev-parse", "--git-path", "hooks").stdout.strip())
    return p if p.is_absolute() else repo / p


@pytest.fixture(params=["gone", "dead-interpreter"])
def moved(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A command that cannot run: a path that is gone, or a script whose venv python is gone."""
    if request.param == "gone":
        return GONE
    script = tmp_path / "old-venv" / "bin" / "git-memex"
    script.parent.mkdir(parents=True)
    script.write_text("#!/nonexistent/old-venv/bin/python\nimport sys\n")
    script.chmod(0o755)
    return str(script)


def point_shims_at(folder: Path, command: str) -> None:
    """What a shim looks like on a machine where the tool it was written for is not there."""
    for f in folder.iterdir():
        text = f.read_text()
        if "# git-memex hook shim" in text:
            lines = [f"memex={command}" if line.startswith("memex=") else line for line in text.splitlines()]
            f.write_text("\n".join(lines) + "\n")


def point_driver_at(repo: Path, command: str) -> None:
    value = git(repo, "config", "merge.memex.driver").stdout.strip()
    assert str(TOOL) in value
    git(repo, "config", "merge.memex.driver", value.replace(str(TOOL), command))


def branches(repo: Path, ours: str, theirs: str) -> None:
    """`feature` commits theirs, `main` commits ours; main is checked out afterwards."""
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, theirs)
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    write(repo, ours)
    git(repo, "commit", "-q", "-am", "ours")


def committed_memory(repo: Path) -> None:
    write(repo, memory())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")


# ------------------------------------------------------------------ the merge driver
def test_driver_runs_by_absolute_path_when_git_has_no_venv_on_path(repo: Path) -> None:
    init(repo)
    committed_memory(repo)
    # Different fields on each side: a clean field merge for the driver.
    branches(repo, memory(tags=["db", "postgres", "sqitch"]),
             memory(BODY.replace("in CI.", "in CI, nightly."), importance="high"))
    r = git(repo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    text = (repo / REL).read_text()
    assert "Rollbacks run in CI, nightly." in text and "importance: high" in text  # theirs kept
    assert "sqitch" in text  # ours kept
    assert git(repo, "ls-files", "-u").stdout == ""


def test_driver_path_with_percent_signs_survives_git_expansion(repo: Path, tmp_path: Path) -> None:
    odd = tmp_path / "100%A sure %%" / "bin"
    odd.mkdir(parents=True)
    (odd / "git-memex").symlink_to(TOOL)
    init(repo)
    committed_memory(repo)
    git(repo, "config", "merge.memex.driver", driver_command([str(odd / "git-memex")]))
    branches(repo, memory(tags=["db", "postgres", "sqitch"]), memory(BODY.replace("in CI.", "in CI, nightly.")))
    r = git(repo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert doctor(repo, BARE_PATH)[1]["merge driver command"] == ("ok", str(odd / "git-memex"))


@pytest.mark.parametrize("path", [BARE_PATH, f"{VENV_BIN}:{BARE_PATH}"], ids=["tool-missing", "tool-on-path"])
def test_driver_whose_tool_moved_never_keeps_ours_silently(repo: Path, path: str, moved: str) -> None:
    init(repo)
    committed_memory(repo)
    point_driver_at(repo, moved)
    branches(repo, memory(BODY.replace("in CI.", "in CI on every PR.")),
             memory(BODY.replace("in CI.", "by hand."), importance="high"))
    r = git(repo, "merge", "--no-edit", "feature", path=path, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    text = (repo / REL).read_text()
    assert "Rollbacks run in CI on every PR." in text and "Rollbacks run by hand." in text
    assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text
    assert len(git(repo, "ls-files", "-u").stdout.splitlines()) == 3  # still conflicted
    if path == BARE_PATH:  # git merge-file's plain-text merge, said in one line
        assert "||||||| base\nRollbacks run in CI.\n" in text
        notes = [ln for ln in r.stderr.splitlines() if "git-memex" in ln]
        assert len(notes) == 1 and "git memex init" in notes[0] and REL in notes[0], r.stderr
    else:  # git-memex on PATH ran: a field merge (importance merged in, body conflicted)
        assert "conflict in body" in r.stderr
        assert "importance: high" in text


def test_driver_killed_midway_leaves_markers_not_ours(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver that dies (OOM killer, ^C) exits with neither 0 nor 1: both sides still land."""
    init(repo)
    committed_memory(repo)
    branches(repo, memory(BODY.replace("in CI.", "in CI on every PR.")), memory(BODY.replace("in CI.", "by hand.")))
    monkeypatch.setenv("GIT_MEMEX_CRASH_AT", "merge_driver.before_replace")  # os._exit(137) unwritten
    r = git(repo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 1
    text = (repo / REL).read_text()
    assert "Rollbacks run in CI on every PR." in text and "Rollbacks run by hand." in text
    assert "<<<<<<< ours" in text and "exit 137" in r.stderr


def test_driver_whose_tool_moved_keeps_both_sides_of_a_mergeable_change(repo: Path) -> None:
    init(repo)
    committed_memory(repo)
    point_driver_at(repo, GONE)
    branches(repo, memory(tags=["db", "postgres", "sqitch"]), memory(BODY.replace("in CI.", "in CI, nightly.")))
    r = git(repo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 1  # a human looks at a plain-text merge of a memory file
    text = (repo / REL).read_text()
    assert "sqitch" in text and "Rollbacks run in CI, nightly." in text


# ------------------------------------------------------------------ hook shims
def test_moved_tool_never_blocks_a_commit_without_memory_files(repo: Path, moved: str) -> None:
    init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "set up")
    point_shims_at(hooks_folder(repo), moved)
    (repo / "README.md").write_text("changed\n")
    r = git(repo, "commit", "-q", "-am", "no memory here", check=False)
    assert r.returncode == 0, r.stderr
    # A memory file staged and no tool to check it: refused, in one line saying how to fix it.
    write(repo, memory())
    git(repo, "add", REL)
    r = git(repo, "commit", "-q", "-m", "memory", check=False)
    assert r.returncode == 1
    notes = [ln for ln in r.stderr.splitlines() if "git-memex" in ln]
    assert len(notes) == 1 and "git memex init" in notes[0], r.stderr
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "no memory here"
    # git-memex on PATH: the shim falls back to it, and the real check runs.
    write(repo, memory(BODY + "\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"))
    git(repo, "add", REL)
    r = git(repo, "commit", "-q", "-m", "secret", path=f"{VENV_BIN}:{BARE_PATH}", check=False)
    assert r.returncode == 1 and "commit refused" in r.stderr and "cannot run" not in r.stderr, r.stderr
    write(repo, memory())
    git(repo, "add", REL)
    r = git(repo, "commit", "-q", "-m", "memory", path=f"{VENV_BIN}:{BARE_PATH}", check=False)
    assert r.returncode == 0, r.stderr


def test_missing_tool_judges_the_index_the_commit_records(repo: Path) -> None:
    """`commit -a` and `commit -- PATH` hand the hook a temporary index (GIT_INDEX_FILE)."""
    init(repo)
    committed_memory(repo)
    point_shims_at(hooks_folder(repo), GONE)
    write(repo, memory(importance="high"))  # modified in the work tree, not staged
    (repo / "README.md").write_text("changed\n")
    r = git(repo, "commit", "-q", "-am", "everything", check=False)  # -a stages the memory file
    assert r.returncode == 1 and "git memex init" in r.stderr, r.stderr
    git(repo, "add", REL)  # staged in the real index, but left out of this commit
    r = git(repo, "commit", "-q", "-m", "readme only", "--", "README.md", check=False)
    assert r.returncode == 0, r.stderr
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["README.md"]


def test_committed_hooks_path_shared_by_a_team(repo: Path, tmp_path: Path) -> None:
    """husky-style: a committed hooks folder; init never writes in it, each clone chains it, and
    a shim whose tool is gone on this machine falls back to git-memex on PATH."""
    team = repo / ".githooks"
    team.mkdir()
    (team / "pre-commit").write_text('#!/bin/sh\n[ -e .block ] && { echo "team lint failed" >&2; exit 1; }\nexit 0\n')
    (team / "pre-commit").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team hooks")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(repo), str(bob))
    git(bob, "config", "core.hooksPath", ".githooks")  # what husky's `prepare` script does
    init(bob)
    assert git(bob, "status", "--porcelain", "--", ".githooks").stdout == ""  # the committed folder is untouched
    point_shims_at(hooks_folder(bob), "/home/alice/.venv/bin/git-memex")  # a path of another machine
    (bob / ".block").write_text("")
    r = git(bob, "commit", "-q", "--allow-empty", "-m", "blocked", check=False)
    assert r.returncode == 1 and "team lint failed" in r.stderr, r.stderr
    (bob / ".block").unlink()
    (bob / "README.md").write_text("bob was here\n")
    r = git(bob, "commit", "-q", "-am", "docs", check=False)
    assert r.returncode == 0, r.stderr
    write(bob, memory())
    git(bob, "add", REL)
    r = git(bob, "commit", "-q", "-m", "memory", check=False)
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "git memex init" in r.stderr, r.stderr
    r = git(bob, "commit", "-q", "-m", "memory", path=f"{VENV_BIN}:{BARE_PATH}", check=False)
    assert r.returncode == 0, r.stderr  # bob's own git-memex on PATH checked and let it through


def test_memory_dir_setting_is_what_the_shim_checks(repo: Path) -> None:
    git(repo, "config", "memex.memoryDir", "notes/mem")
    init(repo)
    point_shims_at(hooks_folder(repo), GONE)
    write(repo, memory(), rel="notes/mem/x.md")
    git(repo, "add", "-A")
    r = git(repo, "commit", "-q", "-m", "memory", check=False)
    assert r.returncode == 1 and "git memex init" in r.stderr
    write(repo, memory(), rel=REL)  # the default folder is not the memory folder here
    git(repo, "reset", "-q")
    git(repo, "add", REL, ".gitattributes", "AGENTS.md")
    r = git(repo, "commit", "-q", "-m", "not memory", check=False)
    assert r.returncode == 0, r.stderr


# ------------------------------------------------------------------ doctor
def doctor(repo: Path, path: str) -> tuple[int, dict[str, tuple[str, str]]]:
    r = run_cli("doctor", "--json", cwd=repo, env={"PATH": path})
    checks: dict[str, tuple[str, str]] = {}
    for c in r.json()["checks"]:  # the worst of each name
        name = c["name"]
        if name not in ("merge driver command", "hook commands"):
            continue
        if name not in checks or RANK[c["level"]] > RANK[checks[name][0]]:
            checks[name] = (c["level"], c["detail"])
    return r.code, checks


RANK = {"ok": 0, "warn": 1, "fail": 2}


def test_doctor_checks_that_the_driver_and_shims_can_run(repo: Path, moved: str) -> None:
    init(repo)
    code, checks = doctor(repo, BARE_PATH)
    assert code == 0
    assert checks["merge driver command"][0] == "ok" and checks["hook commands"][0] == "ok"

    point_driver_at(repo, moved)
    point_shims_at(hooks_folder(repo), moved)
    code, checks = doctor(repo, BARE_PATH)
    assert code == 1
    level, detail = checks["merge driver command"]
    assert level == "fail" and moved in detail and "git memex init" in detail
    level, detail = checks["hook commands"]
    assert level == "fail" and "dangling" in detail and "git memex init" in detail
    code, checks = doctor(repo, f"{VENV_BIN}:{BARE_PATH}")  # works, but only with git-memex on PATH
    assert checks["merge driver command"][0] == "warn" and checks["hook commands"][0] == "warn"

    # The bare-name driver older versions registered: fails wherever git-memex is not on PATH.
    git(repo, "config", "merge.memex.driver", "git-memex merge-driver %O %A %B %P")
    code, checks = doctor(repo, BARE_PATH)
    assert checks["merge driver command"][0] == "fail"
    code, checks = doctor(repo, f"{VENV_BIN}:{BARE_PATH}")
    assert checks["merge driver command"][0] == "warn"
    init(repo)  # what doctor says to do
    code, checks = doctor(repo, BARE_PATH)
    assert code == 0 and checks["merge driver command"][0] == "ok" and checks["hook commands"][0] == "ok"


def test_doctor_flags_a_shim_written_by_an_older_version(repo: Path) -> None:
    init(repo)
    pre_commit = hooks_folder(repo) / "pre-commit"
    old = ("#!/bin/sh\n# git-memex hook shim (pre-commit). Installed by `git memex init`\n"
           f"if ! command -v {GONE} >/dev/null 2>&1; then exit 1; fi\nexec {GONE} hook pre-commit \"$@\"\n")
    pre_commit.write_text(old)
    code, checks = doctor(repo, f"{VENV_BIN}:{BARE_PATH}")
    level, detail = checks["hook commands"]
    assert code == 1 and level == "fail" and "pre-commit" in detail and "older git-memex" in detail
    init(repo)
    assert doctor(repo, BARE_PATH) == (0, {"merge driver command": ("ok", str(TOOL)),
                                           "hook commands": ("ok", "pre-commit, pre-merge-commit, post-merge, "
                                                             "post-checkout, post-rewrite")})


# ------------------------------------------------------------------ merge-driver CLI
def test_merge_driver_help_and_arity(repo: Path) -> None:
    r = run_cli("merge-driver", "--help")
    assert r.code == 0 and "usage:" in r.out and "BASE OURS THEIRS PATH" in r.out
    r = run_cli("merge-driver", "a", "b")
    assert r.code == 1 and "expected 4 arguments" in r.err

"""Personal data never lands in a work tree (docs/git.md, docs/security.md): a data root inside a
git work tree is refused before anything is written (unless git ignores it), and the guard of
`export`/`inventory` fails closed when git cannot answer (dubious ownership, a stray GIT_DIR)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_cli


def one_sentence(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_data_root_inside_a_work_tree_is_refused_and_nothing_is_committed(repo: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GIT_MEMEX_HOME", str(repo / ".memdata"))
    r = run_cli("add", "I keep my ssh keys on a yubikey", "--scope", "personal")
    assert r.code == 2
    assert "inside the git work tree" in one_sentence(r.err)
    assert not (repo / ".memdata").exists()
    git("add", "-A", cwd=repo)
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    doc = run_cli("doctor")
    assert doc.code != 0 and "inside the git work tree" in doc.err + doc.out


def test_a_data_root_git_ignores_is_allowed(repo: Path, monkeypatch: pytest.MonkeyPatch):
    (repo / ".gitignore").write_text(".memdata/\n")
    monkeypatch.setenv("GIT_MEMEX_HOME", str(repo / ".memdata"))
    r = run_cli("add", "I keep my ssh keys on a yubikey", "--scope", "personal")
    assert r.code == 0, r.err
    git("add", "-A", cwd=repo)
    assert git("status", "--porcelain", cwd=repo).stdout.split() == ["A", ".gitignore"]


def test_the_pre_commit_hook_refuses_the_data_root_once_git_stops_ignoring_it(repo: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    """The attack on the merged main: an ignored data root, then a teammate's change empties
    `.gitignore`, then `git add -A && git commit` committed the personal file and index.db."""
    (repo / ".gitignore").write_text(".memdata/\n")
    git("add", ".gitignore", cwd=repo)
    git("commit", "-qm", "ignore the data root", cwd=repo)
    assert run_cli("init", "--yes").code == 0
    monkeypatch.setenv("GIT_MEMEX_HOME", str(repo / ".memdata"))
    assert run_cli("add", "I keep my ssh keys on a yubikey", "--scope", "personal").code == 0
    (repo / ".gitignore").write_text("")
    git("add", "-A", cwd=repo)
    p = git("commit", "-qm", "everything", cwd=repo, check=False)
    assert p.returncode != 0, p.stdout + p.stderr
    assert "in the data root" in p.stderr and "git rm -r --cached .memdata" in p.stderr
    assert "yubikey" not in git("log", "-p", "--all", cwd=repo).stdout
    git("rm", "-rq", "--cached", ".memdata", cwd=repo)
    ok = git("commit", "-qm", "without the data root", cwd=repo, check=False)
    assert ok.returncode == 0, ok.stderr


def test_export_guard_fails_closed_with_a_stray_git_dir(repo: Path, tmp_path: Path):
    assert run_cli("add", "I like tabs", "--scope", "personal").code == 0
    elsewhere = tmp_path / "nowhere.git"
    r = run_cli("export", "--scope", "personal", "-o", str(repo / "bundle.json"),
                env={"GIT_DIR": str(elsewhere)})
    assert r.code == 2 and "work tree" in one_sentence(r.err)
    assert not (repo / "bundle.json").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root")
def test_export_and_inventory_guards_fail_closed_on_dubious_ownership(repo: Path, tmp_path: Path):
    assert run_cli("add", "I like tabs", "--scope", "personal").code == 0
    out = tmp_path / "theirs"
    git("init", "-q", str(out))
    for folder, dirs, files in os.walk(out):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.chown(name, 54321, 54321)
    os.chmod(out, 0o777)
    assert git("rev-parse", "--show-toplevel", cwd=out, check=False).returncode != 0  # git cannot answer
    r = run_cli("export", "--scope", "personal", "-o", str(out / "bundle.json"), cwd=repo)
    assert r.code == 2 and "work tree" in one_sentence(r.err)
    assert not (out / "bundle.json").exists()
    inv = run_cli("inventory", "--scope", "personal", "--out", str(out / "inv.txt"), cwd=repo)
    assert inv.code == 2 and "work tree" in one_sentence(inv.err)
    assert not (out / "inv.txt").exists()


def test_a_data_root_inside_the_git_folder_is_allowed(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GIT_MEMEX_HOME", str(repo / ".git" / "memdata"))
    r = run_cli("add", "I keep my ssh keys on a yubikey", "--scope", "personal")
    assert r.code == 0, r.err
    assert git("status", "--porcelain", cwd=repo).stdout == ""


def _give_away(folder: Path) -> None:
    for top, dirs, files in os.walk(folder):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.chown(name, 54321, 54321, follow_symlinks=False)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root")
@pytest.mark.parametrize("without_git", [False, True], ids=["git", "libgit2"])
def test_a_repository_of_another_owner_is_refused_until_trusted(ready: Path, tmp_path: Path, isolated_env: Path,
                                                                 without_git: bool) -> None:
    """A devcontainer: the repository belongs to another user and is not in safe.directory. Every
    command says so in one sentence with the `safe.directory` command (exit 2) and writes no
    draft under the folder's key; once trusted, the clone's key and drafts are as before."""
    first = run_cli("add", "the release train leaves on thursdays", "--json")
    assert first.code == 0, first.err
    key = git("config", "memex.projectKey", cwd=ready).stdout.strip()
    theirs = tmp_path / "theirs"
    subprocess.run(["cp", "-a", str(ready), str(theirs)], check=True)
    assert run_cli("list", cwd=theirs).code == 0  # the copy takes its key while still trusted
    copy_key = git("config", "memex.projectKey", cwd=theirs).stdout.strip()
    _give_away(theirs)
    outbox = isolated_env / "data" / "memories" / "outbox"
    before = sorted(p.relative_to(outbox) for p in outbox.rglob("*"))
    env = None
    if without_git:
        bin_dir = tmp_path / "only-python"
        bin_dir.mkdir()
        (bin_dir / "python").symlink_to(sys.executable)
        env = {"PATH": str(bin_dir)}
    for args in (("add", "a draft in the untrusted folder"), ("list",), ("search", "release"), ("init", "--yes"),
                 ("doctor",)):
        r = run_cli(*args, cwd=theirs, env=env)
        msg = one_sentence(r.err)
        assert r.code == 2, (args, r.err)
        assert f"git config --global --add safe.directory {theirs}" in msg and "another user" in msg, msg
    assert sorted(p.relative_to(outbox) for p in outbox.rglob("*")) == before  # no draft under a folder key
    git("config", "--global", "--add", "safe.directory", str(theirs))
    r = run_cli("add", "a draft once trusted", "--json", cwd=theirs)
    assert r.code == 0, r.err
    assert (outbox / copy_key / f"{r.json()['id']}.md").is_file() and copy_key != key

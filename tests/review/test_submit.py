"""The person is whoever git says (docs/project-keys.md, docs/git.md): `submit` commits with the
person `git commit` would name, wherever git found it (environment only, or only the file
`GIT_CONFIG_GLOBAL` names, which libgit2 does not read); `add` and `promote` name that person;
when git knows no person `submit` says how to set it and changes nothing, and works once it is set."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import frontmatter

from conftest import git, run_cli

MEM = ".ai/open-memex"
ROLES = ("AUTHOR", "COMMITTER")


def no_user_config(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No user.* in any config file git or libgit2 reads; returns the global config file."""
    cfg = isolated_env / "home" / ".gitconfig"
    cfg.write_text("[init]\n\tdefaultBranch = main\n")
    return cfg


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def status(repo: Path) -> str:
    return git("status", "--porcelain", "--untracked-files=all", cwd=repo).stdout


def journals(isolated_env: Path) -> list[Path]:
    j = isolated_env / "data" / "journal"
    return sorted(j.iterdir()) if j.is_dir() else []


def test_submit_with_person_only_in_the_environment(ready: Path, isolated_env: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    no_user_config(isolated_env, monkeypatch)
    for role in ROLES:
        monkeypatch.setenv(f"GIT_{role}_NAME", "Env Person")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "env@example.com")
    d = add("the billing job runs at two in the morning")
    draft = next((isolated_env / "data" / "memories" / "outbox").rglob(f"{d}.md"))
    assert frontmatter.parse(draft.read_text())[0]["created_by"] == "local:env@example.com"
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    log = git("log", "-1", "--format=%an <%ae>|%cn <%ce>", cwd=ready).stdout.strip()
    assert log == "Env Person <env@example.com>|Env Person <env@example.com>"
    p = run_cli("promote", d, "--json")
    assert p.code == 0, p.err
    hist = frontmatter.parse((ready / MEM / f"{d}.md").read_text())[0]["review_history"]
    assert hist[-1]["by"] == "local:env@example.com"


def test_submit_with_person_only_in_git_config_global(ready: Path, isolated_env: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    no_user_config(isolated_env, monkeypatch)  # $HOME/.gitconfig (libgit2 reads it): no user
    other = isolated_env / "elsewhere.gitconfig"
    other.write_text("[user]\n\tname = Global File\n\temail = global@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))
    for role in ROLES:
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    d = add("deploys freeze on friday afternoons")
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    log = git("log", "-1", "--format=%an <%ae>|%cn <%ce>", cwd=ready).stdout.strip()
    assert log == "Global File <global@example.com>|Global File <global@example.com>"


def test_submit_without_any_person_changes_nothing_and_works_once_set(
        ready: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = no_user_config(isolated_env, monkeypatch)
    cfg.write_text("[init]\n\tdefaultBranch = main\n[user]\n\tuseConfigOnly = true\n")
    for role in ROLES:
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    monkeypatch.delenv("EMAIL", raising=False)
    d = add("the cache warms up for ten minutes after a deploy")
    head, before = git("rev-parse", "HEAD", cwd=ready).stdout, status(ready)
    for _ in range(2):
        r = run_cli("submit", d)
        assert r.code == 2, r.err
        lines = [ln for ln in r.err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "git config --global user.email" in lines[0] and "Traceback" not in r.err
        assert status(ready) == before and git("rev-parse", "HEAD", cwd=ready).stdout == head
        assert journals(isolated_env) == []
    git("config", "--global", "user.name", "Late Setter")
    git("config", "--global", "user.email", "late@example.com")
    r = run_cli("submit", d, "--json")
    assert r.code == 0, r.err
    assert git("log", "-1", "--format=%ae", cwd=ready).stdout.strip() == "late@example.com"
    assert (ready / MEM / f"{d}.md").is_file() and journals(isolated_env) == []

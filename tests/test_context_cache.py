"""`paths.ContextCache`: the MCP server reuses its Context only while nothing it came from changed."""

from __future__ import annotations

import os
from pathlib import Path

from git_memex.core.paths import ContextCache

from conftest import git


def test_reused_while_nothing_changes(repo: Path) -> None:
    cache = ContextCache(repo)
    first = cache.get()
    assert cache.get() is first and cache.get() is first
    assert first.repo is not None and first.repo.work_tree == repo.resolve()


def test_repository_setting_is_seen_at_the_next_call(repo: Path) -> None:
    cache = ContextCache(repo)
    assert cache.get().int_setting("maxProjectMemories") == 8
    git("config", "memex.maxProjectMemories", "3", cwd=repo)
    assert cache.get().int_setting("maxProjectMemories") == 3


def test_global_setting_and_new_origin_are_seen(repo: Path) -> None:
    cache = ContextCache(repo)
    before = cache.get()
    assert before.origin_url is None
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a", encoding="utf-8") as fh:
        fh.write("[memex]\n\tinjectMaxTokens = 500\n")
    git("remote", "add", "origin", "https://example.com/team/app.git", cwd=repo)
    after = cache.get()
    assert after is not before
    assert after.int_setting("injectMaxTokens") == 500
    assert after.origin_url == "https://example.com/team/app.git"
    assert after.project_key != before.project_key  # personal memories follow the project's identity


def test_included_config_file_is_watched(repo: Path, tmp_path: Path) -> None:
    extra = tmp_path / "team.gitconfig"
    extra.write_text("[memex]\n\tmaxProfileItems = 2\n")
    git("config", "include.path", str(extra), cwd=repo)
    cache = ContextCache(repo)
    assert cache.get().int_setting("maxProfileItems") == 2
    extra.write_text("[memex]\n\tmaxProfileItems = 4\n")
    assert cache.get().int_setting("maxProfileItems") == 4


def test_relative_include_seen_from_a_subfolder(repo: Path) -> None:
    """git names repository-level config files relative to the work tree's top, not the cwd."""
    (repo / ".git" / "team.inc").write_text("[memex]\n\tmaxProfileItems = 2\n")
    git("config", "include.path", "team.inc", cwd=repo)
    sub = repo / "sub"
    sub.mkdir()
    cache = ContextCache(sub)
    assert cache.get().int_setting("maxProfileItems") == 2
    (repo / ".git" / "team.inc").write_text("[memex]\n\tmaxProfileItems = 4\n")
    assert cache.get().int_setting("maxProfileItems") == 4


def test_empty_or_missing_include_target_is_watched(repo: Path, tmp_path: Path) -> None:
    empty, missing = tmp_path / "empty.gitconfig", tmp_path / "later.gitconfig"
    empty.write_text("")
    git("config", "--add", "include.path", str(empty), cwd=repo)
    git("config", "--add", "include.path", str(missing), cwd=repo)
    cache = ContextCache(repo)
    assert cache.get().int_setting("maxProfileItems") == 5
    empty.write_text("[memex]\n\tmaxProfileItems = 4\n")
    assert cache.get().int_setting("maxProfileItems") == 4
    missing.write_text("[memex]\n\tmaxProfileItems = 3\n")
    assert cache.get().int_setting("maxProfileItems") == 3


def test_repository_created_later_is_found(nogit: Path) -> None:
    cache = ContextCache(nogit)
    assert cache.get().repo is None
    git("init", "-q", cwd=nogit)
    ctx = cache.get()
    assert ctx.repo is not None and ctx.repo.work_tree == nogit.resolve()

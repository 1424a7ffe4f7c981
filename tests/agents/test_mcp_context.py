"""The MCP server keeps a tool call's context while nothing it was read from changed
(`core.context.context_stamp`): a setting changed with `git config`, in the repository or the
global file, is seen at the next call, and a config that includes other files is read every call."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from git_memex.agents.mcp_server import Adapter
from git_memex.core import context

from conftest import git

SETTLED_S = 0.2


def settle() -> None:
    """Wait out the window in which a freshly written config file's stamp is not trusted (its
    ctime cannot be put back; the window is shortened here)."""
    time.sleep(SETTLED_S * 1.5)


@pytest.fixture
def adapter(ready: Path, monkeypatch: pytest.MonkeyPatch) -> Adapter:
    monkeypatch.setattr(context, "SETTLED_NS", int(SETTLED_S * 1e9))
    settle()
    return Adapter(ready)


def test_the_context_is_kept_until_a_setting_changes(adapter: Adapter, ready: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []
    real = context.start_git
    def counted(args: list[str], cwd: Path | None, **kw: bool) -> object:
        started.append(args)
        return real(args, cwd, **kw)

    monkeypatch.setattr(context, "start_git", counted)
    first = adapter.context()
    assert adapter.context() is first and adapter.context() is first
    assert len(started) == 2  # one rev-parse and one config, for three calls
    git("config", "memex.injectMaxTokens", "500", cwd=ready)  # the repository's config
    assert adapter.context().setting("injectMaxTokens") == "500"
    settle()
    git("config", "--global", "memex.maxProfileItems", "3")
    assert adapter.context().setting("maxProfileItems") == "3"


def test_a_config_that_includes_another_is_read_every_call(adapter: Adapter, ready: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra.gitconfig"
    extra.write_text("[memex]\n\tinjectMaxTokens = 600\n")
    git("config", "include.path", str(extra), cwd=ready)
    settle()
    a = adapter.context()
    assert a.setting("injectMaxTokens") == "600" and adapter.context() is not a
    extra.write_text("[memex]\n\tinjectMaxTokens = 700\n")  # the main config file is untouched
    assert adapter.context().setting("injectMaxTokens") == "700"


def test_a_config_written_a_moment_ago_is_not_trusted(adapter: Adapter, ready: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context, "SETTLED_NS", 60_000_000_000)
    git("config", "memex.injectMaxTokens", "450", cwd=ready)
    a = adapter.context()
    assert a.setting("injectMaxTokens") == "450" and adapter.context() is not a

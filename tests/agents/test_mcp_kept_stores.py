"""The MCP server keeps its open `Stores` between tool calls while nothing it was opened on changed
(`index.stores.Lender`, docs/speed.md): each call answers as it would with indexes opened afresh,
and a change an opening would see (the index files replaced, a setting, a failed call) opens them
again."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest

from git_memex import ops
from git_memex.agents.mcp_server import Adapter, build_server
from git_memex.core import context
from git_memex.core.context import Context
from git_memex.index import stores

from conftest import git, run_cli

SETTLED_S = 0.2


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Context]:
    """The contexts of every `Stores` opened during a tool call, in order (not the test's own
    `run_cli`, nor the session's start)."""
    got: list[Context] = []
    calls: list[str] = []

    class Counted(stores.Stores):
        def __init__(self, ctx: Context) -> None:
            if calls:
                got.append(ctx)
            super().__init__(ctx)

    real = Adapter.call

    def call(self: Adapter, tool: str, fn: Any) -> Any:
        calls.append(tool)
        try:
            return real(self, tool, fn)
        finally:
            calls.pop()

    monkeypatch.setattr(stores, "Stores", Counted)
    monkeypatch.setattr(Adapter, "call", call)
    return got


@pytest.fixture
def adapter(ready: Path, monkeypatch: pytest.MonkeyPatch) -> Adapter:
    monkeypatch.setattr(context, "SETTLED_NS", int(SETTLED_S * 1e9))
    time.sleep(SETTLED_S * 1.5)  # the set-up's config files are trusted (`context_stamp`)
    return Adapter(ready)


def search(adapter: Adapter, query: str) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def run(ctx: Context) -> Any:
        out.update(ops.search(ctx, query, scope="all", limit=8))
        return None

    adapter.call("memory_search", run)
    assert "hits" in out, out
    return out


def ids(res: dict[str, Any]) -> list[str]:
    return [h["id"] for h in res["hits"]]


def test_calls_share_one_opening_while_nothing_changed(adapter: Adapter, opened: list[Context]) -> None:
    a = run_cli("add", "The staging database is reset every Monday", "--json").json()["id"]
    first = search(adapter, "staging database")
    assert ids(first) == [a]
    for _ in range(3):
        assert search(adapter, "staging database") == first
    assert len(opened) == 1  # four calls, one opening of the indexes (it was one per call)


def test_a_file_written_between_calls_is_found(adapter: Adapter, ready: Path, opened: list[Context]) -> None:
    assert ids(search(adapter, "monday")) == []
    a = run_cli("add", "The staging database is reset every Monday", "--json").json()["id"]
    assert ids(search(adapter, "monday")) == [a]  # the refresh of each call still runs
    assert run_cli("forget", a).code == 0
    assert ids(search(adapter, "monday")) == []
    assert len(opened) == 1


def test_index_files_replaced_between_calls_are_opened_again(adapter: Adapter, ready: Path,
                                                             opened: list[Context]) -> None:
    a = run_cli("add", "The staging database is reset every Monday", "--json").json()["id"]
    assert ids(search(adapter, "staging")) == [a]
    ctx = adapter.context()
    for index in (ctx.home_index, ctx.repo_index):
        assert index is not None
        for f in index.parent.glob(index.name + "*"):
            f.unlink()  # what `doctor` does to a damaged index, from another process
    assert ids(search(adapter, "staging")) == [a]  # rebuilt from the files, not read from the old inode
    assert len(opened) == 2
    assert ctx.repo_index is not None and ctx.repo_index.exists()


def test_a_setting_changed_between_calls_opens_them_for_the_new_context(adapter: Adapter, ready: Path,
                                                                         opened: list[Context]) -> None:
    search(adapter, "staging")
    git("config", "memex.injectMaxTokens", "500", cwd=ready)
    search(adapter, "staging")
    assert len(opened) == 2 and opened[0] is not opened[1]
    assert opened[1].setting("injectMaxTokens") == "500"


def test_a_failed_call_does_not_leave_its_stores_kept(adapter: Adapter, opened: list[Context]) -> None:
    search(adapter, "staging")

    def fails(ctx: Context) -> Any:
        with stores.opened(ctx) as st:
            st.warnings.append("left by a call that failed")
            raise RuntimeError("boom")

    res = adapter.call("memory_search", fails)
    assert res.is_error
    after = search(adapter, "staging")
    assert len(opened) == 2  # opened afresh after the failure
    assert "left by a call that failed" not in after.get("warnings", [])


def test_each_call_starts_without_the_last_calls_warnings(adapter: Adapter, opened: list[Context]) -> None:
    def warns(ctx: Context) -> Any:
        with stores.opened(ctx) as st:
            st.warnings.append("said in one call only")
        return None

    adapter.call("memory_search", warns)
    assert "said in one call only" not in search(adapter, "staging").get("warnings", [])
    assert len(opened) == 1


def test_an_unusable_data_root_is_never_kept(adapter: Adapter, ready: Path, opened: list[Context],
                                              tmp_path: Path) -> None:
    search(adapter, "staging")
    root = adapter.context().data_root
    shutil.rmtree(root)
    root.write_text("not a folder")  # the data root is now a file: the stores open degraded
    try:
        for _ in range(2):
            res = search(adapter, "staging")
            assert any("data root" in w or str(root) in w for w in res.get("warnings", [])) or res["hits"] == []
        assert adapter.stores.held is None
    finally:
        root.unlink()


def test_the_server_over_the_sdk_client_answers_as_a_fresh_one(ready: Path, opened: list[Context],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context, "SETTLED_NS", int(SETTLED_S * 1e9))
    time.sleep(SETTLED_S * 1.5)
    run_cli("add", "The staging database is reset every Monday", "--json")
    run_cli("add", "Deploys to staging wait for the database reset", "--json")

    async def calls(n: int) -> tuple[list[Any], int]:
        async with mcp.Client(build_server(ready)) as client:
            before = len(opened)
            got = [(await client.call_tool("memory_search", {"query": "staging database"})).structured_content
                   for _ in range(n)]
            return got, len(opened) - before

    kept, openings = anyio.run(calls, 3)
    fresh = [anyio.run(calls, 1)[0][0] for _ in range(2)]
    assert kept[0] == kept[1] == kept[2] == fresh[0] == fresh[1]
    assert len(kept[0]["hits"]) == 2
    assert openings == 1  # three calls, one opening (it was one per call)


def test_another_thread_or_context_inside_a_call_opens_its_own(adapter: Adapter, ready: Path,
                                                               opened: list[Context]) -> None:
    """The semantic lane's thread, or code reading another context during a call, never gets (nor
    closes) the Stores lent to the call."""
    import threading

    from git_memex.core.context import load_context

    a = run_cli("add", "The staging database is reset every Monday", "--json").json()["id"]
    seen: dict[str, Any] = {}

    def run(ctx: Context) -> Any:
        with stores.opened(ctx) as lent:
            other = load_context(ready)
            with stores.opened(other) as mine:
                seen["other context"] = mine is not lent
            def elsewhere() -> None:
                with stores.opened(ctx) as theirs:
                    seen["other thread"] = theirs is not lent
            t = threading.Thread(target=elsewhere)
            t.start()
            t.join()
            seen["still usable"] = lent.count("m.id = ?", (a,))
        return None

    adapter.call("memory_search", run)
    assert seen == {"other context": True, "other thread": True, "still usable": 1}
    assert ids(search(adapter, "staging")) == [a]
    assert adapter.stores.held is not None

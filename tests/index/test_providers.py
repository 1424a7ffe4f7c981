"""Each store declares what it can do (V2-DESIGN §2): in `where --json` and at the MCP handshake.

The data root, the work tree and an org clone, through the real CLI and the official MCP client
(in memory, both handshakes, and the real stdio server).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from git_memex.agents.mcp_server import build_server
from git_memex.index import providers

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
ORG_ID = "01JORG00000000000000DEPLOY"


def org_remote(tmp_path: Path) -> Path:
    remote, seed = bare_and_clone(tmp_path)
    (seed / MEM).mkdir(parents=True)
    (seed / MEM / f"{ORG_ID}.md").write_text(
        f"---\nid: {ORG_ID}\nschema_version: 2\nscope: org\ntype: decision\nstatus: active\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\nDeploys go blue green.\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "one org memory", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    return remote


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in items}


def test_where_json_lists_each_store_with_its_capabilities(repo: Path, tmp_path: Path) -> None:
    w = run_cli("where", "--json").json()
    stores = by_name(w["providers"])
    assert set(stores) == {"data-root", "work-tree"}
    assert stores["data-root"] == {"name": "data-root", "kind": "local", "path": w["data_root"],
                                   "capabilities": {"read": True, "write": True, "delete": True,
                                                    "history": False, "sync": "none"}}
    tree = stores["work-tree"]
    assert tree["path"] == w["memory_dir"] and tree["kind"] == "git"
    assert tree["capabilities"] == {"read": True, "write": True, "delete": True, "history": True, "sync": "none"}

    git("remote", "add", "origin", str(tmp_path / "nowhere.git"), cwd=repo)  # pull and push have somewhere to go
    assert by_name(run_cli("where", "--json").json()["providers"])["work-tree"]["capabilities"]["sync"] == "bidirectional"

    assert run_cli("org", "add", "acme", str(org_remote(tmp_path))).code == 0
    w = run_cli("where", "--json").json()
    org = by_name(w["providers"])["org:acme"]
    assert org["kind"] == "git" and org["path"] == str(Path(w["data_root"]) / "org" / "acme")
    assert org["capabilities"] == {"read": True, "write": False, "delete": False, "history": True, "sync": "pull"}
    for p in w["providers"]:  # the protocol's shape, exactly
        assert list(p["capabilities"]) == list(providers.CAPABILITY_KEYS)
        assert p["capabilities"]["sync"] in providers.SYNC_VALUES

    text = run_cli("where").out
    assert "store org:acme" in text and "read history; sync pull" in text
    assert "store data-root" in text and "read write delete; sync none" in text

    # what the org clone declares is what it does: read here, never written or deleted here
    assert [h["id"] for h in run_cli("search", "deploys blue green", "--json").json()["hits"]] == [ORG_ID]
    for args in (("forget", ORG_ID), ("supersede", ORG_ID, "Deploys go red black")):
        r = run_cli(*args)
        assert r.code == 1 and "org memory" in r.err


def test_outside_a_repository_only_the_data_root(nogit: Path) -> None:
    assert [p["name"] for p in run_cli("where", "--json").json()["providers"]] == ["data-root"]


def test_the_mcp_handshake_declares_the_same_stores(repo: Path, tmp_path: Path) -> None:
    assert run_cli("org", "add", "acme", str(org_remote(tmp_path))).code == 0
    expected = run_cli("where", "--json").json()["providers"]

    async def handshake(mode: Any) -> Any:
        async with mcp.Client(build_server(repo), mode=mode) as client:
            return client.server_capabilities.experimental

    for mode in ("legacy", "auto"):  # initialize, and the 2026-07-28 server/discover
        experimental = anyio.run(handshake, mode)
        info = experimental["openmemex"]
        assert info["protocol"] == "0.2" and info["schema_version"] == 2
        assert info["providers"] == expected, mode


def test_the_real_stdio_server_says_them_at_initialize(repo: Path) -> None:
    expected = run_cli("where", "--json").json()["providers"]
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(repo))

    async def main() -> Any:
        with anyio.fail_after(90):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                return await s.initialize()

    init = anyio.run(main)
    assert init.capabilities.experimental["openmemex"]["providers"] == expected
    assert init.capabilities.tools is not None  # what the SDK derives is still there

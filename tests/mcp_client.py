"""The MCP server through the SDK's in-memory client, for tests in any folder (`from mcp_client import …`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp.types import CallToolResult

from git_memex.agents.mcp_server import build_server


def session(steps: Callable[[mcp.Client], Awaitable[Any]], cwd: Path | None = None) -> Any:
    """Run `steps` against a fresh server over the in-memory transport."""

    async def main() -> Any:
        async with mcp.Client(build_server(cwd)) as client:
            return await steps(client)

    return anyio.run(main)


def call(tool: str, args: dict[str, Any] | None = None, cwd: Path | None = None) -> CallToolResult:
    return session(lambda c: c.call_tool(tool, args or {}), cwd)


def text(res: CallToolResult) -> str:
    return "\n".join(getattr(b, "text", "") for b in res.content)


def ok(tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    res = call(tool, args)
    assert not res.is_error, text(res)
    assert isinstance(res.structured_content, dict)
    return res.structured_content


def err(tool: str, args: dict[str, Any] | None = None) -> str:
    res = call(tool, args)
    assert res.is_error, text(res)
    msg = text(res)
    assert msg and "\n" not in msg and "Traceback" not in msg, msg
    return msg

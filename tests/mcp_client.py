"""The MCP server through the SDK's in-memory client, for tests in any folder (`from mcp_client import …`).

`person=` makes the client one that can elicit (it declares the capability at initialize) and
stands for the person at the computer: it answers every `elicitation/create` with yes (True),
no (False), or cancel (None), and keeps the questions it was asked in `asked`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import types
from mcp.types import CallToolResult

from git_memex.agents.mcp_server import build_server


class Person:
    """An elicitation callback: the person's answer, and every question they were shown."""

    def __init__(self, answer: bool | None = True) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(str(getattr(params, "message", "")))
        if self.answer is None:
            return types.ElicitResult(action="cancel")
        return types.ElicitResult(action="accept", content={"confirm": self.answer})


def session(steps: Callable[[mcp.Client], Awaitable[Any]], cwd: Path | None = None,
            person: Person | None = None) -> Any:
    """Run `steps` against a fresh server over the in-memory transport."""

    async def main() -> Any:
        # the initialize handshake: a session with a channel back for `elicitation/create`
        mode = "legacy" if person is not None else "auto"
        async with mcp.Client(build_server(cwd), elicitation_callback=person, mode=mode) as client:
            return await steps(client)

    return anyio.run(main)


def call(tool: str, args: dict[str, Any] | None = None, cwd: Path | None = None,
         person: Person | None = None) -> CallToolResult:
    return session(lambda c: c.call_tool(tool, args or {}), cwd, person)


def text(res: CallToolResult) -> str:
    return "\n".join(getattr(b, "text", "") for b in res.content)


def ok(tool: str, args: dict[str, Any] | None = None, person: Person | None = None) -> dict[str, Any]:
    res = call(tool, args, person=person)
    assert not res.is_error, text(res)
    assert isinstance(res.structured_content, dict)
    return res.structured_content


def err(tool: str, args: dict[str, Any] | None = None, person: Person | None = None) -> str:
    res = call(tool, args, person=person)
    assert res.is_error, text(res)
    msg = text(res)
    assert msg and "\n" not in msg and "Traceback" not in msg, msg
    return msg

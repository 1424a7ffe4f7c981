"""The MCP server: the memory tools (the reference tool's eleven and memory_get), as a thin adapter over the core.

Design notes (costs measured by `python -m bench`, bench/README.md):

* Every call builds a fresh `Context` (two `git` calls) and lets the core open fresh `Stores`
  and `refresh()` the index, so a `git init`, a changed `memex.memoryDir` or person, and files
  changed by git or by hand while the editor keeps the server running are all seen at the next
  call. What that costs per call is measured in bench/ (`python -m bench`, the MCP rows).
* Core calls are serialized by one lock: the SDK runs sync tools on worker threads, and the core
  (secret scanner settings, the submit journal) was written for one command per process.
* Nothing but protocol on stdout: the SDK points fd 1 at stderr while it serves, and each core
  call runs with `sys.stdout` redirected to stderr so that a stray print cannot even sit in a
  buffer until exit. Logs go to stderr.
* A bad argument, an unknown id or any `MemexError` comes back as an error result
  (`isError: true`) with one sentence; the server keeps running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import ValidationError as ArgumentError

from git_memex import __version__
from git_memex.agents.mcp_schema import (
    ANNOTATIONS,
    DESCRIPTIONS,
    INSTRUCTIONS,
    OUTPUT_SCHEMAS,
    REFUSED,
    SERVER_NAME,
    argument_error,
    error,
    for_agents,
)
from git_memex.agents.mcp_tools import register_memory_tools, register_review_tools
from git_memex.agents.render import DISCLAIMER  # every block handed to an agent starts with it
from git_memex.errors import MemexError

if TYPE_CHECKING:
    from git_memex.core.context import Context

log = logging.getLogger("git_memex.mcp")

class MemexMCPServer(MCPServer):
    """MCPServer whose argument-validation failures read as one sentence, not a pydantic dump."""

    adapter: Adapter | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Every tool call; a MemexError raised anywhere on its way (the repository refused by
        git's ownership check, an unusable data root) reaches the client as that tool's error,
        one sentence, with no traceback on stderr."""
        try:
            return await self._call_tool(name, arguments, context)
        except MemexError as exc:
            if self.adapter is not None:
                return error(self.adapter.say(name, exc.message), exc.code)
            return error(exc.message, exc.code)
        except ToolError as exc:
            if isinstance(exc.__cause__, MemexError):
                return error(exc.__cause__.message, exc.__cause__.code)
            raise

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        """An unknown prompt, or an argument the prompt does not take, is an invalid-params error
        naming it masked (the SDK's own is an internal error with a traceback on stderr, quoting
        what was sent); a prompt that fails to render is one sentence, never a traceback."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {_sent(name)}")
        takes = sorted(a.name for a in prompt.arguments or [])
        unknown = sorted(set(arguments or {}) - set(takes))
        if unknown:
            said = ", ".join(f"`{_sent(str(u))}`" for u in unknown)
            raise MCPError(INVALID_PARAMS, f"Unknown argument(s) for prompt {name}: {said}; it takes "
                           + (", ".join(f"`{t}`" for t in takes) if takes else "no arguments"))
        try:
            return await super().get_prompt(name, arguments, context)
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - one sentence and one log line, never a traceback
            log.warning("prompt %s failed (%s: %s)", name, type(exc).__name__, _sent(str(exc)))
            raise MCPError(INTERNAL_ERROR, f"the prompt {name} could not be rendered; the server keeps running") from None

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        """The SDK's errors quote the URI as sent: masked here."""
        from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
        from mcp.shared.exceptions import MCPError

        try:
            return await super().read_resource(uri, context)
        except MCPError as exc:
            from git_memex.secrets.admission import mask_value

            raise MCPError(exc.code, _sent(exc.message), mask_value(exc.data)[0]) from None
        except ResourceNotFoundError as exc:  # the SDK would add the URI as sent, as `data`
            from mcp.types import INVALID_PARAMS

            raise MCPError(INVALID_PARAMS, _sent(str(exc)), {"uri": _sent(str(uri))}) from None
        except ResourceError as exc:  # a read that failed: the SDK logs it and says internal error
            raise type(exc)(_sent(str(exc))) from exc.__cause__

    async def _call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._tool_manager.get_tool(name) is None:  # the SDK's sentence quotes the name as sent
            return error(f"Unknown tool: {_sent(name)}", 1)
        if self.adapter is not None and self.adapter.wants_roots():
            await self.adapter.take_roots(context)
        from git_memex.core import caller

        caller.acting_for(f"mcp {name}")
        if self.adapter is not None:
            self.adapter.via = agent_via(client_name(context))
        known = self._tool_manager.get_tool(name)
        if known is not None:
            allowed = set((known.parameters or {}).get("properties", {}))
            unknown = sorted(set(arguments or {}) - allowed)
            if unknown:
                takes = ", ".join(f"`{a}`" for a in sorted(allowed)) or "no arguments"
                why = "".join(f" `{u}` is not taken on purpose: {REFUSED[(name, u)]}." for u in unknown
                              if (name, u) in REFUSED)
                return error(f"Unknown argument(s) for {name}: {', '.join(f'`{u}`' for u in unknown)}; "
                             f"it takes {takes}.{why}", 1)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ArgumentError):
                return error(argument_error(name, exc.__cause__), 1)
            raise


def _sent(text: str) -> str:
    """What the client sent, as an error quotes it: secrets masked, at most 200 characters."""
    from git_memex.secrets.redact import redact

    said = redact(text).text
    return said if len(said) <= 200 else said[:197] + "..."


# ------------------------------------------------------------------ the client, for `via`
KNOWN_HOSTS = {"claude-code": "claude-code", "claude": "claude-code", "codex": "codex", "codex-mcp-client": "codex",
               "visual studio code": "vscode", "vscode": "vscode", "cursor": "cursor", "opencode": "opencode",
               "copilot": "copilot", "github-copilot": "copilot", "zed": "zed", "windsurf": "windsurf",
               "mcp": "", "inspector": "inspector", "mcp-inspector": "inspector"}


def client_name(context: Any) -> str | None:
    """The `clientInfo.name` the client sent in `initialize`, or None."""
    for get in (lambda: context.connection.client_params,                   # this SDK's Context
                lambda: context.request_context.session.client_params):     # older ones
        try:
            params = get()
        except Exception:  # noqa: BLE001 - not this shape: try the next
            continue
        info = getattr(params, "client_info", None) or getattr(params, "clientInfo", None)
        name = getattr(info, "name", None)
        if isinstance(name, str) and name:
            return name
    return None  # a 2026-era request without client info, or no context: the plain road


def agent_via(name: str | None) -> str:
    """`via` of what this server writes: `mcp`, or `mcp:<host>` for the client the initialize named
    (`claude-code`, `codex`, `vscode`, ...; an unknown name as a slug of at most 32 characters).

    Always under `mcp`: a client cannot name itself into a person's road (`cli`), so what an
    agent writes stays an agent's, whatever its `clientInfo` says (docs/agents.md)."""
    import re

    if not name:
        return "mcp"
    key = " ".join(name.strip().lower().split())
    host = KNOWN_HOSTS.get(key)
    if host is None:
        host = re.sub(r"[^a-z0-9]+", "-", key).strip("-")[:32].strip("-")
    return f"mcp:{host}" if host else "mcp"


# ------------------------------------------------------------------ the adapter
class Adapter:
    """Runs one core operation per tool call: a context as fresh as the files it was read from (a
    setting, an origin or a repository created while the server runs is seen at the next call), one
    lock, stdout kept clean. The context is kept between calls while `context_stamp` says that
    every file `load_context` read is unchanged: two `git` processes less per call (~4 ms of CPU,
    a third of a `memory_search` at 10,000 memories)."""

    def __init__(self, cwd: Path | None, *, explicit: bool = False) -> None:
        self.cwd = Path(cwd) if cwd is not None else None
        self.lock = threading.Lock()
        self.roots_asked = explicit  # --repo / GIT_MEMEX_REPO: never ask the client
        self.via = "mcp"  # `mcp:<host>` once the client's initialize named it (agent_via)
        self.params: dict[str, dict[str, Any]] = {}
        """Each tool's input schema `properties`, for `say` (filled as the tools are registered)."""
        self._held: tuple[Path | None, Context, tuple[object, ...]] | None = None

    def say(self, tool: str, message: str) -> str:
        """A core message as the agent calling `tool` reads it: tools and that tool's arguments,
        not CLI commands and flags (`mcp_schema.for_agents`)."""
        return for_agents(message, self.params.get(tool))

    def context(self) -> Context:
        from git_memex.core.context import context_stamp, load_context

        held = self._held
        if held is not None and held[0] == self.cwd and context_stamp(held[1]) == held[2]:
            return held[1]
        ctx = load_context(self.cwd)
        stamp = context_stamp(ctx)
        self._held = None if stamp is None else (self.cwd, ctx, stamp)
        return ctx

    def wants_roots(self) -> bool:
        """Only as a fallback: no repository was named and the working folder is in none."""
        if self.roots_asked:
            return False
        with self.lock:
            if self.context().repo is not None:
                self.roots_asked = True
        return not self.roots_asked

    async def take_roots(self, context: Any) -> None:
        """Serve the first repository among the client's roots, when the client still sends them
        (roots are deprecated in the 2026-07-28 MCP specification: never depended upon)."""
        import warnings
        from urllib.parse import unquote, urlparse

        from git_memex.core.context import discover_repo

        self.roots_asked = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                listed = await context.request_context.session.list_roots()
            uris = [str(r.uri) for r in listed.roots]
        except Exception as exc:  # noqa: BLE001 - a client without roots: keep the working folder
            log.debug("no roots from the client (%s)", exc)
            return
        for uri in uris:
            parsed = urlparse(uri)
            if parsed.scheme != "file":
                continue
            folder = Path(unquote(parsed.path))
            if folder.is_dir() and discover_repo(folder) is not None:
                with self.lock:
                    self.cwd = folder
                log.info("serving %s, the client's root", folder)
                return

    def call(self, tool: str, fn: Callable[[Context], CallToolResult]) -> CallToolResult:
        from git_memex.core.model import ValidationError

        t0 = time.perf_counter()
        with self.lock, contextlib.redirect_stdout(sys.stderr):
            try:
                return fn(self.context())
            except MemexError as exc:
                return error(self.say(tool, exc.message), exc.code)
            except ValidationError as exc:
                return error(self.say(tool, str(exc)), 1)
            except Exception as exc:  # noqa: BLE001 - the last line of defence: one sentence, server lives
                log.exception("%s failed", tool)
                return error(f"internal error in {tool} ({type(exc).__name__}: {exc}); the server keeps "
                             "running; see its log (stderr) and report it", 2)
            finally:
                log.debug("%s took %.1f ms", tool, (time.perf_counter() - t0) * 1000)

def session_text(cwd: Path | None) -> str:
    """The session context block (approved rules, warnings, top knowledge) plus the outbox count,
    as the agent should see it at session start; "" when there is nothing to say or it fails."""
    from git_memex.agents.session import build_context
    from git_memex.core.context import load_context

    try:
        with contextlib.redirect_stdout(sys.stderr):
            ctx = load_context(cwd)
            text = build_context(ctx).text
            drafts = len(list(ctx.outbox_dir.glob("*.md"))) if ctx.repo is not None else 0
            from git_memex.git.reach import agent_note

            note = agent_note(ctx)
            if note:
                text += ("\n" if text else "") + note
    except Exception as exc:  # noqa: BLE001 - start-up must never fail because of the block
        log.warning("session context not computed (%s)", exc)
        return ""
    if drafts:
        text += ("\n" if text else "") + (f"{drafts} project memory draft(s) wait in this machine's outbox: "
                                          "memory_status lists them for the user to decide.")
    return text


def build_server(cwd: Path | None = None, *, explicit: bool = False) -> MCPServer:
    """The server with its tools; `cwd` is where the repository is looked up on each call.

    The handshake's `instructions` carry the session context block computed at start-up (most
    clients put server instructions into the system prompt); the `memex_context` prompt and the
    `memex://context` resource give the same block, computed afresh, on request."""
    level: Literal["DEBUG", "WARNING"] = "DEBUG" if os.environ.get("GIT_MEMEX_DEBUG") else "WARNING"
    block = session_text(cwd)
    instructions = INSTRUCTIONS + ("\n## This session's memory\n\n" + block if block else "")
    server = MemexMCPServer(name=SERVER_NAME, title="git-memex", version=__version__,
                            instructions=instructions, log_level=level)
    a = Adapter(cwd, explicit=explicit)
    server.adapter = a

    @server.prompt(name="memex_context", title="Project memory for this session",
                   description="The session context block: approved rules, matching warnings and the most "
                   "relevant project and personal memories, as historical knowledge.")
    def memex_context() -> str:
        with a.lock:
            return session_text(a.cwd) or DISCLAIMER + "\n\nNo memories to show yet."

    @server.resource("memex://context", name="session-context", title="Project memory for this session",
                     description="The session context block, computed afresh.", mime_type="text/markdown")
    def context_resource() -> str:
        with a.lock:
            return session_text(a.cwd) or DISCLAIMER + "\n\nNo memories to show yet."

    def tool(fn: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
        name = fn.__name__
        server.add_tool(fn, name=name, title=ANNOTATIONS[name].title, description=DESCRIPTIONS[name],
                        annotations=ANNOTATIONS[name])
        registered = server._tool_manager.get_tool(name)
        if registered is not None:  # say in the schema what call_tool enforces
            registered.parameters["additionalProperties"] = False
            a.params[name] = registered.parameters.get("properties", {})
            # what structuredContent holds on success (the client validates it; errors carry {error, code})
            registered.fn_metadata.output_schema = OUTPUT_SCHEMAS[name]
        return fn

    register_memory_tools(tool, a)
    register_review_tools(tool, a)
    announce_stores(server, a)
    return server


def protocol_info(a: Adapter) -> dict[str, Any]:
    """`capabilities.experimental.openmemex` at the handshake: the protocol and schema version, and
    what each store this server reads can do (docs/format.md, "Stores and what they can do")."""
    from git_memex.core.model import SCHEMA_VERSION
    from git_memex.core.protocol_schema import SCHEMA_ID

    info: dict[str, Any] = {"protocol": "0.2", "schema_version": SCHEMA_VERSION, "schema": SCHEMA_ID}
    try:
        from git_memex.index.providers import providers

        with a.lock, contextlib.redirect_stdout(sys.stderr):
            info["providers"] = providers(a.context())
    except Exception as exc:  # noqa: BLE001 - the handshake must never fail because of this block
        log.warning("store capabilities not computed (%s)", exc)
        info["providers"] = []
    return info


def announce_stores(server: MCPServer, a: Adapter) -> None:
    """Add `experimental.openmemex` to the capabilities the SDK derives, for both the `initialize`
    handshake and `server/discover` (both ask the low-level server's `get_capabilities`)."""
    low = server._lowlevel_server
    derive = low.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> Any:
        caps = derive(*args, **kwargs)
        return caps.model_copy(update={"experimental": {**(caps.experimental or {}), "openmemex": protocol_info(a)}})

    setattr(low, "get_capabilities", get_capabilities)  # noqa: B010 - an instance's method, replaced


def serve(cwd: Path | None = None) -> None:
    """Run the server on stdio until the client closes stdin; `cwd` is the repository named by
    --repo or GIT_MEMEX_REPO (None: the working folder, with the client's roots as a fallback)."""
    server = build_server(cwd or Path.cwd(), explicit=cwd is not None)
    stop = threading.Event()
    from git_memex.core.context import load_context
    from git_memex.search import semantic

    # the semantic lane, when on (its extra installed): embed what is missing while serving
    semantic.background(lambda: load_context(cwd or Path.cwd()), stop)
    import anyio

    from git_memex.agents.mcp_stdio import serve_stdio

    try:
        # the SDK's stdio transport, with every line vetted first: each request is answered
        anyio.run(serve_stdio, server._lowlevel_server)
    finally:
        stop.set()


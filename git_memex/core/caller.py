"""Who this process is acting for, in the words `sync-status` shows for the last sync.

Invariant: set once at the process's entry (the CLI's command, an agent hook, an MCP tool call)
and read only when an index refresh that had no trigger of its own changed the index; a refresh
that changed nothing records nothing, so `sync-status` never names itself for looking.
Standard library only: the hooks import it.
"""

from __future__ import annotations

NAME = "a command"
"""`git memex search`, `session start`, `mcp memory_search`, ...; the default for library callers."""


def acting_for(name: str) -> None:
    global NAME
    NAME = name

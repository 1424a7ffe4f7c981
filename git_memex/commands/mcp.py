"""`git memex mcp`: the MCP server on stdio; `--print-config CLIENT` prints the editor entry.

The MCP SDK costs ~500 ms to import (`mcp.server.mcpserver`, median of 5 `python -X importtime` runs), so it is imported only inside `run`: `git memex --help`
and every other command never pay for it.
"""

from __future__ import annotations

import argparse
import sys

# Kept here (not imported from git_memex.agents.clients) so that building the parser imports nothing.
CLIENT_CHOICES = ("vscode", "cursor", "claude", "codex", "opencode", "visualstudio")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", help="MCP server on stdio (for editors and agents)",
                       description="Run the MCP server on stdio: the memory tools memory_add, memory_search, "
                       "memory_list, memory_supersede, memory_forget, memory_status, memory_submit, memory_propose, "
                       "memory_promote, memory_resolve and memory_pr_status, for the repository around the current "
                       "folder, or the one --repo or GIT_MEMEX_REPO names. Nothing but protocol is written to stdout; logs go to stderr "
                       "(GIT_MEMEX_DEBUG=1 for per-call timings). With --print-config, print the server entry for "
                       "an editor's MCP configuration and exit.")
    p.add_argument("--repo", metavar="PATH", default=None,
                   help="serve the repository at PATH (default: $GIT_MEMEX_REPO, else the current folder); "
                   "for clients that start servers in / or in their own folder")
    p.add_argument("--print-config", metavar="CLIENT", choices=CLIENT_CHOICES,
                   help=f"print the MCP configuration snippet for CLIENT ({', '.join(CLIENT_CHOICES)}) and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.print_config:
        from git_memex.agents import clients

        sys.stdout.write(clients.snippet(args.print_config))
        note = clients.path_note(args.print_config, Path(clients.config_path(args.print_config, Path(), Path.home())))
        if note:
            print(note, file=sys.stderr)
        return 0
    import os

    from git_memex.errors import UsageError

    where = args.repo or os.environ.get("GIT_MEMEX_REPO") or None
    folder = None
    if where:
        folder = Path(where).expanduser()
        if not folder.is_dir():
            what = "--repo" if args.repo else "GIT_MEMEX_REPO"
            raise UsageError(f"{what} {where!r} is not a folder; give the path of the repository to serve")
        folder = folder.resolve()
    from git_memex.agents.mcp_server import serve

    serve(folder)
    return 0

"""`git memex remote-server`: the remote provider's reference server (docs/remote.md). Non-production."""

from __future__ import annotations

import argparse

LAN_WARNING = ("git-memex remote-server: warning: serving on {host}, beyond this machine: this sample server is "
               "not for production (plain HTTP, bearer tokens in a file, no ACL, HA, backup or encryption); "
               "use it on a trusted LAN only")


def _port(value: str) -> int:
    if not (value.isascii() and value.isdigit() and len(value) <= 5 and int(value) <= 65535):
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (0 to 65535; 0 picks a free one)")
    return int(value)


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (0.1 <= seconds <= 3600):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds from 0.1 to 3600")
    return seconds


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "remote-server", help="the non-production reference server of the remote provider (LAN only)",
        description="Serve one memory folder over HTTP for `git memex remote` clients: search, get, pull, "
        "history, propose (never an unreviewed write) and review, with bearer tokens from a file and an "
        "append-only audit log DIR/audit.jsonl. A sample for a trusted LAN, not a production service "
        "(docs/remote.md). The bound URL is printed on stderr.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1); a non-loopback address needs --lan")
    p.add_argument("--port", type=_port, default=8765, help="port to bind (default 8765; 0 picks a free port)")
    p.add_argument("--token-file", required=True, metavar="F",
                   help="one token per line, `TOKEN NAME ROLE` (ROLE: reader, proposer or reviewer), mode 0600")
    p.add_argument("--root", required=True, metavar="DIR",
                   help="the memory folder served (created if missing): the files, audit.jsonl, .remote/")
    p.add_argument("--redact-pattern", action="append", default=[], metavar="REGEX",
                   help="a team's secret format (repeatable): a proposal or note matching it is refused (422), "
                   "as a built-in secret is; added to the memex.redactPattern values of DIR's git config")
    p.add_argument("--read-timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="the longest wait for a client's next bytes while its request is not whole (default 30): "
                   "then it gets a 408 and its connection is closed; a client that sent nothing is just closed")
    p.add_argument("--lan", action="store_true",
                   help="allow a non-loopback --host, with a warning that this server is not for production")
    p.set_defaults(func=run)


def is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from git_memex.errors import UsageError

    host = args.host.strip("[]")
    if not host:
        raise UsageError("--host is empty; give an address such as 127.0.0.1")
    if not is_loopback(host):
        if not args.lan:
            raise UsageError(f"--host {host} is not a loopback address; this sample server is for a trusted LAN "
                             "only: pass --lan to serve beyond this machine")
        print(LAN_WARNING.format(host=host), file=sys.stderr, flush=True)
    from git_memex.remote.server import READ_TIMEOUT, check_patterns, serve

    patterns = check_patterns(args.redact_pattern)
    return serve("127.0.0.1" if host == "localhost" else host, args.port, Path(args.token_file), Path(args.root),
                 patterns, read_timeout=READ_TIMEOUT if args.read_timeout is None else args.read_timeout)

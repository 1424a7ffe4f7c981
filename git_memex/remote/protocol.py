"""The remote wire contract shared by the server and the client (docs/remote.md).

Kept free of heavy imports: the client imports it on the CLI path.
"""

from __future__ import annotations

import json

from ..core.model import is_valid_id

PROTOCOL = "openmemex/0.2"
SERVER_NAME = "git-memex remote-server"
API = "/v1"
# Largest request body the server reads (the propose JSON, file text included).
MAX_BODY = 256 * 1024

# Least to most: each role includes the ones before it.
ROLES = ("reader", "proposer", "reviewer")
DECISIONS = ("approve", "reject")

SEARCH_LIMIT_DEFAULT = 8
SEARCH_LIMIT_MAX = 50

# A pull answers at most `limit` memories (default, most) and stops adding files after about this
# many bytes; `more: true` says the cursor goes on.
PULL_LIMIT_DEFAULT = 200
PULL_LIMIT_MAX = 1000
PULL_PAGE_BYTES = 8 * 1024 * 1024


def role_rank(role: str) -> int:
    """0, 1, 2 for reader, proposer, reviewer; ValueError for anything else."""
    return ROLES.index(role)


def role_allows(have: str, need: str) -> bool:
    """Whether a token of role `have` may call an endpoint needing `need`."""
    return role_rank(have) >= role_rank(need)


def is_memory_id(value: object) -> bool:
    """The id shape of the core model (never a path): the one check both halves use."""
    return is_valid_id(value)


def error_body(message: str, **extra: object) -> dict[str, object]:
    """The JSON body of every error answer: `{"error": "<one sentence>"}` plus any extra keys
    (the 409 of a propose adds id, base_revision, current_revision)."""
    return {"error": message, **extra}


def error_json(message: str, **extra: object) -> bytes:
    return json.dumps(error_body(message, **extra)).encode()


def shown_url(url: str) -> str:
    """A remote's URL as it may be printed: ``scheme://host[:port][/path]``, never the user and
    password it may carry, nor its query or fragment (where tokens travel); "" when it is not an
    http(s) URL with a readable host (a hand-set ``memex.remote.NAME.url`` may hold anything).

    Read leniently and never raises: `remote add` refuses such URLs, but git config can be edited
    by hand, and a URL is shown where a bad one must cost nothing else (the session block, `remote
    list`, errors). Backslashes count as slashes (``http:\\\\ann:pw@host``, as browsers read them),
    a URL without a scheme is read as ``http://`` (``ann:pw@host:8731``), everything up to the
    last ``@`` of the authority is dropped, and an IPv6 host keeps its brackets."""
    import re

    text = str(url or "").strip().replace("\\", "/")
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):/*", text)
    if m and (m.group(1).lower() in ("http", "https") or "/" in m.group(0)):
        scheme, rest = m.group(1).lower(), text[m.end():]
    else:  # no scheme (`ann:pw@host:port`, `//host`)
        scheme, rest = "http", text.lstrip("/")
    if scheme not in ("http", "https"):
        return ""
    cut = len(rest)
    for sep in "/?#":
        i = rest.find(sep)
        if 0 <= i < cut:
            cut = i
    authority, tail = rest[:cut], rest[cut:]
    host = authority.rpartition("@")[2]
    hm = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::([0-9]{1,5}))?", host)
    if hm is None or (hm.group(2) is not None and not 0 < int(hm.group(2)) < 65536):
        return ""
    path = re.split(r"[?#]", tail, maxsplit=1)[0]
    path = path if re.fullmatch(r"[A-Za-z0-9._~!$&'()*+,;=:%/-]*", path) else ""
    return f"{scheme}://{hm.group(0).lower()}{path.rstrip('/')}"

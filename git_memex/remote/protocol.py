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

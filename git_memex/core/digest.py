"""SHA-1/SHA-256 hex digests from CPython's built-in hash modules.

`hashlib` starts OpenSSL on import (~2.3 ms here, against ~0.3 ms for `_sha1` and `_sha256`;
best of 5 runs of `python -X importtime -c 'import hashlib'`), and every command hashes something:
the project key, a content hash, a racy file. The built-in `_sha1`/`_sha2` (`_sha256` before
Python 3.12) give the same digests without that start-up; `hashlib` remains the fallback for
builds without them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SHA256: list[Any] = []  # the constructor, found once: a failed import is not cached by Python


def sha256_hex(data: bytes) -> str:
    if not _SHA256:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
        except ImportError:
            try:
                from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
            except ImportError:
                from hashlib import sha256
        _SHA256.append(sha256)
    return str(_SHA256[0](data).hexdigest())


def sha1_hex(data: bytes) -> str:
    try:
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1
    return sha1(data).hexdigest()


def blob_id(data: bytes, *, sha256: bool = False) -> str:
    """The id git gives a blob of these bytes (the hash of ``blob <size>\\0<data>``)."""
    return (sha256_hex if sha256 else sha1_hex)(b"blob %d\0" % len(data) + data)

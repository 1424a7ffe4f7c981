"""`git_memex.core.digest`: the built-in hash modules give exactly hashlib's digests."""

from __future__ import annotations

import hashlib

from git_memex.core.digest import sha1_hex, sha256_hex


def test_builtin_digests_equal_hashlib() -> None:
    for data in (b"", b"abc", "记住 memory".encode(), bytes(range(256)) * 40):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
        assert sha1_hex(data) == hashlib.sha1(data).hexdigest()

"""Detector family 4: a conservative high-entropy heuristic for ``name = value`` assignments."""

from __future__ import annotations

from collections.abc import Iterator

from git_memex.secrets.assignments import (
    _CAMEL_PARTS,
    _DOTTED_REF,
    _NON_SECRET_QUALIFIERS,
    _is_slug,
)
from git_memex.secrets.masking import _has_digit, _is_masked, _lazy

# (An unquoted value that starts with "//" is a URL's rest: `_high_entropy_candidates`.)
_HE_ASSIGN = _lazy(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
    r"(?P<oq>[\"'`])?(?P<v>[A-Za-z0-9_\-./+=~]{20,512})",
    before="[^A-Za-z0-9_.:/-]",
    after="[^A-Za-z0-9_\\-./+=~]",
)
_BENIGN_NAME_PARTS = frozenset(
    {
        "hash", "checksum", "digest", "integrity", "sha", "sha1", "sha256", "sha512", "md5",
        "etag", "fingerprint", "commit", "rev", "revision", "id", "uuid", "guid", "ulid",
        "version", "url", "uri", "href", "src", "path", "file", "dir", "name", "title", "image",
        "signature", "sig", "nonce", "salt", "iv", "ref", "branch", "tag", "class",
        "module", "package", "import", "from", "see", "link", "host", "domain", "email",
        "public", "pub", "publishable", "cert", "certificate", "crt", "challenge",
    }
)
_HEX = _lazy(r"[0-9a-fA-F]+")
_UUID = _lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ULID = _lazy(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
_SEMVER = _lazy(r"v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.-]+)?")
_LOWER_PATH = _lazy(r"[~.]?/?(?:[a-z0-9_.@+-]+/)+[a-z0-9_.@+-]*")
_HOSTNAME = _lazy(r"[\w-]+(?:\.[\w-]+)*\.[a-z]{2,12}")
_FILE_EXT = _lazy(r"\.[A-Za-z][A-Za-z0-9]{0,4}\Z")
_SRI = _lazy(r"(?:sha(?:1|224|256|384|512)|md5)[-:]")
_HE_THRESHOLD = 4.5  # bits/char; hex digests and prose stay near 4.0, random base62/64 goes above


def _pathish(value: str) -> bool:
    """ "app/EC2Co-EcsEl-1TKL…/targetgroup/…", "policy/S3/x.json": a path with word segments."""
    segments = [s for s in value.split("/") if s]
    if len(segments) < 2:
        return False
    if _FILE_EXT.search(segments[-1]):
        return True
    return len(segments) >= 3 and any(s.isalpha() and s.islower() and len(s) >= 4 for s in segments)


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    from math import log2

    n = len(s)
    counts: dict[str, int] = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / n * log2(k / n) for k in counts.values())


def _is_sequence(value: str) -> bool:
    """An alphabet such as "ABC…XYZabc…789": high entropy, but in order, so not random."""
    steps = sum(1 for a, b in zip(value, value[1:], strict=False) if ord(b) - ord(a) == 1)
    return steps * 2 >= len(value)


def _is_prose_base64(value: str) -> bool:
    """Base64 that decodes to readable text with spaces is encoded prose/data, not a key."""
    import binascii

    v = value.replace("-", "+").replace("_", "/")
    v += "=" * (-len(v) % 4)
    try:
        raw = binascii.a2b_base64(v)
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 12:
        return False
    printable = sum(1 for b in raw if 32 <= b < 127 or b in (9, 10, 13))
    return printable / len(raw) > 0.97 and raw.count(b" ") >= 2


def _high_entropy_value(value: str) -> bool:
    """Is ``value`` (assigned to some non-descriptive name) a random-looking credential?"""
    if _is_masked(value) or len(value) < 20:
        return False
    if not (_has_digit(value) and any(c.isalpha() for c in value)):
        return False  # random 24+ char strings nearly always mix both; identifiers rarely do
    if value.startswith(("/", "~/", "./", "../")) or "=/" in value or _pathish(value):
        return False  # a file path or resource path (mixed-case paths have high entropy too)
    if _HOSTNAME.fullmatch(value.rstrip(".")) or _UUID.search(value):
        return False  # a DNS name, or a resource name built around a UUID
    if sum(value.count(c) for c in "-_./") >= 2 and _is_slug(value.lower()):
        return False  # "Infra-ECS-Cluster-project-d6bb6d5b-EC2CapacityProvider": a name
    if (
        _HEX.fullmatch(value)
        or _UUID.fullmatch(value)
        or _ULID.fullmatch(value)
        or _SEMVER.fullmatch(value)
        or _LOWER_PATH.fullmatch(value)
        or _SRI.match(value)
        or (_DOTTED_REF.fullmatch(value) and "/" not in value)
    ):
        return False
    if _entropy(value) < _HE_THRESHOLD or _is_sequence(value):
        return False
    return not _is_prose_base64(value)


def _high_entropy_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    pos = 0
    while (m := _HE_ASSIGN.search(text, pos)) is not None:
        pos = max(m.end("name"), pos + 1)  # overlapping: "id=deploy_key=…" still sees deploy_key
        name, value = m.group("name"), m.group("v")
        if m.group("oq") is None and value.startswith("//"):
            continue  # "x: //host/…": the rest of a URL
        start = m.start("v")
        before = text[max(0, m.start() - 12) : m.start()]
        if "://" in before or "://" in value:
            continue  # a URL, not an assignment
        parts = {p.lower() for p in _CAMEL_PARTS.findall(name)}
        if len(name) <= 2 or parts & (_BENIGN_NAME_PARTS | _NON_SECRET_QUALIFIERS):
            continue  # "h1:<hash>" (go.sum) and "v2:" are scheme prefixes, not names
        if _high_entropy_value(value):
            yield f"high-entropy-secret:{name}", start, start + len(value)


def find_high_entropy_secret(text: str) -> str | None:
    """Rule id of the first high-entropy ``name = value`` assignment in ``text``, else None.

    Mirrors the peer's ``findHighEntropySecret`` so the shared test vectors can target the
    heuristic alone.
    """
    for rule, _start, _end in _high_entropy_candidates(text):
        return rule
    return None


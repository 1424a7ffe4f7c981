"""Detector family 1: private-key blocks (PEM, PuTTY). Vendor token formats are `formats`' table."""

from __future__ import annotations

from collections.abc import Iterator

from git_memex.secrets.masking import _lazy

# Four or five dashes, any case (a hand-copied key loses a dash or gets lower-cased); the name
# between BEGIN and PRIVATE is bounded so that a run of "BEGIN BEGIN …" stays linear.
_PEM_BEGIN = _lazy(r"(?i)-{4,5}[ \t]*BEGIN[ A-Z0-9]{0,40}PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-{4,5}")
_PEM_END = _lazy(r"(?i)-{4,5}[ \t]*END[ A-Z0-9]{0,40}PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-{4,5}")
_PEM_STRICT = _lazy(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_MATERIAL = _lazy(r"[ \t]*\r?\n(?:[\w-]+:[^\n]*\n|[ \t]*\r?\n){0,4}[ \t]*[A-Za-z0-9+/=]{16}")
# PuTTY .ppk (versions 2 and 3): the key is the base64 lines after "Private-Lines: N".
_PUTTY_PRIVATE = _lazy(
    r"(?i)\bPrivate-Lines:[ \t]*\d{1,4}[ \t]*\r?\n(?P<v>[A-Za-z0-9+/=]{8,}(?:[ \t]*\r?\n[A-Za-z0-9+/=]{4,})*)"
)


def _pem_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    low = text.lower()
    if "private-lines" in low:
        for m in _PUTTY_PRIVATE.finditer(text):
            yield "putty-private-key", m.start("v"), m.end("v")
    if "private" not in low or "----" not in text:
        return
    pos = 0
    end = None
    no_end = False  # no END line after some point means none after any later point: searched once
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        if not no_end and (end is None or end.start() < begin.end()):
            end = _PEM_END.search(text, begin.end())
            no_end = end is None
        if end is None:  # truncated key: everything after the header may be key material
            if not _PEM_STRICT.fullmatch(begin.group()) and not _PEM_MATERIAL.match(text, begin.end()):
                pos = begin.end()
                continue  # "the -----begin private key----- marker" is prose; the exact header is not
            yield "private-key-truncated", begin.start(), len(text)
            return
        yield "private-key-block", begin.start(), end.end()
        pos = end.end()

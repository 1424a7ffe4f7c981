"""What leaves the store for a reader: memory bodies with secrets and <private> parts masked.

Every write path masks secrets, but a memory file can also arrive by roads git-memex does not
guard: a teammate without its hooks, an edit or a merge on a hosting site. Search, list, sync
status and the session context therefore show a body only through `safe_bodies`, which runs the
secret detector once per distinct body and masks what it finds, as a write would have.

The verdict is remembered in the data root's index (`secret_checks`, keyed by the SHA-1 of the
exact body), so a body is scanned once, not at every search: the detector costs ~8 ms to load
and ~0.5 ms per body, which a search of known memories then no longer pays. `show` still prints
the file as it is: that is the file, not a summary handed on.
"""

from __future__ import annotations

from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.index.stores import Stores


def _needs_mask(body: str) -> bool:
    from git_memex.secrets.redact import find_secrets

    return "<private" in body.lower() or bool(find_secrets(body))


def safe_bodies(stores: Stores, items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """id -> the body fit to show, for (id, body as stored) pairs."""
    from git_memex.core.digest import sha1_hex

    items = list(items)
    keys = {mid: sha1_hex((body or "").encode("utf-8", "surrogatepass")) for mid, body in items}
    known = stores.home.secret_checks(set(keys.values()))
    new: dict[str, int] = {}
    out: dict[str, str] = {}
    for mid, body in items:
        body = body or ""
        key = keys[mid]
        found = known.get(key)
        if found is None:
            found = known[key] = new[key] = int(_needs_mask(body))
        if found:
            from git_memex.secrets.redact import redact

            body = redact(body).text
        out[mid] = body
    if new:
        stores.home.remember_secret_checks(new)
    return out

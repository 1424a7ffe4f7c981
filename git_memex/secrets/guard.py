"""What leaves the store for a reader: memory bodies with secrets and <private> parts masked.

Every write path masks secrets, but a memory file can also arrive by roads git-memex does not
guard: a teammate without its hooks, an edit or a merge on a hosting site. Search, list, sync
status and the session context therefore show a body only through `safe_bodies`, which runs the
secret detector once per distinct body and masks what it finds, as a write would have.

The verdict is remembered in the data root's index (`secret_checks`, keyed by the SHA-1 of the
exact body), so a body is scanned once, not at every search: the detector costs ~9 ms to load and
compile and ~0.2 ms per body (400 bodies of the bench's 10k corpus, 5 runs), which a search of known memories then no longer pays. Tags go through
`safe_tags`; export, inventory, `show --json` and resolve mask every other field with
`secrets.admission`. The text form of `show` still prints the file as it is: that is the file,
not a summary handed on.
"""

from __future__ import annotations

from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.index.stores import Stores


def _needs_mask(body: str, patterns: tuple[str, ...] = ()) -> bool:
    from git_memex.secrets.redact import find_secrets

    return "<private" in body.lower() or bool(find_secrets(body, patterns))


def safe_bodies(stores: Stores, items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """id -> the body fit to show, for (id, body as stored) pairs."""
    from git_memex.core.digest import sha1_hex

    items = list(items)
    patterns = stores.ctx.redact_patterns
    # The verdict depends on the team's patterns too (docs/team-patterns.md): with any, they are
    # part of the key, so adding one re-checks every body once.
    salt = "".join("\0" + p for p in patterns)
    keys = {mid: sha1_hex(((body or "") + salt).encode("utf-8", "surrogatepass")) for mid, body in items}
    known = stores.home.secret_checks(set(keys.values()))
    new: dict[str, int] = {}
    out: dict[str, str] = {}
    for mid, body in items:
        body = body or ""
        key = keys[mid]
        found = known.get(key)
        if found is None:
            found = known[key] = new[key] = int(_needs_mask(body, patterns))
        if found:
            from git_memex.secrets.redact import redact

            body = redact(body, patterns).text
        out[mid] = body
    if new:
        stores.home.remember_secret_checks(new)
    return out


def safe_tags(stores: Stores, items: Iterable[tuple[str, list[str]]]) -> dict[str, list[str]]:
    """id -> the tags fit to show, for (id, tags as stored) pairs: a file that arrived by another
    road (an org clone, a `--no-verify` commit) may carry a secret in a tag, which search and list
    output would hand on as it is. Checked once per distinct tag list, remembered like bodies."""
    from git_memex.core.digest import sha1_hex

    items = [(mid, list(tags)) for mid, tags in items]
    patterns = stores.ctx.redact_patterns
    salt = "".join("\0" + p for p in patterns)
    keys = {mid: sha1_hex(("\0tags\0" + "\n".join(tags) + salt).encode("utf-8", "surrogatepass"))
            for mid, tags in items if tags}
    known = stores.home.secret_checks(set(keys.values())) if keys else {}
    new: dict[str, int] = {}
    out: dict[str, list[str]] = {}
    for mid, tags in items:
        if not tags:
            out[mid] = tags
            continue
        key = keys[mid]
        found = known.get(key)
        if found is None:
            found = known[key] = new[key] = int(any(_needs_mask(t, patterns) for t in tags))
        if found:
            from git_memex.secrets.redact import redact

            tags = [redact(t, patterns).text for t in tags]
        out[mid] = tags
    if new:
        stores.home.remember_secret_checks(new)
    return out

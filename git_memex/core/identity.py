"""Who the person using git-memex is, spelled one way everywhere (``local:<email or name>``).

One function, `person`, gives the value written to ``created_by``, ``proposed_by``,
``approved_by`` and every ``review_history`` entry's ``by``, and compared by the instruction gate
(a personal rule passes only for its owner) and by the self-approval check. The protocol's
identities are namespaced (``local:…``, ``github:…``, ``oidc:…``); a local person is named by
git's ``user.email``, else ``user.name``, from the config `load_context` reads (one `git config`
call for every setting, identity included). Versions before this module wrote the bare
``user.name`` into ``proposed_by`` and ``approved_by``: `spellings` lists those older forms so
that a comparison still recognises them.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.paths import Context


def _names(ctx: Context) -> tuple[str | None, str | None]:
    """git's user.email and user.name, as `load_context` read them with the rest of the config."""
    email = ctx.config.get("user.email")
    name = ctx.config.get("user.name")
    return (str(email) if email else None), (str(name) if name else None)


def _local(email: str | None, name: str | None) -> str | None:
    who = email or name
    return f"local:{who}" if who else None


def person(ctx: Context) -> str | None:
    """``local:<user.email>``, else ``local:<user.name>``; None when git knows neither."""
    return _local(*_names(ctx))


def actor(ctx: Context) -> str:
    """`person`, or for a record that must name someone (a review step), ``local:<$USER>``."""
    return person(ctx) or f"local:{os.environ.get('USER') or 'unknown'}"


def spellings(ctx: Context) -> set[str]:
    """Every way this person's identity has been written: `person`, and the bare user.name and
    user.email older versions put in ``proposed_by`` and ``approved_by``."""
    email, name = _names(ctx)
    out = {actor(ctx)}
    for v in (email, name):
        if v:
            out |= {v, f"local:{v}"}
    return out

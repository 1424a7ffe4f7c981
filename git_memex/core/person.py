"""Who the person using git-memex is, spelled one way everywhere (``local:<email or name>``).

One function, `person`, gives the value written to ``created_by``, ``proposed_by``,
``approved_by`` and every ``review_history`` entry's ``by``, and compared by the instruction gate
(a personal rule passes only for its owner) and by the self-approval check. The protocol's
person names are namespaced (``local:…``, ``github:…``, ``oidc:…``); a local person is named by
the e-mail git would write into a commit's author line, else the name, taken exactly as git takes
it: ``GIT_AUTHOR_EMAIL``, then ``author.email``, then ``user.email`` (from the config
`load_context` reads with the user's `git`, so ``GIT_CONFIG_GLOBAL``, XDG and ``includeIf`` count),
and only when none is set, git itself (`git var GIT_AUTHOR_IDENT`: ``EMAIL``, a guess, or "none").
`commit_ident` gives the author and committer a commit we make is signed with, from `git var`
(pygit2's own ``default_signature`` reads neither the environment nor ``GIT_CONFIG_GLOBAL``);
libgit2 is asked only when no `git` can be started. Versions before this module wrote the bare
``user.name`` into ``proposed_by`` and ``approved_by``: `spellings` lists those older forms so
that a comparison still recognises them.

Comparing two spellings of a person is done here and only here: `person_key` (git's own trimming
of a name or e-mail, `without_crud`, then ``local:`` and ``Name <email>`` reduced to the e-mail,
case folded) for every "is this the same person?" check (self-approval, self-merge, the approver
a file names), and `email_key` (the same e-mail, lowercased, ASCII only) where a match grants
something (OWNERS, an approval record's author): there, a lookalike must never fold onto an owner.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context


NO_PERSON = ("git does not know who you are; set it with `git config --global user.name \"Your Name\"` "
               "and `git config --global user.email you@example.com`")
"""The one sentence (a caller appends what was not done) when git knows no person at all."""


_CRUD = frozenset(chr(c) for c in range(33)) | frozenset(".,:;<>\"\\'")


def without_crud(value: str) -> str:
    """A name or e-mail as git writes it into a commit's author line (ident.c,
    ``strbuf_addstr_without_crud``): spaces, control characters and ``. , : ; < > " \\ '`` removed
    from both ends, and ``<``, ``>`` and line breaks dropped inside. `` Bob@Example.COM `` from
    ``user.email`` is ``Bob@Example.COM`` in the commit, and so everywhere git-memex writes it."""
    start, end = 0, len(value)
    while start < end and value[start] in _CRUD:
        start += 1
    while end > start and value[end - 1] in _CRUD:
        end -= 1
    return "".join(c for c in value[start:end] if c not in "\n<>")


def _names(ctx: Context) -> tuple[str | None, str | None]:
    """The author e-mail and name git would use, in git's order (environment, author.*, user.*),
    trimmed as git trims them (`without_crud`); git itself is asked only when neither the
    environment nor the config names an e-mail."""
    email = os.environ.get("GIT_AUTHOR_EMAIL") or ctx.config.get("author.email") or ctx.config.get("user.email")
    name = os.environ.get("GIT_AUTHOR_NAME") or ctx.config.get("author.name") or ctx.config.get("user.name")
    email = without_crud(str(email)) if email else None
    name = without_crud(str(name)) if name else None
    if not email:
        got = commit_ident(ctx, "AUTHOR")
        if got is not None:
            name, email = name or got[0], got[1]
    return (email or None), (name or None)


_IDENT_RE = re.compile(r"^(.*?) ?<([^<>]*)> (\d+) ([+-])(\d\d)(\d\d)$")


def commit_ident(ctx: Context, role: str = "AUTHOR") -> tuple[str, str, int, int] | None:
    """(name, email, time, UTC offset in minutes) of the commit author (or ``COMMITTER``) exactly
    as `git commit` would write it here (`git var GIT_<ROLE>_IDENT`: environment, every config
    file git reads, ``EMAIL``, ``user.useConfigOnly``); None when git knows no person. Without a
    `git` to ask, libgit2's default signature of the repository, when it has one."""
    from git_memex.core.gitcmd import finish_git, start_git

    where = ctx.repo.work_tree if ctx.repo is not None else ctx.cwd
    r = finish_git(start_git(["var", f"GIT_{role}_IDENT"], where), timeout=60)
    if r is None:
        return _libgit2_ident(ctx)
    m = _IDENT_RE.match(r.stdout.strip()) if r.returncode == 0 else None
    if m is None or not m.group(2):
        return None
    offset = int(m.group(5)) * 60 + int(m.group(6))
    return m.group(1), m.group(2), int(m.group(3)), -offset if m.group(4) == "-" else offset


def _libgit2_ident(ctx: Context) -> tuple[str, str, int, int] | None:
    if ctx.repo is None:
        return None
    try:
        import pygit2  # as core.paths reads settings without git: libgit2 directly, no git room

        sig = pygit2.Repository(str(ctx.repo.work_tree)).default_signature
    except Exception:  # noqa: BLE001 - libgit2 knows no person (or no repository): none
        return None
    return sig.name, sig.email, sig.time, sig.offset


def _local(email: str | None, name: str | None) -> str | None:
    who = email or name
    return f"local:{who}" if who else None


def person(ctx: Context) -> str | None:
    """``local:<user.email>``, else ``local:<user.name>``; None when git knows neither."""
    return _local(*_names(ctx))


def actor(ctx: Context) -> str:
    """`person`, or for a record that must name someone (a review step), ``local:<$USER>``."""
    return person(ctx) or f"local:{os.environ.get('USER') or 'unknown'}"


def named_by(ctx: Context, by: str | None, role: str = "reviewer") -> str:
    """The person a review step records: always `actor` (git's identity). `by` is what a person
    typed after `--by`: accepted only when it is one of their own `spellings` (or `Name <email>`
    as git writes it), since a name typed there would otherwise reach `approved_by` and
    `review_history` unchecked; anything else is refused in one sentence (exit 1), before a
    file is touched."""
    who = actor(ctx)
    if by is None or not by.strip():
        return who
    email, name = _names(ctx)
    mine = spellings(ctx) | ({f"{name} <{email}>"} if name and email else set())
    if any(same_person(by, m) for m in mine):
        return who
    from git_memex.errors import USAGE, MemexError

    shown = f"{name} <{email}>" if name and email else who
    raise MemexError(f"--by names someone other than you: the {role} recorded is git's identity ({shown}), never "
                     "a name typed here; let that person run it with their own git identity, or leave --by out; "
                     "nothing was changed", USAGE)


def spellings(ctx: Context) -> set[str]:
    """Every way this person has been written: `person`, and the bare user.name and
    user.email older versions put in ``proposed_by`` and ``approved_by``."""
    email, name = _names(ctx)
    out = {actor(ctx)}
    for v in (email, name):
        if v:
            out |= {v, f"local:{v}"}
    return out


def person_key(who: object) -> str:
    """The form two spellings of one person are compared in ("" for nobody): git's trimming
    (`without_crud`), a ``local:`` prefix dropped, ``Name <email>`` reduced to the e-mail, case
    folded. ``local:ALICE@Example.com``, ``alice@example.com`` and ``Alice <alice@example.com>``
    are one person; ``github:alice`` keeps its namespace and is another."""
    if who is None:
        return ""
    w = str(who).strip()
    if w.startswith("<") and w.endswith(">") and w.count("<") == 1:
        w = w[1:-1]
    elif w.endswith(">") and " <" in w:  # Name <email>, as git prints an ident
        w = w[w.rindex(" <") + 2:-1]
    if w.startswith("local:"):
        w = w[len("local:"):]
    return without_crud(w).casefold()


def same_person(a: object, b: object) -> bool:
    """Whether `a` and `b` name the same person (`person_key`); nobody is never anybody."""
    ka = person_key(a)
    return bool(ka) and ka == person_key(b)


def email_key(who: str | None) -> str | None:
    """The e-mail a person is known by where a match grants something (OWNERS, the author of an
    approval record), lowercased: ``local:<email>``, ``<email>`` or a bare e-mail, trimmed as git
    trims it; None for anything that names no e-mail (a bare name, ``@team``, ``github:…``) and for
    a non-ASCII one (str.lower() folds lookalikes, the Kelvin sign K to k, onto ASCII e-mails)."""
    if not who:
        return None
    w = who.strip()
    if w.startswith("local:"):
        w = w[len("local:"):]
    if w.startswith("<") and w.endswith(">"):
        w = w[1:-1]
    w = without_crud(w)
    if "@" not in w or w.startswith("@") or any(c.isspace() for c in w) or ":" in w or not w.isascii():
        return None
    return w.lower()

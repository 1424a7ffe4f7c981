"""Which memory wins when two disagree: the seed's two precedence chains (docs/org.md, "Precedence").

Facts and preferences do not share one chain (docs/org.md, "Precedence"):

* **facts** (every type but ``preference``): security policy › authoritative docs › approved
  AGENTS.md › org memory › project memory › personal memory › AI inference;
* **preferences** (``type: preference``): explicit user request › personal › project › org
  (and an agent's inference after them all: it never outranks a person).

A memory never sits in the first tiers of either chain (policy, authoritative docs, AGENTS.md, the
user's own request): those are outside the memory store, and a memory that disagrees with them
loses. A memory's tier comes from where it lives, not from what it claims: ``location`` ``org:NAME``
is org, ``personal`` is personal, anything else (the repository, the outbox, a private memory)
is project; ``source: inference`` is inference whatever the location. The ``scope`` field is not
read (a file in the project repo that says ``scope: org`` is still the project's).

Pure functions, no I/O: `tier` works on an index row, a search `Hit` or a dict.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FACTS: tuple[str, ...] = ("policy", "authoritative-docs", "agents-md", "org", "project", "personal", "inference")
PREFERENCES: tuple[str, ...] = ("explicit-request", "personal", "project", "org", "inference")
CHAINS: dict[str, tuple[str, ...]] = {"fact": FACTS, "preference": PREFERENCES}


def _get(obj: Any, key: str) -> str | None:
    if isinstance(obj, Mapping):
        v = obj.get(key)
    else:
        try:
            v = obj[key]
        except (KeyError, IndexError, TypeError):
            v = getattr(obj, key, None)
    return None if v is None else str(v)


def kind(type_: str | None) -> str:
    """``preference`` for a preference, ``fact`` for every other type."""
    return "preference" if type_ == "preference" else "fact"


def place(location: str | None, source: str | None) -> str:
    """The tier name a memory's location and source give it (org, project, personal, inference)."""
    if source == "inference":
        return "inference"
    loc = location or "repo"
    if loc.startswith(("org:", "remote:")):  # a remote server is shared beyond the project, as an org repo
        return "org"
    if loc == "personal":
        return "personal"
    return "project"


def tier(memory: Any) -> dict[str, Any]:
    """``{"kind", "tier", "rank", "of"}``: the chain a memory is judged by, its tier there and that
    tier's 1-based position (1 wins) out of the chain's length."""
    k = kind(_get(memory, "type"))
    name = place(_get(memory, "location"), _get(memory, "source"))
    chain = CHAINS[k]
    return {"kind": k, "tier": name, "rank": chain.index(name) + 1, "of": len(chain)}


def sort_key(memory: Any) -> tuple[int, int]:
    """Facts before preferences, then the tier's rank: the order rules are shown in."""
    t = tier(memory)
    return (0 if t["kind"] == "fact" else 1, t["rank"])


def exact_text(body: str | None) -> str:
    """A body as "the same text" compares it: line ends unified, trailing spaces of each line and
    blank lines at either end dropped, everything else as written. Not the `content_hash` (which
    collapses every run of whitespace): two code snippets differing in indentation differ."""
    lines = (body or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def review_level(memory: Any) -> int:
    """`core.model.REVIEW_ORDER` of a memory's review standing (its `standing`; a personal memory,
    as no one reviews it, an unreviewed one)."""
    from git_memex.core.model import REVIEW_ORDER

    if _get(memory, "location") == "personal":
        return REVIEW_ORDER["draft"]
    return REVIEW_ORDER.get(_get(memory, "standing") or "draft", REVIEW_ORDER["draft"])


def one_fact_once(items: list[Any], key: Any = None, keep_apart: Any = None) -> tuple[list[Any], dict[str, list[Any]]]:
    """One fact, shown once (docs/search.md, "One fact, shown once"): items of the same text
    (`exact_text`: as written, modulo line ends and trailing spaces; never only the whitespace-
    normalised `content_hash`, which is the cheap first test) and the same role, at two tiers or
    more (`tier`: org, project, personal, inference), such as an org copy promoted from a project
    memory and the project original, or a personal memory and its proposed copy, become one, at the
    place of the first of them. Identical texts of one tier (the repository and the outbox, two
    orgs: precedence cannot choose between them; a hand-made copy, which audit reports) are left
    as they are, so moving a memory between the repository and the outbox changes nothing. A rule
    and knowledge never merge (a served rule is never shown as something else), nor does an item
    `keep_apart` says so of (search keeps every rule apart: whether it is served is the gate's to
    say, and an unserved copy must never stand in for a served one).

    The one kept is never less reviewed than another, and otherwise the one precedence prefers: an
    active one first, then the highest review level (`review_level`: an org copy still proposed
    never stands in for the published project original, nor a rejected copy for anything), then
    `sort_key` (for facts org › project › personal, for preferences personal › project › org), then
    the earlier. The others are returned as its copies (rows, by the kept row's id), so a caller
    names them: nothing is dropped silently. `key` gives an item's row (default: the item is the
    row); the order of the items is kept otherwise."""
    get = key or (lambda x: x)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, x in enumerate(items):
        row = get(x)
        h = _get(row, "content_hash")
        if h and not (keep_apart is not None and keep_apart(row)):
            groups.setdefault((h, _get(row, "role") or "knowledge", exact_text(_get(row, "body"))), []).append(i)
    for g in [g for g, v in groups.items() if len({tier(get(items[j]))["tier"] for j in v}) < 2]:
        del groups[g]  # one tier: precedence has nothing to choose
    if not groups:
        return items, {}
    member = {j: g for g, v in groups.items() for j in v}
    out: list[Any] = []
    copies: dict[str, list[Any]] = {}
    done: set[tuple[str, str, str]] = set()
    for i, x in enumerate(items):
        grp = member.get(i)
        if grp is None:
            out.append(x)
            continue
        if grp in done:
            continue
        done.add(grp)
        members = groups[grp]
        keep = min(members, key=lambda j: (_get(get(items[j]), "status") not in (None, "active"),
                                           -review_level(get(items[j])), sort_key(get(items[j])), j))
        out.append(items[keep])
        copies[str(_get(get(items[keep]), "id"))] = [get(items[j]) for j in members if j != keep]
    return out, copies


_MEMORY_TIERS = ("org", "project", "personal", "inference")
"""The tiers a memory can be in (the others are outside the store), named in a `prefer` sentence."""

REVIEW_RANK: dict[str | None, int] = {"published": 0, "approved": 0, "proposed": 1, "draft": 2, None: 2, "rejected": 3}
"""Within one tier, where two memories disagree: reviewed knowledge (approved, published) before
a proposal, before a draft (user guide §5: reviewed knowledge ranks above drafts)."""


def standing(memory: Any) -> str | None:
    """The review state precedence trusts: `core.model.standing`, the one rule ranking and every
    label use (where a memory is and what proves it; its file's ``review_state`` is only a claim).
    Where the memory carries ``standing`` (the index column that computes it at index time), that;
    else it is computed from the memory's file (``path``), read only when the claim is a reviewed
    state (``approved``, ``published``) that needs its recorded step: read only where two memories
    disagree (`prefer`), so the file read is paid per pair found. A file that cannot be read
    proves nothing: its reviewed claim stands as ``proposed``."""
    from git_memex.core import model

    if isinstance(memory, Mapping):
        if "standing" in memory:
            return memory["standing"] or None
    elif hasattr(memory, "keys") and "standing" in memory.keys():  # noqa: SIM118 (a sqlite3.Row: `in` tests its values)
        return _get(memory, "standing")
    claim = _get(memory, "review_state")
    loc = str(_get(memory, "location") or "")
    if claim not in model.REVIEWED_STATES or loc in ("personal", "outbox", "private") or loc.startswith("remote:"):
        return model.standing(loc, {"review_state": claim})
    fm = _file_fm(_get(memory, "path"))
    if fm is None:
        return "proposed"
    return model.standing(loc, {**fm, "review_state": claim})


def _file_fm(path: Any) -> dict[str, Any] | None:
    """The frontmatter of the memory file at `path`, or None when there is none to read."""
    if not path:
        return None
    from pathlib import Path

    from git_memex.core.files import read_memory
    from git_memex.errors import MemexError

    try:
        return dict(read_memory(Path(str(path))).fm)
    except (OSError, ValueError, MemexError):
        return None


def _review(memory: Any) -> str | None:
    return standing(memory)


def prefer(a: Any, b: Any) -> tuple[Any | None, str]:
    """Of two memories that disagree, the one precedence prefers (`a` or `b` itself) and why, in
    one sentence; (None, why) when precedence does not decide (one tier, one review state; or a
    fact against a preference, whose chains differ). Never a verdict on which is true: the other
    is still shown, and a person decides."""
    ta, tb = tier(a), tier(b)
    if ta["kind"] != tb["kind"]:
        return None, "one is a preference and the other a fact, judged by different chains: precedence does not decide"
    chain = " › ".join(n for n in CHAINS[ta["kind"]] if n in (ta["tier"], tb["tier"]) or n in _MEMORY_TIERS)
    if ta["rank"] != tb["rank"]:
        win, lose = (a, ta), (b, tb)
        if tb["rank"] < ta["rank"]:
            win, lose = lose, win
        return win[0], f"{win[1]['tier']} outranks {lose[1]['tier']} ({ta['kind']}s: {chain})"
    va, vb = _review(a), _review(b)  # each may read its file: once a memory
    ra, rb = REVIEW_RANK.get(va, 2), REVIEW_RANK.get(vb, 2)
    if ra != rb:
        (win, sw), (_lose, sl) = sorted(((a, va or "draft"), (b, vb or "draft")),
                                       key=lambda x: REVIEW_RANK.get(x[1], 2))
        return win, f"both {ta['tier']}; {sw} outranks {sl} (reviewed knowledge before drafts)"
    state = va or ("unreviewed" if ta["tier"] == "personal" else "draft")
    return None, f"both {ta['tier']} and {state}: precedence does not decide"

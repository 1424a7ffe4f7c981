"""The person behind an MCP client: what needs them, and how a tool asks them.

Invariants (docs/agents.md, "Callers have roles"):

* An MCP caller is an agent. No tool argument names a person, a trust level or `via`; a tool
  never approves, reviews, carries a personal memory into the project, or switches an approved
  rule off on the agent's say-so.
* Those acts are the person's. Over MCP the person does them by answering an elicitation
  (`elicitation/create`, form mode) that the client shows them, with `confirm: true`. A decline,
  a cancel, an error, or a client that declared no elicitation capability at `initialize` is a
  refusal: nothing is changed and the error names the CLI command the person runs instead.
* Only a client that keeps a channel back (the initialize handshake: stdio, or the in-memory
  client in legacy mode) can be asked; a request without one counts as "cannot ask".
* The person recorded is the one git knows (`person.actor`), as the CLI records it.
* The question is asked outside the adapter's lock (a person may take minutes); what was shown
  is handed back to the core, which refuses when the memory changed in between.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, Field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context

log = logging.getLogger("git_memex.mcp")
Answer = Literal["yes", "no", "cannot"]


class Confirm(BaseModel):
    """The one field a person fills in."""

    confirm: bool = Field(strict=True, description="Yes: I, the person at this computer, do this myself.")


def can_elicit(mctx: Any) -> bool:
    """Whether the client declared the elicitation capability at `initialize`."""
    try:
        caps = mctx.request_context.session.client_capabilities
    except Exception:  # noqa: BLE001 - no session, no request: no person to ask
        return False
    return caps is not None and getattr(caps, "elicitation", None) is not None


def ask(mctx: Any, message: str) -> Answer:
    """Ask the person through the client (from a tool's worker thread); "yes" only on an accepted
    form with confirm true."""
    import anyio.from_thread
    from mcp.shared.exceptions import NoBackChannelError

    if mctx is None or not can_elicit(mctx):
        return "cannot"
    try:
        res = anyio.from_thread.run(mctx.elicit, message, Confirm)
    except NoBackChannelError:  # a 2026-07-28 request without a channel back to the client
        return "cannot"
    except Exception as exc:  # noqa: BLE001 - a client that fails to answer has not said yes
        log.info("elicitation failed (%s): taken as no", exc)
        return "no"
    if getattr(res, "action", None) == "accept" and getattr(getattr(res, "data", None), "confirm", False) is True:
        return "yes"
    return "no"


def refusal(answer: Answer, act: str, command: str) -> str:
    """One sentence: why nothing happened and the exact command the person runs instead."""
    if answer == "cannot":
        why = "this MCP client cannot ask the user (it declared no elicitation capability, or the request has no channel back)"
    else:
        why = "the user did not confirm it"
    return (f"Nothing was changed: {act} is the user's own decision and {why}; "
            f"ask the user to run `{command}` themselves.")


def quoted(text: str) -> str:
    """A memory's text as the person reads it in the question: whole (what they agree to is
    what is written), each line indented under a quote mark."""
    return "\n".join("> " + line for line in (text or "").strip().splitlines()) or "> (empty)"


def reviewed_memory(ctx: Context, memory_id: str) -> dict[str, Any] | None:
    """The reviewed knowledge behind `memory_id` (a repository copy whose file says approved or
    published: what the team reviewed and every agent session is shown first), as {id, text,
    state}; None otherwise. Reads only. The file's word is enough here: asking the person about a
    memory that only claims review costs a question, never a change nobody agreed to."""
    from git_memex.core.files import read_memory
    from git_memex.index.stores import opened

    with opened(ctx, None) as st:
        st.refresh()
        mid = st.find_changeable(memory_id).row["id"]
        for found in st.find_all(mid):
            if found.row["location"] == "personal":
                continue
            m = read_memory(found.path)
            if m.fm.get("review_state") in ("approved", "published"):
                return {"id": m.id, "text": m.body, "state": m.fm["review_state"]}
    return None


def approved_rule(ctx: Context, memory_id: str) -> dict[str, Any] | None:
    """The approved rule (role instruction, instruction_state approved) behind `memory_id`, in any
    of its copies, as {id, text}; None when it is no approved rule. Reads only. An org or remote
    memory is refused first (`Stores.find_changeable`, the CLI's sentence): it is read-only here,
    whatever its file says, so nobody is asked about it."""
    from git_memex.core.files import read_memory
    from git_memex.index.stores import opened

    with opened(ctx, None) as st:
        st.refresh()
        mid = st.find_changeable(memory_id).row["id"]
        for found in st.find_all(mid):
            m = read_memory(found.path)
            if m.fm.get("role") == "instruction" and m.fm.get("instruction_state") == "approved":
                return {"id": m.id, "text": m.body}
    return None

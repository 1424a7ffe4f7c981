"""What each memory store can do: the provider capability model (docs/format.md,
"Stores and what they can do").

Every store git-memex reads declares `read`, `write`, `delete`, `history` (a version trail) and
`sync` (`none`, `pull`, `push` or `bidirectional`), as the protocol's `MemoryProviderCapabilities`.
The stores are the data root (personal memories, the outbox, private project memories), the
current work tree's memory folder, and each subscribed org clone. `git memex where --json`
lists them; the MCP server says them at `initialize`, in `capabilities.experimental.openmemex`.
What they declare is what the code does (docs/format.md, "Stores and what they can do"):

* data root: plain files on this machine, never synced (personal memories never leave it; an
  outbox draft reaches the repository through `submit`, which is a write to the work tree);
  no history: a rewrite replaces the file (the supersede chain keeps old versions as data).
* work tree: files in git, so `git memex log` shows their history; `pull` (fast-forward only)
  and `push` sync it, when the repository has an `origin`.
* org clone: read only here (`forget`, `supersede`, `status` refuse an org memory); changed
  only by `org pull`; its git history is its clone's. A proposal upward is a branch the user
  pushes, never a write into what is read.
* remote cache: a server's memories pulled into the data root (docs/remote.md); read only here
  (write false: a project memory reaches the server only as a proposal, `propose: true`), changed
  only by `remote pull`; its history is the server's audit log (`GET /v1/memories/{id}/history`).
"""

from __future__ import annotations

from typing import Any, Literal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_memex.core.context import Context

Sync = Literal["none", "pull", "push", "bidirectional"]
SYNC_VALUES: tuple[str, ...] = ("none", "pull", "push", "bidirectional")
CAPABILITY_KEYS: tuple[str, ...] = ("read", "write", "delete", "history", "sync")


def capabilities(*, read: bool, write: bool, delete: bool, history: bool, sync: Sync) -> dict[str, Any]:
    return {"read": read, "write": write, "delete": delete, "history": history, "sync": sync}


DATA_ROOT = capabilities(read=True, write=True, delete=True, history=False, sync="none")
ORG_CLONE = capabilities(read=True, write=False, delete=False, history=True, sync="pull")
REMOTE = capabilities(read=True, write=False, delete=False, history=True, sync="pull")


def work_tree(has_remote: bool) -> dict[str, Any]:
    return capabilities(read=True, write=True, delete=True, history=True,
                        sync="bidirectional" if has_remote else "none")


def providers(ctx: Context) -> list[dict[str, Any]]:
    """One entry per store this context reads: `name`, `kind`, `path` and `capabilities`."""
    out: list[dict[str, Any]] = [
        {"name": "data-root", "kind": "local", "path": str(ctx.data_root), "capabilities": dict(DATA_ROOT)},
    ]
    if ctx.repo is not None and ctx.memory_dir is not None:
        out.append({"name": "work-tree", "kind": "git", "path": str(ctx.memory_dir),
                    "capabilities": work_tree(bool(ctx.origin_url))})
    for name in ctx.org_names():
        out.append({"name": f"org:{name}", "kind": "git", "path": str(ctx.org_clone(name)),
                    "capabilities": dict(ORG_CLONE)})
    for name in ctx.remote_names():
        out.append({"name": f"remote:{name}", "kind": "remote", "path": str(ctx.remote_cache(name)),
                    "capabilities": dict(REMOTE), "propose": True})
    return out

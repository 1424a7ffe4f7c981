"""The detect-secrets plugin patterns, kept in the data root so a scan need not import the library.

See `dsplugins._ds_patterns`: importing detect-secrets costs ~100 ms, paid once per installed
version instead of once per process.
"""

from __future__ import annotations

from collections.abc import Sequence


def cache_place(plugin_modules: Sequence[str]) -> tuple[str, str | None]:
    """(key of the installed plugins, cache file) or ("", None) when there is nowhere to keep it."""
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec("detect_secrets")
        if spec is None or not spec.origin:
            return "", None
        plugins = os.path.join(os.path.dirname(spec.origin), "plugins")
        names = [f"{m}.py" for m in plugin_modules] + ["keyword.py", "base.py"]
        parts = []
        for name in names:
            st = os.stat(os.path.join(plugins, name))
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        from git_memex.core.data_root import data_root

        # "bounded": the patterns as `_bounded` rewrites them; a cache from before is rebuilt
        return plugins + "|bounded|" + ";".join(parts), str(data_root() / "cache" / "detect-secrets-patterns.json")
    except (OSError, ImportError, ValueError):
        return "", None


def read_cache(path: str, key: str) -> list[tuple[str, str, int, int | None]] | None:
    import json

    try:
        from pathlib import Path

        from git_memex.core.data_root import data_root
        from git_memex.core.files import read_private

        doc = json.loads(read_private(data_root(), Path(path)).decode("utf-8"))
        if doc.get("key") != key:
            return None
        specs = [(str(r), str(p), int(f), None if g is None else int(g)) for r, p, f, g in doc["patterns"]]
        return specs or None  # (the caller compiles them: one that does not means a bad cache)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_cache(path: str, key: str, specs: list[tuple[str, str, int, int | None]]) -> None:
    import contextlib
    import json
    from pathlib import Path

    from git_memex.core.files import atomic_write_text
    from git_memex.errors import MemexError

    with contextlib.suppress(OSError, MemexError):  # a cache: an unusable data root means none
        atomic_write_text(Path(path), json.dumps({"key": key, "patterns": specs}, ensure_ascii=False))


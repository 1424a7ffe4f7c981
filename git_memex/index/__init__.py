"""The SQLite FTS5 index: a cache of the memory files, rebuildable from them at any time."""

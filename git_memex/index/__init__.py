"""The SQLite FTS5 index: a cache of the memory files, rebuildable from them at any time.

- `stores`: the context's two indexes used together, and the query API every reader uses
- `database`: one index database, and bringing it in line with the folders
- `changes`: which files changed since the last scan (watch, digest, snapshot, rows)
- `schema`: the tables, and what one memory file becomes in them
- `watcher`: inotify folder watches for long-lived processes (Linux)
- `progress`: the progress line of a long refresh
"""

"""The index's tables, and what one memory file becomes in them.

Every table is a cache of the markdown files: any index can be thrown away and rebuilt from them
(a full rebuild drops and recreates the tables, which is much faster than deleting row by row
from the FTS index). `SCHEMA_VERSION` names the layout; an index written with another one is
recreated on open, so changing a table here means bumping it.

- `memories`: one row per readable memory file (`memory_row`); `rid` is also the rowid of its
  `memories_fts` row, whose columns are `fts_fields`.
- `files`: every memory file read, readable or not, with the stat signature it was read with
  (`mtime_ns:size:inode:ctime_ns`), whether it was racy then, its SHA-1, and why it was quarantined.
- `meta`: the schema version, the last sync, and one listing digest per folder (`scan:FOLDER`).
- `scans` and `scan_patches`: the listing of a folder's last complete scan, and the files written
  since by other paths (see `changes`).
- `secret_checks`: whether a body (by SHA-1) carries a secret (`secrets.guard.safe_bodies`).
"""

from __future__ import annotations

import json
import re
import sqlite3

from git_memex.core.model import ENUMS, Memory, parse_time, standing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SCHEMA_VERSION = "17"  # 17: a file's stat signature holds its ctime (`mtime_ns:size:inode:ctime_ns`); 16: standing (the review state proven by location and history); 15: enum columns masked unless an enum value; 14: expires_ts, language, canonical_ref; personal files in shared folders quarantined; pinyin of Han tags

FTS_COLUMNS = ("body", "tags", "type", "cjk", "aliases")
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The FTS5 tokenizer of the index, spelled here only: search's scratch tables (`search.engine`)
tokenise the pool and the query words with it, so a stem there is a stem in the index."""

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(
    path TEXT PRIMARY KEY,
    sig TEXT NOT NULL,
    racy INTEGER NOT NULL DEFAULT 0,
    sha TEXT,
    error TEXT
);
CREATE INDEX files_racy ON files(path) WHERE racy = 1;
CREATE INDEX files_error ON files(path) WHERE error IS NOT NULL;
-- guard.safe_bodies: does this exact body (by SHA-1) carry a secret or a <private> part?
CREATE TABLE secret_checks(body_sha TEXT PRIMARY KEY, found INTEGER NOT NULL);
CREATE TABLE scans(folder TEXT PRIMARY KEY, names BLOB NOT NULL, sigs BLOB NOT NULL);
CREATE TABLE scan_patches(folder TEXT NOT NULL, name TEXT NOT NULL, sig TEXT, PRIMARY KEY(folder, name));
CREATE TABLE memories(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    location TEXT NOT NULL,
    project_key TEXT,
    scope TEXT, type TEXT, status TEXT, review_state TEXT, role TEXT, importance TEXT,
    visibility TEXT, source TEXT, trust_level TEXT, instruction_state TEXT, confidence TEXT,
    created_by TEXT, created_at TEXT, updated_at TEXT, updated_ts REAL,
    supersedes TEXT, superseded_by TEXT, derived_from TEXT,
    tags TEXT, paths TEXT, content_hash TEXT, body TEXT, warnings TEXT,
    aliases TEXT, alias TEXT, target TEXT,
    expires_ts REAL, language TEXT, canonical_ref TEXT, standing TEXT
);
CREATE INDEX memories_id ON memories(id);
CREATE INDEX memories_supersedes ON memories(supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX memories_hash ON memories(content_hash);
CREATE INDEX memories_updated ON memories(updated_ts);
CREATE INDEX memories_alias ON memories(alias) WHERE alias IS NOT NULL;
-- search's reviewed pool (search.engine._reviewed): is there any reviewed row at all?
CREATE INDEX memories_reviewed ON memories(standing) WHERE standing IN ('approved', 'published');
-- the session context's pools, newest first: a rare kind is found without visiting every row
CREATE INDEX memories_instruction ON memories(updated_ts) WHERE role = 'instruction';
CREATE INDEX memories_warning ON memories(updated_ts) WHERE type = 'warning';
CREATE INDEX memories_high ON memories(updated_ts) WHERE importance = 'high';
CREATE INDEX memories_with_paths ON memories(updated_ts) WHERE paths != '[]';
"""
_SCHEMA += f"""CREATE VIRTUAL TABLE memories_fts USING fts5(
    {', '.join(FTS_COLUMNS)}, tokenize='{FTS_TOKENIZE}'
);
"""

COLUMNS = (
    "id", "path", "location", "project_key", "scope", "type", "status", "review_state", "role",
    "importance", "visibility", "source", "trust_level", "instruction_state", "confidence",
    "created_by", "created_at", "updated_at", "updated_ts", "supersedes", "superseded_by",
    "derived_from", "tags", "paths", "content_hash", "body", "warnings", "aliases", "alias",
    "target", "expires_ts", "language", "canonical_ref", "standing",
)
NOT_EXPIRED = "(m.expires_ts IS NULL OR m.expires_ts > CAST(strftime('%s', 'now') AS REAL))"
"""The condition every retrieval read (search's lanes, list, the session block's pools, export)
adds: a memory whose `expires_at` has passed leaves them at that second, with no reindex."""

INSERT_MEMORY = f"INSERT INTO memories(rid, {', '.join(COLUMNS)}) VALUES(?, {', '.join('?' * len(COLUMNS))})"
INSERT_FTS = f"INSERT INTO memories_fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES(?, {', '.join('?' * len(FTS_COLUMNS))})"
DELETE_FTS = "DELETE FROM memories_fts WHERE rowid IN (SELECT rid FROM memories WHERE path = ?)"
DELETE_MEMORY = "DELETE FROM memories WHERE path = ?"
RECORD_FILE = "INSERT OR REPLACE INTO files(path, sig, racy, sha, error) VALUES(?, ?, ?, ?, ?)"


TABLES = frozenset(re.findall(r"CREATE (?:VIRTUAL )?TABLE (\w+)", _SCHEMA))


def intact(conn: sqlite3.Connection) -> bool:
    """Does the file hold every table of this layout (FTS5's shadow tables included)? One read of
    `sqlite_master`, cheap enough for every open; a dropped table makes it False."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return names >= TABLES and {f"memories_fts_{t}" for t in ("data", "idx", "content", "docsize", "config")} <= names


def create(conn: sqlite3.Connection, *, replace: bool = False) -> bool:
    """Drop every table of `conn` (FTS5's shadow tables go with theirs) and create this layout,
    in one transaction; False, and nothing changed, when the file already has this layout and
    `replace` (a full rebuild) is not asked.

    The version is read again under the write lock: two processes that both found an empty
    file queue here, and the second must not drop what the first has just created and filled."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:  # no meta table: an empty or foreign file
            row = None
        if not replace and row is not None and row[0] == SCHEMA_VERSION:
            conn.execute("COMMIT")
            return False
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            " AND name NOT LIKE 'memories_fts_%'"
        ).fetchall():
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for stmt in _SCHEMA.strip().split(";"):
            if stmt.strip():
                conn.execute(stmt)
        conn.execute("INSERT INTO meta(key, value) VALUES('schema_version', ?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
        return True
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def id_ref(v: Any) -> str | None:
    """A field that names another memory, as the index keeps it: an id in its canonical shape as
    it is, anything else scanned and masked like free text (a hand-edited `supersedes: sk_live_…`
    must not reach inventory, audit, doctor or log, which print these columns)."""
    s = _str(v)
    if s is None:
        return None
    from git_memex.secrets.admission import SHAPES

    if SHAPES["supersedes"].fullmatch(s):
        return s
    from git_memex.secrets.admission import mask_value

    return str(mask_value(s)[0])


_ENUM_VALUES = {k: frozenset(v) for k, v in ENUMS.items()}
_JSON = json.JSONEncoder(ensure_ascii=False).encode  # `json.dumps(x, ensure_ascii=False)`, one encoder for every row


def enum_ref(key: str, v: Any) -> str | None:
    """An enum field as the index keeps it: one of its values as it is, anything else (a
    hand-edited `importance: ghp_…`) scanned and masked like free text, for the same readers."""
    if v is None:
        return None
    s = v if type(v) is str else str(v)
    if s in _ENUM_VALUES[key]:
        return s
    from git_memex.secrets.admission import mask_value

    return str(mask_value(s)[0])


def _str(v: Any) -> str | None:
    if v is None:
        return None
    return str(v)


def _str_list(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v] if v.strip() else []
    if isinstance(v, list):
        return [str(x) for x in v if x is not None and not isinstance(x, (dict, list))]
    return [str(v)]


def memory_row(m: Memory, location: str, project_key: str | None) -> dict[str, Any]:
    from git_memex.core.textproc import content_hash

    fm = m.fm
    upd = fm.get("updated_at") or fm.get("created_at")
    aliases = _str_list(fm.get("aliases"))
    return {
        "id": m.id,
        "path": str(m.path),
        "location": location,
        "project_key": project_key,
        "scope": enum_ref("scope", fm.get("scope")) or "project",
        "type": enum_ref("type", fm.get("type")) or "fact",
        "status": enum_ref("status", fm.get("status")) or "active",
        "review_state": enum_ref("review_state", fm.get("review_state")),
        "role": enum_ref("role", fm.get("role")) or "knowledge",
        "importance": enum_ref("importance", fm.get("importance")) or "normal",
        "visibility": enum_ref("visibility", fm.get("visibility")),
        "source": enum_ref("source", fm.get("source")),
        "trust_level": enum_ref("trust_level", fm.get("trust_level")),
        "instruction_state": enum_ref("instruction_state", fm.get("instruction_state")),
        "confidence": enum_ref("confidence", fm.get("confidence")),
        "created_by": _str(fm.get("created_by")),
        "created_at": _str(fm.get("created_at")),
        "updated_at": _str(upd),
        "updated_ts": parse_time(upd) or 0.0,
        "supersedes": id_ref(fm.get("supersedes")),
        "superseded_by": id_ref(fm.get("superseded_by")),
        "derived_from": id_ref(fm.get("derived_from")),
        "tags": _JSON(m.tags),
        "paths": _JSON(m.paths),
        "content_hash": content_hash(m.body),
        "body": m.body,
        "warnings": _JSON(m.warnings) if m.warnings else None,  # masked by the reader
        "aliases": _JSON(aliases) if aliases else None,
        # user-defined vocabulary (reference tool): `alias` names `target` (search expands both ways)
        "alias": (_str(fm.get("alias")) or "").strip() or None,
        "target": (_str(fm.get("target")) or "").strip() or None,
        "expires_ts": parse_time(fm.get("expires_at")),
        "language": _str(fm.get("language")),  # as written (detected on write: core.model.create)
        "canonical_ref": _str(fm.get("canonical_ref")),
        # the review state ranking and labels use: `review_state` is the file's claim (core.model.standing)
        "standing": standing(location, fm),
    }


def fts_fields(row: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """(body, tags, type, cjk, aliases) texts for the FTS table.

    Capture-time aliases and the alias/target vocabulary get a column of their own (a
    separate BM25 weight); their CJK characters join the `cjk` column like the body's. A tag
    holding Han characters also gives the `tags` column its pinyin (`数据库` -> `shujuku shu ju
    ku sjk`, core/pinyin.py); pypinyin is imported only then.
    """
    from git_memex.core.textproc import cjk_index_text, has_cjk, latin_text

    tag_list = json.loads(row["tags"] or "[]")
    tags = " ".join(tag_list)
    tags_text = latin_text(tags)
    if has_cjk(tags):
        from git_memex.core.pinyin import tag_pinyin

        spelled = tag_pinyin(tag_list)
        if spelled:
            tags_text += " " + spelled
    alias_parts = json.loads(row["aliases"]) if row["aliases"] else []
    alias_parts += [x for x in (row["alias"], row["target"]) if x]
    aliases = " ".join(alias_parts)
    cjk_src = row["body"] + " " + tags + (" " + aliases if aliases else "")
    cjk = cjk_index_text(cjk_src)  # per script run: a mixed memory gets both lanes (docs/search.md)
    return (
        latin_text(row["body"]),
        tags_text,
        row["type"] or "",
        cjk,
        latin_text(aliases),
    )


def matches_file(row: Mapping[str, Any] | sqlite3.Row, data: bytes) -> bool:
    """Whether the index row an agent would be shown is what `data` (the file's bytes, which the
    instruction gate, `agents.gate`, compares with the committed blob) says, field for field.

    The gate reads the file; the session block and the MCP tools serve the row. Without this an
    edit that was indexed and then undone (bytes and mtime put back, so no refresh notices) would
    be served under the committed file's verdict: an unapproved text, or a draft's row claiming
    approval. Any difference, or bytes the index reader refuses, fails closed."""
    from pathlib import Path

    from git_memex.core.files import parse_for_index

    try:
        path = str(row["path"])
        fresh = memory_row(parse_for_index(Path(path), data), str(row["location"]), row["project_key"])
        return all(row[k] == v for k, v in fresh.items() if k not in ("path", "location", "project_key"))
    except (KeyError, IndexError, TypeError, ValueError):  # UnreadableMemory is a ValueError
        return False

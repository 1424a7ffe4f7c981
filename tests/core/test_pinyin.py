"""Write-time pinyin for Han tags (core/pinyin.py, docs/search.md "Pinyin for tags"), through
the real CLI, a real index and the MCP server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import run_cli
from mcp_client import ok


def add(body: str, tags: str) -> str:
    r = run_cli("add", body, "--tags", tags, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def found(query: str) -> list[str]:
    r = run_cli("search", query, "--json")
    assert r.code == 0, r.err
    return [h["id"] for h in r.json()["hits"]]


def test_a_memory_tagged_in_chinese_is_found_by_the_tags_pinyin(repo: Path):
    mid = add("主库在 node-3 上，每晚两点备份", "数据库,ops")
    assert found("shujuku") == [mid]  # the syllables joined, as a pinyin user types the word
    assert found("shu ju ku") == [mid]  # syllable by syllable
    assert found("sjk") == [mid]  # the initials of a word of three characters or more
    assert found("shujuku backup") == [mid]
    # what leaves is the tag as written; the file itself holds no pinyin
    hit = run_cli("search", "shujuku", "--json").json()["hits"][0]
    assert hit["tags"] == ["数据库", "ops"]
    path = Path(run_cli("show", mid, "--json").json()["path"])
    text = path.read_text(encoding="utf-8")
    assert "数据库" in text and "shujuku" not in text and "sjk" not in text


def test_other_tags_get_no_pinyin_and_two_letter_initials_are_not_indexed(repo: Path):
    han = add("缓存放在 node-4", "缓存")
    latin = add("the cache lives on node-5", "database")
    kana = add("キャッシュは node-6 にある", "キャッシュ")
    assert found("huancun") == [han]
    assert found("huan cun") == [han]
    assert found("hc") == []  # two-letter initials: too many words share them (bench.pinyin)
    assert latin in found("database")  # a Latin tag is matched as it always was
    assert han not in found("database")
    assert found("kyasshu") == []  # Kana has no pinyin
    assert kana in found("キャッシュ")


def test_an_index_of_the_previous_layout_is_rebuilt_with_the_pinyin(repo: Path):
    mid = add("主库在 node-3 上", "数据库")
    where = run_cli("where", "--json").json()
    dbs = [Path(p) for p in json.dumps(where).split('"') if p.endswith("index.db") and Path(p).exists()]
    rewritten = 0
    for db in dbs:  # what git-memex 12 wrote: tags without pinyin, layout "12"
        with sqlite3.connect(db) as c:
            if not c.execute("SELECT count(*) FROM memories").fetchone()[0]:
                continue
            rows = c.execute("SELECT rowid, body, tags, type, cjk, aliases FROM memories_fts").fetchall()
            c.execute("DELETE FROM memories_fts")
            c.executemany("INSERT INTO memories_fts(rowid, body, tags, type, cjk, aliases) VALUES(?, ?, ?, ?, ?, ?)",
                          [(r[0], r[1], "数据库", *r[3:]) for r in rows])
            c.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
            rewritten += 1
    assert rewritten, where
    assert found("shujuku") == [mid]


def test_memory_search_over_mcp_finds_a_chinese_tag_by_its_pinyin(repo: Path):
    mid = ok("memory_add", {"text": "支付回调要做幂等校验", "tags": ["支付系统", "backend"]})["id"]
    for query in ("zhifuxitong", "zhi fu xi tong", "zfxt"):
        hits = ok("memory_search", {"query": query})["hits"]
        assert [h["id"] for h in hits] == [mid], query
        assert hits[0]["tags"] == ["支付系统", "backend"]

"""One ranking across indexes (issue 14): shared corpus statistics, coordination, low b, proximity.

The CLI test runs the real command in a real git repository; the property test writes real memory
files into the real folders and searches them with the real engine and SQLite.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memex.search import scoring

from conftest import CROSS_INDEX_QUERY, cross_index_case, run_cli

FIXED = "2000-01-01T00:00:00Z"  # long past: the recency boost is ~0, so two searches seconds apart score alike


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def test_an_all_words_repo_memory_ranks_above_a_personal_one_holding_two(repo: Path) -> None:
    shared, personal = cross_index_case()  # the repo index holds one memory, the data root's index 31
    assert run_cli("show", shared, "--json").json()["frontmatter"]["review_state"] == "published"
    r = run_cli("search", CROSS_INDEX_QUERY, "--json", "--explain")
    assert r.code == 0, r.err
    hits = r.json()["hits"]
    assert [h["id"] for h in hits[:2]] == [shared, personal]
    assert hits[0]["location"] == "repo" and hits[1]["location"] == "personal"
    assert hits[0]["explain"]["words"] == "5/5" and hits[1]["explain"]["words"] == "2/5"
    assert hits[0]["explain"]["index"] == "repo" and hits[1]["explain"]["index"] == "home"
    ranking = r.json()["ranking"]
    assert ranking["memories"] == 32 and ranking["indexes"] == 2


def test_explain_names_every_factor(repo: Path) -> None:
    add("Redis is the session store", "--importance", "high")
    add("the store front uses a session cookie")
    r = run_cli("search", "redis session store", "--explain")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].startswith("fts: ")
    assert lines[1].startswith("corpus: 2 memories in 1 index")
    assert f"BM25F k1 {scoring.K1} b {scoring.B}" in lines[1]
    assert "redis df 1" in r.out
    why = [line for line in lines if line.strip().startswith("rank ")]
    assert len(why) == 2
    for factor in ("words 3/3", "bm25 ", "coverage ", "proximity ", "phrases ", "importance×1.1", "recency×", "lanes "):
        assert factor in why[0], (factor, why[0])
    assert "words 2/3" in why[1]


def test_a_chinese_memory_is_not_penalised_for_its_cjk_column(repo: Path) -> None:
    """BM25F: a Latin word's weight in a memory depends on the text column's length, not on the
    characters and bigrams stored for its Chinese text (one length over all columns put this
    memory, whose text column is the shorter, second)."""
    english = add("the request limit is ten for uploads of images", "--scope", "personal")
    chinese = add("微信小程序的 request 并发上限是 10，超过会直接失败不排队。批量上传图片必须自己做并发控制", "--scope", "personal")
    r = run_cli("search", "request", "--json", "--explain")
    assert r.code == 0, r.err
    hits = r.json()["hits"]
    assert [h["id"] for h in hits] == [chinese, english]
    assert hits[0]["explain"]["length"] > 3 * hits[1]["explain"]["length"]  # the whole row is longer
    avgs = r.json()["ranking"]["avg_lengths"]
    assert avgs["cjk"] > avgs["body"]


def test_a_word_held_through_more_synonyms_is_held_more(repo: Path) -> None:
    one = add("we deploy from the main branch on tuesdays")
    two = add("we deploy the release from the main branch on tuesdays")
    hits = run_cli("search", "ship", "--json", "--explain").json()["hits"]
    assert [h["id"] for h in hits] == [two, one]
    assert hits[0]["explain"]["bm25"] > hits[1]["explain"]["bm25"]


# ------------------------------------------------------------------ moving between indexes
WORDS = ["alpha", "bravo", "delta", "kestrel", "falcon", "gateway", "proxy", "timeout", "cache", "ledger"]


def _write(folder: Path, mid: int, text: str) -> None:
    from git_memex.core import frontmatter, model

    m = model.create(text, scope="project", type="fact", tags=[], source="import")
    m.fm["created_at"] = m.fm["updated_at"] = FIXED
    # a draft: its review standing is the same in both folders (an outbox file is a draft whatever
    # it says, core.model.standing), so only the corpus statistics could move it
    m.fm["review_state"] = "draft"
    m.fm["id"] = f"01JZZZZZZZZZZZZZZZZZZZZ{mid:03d}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.fm['id']}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")


def _order(repo: Path, texts: list[str], in_repo: list[bool], query: str) -> list[tuple[str, float]]:
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores
    from git_memex.search.engine import search

    ctx = load_context(repo)
    assert ctx.memory_dir is not None
    for folder in (ctx.memory_dir, ctx.outbox_dir):
        shutil.rmtree(folder, ignore_errors=True)
    for i, (text, here) in enumerate(zip(texts, in_repo, strict=True)):
        _write(ctx.memory_dir if here else ctx.outbox_dir, i, text)
    with Stores(ctx) as stores:
        res = search(stores, query, limit=50)
        assert {h.location for h in res.hits} <= ({"repo"} if all(in_repo) else {"repo", "outbox"})
        return [(h.id, round(h.score, 9)) for h in res.hits]


texts_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join), min_size=2, max_size=10)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, data=st.data())
def test_moving_memories_between_indexes_never_changes_the_order(repo: Path, texts: list[str], data: st.DataObject) -> None:
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True)))
    split = data.draw(st.lists(st.booleans(), min_size=len(texts), max_size=len(texts)))
    everything_in_repo = _order(repo, texts, [True] * len(texts), query)
    assert everything_in_repo == _order(repo, texts, split, query)


def test_corpus_totals_read_from_fts5_match_a_count_of_the_rows(repo: Path) -> None:
    from git_memex.core.context import load_context
    from git_memex.index.stores import Stores
    from git_memex.search import scoring

    add("数据库迁移之前一定要先备份生产环境", "--tags", "db,ops")
    add("Use ruff for linting Python code", "--aliases", "linter")
    add("the deploy needs approval from two reviewers", "--scope", "personal")
    with Stores(load_context(repo)) as stores:
        stores.refresh()
        conn = stores.home.conn
        rows, tokens = scoring.fts_totals(conn)
        assert rows == conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == 3
        sums = [0] * scoring.NCOL
        for (sz,) in conn.execute("SELECT sz FROM memories_fts_docsize"):
            for i, v in enumerate(scoring.varints(bytes(sz))):
                sums[i] += v
        assert tokens == sums and tokens[scoring.CJK] > 0 and all(tokens[i] > 0 for i in (0, 1, 2))

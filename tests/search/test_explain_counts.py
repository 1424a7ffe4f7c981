"""`search --explain` shows the figures the ranking used (issue 33; docs/search.md, "--explain").

The data root's index holds every project's outbox drafts and private memories; a search reads
only its own project's. Its corpus statistics (how many memories, how many hold each word)
counted the other projects' rows too, so the document counts `--explain` printed were not the
memories a user could see, the ranking moved when another project wrote a draft, and a word of
another project's private memory showed in a count. Real repositories, the real CLI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import bare_and_clone, git, one_commit_repo, run_cli


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def explain(*words: str) -> dict:
    r = run_cli("search", *words, "--json", "--explain")
    assert r.code == 0, r.err
    return r.json()


def test_another_projects_drafts_count_nowhere_in_this_projects_ranking(repo: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    mine = add("pangolin gateway timeout is 45 seconds behind the kestrel proxy")
    near = add("the gateway has a dashboard")
    before = explain("pangolin", "gateway")
    other = one_commit_repo(tmp_path / "other")
    monkeypatch.chdir(other)
    for i in range(6):  # another project's outbox, in the same data root
        add(f"pangolin gateway note {i} of the other team")
    assert len(explain("pangolin", "gateway")["hits"]) == 6  # its own search sees its own
    monkeypatch.chdir(repo)
    after = explain("pangolin", "gateway")
    assert [h["id"] for h in after["hits"]] == [mine, near]
    rk = after["ranking"]
    assert rk["memories"] == 2, rk
    assert {w["word"]: w["documents"] for w in rk["words"]} == {"pangolin": 1, "gateway": 2}
    assert rk["per_index"] == [{"index": "home", "memories": 2, "documents": {"pangolin": 1, "gateway": 2}}]
    # the figures are the ones the hits were scored with: nothing moved when the other project wrote
    assert rk == {**before["ranking"], "per_index": rk["per_index"]} and before["ranking"]["per_index"] == rk["per_index"]
    for b, a in zip(before["hits"], after["hits"], strict=True):
        assert (a["explain"]["bm25"], a["explain"]["coverage"]) == (b["explain"]["bm25"], b["explain"]["coverage"])
    text = run_cli("search", "pangolin", "gateway", "--explain").out
    assert "corpus: 2 memories in 1 index" in text and "pangolin df 1" in text, text
    assert "  index home: 2 memories; df pangolin 1, gateway 2" in text, text


def test_each_index_is_named_and_its_counts_add_up(ready: Path, tmp_path: Path) -> None:
    """An org clone's hit said `index home`; the figures per index sum to the corpus line."""
    org_remote, seed = bare_and_clone(tmp_path)
    folder = seed / ".ai" / "open-memex"
    folder.mkdir(parents=True)
    org_id = "01JORG0000000000000000PANG"
    (folder / f"{org_id}.md").write_text(
        f"---\nid: {org_id}\nschema_version: 2\nscope: org\ntype: fact\nstatus: active\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n"
        "The pangolin service is owned by the platform team\n")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "an org memory", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    assert run_cli("org", "add", "acme", str(org_remote)).code == 0
    add("pangolin gateway timeout is 45 seconds", "--scope", "personal")
    rk = explain("pangolin", "gateway")
    by_id = {h["id"]: h["explain"]["index"] for h in rk["hits"]}
    assert by_id[org_id] == "org acme", by_id
    per = rk["ranking"]["per_index"]
    assert {p["index"] for p in per} == {"home", "org acme"}, per
    assert sum(p["memories"] for p in per) == rk["ranking"]["memories"]
    for w in rk["ranking"]["words"]:
        assert sum(p["documents"][w["word"]] for p in per) == w["documents"]

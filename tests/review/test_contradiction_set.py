"""The labelled set end to end, as issue 33 measured it: each held-out pair alone in a repository,
as published memories (files committed with git) and as drafts (`git memex add`), through the
real CLI (`audit --json`, `sync-status --json`); and every pair found marked where an agent looks:
`search --json` hits name each other (`contradicts`), the session block (`context --json`) shows
"these disagree; a person decides" with the one precedence prefers first. Figures are printed for
docs/search.md; the held-out half holds the issue's floors (at least 11 of 14 contradictions
flagged, at most 2 of 14 compatible pairs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git, one_commit_repo, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "contradictions"
MEM = ".ai/open-memex"


def published(work: Path, a: str, b: str) -> tuple[str, str]:
    """Both texts as published repository memories, committed (no git memex command wrote them)."""
    one_commit_repo(work)
    folder = work / MEM
    folder.mkdir(parents=True)
    ids = []
    for body in (a, b):
        m = model.create(body, scope="project", review_state="published")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
        ids.append(m.id)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "two memories", cwd=work)
    return ids[0], ids[1]


def drafts(work: Path, a: str, b: str) -> tuple[str, str]:
    one_commit_repo(work)
    ids = []
    for body in (a, b):
        r = run_cli("add", body, "--json", cwd=work)
        assert r.code == 0, r.err
        ids.append(r.json()["id"])
    return ids[0], ids[1]


def flagged_pair(doc: dict, ida: str, idb: str) -> dict | None:
    for c in doc["contradictions"]:
        if {c["a"], c["b"]} == {ida, idb}:
            return c
    return None


@pytest.mark.slow
@pytest.mark.parametrize("as_", ["published", "drafts"])
def test_held_out_pairs_alone_in_a_repository(tmp_path: Path, as_: str):
    pairs = json.loads((DATA / "heldout.json").read_text("utf-8"))["pairs"]
    make = published if as_ == "published" else drafts
    flagged: dict[str, bool] = {}
    marked = 0
    for i, p in enumerate(pairs):
        work = tmp_path / f"{as_}{i:02d}"
        ida, idb = make(work, p["a"], p["b"])
        audit = run_cli("audit", "--json", cwd=work)
        status = run_cli("sync-status", "--json", cwd=work)
        assert audit.code == 0 and status.code == 0, audit.err + status.err
        found = flagged_pair(audit.json(), ida, idb)
        assert (found is None) == (flagged_pair(status.json(), ida, idb) is None), p["id"]
        flagged[p["id"]] = found is not None
        if found is None:
            continue
        assert found["values"][0] and found["values"][1] and found["kind"]
        # marked where an agent looks: both hits name each other, the block says a person decides
        hits = {h["id"]: h for h in run_cli("search", p["a"], "--json", cwd=work).json()["hits"]}
        assert hits[ida]["contradicts"] == [idb] and hits[idb]["contradicts"] == [ida], p["id"]
        block = run_cli("context", "--json", cwd=work).json()
        assert "these disagree; a person decides" in block["text"].lower(), p["id"]
        assert block["disagreements"][0]["ids"][0] == found["a"]
        marked += 1
    pos = [p["id"] for p in pairs if p["label"] == "contradiction"]
    neg = [p["id"] for p in pairs if p["label"] == "compatible"]
    tp, fp = sum(flagged[i] for i in pos), sum(flagged[i] for i in neg)
    print(f"\nheld-out, each pair alone in a repository as {as_}: {tp}/{len(pos)} contradictions flagged, "
          f"{fp}/{len(neg)} compatible pairs flagged, {marked}/{tp + fp} flagged pairs marked in search and the block")
    assert tp / len(pos) >= 11 / 14 and fp / len(neg) <= 2 / 14
    assert marked == tp + fp

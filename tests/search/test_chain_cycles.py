"""Supersede cycles are broken, never repaired into (search/chains.py `on_cycles`, docs/format.md).

Two repository memories naming each other in `supersedes` went through the hooks; both then
vanished from search and the session block, `list --include all` showed each superseded by the
other, and `reindex` wrote both as superseded. A memory naming itself vanished too. Now a link on a
ring counts for neither side: every reader shows the memories, `reindex` writes nothing, `doctor`
and `audit` name the ring, and the pre-commit hook refuses a file naming itself or a staged ring.
The real CLI, real git with the hooks `init` installed, the official MCP client over stdio.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_chain_on_read import add, hand_edit, listed, listed_active, stdio

from git_memex.core import frontmatter

from conftest import git, run_cli

MEM = Path(".ai") / "open-memex"


def submitted(text: str) -> str:
    mid = add(text)
    assert run_cli("submit", mid).code == 0
    return mid


def status_and_links(ready: Path, mid: str) -> tuple[object, object]:
    fm = frontmatter.parse((ready / MEM / f"{mid}.md").read_text(encoding="utf-8"))[0]
    return fm["status"], fm.get("superseded_by")


def searched(query: str) -> set[str]:
    return {h["id"] for h in run_cli("search", query, "--json").json()["hits"]}


def test_two_memories_naming_each_other_both_stay_and_are_reported(ready: Path) -> None:
    a = submitted("The gnusto queue depth alarm fires at 1000")
    b = submitted("The gnusto queue depth alarm fires at 5000")
    hand_edit(ready / MEM / f"{a}.md", supersedes=b)
    hand_edit(ready / MEM / f"{b}.md", supersedes=a)
    git("add", "-A", cwd=ready)
    refused = git("commit", "-q", "-m", "a ring, with the hooks", cwd=ready, check=False)
    assert refused.returncode != 0 and "supersede-cycle" in refused.stderr, refused.stderr
    git("commit", "-q", "--no-verify", "-m", "a ring, as a teammate pushed it", cwd=ready)
    assert searched("gnusto queue alarm") == {a, b}
    block = run_cli("context", "--query", "gnusto queue alarm", "--json").json()
    assert {a, b} <= {i["id"] for i in block["items"]}
    mems = listed()
    assert mems[a]["status"] == mems[b]["status"] == "active" and "superseded_by" not in mems[a] | mems[b]
    assert {a, b} <= listed_active()
    [(lst, _)] = stdio(ready, [("memory_list", {"include": "all"})])
    assert {m["id"]: m["status"] for m in lst["memories"] if m["id"] in (a, b)} == {a: "active", b: "active"}
    assert run_cli("reindex").code == 0
    assert status_and_links(ready, a) == status_and_links(ready, b) == ("active", None)
    doctor = run_cli("doctor")
    assert "form a cycle" in doctor.out and a in doctor.out and b in doctor.out, doctor.out
    chains = run_cli("audit", "--json").json()["chains"]
    assert [c["kind"] for c in chains if c["kind"] == "cycle"] == ["cycle"], chains


def test_a_memory_naming_itself_stays_and_the_hook_refuses_it(ready: Path) -> None:
    s = submitted("The rezrov cache TTL is 60 seconds")
    hand_edit(ready / MEM / f"{s}.md", supersedes=s)
    refused = git("commit", "-qam", "names itself", cwd=ready, check=False)
    assert refused.returncode != 0 and "self-supersede" in refused.stderr, refused.stderr
    git("commit", "-q", "--no-verify", "-am", "names itself, pushed anyway", cwd=ready)
    assert searched("rezrov cache") == {s}
    assert listed()[s]["status"] == "active" and s in listed_active()
    assert run_cli("reindex").code == 0 and status_and_links(ready, s) == ("active", None)
    assert "names itself" in run_cli("doctor").out
    assert any(c["kind"] == "cycle" and c["id"] == s for c in run_cli("audit", "--json").json()["chains"])


def test_a_ring_of_three_counts_for_none_and_a_plain_chain_still_counts(ready: Path) -> None:
    x, y, z = (submitted(f"The frotz port is {p}") for p in (7001, 7002, 7003))
    for new, old in ((x, y), (y, z), (z, x)):
        hand_edit(ready / MEM / f"{new}.md", supersedes=old)
    git("add", "-A", cwd=ready)
    refused = git("commit", "-q", "-m", "a ring of three", cwd=ready, check=False)
    assert refused.returncode != 0 and refused.stderr.count("supersede-cycle") == 3, refused.stderr
    git("commit", "-q", "--no-verify", "-m", "a ring of three", cwd=ready)
    assert searched("frotz port") == {x, y, z}
    # an ordinary supersede is a chain, not a ring: the older memory is hidden as always
    old = submitted("The blorb limit is 3")
    new = json.loads(run_cli("supersede", old, "The blorb limit is 4", "--json").out)["id"]
    assert searched("blorb limit") == {new}

"""`git memex inventory` end to end through the CLI, in real repositories.

The page in a real browser: tests/upkeep/test_inventory_browser.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from git_memex.upkeep.inventory import supersede_chains

from conftest import Result, run_cli, run_cli_process

MEM = ".ai/open-memex"
OLD_ID = "01H0000000000000000000OLD1"
XSS = '<script>document.title="pwned"</script><img src=x onerror="document.title=1"> & "quotes"'


def env_for(base: Path) -> dict[str, str]:
    """What the autouse `isolated_env` sets, for a world built once per module."""
    home = base / "home"
    home.mkdir()
    cfg = home / ".gitconfig"
    cfg.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n")
    env = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(cfg), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_MEMEX_HOME": str(base / "data")}
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = "Test User"
        env[f"GIT_{role}_EMAIL"] = "test@example.com"
    return env


@dataclass
class World:
    """A repository with memories in every stage a curator sees, built once per module."""

    repo: Path
    env: dict[str, str]
    ids: dict[str, str]

    def cli(self, *args: str, process: bool = False, **kw: Any) -> Result:
        run = run_cli_process if process else run_cli
        return run(*args, cwd=kw.pop("cwd", self.repo), env={**self.env, **kw.pop("env", {})}, **kw)

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.repo, env={**os.environ, **self.env}, check=True,
                       capture_output=True)

    def add(self, *args: str) -> str:
        r = self.cli("add", *args, "--json")
        assert r.code == 0, r.err
        return r.json()["id"]

    def inventory(self, *args: str) -> dict:
        r = self.cli("inventory", "--format", "json", *args)
        assert r.code == 0, r.err
        return r.json()


OLD_FILE = f"""---
id: {OLD_ID}
schema_version: 2
revision: 1
scope: project
visibility: internal
type: fact
role: knowledge
importance: normal
status: active
review_state: published
source: cli
created_by: local:old@example.com
created_at: '2025-01-10T09:00:00Z'
updated_at: '2025-01-10T09:00:00Z'
tags:
- legacy
review_history:
- at: '2025-01-10T09:00:00Z'
  by: local:old@example.com
  from: approved
  to: published
---

The release checklist lives in the wiki under Operations.
"""


def build_world(base: Path) -> World:
    repo = base / "work"
    repo.mkdir()
    w = World(repo, env_for(base), {})
    w.git("init", "-q", "-b", "main")
    (repo / "README.md").write_text("demo\n")
    assert w.cli("init", "--yes").code == 0
    w.git("add", "-A")
    w.git("commit", "-q", "-m", "set up git-memex")
    ids = w.ids
    ids["published"] = w.add("Integration tests need docker compose up before pytest runs.", "--type", "workflow")
    ids["approved"] = w.add("The payments service retries webhooks five times with backoff.", "--type", "fact")
    ids["rejected"] = w.add("Always run the linter twice to be safe.", "--type", "howto")
    ids["proposed"] = w.add("Use ruff format instead of black in this repository.", "--type", "decision")
    for key in ("published", "approved", "rejected", "proposed"):
        assert w.cli("submit", ids[key]).code == 0
    for key in ("published", "published", "approved"):
        assert w.cli("promote", ids[key]).code == 0
    assert w.cli("promote", ids["rejected"], "--reject", "--note", "no reason given").code == 0
    # a teammate's memory from long ago, arrived through git
    (repo / MEM / f"{OLD_ID}.md").write_text(OLD_FILE)
    w.git("add", "-A")
    w.git("commit", "-q", "-m", "review, and an old memory")
    ids["old"] = OLD_ID
    ids["draft"] = w.add("Staging deploys take 30 minutes.", "--type", "fact")
    ids["contra"] = w.add("Staging deploys take 45 minutes.", "--type", "fact")
    ids["dup1"] = w.add("The cache directory is build/cache and CI restores it between jobs on every branch.")
    ids["dup2"] = w.add("The cache directory is build/cache; CI restores it between jobs on every branch!!")
    ids["personal"] = w.add("I prefer short commit messages in the imperative.", "--scope", "personal",
                            "--type", "preference")
    ids["xss"] = w.add(XSS, "--scope", "personal", "--type", "fact", "--tags", "x<b>y</b>")
    ids["v1"] = w.add("The frontend dev server listens on port 3000.", "--type", "fact")
    r = w.cli("supersede", ids["v1"], "The frontend dev server listens on port 5173 since the Vite move.", "--json")
    assert r.code == 0, r.err
    ids["v2"] = r.json()["id"]
    return w


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("world"))


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def inventory(*args: str) -> dict:
    r = run_cli("inventory", "--format", "json", *args)
    assert r.code == 0, r.err
    return r.json()


# ------------------------------------------------------------------ what it reports
def test_json_inventory_counts_pipeline_and_findings(world: World):
    inv = world.inventory()
    ids = world.ids
    assert inv["total"] == 13
    assert inv["counts"]["scope"] == {"project": 11, "personal": 2}
    assert inv["counts"]["location"] == {"repo": 5, "outbox": 6, "personal": 2}
    assert inv["counts"]["status"] == {"active": 12, "superseded": 1}
    assert inv["counts"]["review_state"] == {"draft": 6, "proposed": 1, "approved": 1, "published": 2, "rejected": 1}
    pipe = inv["pipeline"]
    assert set(pipe["published"]) == {ids["published"], ids["old"]}
    assert pipe["approved"] == [ids["approved"]]
    assert pipe["proposed"] == [ids["proposed"]]
    assert pipe["rejected"] == [ids["rejected"]]
    assert set(pipe["draft"]) == {ids[k] for k in ("draft", "contra", "dup1", "dup2", "v2")}  # v1 is superseded
    assert inv["stale"] == [ids["old"]]
    assert set(inv["recent"][:2]) == {ids["v1"], ids["v2"]}  # the supersede wrote both, last
    assert inv["chains"] == [{"ids": [ids["v1"], ids["v2"]], "missing": []}]
    assert [(p["a"], p["b"]) for p in inv["near_duplicates"]] == [tuple(sorted((ids["dup1"], ids["dup2"])))]
    assert [(p["a"], p["b"]) for p in inv["contradictions"]] == [tuple(sorted((ids["draft"], ids["contra"])))]
    assert inv["local_only"] == 2
    assert inv["project"] == "work" and inv["scope"] == "both"


def test_json_flag_gives_the_same_document_as_format_json(world: World):
    """`--json` works here as on every other data command (SPEC's CLI contract)."""
    r = world.cli("inventory", "--json")
    assert r.code == 0, r.err
    by_flag, by_format = r.json(), world.inventory()
    # The two runs are seconds apart; the stamp is the one field that may differ.
    assert by_flag.pop("generated_at") and by_format.pop("generated_at")
    assert by_flag == by_format
    clash = world.cli("inventory", "--json", "--format", "html")
    assert clash.code != 0 and "two formats" in clash.err and "Traceback" not in clash.err


def test_scope_project_and_personal_select_what_is_counted(world: World):
    inv = world.inventory("--scope", "project")
    assert inv["counts"]["scope"] == {"project": 11}
    assert world.ids["personal"] not in {e["id"] for e in inv["memories"]}
    assert inv["local_only"] == 0
    personal = world.inventory("--scope", "personal")
    assert {e["id"] for e in personal["memories"]} == {world.ids["personal"], world.ids["xss"]}
    assert personal["pipeline"] == {s: [] for s in ("draft", "proposed", "approved", "published", "rejected")}


def test_text_inventory_reads_at_a_glance(world: World):
    r = world.cli("inventory")
    assert r.code == 0, r.err
    out, ids = r.out, world.ids
    assert "13 memories: 11 project (repo 5, outbox 6), 2 personal" in out
    assert "review pipeline: draft 5 → proposed 1 → approved 1 → published 2; rejected 1" in out
    assert f"{ids['v1'][:10]} → {ids['v2'][:10]}" in out
    assert "stale: not changed in 90 days (1)" in out and f"  {OLD_ID[:10]}  2025-01-10" in out
    assert "near-duplicate pairs (1)" in out and "possible contradictions (1)" in out
    assert "supersede chains (1)" in out


def test_a_dangling_supersede_pointer_is_shown_as_missing(repo: Path):
    assert run_cli("init", "--yes").code == 0
    mid = add("The queue worker runs on three nodes.")
    path = next((Path(os.environ["GIT_MEMEX_HOME"]) / "memories" / "outbox").rglob(f"{mid}.md"))
    ghost = "01H00000000000000000GHOST1"
    path.write_text(path.read_text().replace("superseded_by: null", f"superseded_by: {ghost}"))
    inv = inventory()
    assert inv["chains"] == [{"ids": [mid, ghost], "missing": [ghost]}]
    assert inv["chain_problems"] == [f"{mid} names {ghost} as its successor, which is not here"]
    r = run_cli("inventory")
    assert f"{mid[:10]} → {ghost[:10]} (not here)" in r.out
    assert f"problem: {mid} names {ghost} as its successor, which is not here" in r.out


def test_long_findings_are_cut_in_text_and_on_the_page_but_not_in_json(repo: Path, tmp_path: Path):
    assert run_cli("init", "--yes").code == 0
    for i in range(501):
        mid = f"01H00000000000000000{i:06d}"
        body = OLD_FILE.replace(OLD_ID, mid).replace("lives in the wiki", f"number {i} lives in the wiki")
        (repo / MEM / f"{mid}.md").write_text(body)
    inv = inventory()
    assert len(inv["stale"]) == 501
    r = run_cli("inventory")
    assert "stale: not changed in 90 days (501)" in r.out and "  … and 481 more (--format json lists them all)" in r.out
    page = tmp_path / "p.html"
    assert run_cli("inventory", "--format", "html", "--out", str(page)).code == 0
    stale = page.read_text().split('<section id="stale"', 1)[1].split("</section>", 1)[0]
    assert stale.count("<tr data-search=") == 500 and "the first 500 of 501 are listed here" in stale


def test_near_duplicates_are_bounded_as_audit_bounds_them(repo: Path, tmp_path: Path):
    """17 memories written alike are 136 near-duplicate pairs: the JSON lists the 100 most similar
    and says how many more (`near_duplicates_left_out`), as `audit --json` does; text and page count
    all 136 and say the JSON lists the first 100."""
    assert run_cli("init", "--yes").code == 0
    for i in range(17):
        mid = f"01H00000000000000000{i:06d}"
        body = OLD_FILE.replace(OLD_ID, mid).replace(
            "lives in the wiki under Operations.",
            f"lives in the wiki under Operations, next to the on-call runbook and the escalation matrix, copy {i}.")
        (repo / MEM / f"{mid}.md").write_text(body)
    inv = inventory()
    assert len(inv["near_duplicates"]) == 100 and inv["near_duplicates_left_out"] == 36
    audit = run_cli("audit", "--json")
    assert audit.json()["near_duplicates_left_out"] == 36
    assert {(p["a"], p["b"]) for p in inv["near_duplicates"]} == {
        (p["a"], p["b"]) for p in audit.json()["near_duplicates"]}
    sims = [p["similarity"] for p in inv["near_duplicates"]]
    assert sims == sorted(sims, reverse=True)
    r = run_cli("inventory")
    assert "near-duplicate pairs (136)" in r.out and "  … and 116 more (--format json lists the first 100)" in r.out
    page = tmp_path / "p.html"
    assert run_cli("inventory", "--format", "html", "--out", str(page)).code == 0
    dups = page.read_text().split('<section id="duplicates"', 1)[1].split("</section>", 1)[0]
    assert "the first 100 of 136 are listed here" in dups and "lists the first 100" in dups


def test_a_memory_a_newer_one_replaces_counts_as_superseded_and_the_half_chain_is_reported(repo: Path):
    assert run_cli("init", "--yes").code == 0
    old = add("The API listens on port 8080.")
    new = add("The API listens on port 9090 since the proxy moved.")
    path = next((Path(os.environ["GIT_MEMEX_HOME"]) / "memories" / "outbox").rglob(f"{new}.md"))
    path.write_text(path.read_text().replace("supersedes: null", f"supersedes: {old}"))  # one side only
    inv = inventory()
    status = {e["id"]: e["status"] for e in inv["memories"]}
    assert status == {old: "superseded", new: "active"}
    assert inv["pipeline"]["draft"] == [new]
    assert inv["chains"] == [{"ids": [old, new], "missing": []}]
    assert any(m.startswith(f"{new} replaces {old}, but {old} does not point back") for m in inv["chain_problems"])


def test_a_secret_in_a_hand_edited_file_is_masked_in_every_format(repo: Path):
    assert run_cli("init", "--yes").code == 0
    mid = add("The deploy token is kept in the vault.")
    path = next((Path(os.environ["GIT_MEMEX_HOME"]) / "memories" / "outbox").rglob(f"{mid}.md"))
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path.write_text(path.read_text().replace("kept in the vault", f"{secret} for now"))
    for fmt in ("text", "json", "html"):
        r = run_cli("inventory", "--format", fmt)
        assert r.code == 0, r.err
        assert secret not in r.out and "The deploy token is" in r.out, fmt


# ------------------------------------------------------------------ the page, statically
class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_html_page_is_self_contained_and_escapes_memory_text(world: World, tmp_path: Path):
    out = tmp_path / "inventory.html"
    r = world.cli("inventory", "--format", "html", "--out", str(out))
    assert r.code == 0, r.err
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    parsed = Tags()
    parsed.feed(page)
    names = [t for t, _ in parsed.tags]
    assert names.count("script") == 1 and names.count("style") == 1 and "img" not in names
    assert not {"link", "iframe", "object", "embed", "base", "form", "a"} & set(names)
    assert not [a for _t, a in parsed.tags if {"src", "href", "onerror", "onload", "style"} & set(a)]
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert "x&lt;b&gt;y&lt;/b&gt;" in page
    css = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "url(" not in css and "@import" not in css
    csp = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None and csp.startswith("default-src 'none';")


# ------------------------------------------------------------------ where it may write
def test_personal_memories_are_not_written_into_a_work_tree(world: World):
    repo = world.repo
    target = repo / "inventory.html"
    r = world.cli("inventory", "--format", "html", "--out", str(target))
    assert r.code == 2, r.err
    assert len(r.err.strip().splitlines()) == 1 and "--allow-personal" in r.err
    assert "holds 2 personal memories" in r.err and "use --scope project" in r.err
    assert not target.exists()
    assert not [p for p in repo.iterdir() if p.name.startswith(".inventory")]
    sub = repo / "docs"
    sub.mkdir(exist_ok=True)
    r = world.cli("inventory", "--out", "docs/x.txt")
    assert r.code == 2 and not (sub / "x.txt").exists()
    # project-only output is fine in the tree; personal with the flag too, readable by the user alone
    assert world.cli("inventory", "--scope", "project", "--format", "html", "--out", str(target)).code == 0
    assert world.ids["personal"] not in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) & 0o044  # 0666 less the umask
    r = world.cli("inventory", "--format", "html", "--out", str(target), "--allow-personal")
    assert r.code == 0, r.err
    assert world.ids["personal"] in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    target.unlink()


def test_private_project_memories_count_as_never_leaving_the_machine(repo: Path):
    assert run_cli("init", "--yes").code == 0
    mid = add("My local notes on the flaky test.", "--visibility", "private")
    inv = inventory("--scope", "project")
    assert inv["local_only"] == 1 and inv["counts"]["location"] == {"private": 1}
    assert inv["pipeline"]["draft"] == []  # a private memory is never reviewed
    r = run_cli("inventory", "--scope", "project", "--out", "inv.txt")
    assert r.code == 2 and "1 private memory" in r.err and "--scope project" not in r.err, r.err
    assert not (repo / "inv.txt").exists()
    r = run_cli("inventory", "--scope", "project", "--out", "inv.txt", "--allow-personal")
    assert r.code == 0 and mid[:10] in (repo / "inv.txt").read_text()


def test_outside_a_work_tree_personal_memories_go_to_a_file_only_the_user_reads(world: World, tmp_path: Path):
    target = tmp_path / "inv.json"
    r = world.cli("inventory", "--format", "json", "--out", str(target))
    assert r.code == 0, r.err
    assert r.out.startswith(f"wrote {target}")
    assert json.loads(target.read_text())["local_only"] == 2
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finding where standard output goes needs Linux /proc")
def test_stdout_redirected_into_the_work_tree_is_refused_too(world: World):
    target = world.repo / "inv.txt"
    with target.open("w") as fh:
        p = subprocess.run([sys.executable, "-m", "git_memex", "inventory"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, cwd=world.repo, env={**os.environ, **world.env}, check=False)
    assert p.returncode == 2 and "--allow-personal" in p.stderr
    assert target.read_text() == ""
    r = world.cli("inventory", "--out", "-")
    assert r.code == 0 and r.out.startswith("git-memex inventory of work") and not (world.repo / "-").exists()
    target.unlink()


def test_an_unwritable_out_is_one_sentence_and_leaves_no_file(world: World, tmp_path: Path):
    if os.geteuid() == 0:
        folder = Path("/sys")  # refused even to root
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
    before = set(os.listdir(folder))
    r = world.cli("inventory", "--scope", "project", "--out", str(folder / "inv.txt"))
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert r.err.startswith(f"git-memex: cannot write {folder / 'inv.txt'} (") and "nothing was written" in r.err
    assert set(os.listdir(folder)) == before


def test_an_out_that_cannot_be_a_file_is_one_sentence(world: World, tmp_path: Path):
    (tmp_path / "file").write_text("x")
    cases = ((tmp_path / "missing" / "inv.txt", "does not exist"), (tmp_path, "is a folder"),
             (tmp_path / "file" / "inv.txt", "is not a folder"))
    for bad, words in cases:
        r = world.cli("inventory", "--scope", "project", "--out", str(bad))
        assert r.code == 2 and words in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert not (tmp_path / "missing").exists()


def test_a_write_killed_before_the_rename_keeps_the_previous_file_whole(world: World, tmp_path: Path):
    target = tmp_path / "inv.txt"
    target.write_text("the previous inventory\n")
    r = world.cli("inventory", "--scope", "project", "--out", str(target), process=True,
                  env={"GIT_MEMEX_CRASH_AT": "store.before_rename"})
    assert r.code == 137
    assert target.read_text() == "the previous inventory\n"
    assert world.cli("inventory", "--scope", "project", "--out", str(target)).code == 0
    assert target.read_text().startswith("git-memex inventory of work")


def test_bad_format_and_scope_are_usage_errors(repo: Path):
    for args in (("--format", "pdf"), ("--scope", "team")):
        r = run_cli("inventory", *args)
        assert r.code == 1 and "inventory" in r.err and "Traceback" not in r.err


def test_outside_git_the_inventory_shows_personal_memories(nogit: Path):
    add("I like tabs.", "--scope", "personal")
    inv = inventory()
    assert inv["project"] is None and inv["total"] == 1
    r = run_cli("inventory")
    assert r.code == 0 and "outside a git repository" in r.out


# ------------------------------------------------------------------ the finders alone
def test_chain_finder_on_plain_records():
    rows = {"A": {"id": "A", "supersedes": None, "superseded_by": "B"},
            "B": {"id": "B", "supersedes": "A", "superseded_by": "C"},
            "C": {"id": "C", "supersedes": "B", "superseded_by": None},
            "D": {"id": "D", "supersedes": "Z", "superseded_by": None}}
    assert supersede_chains(rows) == [{"ids": ["A", "B", "C"], "missing": []}, {"ids": ["Z", "D"], "missing": ["Z"]}]

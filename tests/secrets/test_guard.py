"""guard.safe_bodies: a memory file that reached the repository unmasked (a teammate without
git-memex, an edit on a hosting site) never shows its secret in search, list, sync status or the
session context; the detector's verdict is remembered per exact body."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from git_memex.core import frontmatter
from git_memex.core.model import create

from conftest import git, run_cli

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a fake GitHub token of the real shape


def plant(repo: Path, body: str, **fm: object) -> str:
    """Write a memory file straight into the repository's memory folder, as a hand edit would."""
    m = create(body, scope="project", type="fact", created_by="local:someone-else")
    m.fm.update(fm)
    folder = repo / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    return m.id


def test_search_list_and_context_mask_a_planted_secret(repo: Path) -> None:
    mid = plant(repo, f"the deploy bot authenticates to GitHub with {TOKEN} on the staging runner")
    for args in (("search", "deploy bot GitHub"), ("search", "deploy bot GitHub", "--json"), ("list", "--json"),
                 ("context", "--json"), ("context", "--query", "deploy bot")):
        r = run_cli(*args)
        assert r.code == 0, (args, r.err)
        assert TOKEN not in r.out and TOKEN[4:20] not in r.out, args
        assert mid[:7] in r.out or mid in r.out, args  # the shortest unique prefix, 7 at least
    hit = run_cli("search", "deploy bot GitHub", "--json").json()["hits"][0]
    assert hit["snippet"].count("ghp_") == 1 and "xxxx" in hit["snippet"]  # masked as a write masks: ghp_ + x…
    # `show` masks in both forms (every output path: issue 31); the text form says the file holds
    # secrets, since the file on disk (and its commits) still do
    shown = run_cli("show", mid).out
    assert TOKEN not in shown and "# masked here: this file holds secrets" in shown
    assert TOKEN not in run_cli("show", mid, "--json").out


def test_private_part_of_a_planted_file_is_not_shown(repo: Path) -> None:
    plant(repo, "the on-call phone is in the team vault <private>PIN 482913</private> behind the desk")
    out = run_cli("search", "on-call phone vault", "--json").json()
    assert "482913" not in json.dumps(out) and "[REDACTED]" in out["hits"][0]["snippet"]


def test_verdict_is_remembered_per_exact_body(repo: Path, isolated_env: Path) -> None:
    clean = plant(repo, "the staging database is rebuilt every night from the snapshot bucket")
    dirty = plant(repo, f"the staging bot token is {TOKEN} for now")
    assert run_cli("search", "staging", "--json").code == 0
    db = sqlite3.connect(isolated_env / "data" / "index.db")
    # the two bodies, and the query "staging" (echoed back, so checked the same way)
    assert sorted(f for (f,) in db.execute("SELECT found FROM secret_checks")) == [0, 0, 1]
    # an edit that adds a secret is a new body, so it is scanned again
    path = repo / ".ai" / "open-memex" / f"{clean}.md"
    path.write_text(path.read_text(encoding="utf-8").replace("snapshot bucket", f"snapshot bucket using {TOKEN}"),
                    encoding="utf-8")
    out = run_cli("search", "staging", "--json")
    assert out.code == 0 and TOKEN not in out.out
    assert {h["id"] for h in out.json()["hits"]} >= {clean, dirty}
    assert sorted(f for (f,) in db.execute("SELECT found FROM secret_checks")) == [0, 0, 1, 1]


def test_memories_written_by_us_are_shown_unchanged(repo: Path) -> None:
    body = "we pin node to 22.11 in .nvmrc and the CI image"
    r = run_cli("add", body, "--json")
    assert r.code == 0, r.err
    assert run_cli("search", "nvmrc", "--json").json()["hits"][0]["snippet"] == body


def test_mcp_search_masks_a_planted_secret(repo: Path) -> None:
    from mcp_client import call, text

    plant(repo, f"the deploy bot authenticates to GitHub with {TOKEN} on the staging runner")
    res = call("memory_search", {"query": "deploy bot"}, cwd=repo)
    assert not res.is_error
    assert TOKEN not in text(res) and TOKEN not in json.dumps(res.structured_content)
    res = call("memory_list", {}, cwd=repo)
    assert TOKEN not in text(res) and TOKEN not in json.dumps(res.structured_content)


def test_distill_never_carries_a_planted_secret_into_agents_md(repo: Path) -> None:
    mid = plant(repo, f"always call the deploy API with token {TOKEN} and never with a personal one", type="workflow",
                role="instruction", review_state="approved", confidence="high")
    # approved (the documented road writes the approval record), then merged on the default
    # branch by someone without git-memex (no hook ran)
    approved = run_cli("instruction", "approve", mid)
    assert approved.code == 0, approved.err
    git("config", "memex.defaultBranch", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "a teammate's rule", cwd=repo)
    r = run_cli("distill", "--json")
    assert r.code == 0, r.err
    out = r.json()
    assert out["count"] == 1 and "deploy API" in out["markdown"] and TOKEN not in r.out


def test_a_commit_of_the_planted_file_is_still_refused(repo: Path) -> None:
    """Masking on output does not make the file acceptable: the pre-commit scan still blocks it."""
    assert run_cli("init", "--yes").code == 0
    plant(repo, f"the deploy bot token is {TOKEN}")
    git("add", "-A", cwd=repo)
    r = git("commit", "-q", "-m", "planted", cwd=repo, check=False)
    assert r.returncode != 0 and "secret" in (r.stdout + r.stderr).lower()


def test_a_secret_in_an_enum_field_is_never_shown(ready: Path) -> None:
    """A hand edit or a pull brings `importance: ghp_…` (or confidence, role, type): the hook's
    refusal, scan, doctor, show --json, list, search and MCP memory_get all mask it."""
    from mcp_client import call, text

    ids = {key: plant(ready, f"the release checklist lives in the wiki, note {key}", **{key: TOKEN})
           for key in ("importance", "confidence", "role", "type")}
    git("add", "-A", cwd=ready)
    commit = git("commit", "-qm", "hand edit", cwd=ready, check=False)  # the real pre-commit hook
    assert commit.returncode != 0 and "invalid (" in commit.stderr + commit.stdout
    assert TOKEN not in commit.stderr + commit.stdout and TOKEN[4:20] not in commit.stderr + commit.stdout
    git("commit", "-qm", "hand edit", "--no-verify", cwd=ready)
    for args in (("scan",), ("doctor",), ("list", "--json"), ("search", "release checklist wiki", "--json"),
                 *(("show", mid, "--json") for mid in ids.values())):
        r = run_cli(*args)
        assert TOKEN not in r.out + r.err and TOKEN[4:20] not in r.out + r.err, (args, r.out, r.err)
    shown = run_cli("show", ids["type"], "--json").json()
    assert shown["warnings"] and all(TOKEN not in w for w in shown["warnings"])
    assert run_cli("show", ids["importance"], "--json").json()["frontmatter"]["importance"].startswith("ghp_xxxx")
    for mid in ids.values():
        res = call("memory_get", {"id": mid}, cwd=ready)
        assert TOKEN not in text(res) and TOKEN not in json.dumps(res.structured_content), text(res)


def test_the_users_own_input_is_echoed_back_masked(repo: Path) -> None:
    """A token pasted into a query, a type filter or an argument comes back masked: search and
    context --json, MCP memory_search/memory_list (text and structured), argument errors."""
    from mcp_client import call, text

    plant(repo, "the release checklist lives in the wiki")
    for args in (("search", f"release {TOKEN}", "--json"), ("context", "--query", f"release {TOKEN}", "--json"),
                 ("list", "--type", TOKEN), ("list", "--bogus", TOKEN)):
        r = run_cli(*args)
        assert TOKEN not in r.out + r.err and "ghp_xxxx" in r.out + r.err, (args, r.out, r.err)
    for tool, given in (("memory_search", {"query": f"release {TOKEN}", "type": TOKEN}),
                        ("memory_search", {"query": f"zzqx {TOKEN}"}), ("memory_list", {"type": TOKEN})):
        res = call(tool, given, cwd=repo)
        assert TOKEN not in text(res) and TOKEN not in json.dumps(res.structured_content), (tool, text(res))


def test_an_unrecognized_argument_cannot_drive_the_terminal(repo: Path) -> None:
    from conftest import run_cli_process

    r = run_cli_process("list", "--since", "\x1b]0;PWN\x07\x1b[2J")
    assert r.code == 1 and "unrecognized arguments" in r.err
    assert "\x1b" not in r.err and "\x07" not in r.err and "\\u001b]0;PWN" in r.err


def test_an_unknown_tool_prompt_or_resource_name_is_echoed_masked(repo: Path) -> None:
    from mcp_client import session

    async def steps(c):
        said = []
        res = await c.call_tool(TOKEN, {})
        said.append((res.is_error, json.dumps([getattr(b, "text", "") for b in res.content])))
        for ask in (lambda: c.get_prompt(TOKEN, {}), lambda: c.read_resource("memex://" + TOKEN)):
            try:
                await ask()
            except Exception as exc:  # noqa: BLE001 - the client raises the server's error
                said.append((True, repr(exc)))
        return said

    said = session(steps, cwd=repo)
    assert len(said) == 3 and all(bad for bad, _ in said)
    for _, words in said:
        assert TOKEN not in words and "ghp_xxxx" in words and "Internal" not in words, words

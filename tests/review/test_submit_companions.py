"""What `submit` commits beside its drafts (docs/git.md, "submit"; docs/security.md, row 4d).

`submit` commits through pygit2, so no git hook runs: every memory file it puts in the commit,
drafts and the memories they supersede ("companions") alike, passes `secrets.scan.commit_problems`,
the check the pre-commit hook runs on each staged file. A companion is taken only when its change
against HEAD is the supersede marking; anything more refuses the whole submit in one sentence,
nothing changed. A companion HEAD does not hold (untracked, a personal file) is never taken. The
pre-commit hook's hint names `git memex submit` only for a file submit would take.

Real repositories, the real hook under `git commit`, the real CLI and the MCP server over stdio.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from git_memex.core import frontmatter

from conftest import git, run_cli, run_cli_process

MEM = ".ai/open-memex"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CONFLICT = f"<<<<<<< ours\n{TOKEN}\n=======\nthe other side\n>>>>>>> theirs\n"


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def snapshot(repo: Path, isolated_env: Path) -> tuple[str, str, list[str], list[str]]:
    """HEAD, the work tree's status, the outbox drafts and the journals: what "nothing changed" keeps."""
    data = isolated_env / "data"
    outbox = sorted(p.name for p in (data / "memories" / "outbox").rglob("*.md"))
    journals = sorted(p.name for p in (data / "journal").iterdir()) if (data / "journal").is_dir() else []
    return (git("rev-parse", "HEAD", cwd=repo).stdout,
            git("status", "--porcelain", "--untracked-files=all", cwd=repo).stdout, outbox, journals)


def superseded(ready: Path) -> tuple[str, str, Path]:
    """(old, new, old's file): a committed memory, superseded by a new outbox draft."""
    old = add("CI uses the deploy bot", "--scope", "project")
    assert run_cli("submit", old).code == 0
    r = run_cli("supersede", old, "CI uses the release bot", "--json")
    assert r.code == 0, r.err
    return old, r.json()["id"], ready / MEM / f"{old}.md"


def never_committed(repo: Path, needle: str) -> bool:
    return needle not in git("log", "-p", "--all", cwd=repo).stdout


def refused(r: Any, rel: str, why: str) -> None:
    assert r.code == 2, (r.code, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    assert rel in lines[0] and why in lines[0] and "nothing was changed" in lines[0], lines[0]
    assert TOKEN not in r.err


def test_a_companion_holding_a_secret_is_refused_and_the_hint_does_not_send_there(ready: Path, isolated_env: Path):
    old, new, path = superseded(ready)
    marked = path.read_text()
    path.write_text(marked + f"bot token: {TOKEN}\n")
    c = git("commit", "-qam", "x", cwd=ready, check=False)  # the real pre-commit hook
    assert c.returncode == 1 and "github-pat" in c.stderr and "dangling-superseded-by" in c.stderr
    assert f"`git memex submit {new}` commits both" not in c.stderr  # submit would refuse it
    assert f"`git memex submit {new}` would refuse this file too, as it holds a secret (github-pat" in c.stderr
    before = snapshot(ready, isolated_env)
    r = run_cli("submit", new)
    refused(r, f"{MEM}/{old}.md", "holds a secret (github-pat, line")
    assert snapshot(ready, isolated_env) == before and never_committed(ready, TOKEN)
    # the marking alone goes in with the draft, as before
    path.write_text(marked)
    c = git("commit", "-qam", "x", cwd=ready, check=False)
    assert c.returncode == 1 and f"`git memex submit {new}` commits both" in c.stderr
    r = run_cli("submit", new, "--json")
    assert r.code == 0, r.err
    head = git("show", f"HEAD:{MEM}/{old}.md", cwd=ready).stdout
    assert head == marked and frontmatter.parse(head)[0]["superseded_by"] == new
    assert git("status", "--porcelain", cwd=ready).stdout == ""


@pytest.mark.parametrize("change, why", [
    (lambda t: t.replace("importance: normal", "importance: high"), "changes its importance field"),
    (lambda t: t.replace("CI uses the deploy bot", "CI uses the deploy bot, ask kim for the key"), "changes its text"),
    (lambda t: t.replace("status: superseded\n", "status: superseded  # kim's laptop: 10.0.0.7\n"),
     "changes lines the reader does not see"),
    (lambda t: t.replace("scope: project", "scope: personal"), "personal-memory-in-repo"),
    (lambda t: t + CONFLICT, "conflict-markers"),
    (lambda t: t + "the on-call phone is <private>0170 1234567</private>\n", "private-span-in-repo"),
    (lambda t: t.replace("status: superseded", "status: active"), "is not marked superseded"),
], ids=["field", "text", "comment", "personal", "conflict", "private", "status"])
def test_a_companion_changed_beyond_the_supersede_marking_refuses_the_whole_submit(
        ready: Path, isolated_env: Path, change: Any, why: str):
    old, new, path = superseded(ready)
    path.write_text(change(path.read_text()))
    before = snapshot(ready, isolated_env)
    refused(run_cli("submit", new), f"{MEM}/{old}.md", why)
    assert snapshot(ready, isolated_env) == before and never_committed(ready, TOKEN)
    c = git("commit", "-qam", "x", cwd=ready, check=False)
    assert c.returncode == 1 and f"`git memex submit {new}` commits both" not in c.stderr, c.stderr


def test_an_untracked_personal_file_naming_the_draft_is_never_taken(ready: Path, isolated_env: Path):
    old, new, path = superseded(ready)
    git("checkout", "-q", "--", f"{MEM}/{old}.md", cwd=ready)  # its marking undone: no companion
    other = "01M8VZZZZZZZZZZZZZZZZZZZZZ"
    stray = ready / MEM / f"{other}.md"
    text = path.read_text().replace(old, other).replace("scope: project", "scope: personal")
    fm, body = frontmatter.parse(text)
    fm.update(status="superseded", superseded_by=new)
    stray.write_text(frontmatter.serialize(fm, body + f"\nbot token: {TOKEN}\n") + CONFLICT)
    git("add", str(stray), cwd=ready)
    c = git("commit", "-qm", "x", cwd=ready, check=False)
    assert c.returncode == 1 and "dangling-superseded-by" in c.stderr
    assert f"`git memex submit {new}` never takes this file" in c.stderr
    assert f"`git memex submit {new}` commits both" not in c.stderr
    git("reset", "-q", cwd=ready)
    r = run_cli("submit", new, "--json")
    assert r.code == 0, r.err
    assert any(f"{MEM}/{other}.md" in w and "left it out" in w for w in r.json()["warnings"])
    names = git("show", "--name-only", "--format=", "HEAD", cwd=ready).stdout.split()
    assert names == [f"{MEM}/{new}.md"]
    assert never_committed(ready, TOKEN) and never_committed(ready, other)
    assert f"?? {MEM}/{other}.md" in git("status", "--porcelain", cwd=ready).stdout


def test_a_hand_edited_draft_with_a_private_part_is_refused_like_a_commit(ready: Path, isolated_env: Path):
    d = add("the staging database is reset nightly")
    (draft,) = (isolated_env / "data" / "memories" / "outbox").rglob(f"{d}.md")
    draft.write_text(draft.read_text() + "<private>the reset script lives on kim's laptop</private>\n")
    before = snapshot(ready, isolated_env)
    r = run_cli("submit", d)
    assert r.code == 2 and "private-span-in-repo" in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert snapshot(ready, isolated_env) == before
    hand = ready / MEM / f"{d}.md"  # the same file committed by hand: the hook refuses it alike
    hand.write_text(draft.read_text())
    git("add", str(hand), cwd=ready)
    c = git("commit", "-qm", "x", cwd=ready, check=False)
    assert c.returncode == 1 and "private-span-in-repo" in c.stderr and "kim's laptop" not in c.stderr


def test_a_replayed_plan_commits_the_companion_and_a_spoiled_one_is_set_aside(ready: Path, isolated_env: Path):
    old, new, path = superseded(ready)
    assert run_cli_process("submit", new, env={"GIT_MEMEX_CRASH_AT": "submit.after_journal"}).code == 137
    (journal,) = (isolated_env / "data" / "journal").glob("submit-*.json")
    plan = json.loads(journal.read_text())
    assert list(plan["companions"]) == [f"{MEM}/{old}.md"]
    plan["companions"][f"{MEM}/{old}.md"] += f"bot token: {TOKEN}\n"
    journal.write_text(json.dumps(plan))
    r = run_cli("submit", new, "--json")  # the spoiled plan is set aside; the submit runs anew
    assert r.code == 0, r.err
    assert "could not be finished" in r.err and "github-pat" in r.err and TOKEN not in r.err
    assert never_committed(ready, TOKEN)
    assert frontmatter.parse(git("show", f"HEAD:{MEM}/{old}.md", cwd=ready).stdout)[0]["superseded_by"] == new
    # a plan as written replays, companion included (one more supersede, killed after its journal)
    newer = run_cli("supersede", new, "CI uses the release bot v2", "--json").json()["id"]
    assert run_cli_process("submit", newer, env={"GIT_MEMEX_CRASH_AT": "submit.after_journal"}).code == 137
    r = run_cli("submit", newer, "--json")
    assert r.code == 0 and r.json()["resumed"] is True, r.err
    assert frontmatter.parse(git("show", f"HEAD:{MEM}/{new}.md", cwd=ready).stdout)[0]["superseded_by"] == newer
    assert git("status", "--porcelain", cwd=ready).stdout == ""


def test_memory_submit_over_stdio_refuses_a_companion_with_a_secret(ready: Path, isolated_env: Path, tmp_path: Path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    def say(res: Any) -> str:
        return "\n".join(getattr(b, "text", "") for b in res.content)

    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(ready))
    state: dict[str, Any] = {}

    async def main() -> None:
        with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(90):
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                added = await s.call_tool("memory_add", {"text": "CI uses the deploy bot", "scope": "project"})
                old = added.structured_content["id"]
                assert not (await s.call_tool("memory_submit", {"ids": [old]})).is_error
                sup = await s.call_tool("memory_supersede", {"id": old, "text": "CI uses the release bot"})
                assert not sup.is_error, say(sup)
                new = sup.structured_content["id"]
                path = ready / MEM / f"{old}.md"
                marked = path.read_text()
                path.write_text(marked + f"bot token: {TOKEN}\n")
                state["before"] = snapshot(ready, isolated_env)
                state["bad"] = await s.call_tool("memory_submit", {"ids": [new]})
                state["after"] = snapshot(ready, isolated_env)
                path.write_text(marked)
                state["good"] = await s.call_tool("memory_submit", {"ids": [new]})
                state["old"], state["new"] = old, new

    anyio.run(main)
    bad = state["bad"]
    assert bad.is_error and f"{MEM}/{state['old']}.md" in say(bad) and "holds a secret (github-pat" in say(bad)
    assert TOKEN not in say(bad) and state["before"] == state["after"] and never_committed(ready, TOKEN)
    assert not state["good"].is_error, say(state["good"])
    head = git("show", f"HEAD:{MEM}/{state['old']}.md", cwd=ready).stdout
    assert frontmatter.parse(head)[0]["superseded_by"] == state["new"]
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


HAND = "01JZZHANDWR1TTENMEM0RY0001"


@pytest.mark.parametrize("how", ["supersede", "by hand"])
def test_the_marking_of_a_hand_written_committed_file_goes_in_with_the_draft(ready: Path, how: str):
    """A file HEAD holds in another tool's formatting: `supersede` rewrites it in git memex's form,
    a person marks it by editing two lines; either way the change is the marking, and is taken."""
    path = ready / MEM / f"{HAND}.md"
    path.write_text(f"---\nid: {HAND}\nschema_version: 2\nscope: project\nvisibility: internal\ntype: gotcha\n"
                    "role: knowledge\nimportance: normal\nstatus: active\nreview_state: published\nsource: user\n"
                    'created_at: "2025-01-01T00:00:00Z"\nupdated_at: "2025-01-01T00:00:00Z"\n'
                    "supersedes: null\nsuperseded_by: null\ntags: []\n"
                    # its review, as that tool records it (a published claim without one is refused by the hook)
                    "review_history:\n  - {at: '2025-01-01T00:00:00Z', by: 'local:ann@example.com', to: published}\n"
                    "---\n\nNever run alembic downgrade on prod\n")
    git("add", "-A", cwd=ready)
    git("commit", "-qm", "a hand-written memory", cwd=ready)
    if how == "supersede":
        new = run_cli("supersede", HAND, "Never run alembic downgrade anywhere", "--json").json()["id"]
    else:
        new = add("Never run alembic downgrade anywhere")
        path.write_text(path.read_text().replace("superseded_by: null", f"superseded_by: {new}")
                        .replace("status: active", "status: superseded"))
    c = git("commit", "-qam", "x", cwd=ready, check=False)
    assert c.returncode == 1 and f"`git memex submit {new}` commits both" in c.stderr, c.stderr
    r = run_cli("submit", new, "--json")
    assert r.code == 0, r.err
    names = git("show", "--name-only", "--format=", "HEAD", cwd=ready).stdout.split()
    assert sorted(names) == sorted([f"{MEM}/{HAND}.md", f"{MEM}/{new}.md"])
    assert git("status", "--porcelain", cwd=ready).stdout == ""

"""Callers have roles: an MCP tool acts for an agent; a person's acts need the person.

Through the official MCP client: in memory (`mcp_client`, with `Person` standing for the person
who answers `elicitation/create`), and once over real stdio with a `ClientSession` that declares
the elicitation capability.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from git_memex.agents.session import build_context
from git_memex.core import frontmatter
from git_memex.core.context import load_context

from conftest import git, run_cli
from mcp_client import Person, call, err, ok, text

ME = "local:test@example.com"  # the person git names in the test environment (conftest)


def data_root() -> Path:
    return Path(os.environ["GIT_MEMEX_HOME"])


def md_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))} if root.exists() else {}


def fm_of(path: Path) -> dict[str, Any]:
    return frontmatter.parse(path.read_text(encoding="utf-8"))[0]


def approved_rule(repo: Path, body: str) -> str:
    assert run_cli("init", "--yes").code == 0
    mid = run_cli("add", body, "--role", "instruction", "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    assert run_cli("instruction", "approve", mid).code == 0
    git("commit", "-qam", "approve", cwd=repo)
    return mid


def rules_served(repo: Path) -> str:
    return build_context(load_context(repo)).text


# ------------------------------------------------------------------ hole 1: personal text into a commit
def test_agent_cannot_carry_a_personal_memory_into_a_commit(repo: Path) -> None:
    secret = "I am interviewing at a competitor next week"
    personal = ok("memory_add", {"text": secret, "scope": "personal"})["id"]
    before = md_files(data_root())
    head = git("rev-parse", "HEAD", cwd=repo).stdout

    # the road of the report: propose local_approve, then submit
    msg = err("memory_propose", {"ids": [personal], "local_approve": True})
    assert f"`git memex propose {personal} --local-approve`" in msg and "cannot ask the user" in msg
    assert md_files(data_root()) == before
    sub = err("memory_submit", {"ids": [personal]})
    assert "memory_propose" not in sub and f"git memex propose {personal}" in sub  # no road for the agent
    assert git("rev-parse", "HEAD", cwd=repo).stdout == head
    assert secret not in git("log", "-p", "--all", cwd=repo).stdout

    # a person who says no, or cancels: nothing either
    for answer in (False, None):
        no = Person(answer)
        msg = err("memory_propose", {"ids": [personal]}, person=no)
        assert "did not confirm" in msg and secret in no.asked[0]
        assert md_files(data_root()) == before


def test_propose_the_person_confirms_keeps_via_and_trust(repo: Path) -> None:
    personal = ok("memory_add", {"text": "I review pull requests before lunch", "scope": "personal"})["id"]
    orig = fm_of(data_root() / "memories" / "personal" / f"{personal}.md")
    assert (orig["trust_level"], orig["via"]) == ("untrusted", "mcp")

    yes = Person(True)
    [item] = ok("memory_propose", {"ids": [personal], "local_approve": True}, person=yes)["proposed"]
    assert "I review pull requests before lunch" in yes.asked[0] and ME in yes.asked[0]
    [copy] = [p for p in data_root().rglob(f"{item['id']}.md")]
    fm = fm_of(copy)
    assert fm["trust_level"] == "untrusted" and fm["via"] == "mcp"  # never raised, never changed
    assert fm["approved_by"] == ME and fm["review_state"] == "approved"


def test_propose_writes_only_the_text_the_person_saw(repo: Path) -> None:
    personal = ok("memory_add", {"text": "I deploy from my laptop", "scope": "personal"})["id"]
    path = data_root() / "memories" / "personal" / f"{personal}.md"

    class Swap(Person):  # the file changes while the person reads the question
        async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            path.write_text(path.read_text(encoding="utf-8").replace("from my laptop", "with the root password hunter2"),
                            encoding="utf-8")
            return await super().__call__(context, params)

    before = {k: v for k, v in md_files(data_root()).items() if "outbox" in k}
    msg = err("memory_propose", {"ids": [personal]}, person=Swap(True))
    assert "changed since the person was shown it" in msg
    assert {k: v for k, v in md_files(data_root()).items() if "outbox" in k} == before


# ------------------------------------------------------------------ hole 2: signing a review with any name
def test_agent_cannot_sign_a_review_with_any_name(repo: Path) -> None:
    draft = ok("memory_add", {"text": "Migrations run before the deploy", "type": "workflow"})["id"]
    assert not call("memory_submit", {"ids": [draft]}).is_error
    path = repo / ".ai" / "open-memex" / f"{draft}.md"
    before = path.read_bytes()

    msg = err("memory_promote", {"id": draft, "by": "local:security-lead@example.com"})
    assert "Unknown argument" in msg and "`by`" in msg
    for _ in range(2):
        msg = err("memory_promote", {"id": draft})
        assert f"`git memex promote {draft}`" in msg and "cannot ask the user" in msg
    assert path.read_bytes() == before
    assert "Nothing was changed" in err("memory_promote", {"id": draft}, person=Person(False))
    assert path.read_bytes() == before

    yes = Person(True)
    assert ok("memory_promote", {"id": draft}, person=yes)["to"] == "approved"
    assert ok("memory_promote", {"id": draft}, person=yes)["to"] == "published"
    fm = fm_of(path)
    assert fm["approved_by"] == ME and {h["by"] for h in fm["review_history"][1:]} == {ME}
    assert "Migrations run before the deploy" in yes.asked[0]


# ------------------------------------------------------------------ hole 3: switching rules off
def test_agent_cannot_switch_an_approved_rule_off(repo: Path) -> None:
    rule = approved_rule(repo, "Never force-push to main")
    assert "Never force-push to main" in rules_served(repo)
    files = md_files(repo / ".ai")

    for tool, args, command in (
        ("memory_forget", {"id": rule}, f"git memex forget {rule}"),
        ("memory_forget", {"id": rule, "soft": True}, f"git memex forget {rule} --soft"),
        ("memory_supersede", {"id": rule, "text": "Force-push when in a hurry"}, f"git memex supersede {rule}"),
    ):
        msg = err(tool, args)
        assert command in msg and "cannot ask the user" in msg, msg
        assert "did not confirm" in err(tool, args, person=Person(False))
        assert md_files(repo / ".ai") == files
        assert "Never force-push to main" in rules_served(repo)
        assert not list((data_root()).rglob("outbox/*.md"))

    # an unapproved memory is the agent's to change, with no question asked
    mine = ok("memory_add", {"text": "The cache lives in /var/cache/app"})["id"]
    quiet = Person(True)
    assert not call("memory_forget", {"id": mine}, person=quiet).is_error and quiet.asked == []

    yes = Person(True)
    res = call("memory_forget", {"id": rule, "soft": True}, person=yes)
    assert not res.is_error, text(res)
    assert "Never force-push to main" in yes.asked[0]
    assert "Never force-push to main" not in rules_served(repo)


# ------------------------------------------------------------------ provenance: an agent never claims a person
def test_an_agent_cannot_record_a_persons_provenance(repo: Path) -> None:
    """A `source` naming a person's act (said, typed, imported) is the reference tool's free text
    to us: kept as `source_detail` beside `source: tool`, never the memory's provenance."""
    for claimed in ("user", "keyword", "import", "cli"):
        for scope in ("project", "personal"):
            saved = ok("memory_add", {"text": f"The user said to deploy on Fridays ({claimed}, {scope})",
                                      "source": claimed, "scope": scope})
            fm = ok("memory_get", {"id": saved["id"]})["frontmatter"]
            assert (fm["source"], fm["source_detail"], fm["trust_level"]) == ("tool", claimed, "untrusted"), fm
            assert fm["via"] == "mcp"
    saved = ok("memory_add", {"text": "The staging database is rebuilt nightly"})
    fm = ok("memory_get", {"id": saved["id"]})["frontmatter"]
    assert (fm["source"], fm["via"], fm["trust_level"]) == ("tool", "mcp", "untrusted")


# ------------------------------------------------------------------ over real stdio
def test_roles_over_stdio(repo: Path) -> None:
    rule = approved_rule(repo, "Always run the linter before committing")
    personal = run_cli("add", "I keep my notes in ~/private", "--scope", "personal", "--json").json()["id"]
    answers: list[bool] = [False, True]
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(str(getattr(params, "message", "")))
        return types.ElicitResult(action="accept", content={"confirm": answers.pop(0)})

    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memex", "mcp"], env=dict(os.environ),
                                   cwd=str(repo))

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with anyio.fail_after(90):
            async with stdio_client(params) as (read, write), \
                    ClientSession(read, write, elicitation_callback=person) as s:
                await s.initialize()
                out["by"] = await s.call_tool("memory_promote", {"id": rule, "by": "local:boss@example.com"})
                out["forget_no"] = await s.call_tool("memory_forget", {"id": rule})
                out["propose_yes"] = await s.call_tool("memory_propose", {"ids": [personal]})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:  # cannot elicit
            await s.initialize()
            out["forget_cannot"] = await s.call_tool("memory_forget", {"id": rule, "soft": True})
        return out

    out = anyio.run(main)
    assert out["by"].is_error and "`by`" in text(out["by"])
    assert out["forget_no"].is_error and f"git memex forget {rule}" in text(out["forget_no"])
    assert not out["propose_yes"].is_error, text(out["propose_yes"])
    assert "I keep my notes in ~/private" in asked[1]
    cannot = text(out["forget_cannot"])
    assert out["forget_cannot"].is_error and f"`git memex forget {rule} --soft`" in cannot and "cannot ask" in cannot
    assert "Always run the linter before committing" in rules_served(repo)


def test_only_a_real_yes_is_a_yes(repo: Path) -> None:
    personal = ok("memory_add", {"text": "I use a standing desk", "scope": "personal"})["id"]
    before = md_files(data_root())

    class Odd(Person):
        def __init__(self, content: dict[str, Any]) -> None:
            super().__init__(True)
            self.content = content

        async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            self.asked.append(params.message)
            return types.ElicitResult(action="accept", content=self.content)

    for content in ({}, {"confirm": "yes"}, {"confirm": "true"}, {"confirm": 1}):
        assert "did not confirm" in err("memory_propose", {"ids": [personal]}, person=Odd(content)), content
    assert md_files(data_root()) == before


# ------------------------------------------------------------------ found by the attack on this issue
def test_propose_shows_the_person_the_tags_and_paths_that_cross(repo: Path) -> None:
    """The person agrees to everything that crosses into the project, not only the body: a tag or
    path holding personal data is in the question, and changing one while they are asked refuses."""
    assert run_cli("init", "--yes").code == 0
    personal = ok("memory_add", {"text": "my notes on the clinic visit", "scope": "personal",
                                 "tags": ["ssn-078-05-1120"], "paths": ["diagnosis/**"]})["id"]
    yes = Person(True)
    ok("memory_propose", {"ids": [personal]}, person=yes)
    assert "ssn-078-05-1120" in yes.asked[0] and "diagnosis/**" in yes.asked[0]

    other = ok("memory_add", {"text": "my notes on the dentist visit", "scope": "personal",
                              "tags": ["dentist"]})["id"]
    path = next(data_root().rglob(f"{other}.md"))

    class EditsTagsWhileAsked(Person):
        async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            path.write_text(path.read_text(encoding="utf-8").replace("dentist", "home-address-12-elm-st"),
                            encoding="utf-8")
            return await super().__call__(context, params)

    res = call("memory_propose", {"ids": [other]}, person=EditsTagsWhileAsked(True))
    assert res.is_error and "changed since the person was shown it" in text(res)


def _gh(tmp_path: Path, payload: dict[str, Any]) -> None:
    import json
    import stat

    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    gh = bindir / "gh"
    gh.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(payload)}\nEOF\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    os.environ["PATH"] = f"{bindir}:{os.environ['PATH']}"


def test_pr_status_apply_is_the_persons_act_and_never_touches_a_personal_memory(
        repo: Path, tmp_path: Path, monkeypatch: Any) -> None:
    """`memory_pr_status apply` records review steps in a reviewer's name: the person confirms it, or
    the tool names `git memex pr-status --apply`; and a PR's file named like a personal memory's id
    never changes that personal memory."""
    assert run_cli("init", "--yes").code == 0
    draft = run_cli("add", "retries use exponential backoff", "--json").json()["id"]
    assert run_cli("submit", draft).code == 0
    personal = run_cli("add", "my own reminder about the gym", "--scope", "personal", "--json").json()["id"]
    monkeypatch.setenv("PATH", os.environ["PATH"])
    _gh(tmp_path, {"number": 9, "state": "OPEN", "reviewDecision": "APPROVED",
                   "reviews": [{"author": {"login": "mallory"}, "state": "APPROVED"}],
                   "files": [{"path": f".ai/open-memex/{draft}.md"}, {"path": f".ai/open-memex/{personal}.md"}]})
    repo_file = repo / ".ai" / "open-memex" / f"{draft}.md"
    personal_file = next(data_root().rglob(f"{personal}.md"))
    before = (repo_file.read_bytes(), personal_file.read_bytes())

    msg = err("memory_pr_status", {"apply": True})
    assert "git memex pr-status --apply" in msg
    assert err("memory_pr_status", {"apply": True}, person=Person(False))
    assert (repo_file.read_bytes(), personal_file.read_bytes()) == before

    ok("memory_pr_status", {"apply": True}, person=Person(True))
    assert fm_of(repo_file)["review_state"] == "approved"
    assert personal_file.read_bytes() == before[1]


def published_memory(repo: Path, body: str) -> str:
    """Knowledge reviewed through the real steps: added, submitted, promoted to approved and to
    published by the person git names, committed."""
    assert run_cli("init", "--yes").code == 0
    mid = run_cli("add", body, "--json").json()["id"]
    assert run_cli("submit", mid).code == 0
    for _ in range(2):
        r = run_cli("promote", mid)
        assert r.code == 0, r.err
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "publish", cwd=repo)
    assert fm_of(next((repo / ".ai").rglob(f"{mid}.md")))["review_state"] == "published"
    return mid


def test_agent_cannot_forget_or_replace_reviewed_knowledge_alone(repo: Path) -> None:
    """Published knowledge is the team's: an agent's forget or supersede asks the person (as for
    an approved rule); without their yes nothing changes and the error names the CLI command."""
    mid = published_memory(repo, "Checkout retries a failed payment 3 times")
    files = md_files(repo / ".ai")
    for tool, args, command in (
        ("memory_forget", {"id": mid}, f"git memex forget {mid}"),
        ("memory_forget", {"id": mid, "soft": True}, f"git memex forget {mid} --soft"),
        ("memory_supersede", {"id": mid, "text": "Checkout retries a failed payment 5 times"},
         f"git memex supersede {mid}"),
    ):
        msg = err(tool, args)
        assert command in msg and "cannot ask the user" in msg, msg
        no = Person(False)
        assert "did not confirm" in err(tool, args, person=no)
        assert "Checkout retries a failed payment 3 times" in no.asked[0] and "published" in no.asked[0]
        assert md_files(repo / ".ai") == files
        assert not list(data_root().rglob("outbox/*.md"))
    yes = Person(True)
    res = call("memory_supersede", {"id": mid, "text": "Checkout retries a failed payment 5 times"}, person=yes)
    assert not res.is_error, text(res)
    assert len(yes.asked) == 1 and "reviewed" in yes.asked[0]

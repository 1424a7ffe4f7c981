"""The prompt hook on a new team's small store (issue 33, item 5; docs/agents.md, "Keyword capture").

A prompt's words are weighed by their rarity in the store plus a fixed reference store in which
everyday words are common (agents/prior.py): in a store of one memory, "how many retries does
zorblax get?" weighed by the store alone gave `many` and `get` (in no memory) more weight than
`retries` and `zorblax` (in the only one), and brought nothing. The real hook command, fed Claude
Code's documented UserPromptSubmit input, in stores of 1, 3 and 50 memories.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, run_cli_process

ANSWER = "The zorblax retry budget is 5 attempts, with exponential backoff between them"
QUESTION = "how many retries does zorblax get?"
UNRELATED = ("can you refactor this function into smaller pieces", "tell me a joke about cats",
             "what does this error mean: KeyError: 'name'", "sort this list by date")
NEIGHBOURS = ("The zorblax dashboard lives in Grafana under the payments folder",
              "The export job retries twice, then writes the failure to the dead-letter table")
SERVICES = ("billing", "search", "checkout", "inventory", "notifications", "reporting", "gateway", "ledger",
            "mailer", "scheduler", "thumbnails", "analytics", "catalog", "invoices", "webhooks", "sessions")
FACTS = ("runs three replicas behind the internal load balancer",
         "keeps its audit log in the archive bucket for a year",
         "is owned by the platform team, who get paged for it at night")


def payload(prompt: str, cwd: Path) -> str:
    return json.dumps({"session_id": "s-1", "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def hook(prompt: str, cwd: Path) -> str:
    r = run_cli("capture", "--hook", "claude", input=payload(prompt, cwd))
    assert r.code == 0 and r.err == "", r.err
    return json.loads(r.out)["hookSpecificOutput"]["additionalContext"] if r.out.strip() else ""


def add(text: str) -> None:
    r = run_cli("add", text)
    assert r.code == 0, r.err


def check(repo: Path) -> None:
    got = hook(QUESTION, repo)
    assert "zorblax retry budget is 5 attempts" in got, got
    assert got.count("\n- [") <= 3  # a nudge: at most three memories
    for prompt in UNRELATED:
        assert hook(prompt, repo) == "", prompt


def test_a_store_of_one(repo: Path) -> None:
    add(ANSWER)
    check(repo)
    # the real process, as Claude Code starts it
    r = run_cli_process("capture", "--hook", "claude", input=payload(QUESTION, repo))
    assert r.code == 0 and "zorblax retry budget" in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]


def test_a_store_of_three(repo: Path) -> None:
    for text in (ANSWER, *NEIGHBOURS):
        add(text)
    check(repo)
    assert "Grafana" not in hook(QUESTION, repo)  # holds `zorblax` only


@pytest.mark.slow
def test_a_store_of_fifty(repo: Path) -> None:
    others = [f"The {s} service {f}" for s in SERVICES for f in FACTS][:47]
    for text in (ANSWER, *NEIGHBOURS, *others):
        add(text)
    assert run_cli("list", "--json", "--limit", "100").json()["total"] == 50
    check(repo)


def test_the_prior_does_not_depend_on_the_store_size() -> None:
    """The reference store is fixed: a common word weighs less than a word it does not know at
    every size, and as the store grows its own counts take over."""
    from git_memex.agents import prior

    for n in (1, 3, 50, 10_000):
        many, zorblax = prior.weights([("many", 0), ("zorblax", 1)], n)
        assert many < zorblax, n
    assert prior.common("many") and prior.common("asked") and not prior.common("zorblax")
    small = prior.share(["retries", "zorblax"], [("many", 0), ("retries", 1), ("zorblax", 1), ("get", 0)], 1)
    assert small >= 0.5

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


# found by the attack on this branch: everyday words, Chinese prompts, terminal escapes


def test_a_prompt_of_everyday_words_brings_nothing_that_shares_only_them(repo: Path) -> None:
    """"can you help me fix this test" shared `help` and `fix` with a memory about laptops, which
    weighed 31% of the prompt and came in: a memory must hold a word that is not everyday."""
    for text in (ANSWER, "Help new hires fix their laptop setup before the first day"):
        add(text)
    for prompt in ("can you help me fix this test", "please help me make it work", "can you fix this for me, thanks"):
        assert hook(prompt, repo) == "", prompt
    assert "laptop setup" in hook("help me fix the laptop setup for the new hire", repo)
    check(repo)


DEPLOY_ZH = "部署失败时先查看监控面板上的错误日志"
MIGRATION_ZH = ("生产环境的数据库迁移必须在每周五下午三点之前完成，并且需要两位工程师审核迁移脚本，"
                "迁移之后要在监控面板上确认错误率没有上升")


def test_a_chinese_prompt_brings_the_chinese_memory_that_shares_its_words(repo: Path) -> None:
    """Chinese is cut into overlapping bigrams (as the index cuts it): a long prompt's bigrams
    across word boundaries (`的部`, `署总`) weighed as rare words and drowned `部署` and `失败`; and a
    Chinese sentence of 60 characters counted 59 "words" for the one-statement test, so a prompt
    holding two of its words was refused where its English version was not."""
    for text in (ANSWER, DEPLOY_ZH, MIGRATION_ZH):
        add(text)
    assert DEPLOY_ZH in hook("你好，能不能帮我检查一下为什么我们的部署总是失败", repo)
    got = hook("迁移谁审核", repo)
    assert "审核迁移脚本" in got and DEPLOY_ZH not in got, got
    for prompt in ("帮我写一个排序函数", "给我讲个笑话", "这个变量应该怎么命名"):
        assert hook(prompt, repo) == "", prompt
    check(repo)


def test_terminal_escape_sequences_in_a_prompt_do_not_hide_its_words(repo: Path) -> None:
    """A line pasted from a terminal keeps its colours: `\\x1b[31mretries\\x1b[0m` was the word
    `31mretries`, and the answer did not come; an OSC title, a BEL or a zero-width space alike."""
    add(ANSWER)
    for prompt in ("how many \x1b[1;31mretries\x1b[0m does \x1b[4mzorblax\x1b[24m get?",
                   "\x1b]0;build log\x07how many retries does zor\u200bblax get?\x07",
                   "how many retries does \x1b]8;;https://example.com\x1b\\zorblax\x1b]8;;\x1b\\ get?"):
        assert "zorblax retry budget is 5 attempts" in hook(prompt, repo), repr(prompt)
    assert hook("\x1b[31mtell me a joke about cats\x1b[0m", repo) == ""

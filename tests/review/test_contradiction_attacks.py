"""What an outside attacker found driving the real CLI against the contradiction finder: a crash on
a huge number, pairs it flagged that a person would not call a disagreement (history, another
thing of one kind, a rule and its narrower exception, one quantity written two ways), and shown
values that hid characters or ran unbounded. Each family through `compare`; the crash and the
output through a real `git memex` process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memex.core import frontmatter, model
from git_memex.review import disagreement as dx

from conftest import git, run_cli_process

MEM = ".ai/open-memex"


def committed_all(work: Path, bodies: list[str]) -> list[str]:
    """Published project memories written as files and committed with git in one commit."""
    folder = work / MEM
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for body in bodies:
        m = model.create(body, scope="project", review_state="published")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
        ids.append(m.id)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "memories", cwd=work)
    return ids


# ------------------------------------------------------------------ 1. huge numbers
BIG = "9" * 400
HUGE_PAIRS = [
    (f"Backups run at {BIG}:00.", "Backups run at 02:00."),  # time
    (f"Backups run at 02:{BIG}.", "Backups run at 02:00."),
    (f"Backups run at {BIG}pm.", "Backups run at 2pm."),
    (f"0 {BIG} * * * backup", "0 4 * * * backup"),  # cron
    (f"The service listens on port {BIG}.", "The service listens on port 8080."),  # port
    (f"The service listens on localhost:{BIG}.", "The service listens on localhost:8080."),
    (f"The API runs on Node {BIG}.", "The API runs on Node 20."),  # version
    (f"The API runs on Node v{BIG}.{BIG}.1", "The API runs on Node 20."),
    (f"The timeout is {'9' * 5000} seconds.", "The timeout is 30 seconds."),  # quantity
    (f"The timeout is {'9,' * 400}9 seconds.", "The timeout is 30 seconds."),
    (f"SEARCH_TIMEOUT_MS={BIG}", "SEARCH_TIMEOUT_MS=12000"),
    (f"The limit is {BIG} requests per minute.", "The limit is 30 requests per minute."),  # rate
    (f"QPS {BIG}", "QPS 200"),
    (f"重试{'九' * 400}次。", "重试三次。"),  # Chinese numerals
    (f"重试{'九千' * 400}次。", "重试三次。"),
    (f"每天凌晨 {BIG} 点备份。", "每天凌晨 2 点备份。"),
]


@pytest.mark.parametrize(("a", "b"), HUGE_PAIRS)
def test_a_huge_number_in_any_slot_is_no_crash_and_no_value(a: str, b: str):
    """A number of more than MAX_DIGITS digits is no time, port, version or quantity: compared as a
    word (another subject), never converted."""
    assert dx.compare(a, b) is None and dx.compare(b, a) is None


@settings(deadline=None, max_examples=50)
@given(st.sampled_from(["Backups run at {}:00.", "Backups run at {}pm.", "The service listens on port {}.",
                        "localhost:{} serves the API.", "The API runs on Node v{}.", "The API runs on Node 20.{}.",
                        "The timeout is {} seconds.", "The limit is {} requests per minute.", "QPS {}",
                        "POOL_SIZE={}", "client_max_body_size {}m", "0 {} * * * backup", "重试{}次。",
                        "每秒 {} 次请求。", "每天 {} 点备份。", "The cap is {}% of traffic."]),
       st.text(alphabet="0123456789,.:٠١٢٣٤٥٦٧٨٩九千百十万两半", min_size=1, max_size=600))
def test_numeric_paths_take_any_digit_string(template: str, digits: str):
    a = template.format(digits)
    for b in ("Backups run at 02:00.", "The service listens on port 8080.", "The API runs on Node 20.",
              "The timeout is 30 seconds.", "The limit is 30 requests per minute.", "重试三次。", "QPS 200"):
        dx.compare(a, b)
        dx.compare(b, a)


def test_the_cli_survives_a_huge_number(repo: Path):
    """Through real processes: audit, sync-status and context once exited 2 (OverflowError)."""
    committed_all(repo, [f"Backups run at {BIG}:00.", "Backups run at 02:00."])
    audit = run_cli_process("audit", "--json")
    assert audit.code == 0, audit.err
    assert json.loads(audit.out)["contradictions"] == []
    status = run_cli_process("sync-status", "--json")
    assert status.code == 0, status.err and "internal error" not in status.err
    ctx = run_cli_process("context")
    assert ctx.code == 0 and "internal error" not in ctx.err

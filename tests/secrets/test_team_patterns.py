"""A team's own formats (docs/team-patterns.md): memex.redactPattern masks on every write path and
is refused by the real pre-commit hook and `scan`; memex.capturePattern / capturePersonalPattern
add capture triggers; bad patterns are refused by `config set` and reported once when found."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import frontmatter, model, userregex

from conftest import git, run_cli

MEM = ".ai/open-memex"
PATTERN = r"ACME-[A-Z0-9]{16}"
TOKEN = "ACME-7Q2W9E4R1T6Y3U8I"  # no built-in rule knows this format


def one_sentence(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def team(repo: Path, key: str = "redactPattern", value: str = PATTERN) -> None:
    git("config", "--add", f"memex.{key}", value, cwd=repo)


def all_files(root: Path) -> dict[str, str]:
    return {str(p): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))} if root.exists() else {}


# ------------------------------------------------------------------ config set refuses
@pytest.mark.parametrize(("value", "why"), [
    ("ACME-(", "not a valid regular expression"),
    ("", "empty"),
    ("x*", "matches an empty text"),
    ("(a+)+$", "exponential"),
    (r"(\w+\.)+com", "exponential"),
    (".*.*.*=", "more than 1 s"),
    ("A" * 501, "longer than 500"),
])
def test_config_set_refuses_a_bad_pattern_and_writes_nothing(repo: Path, value: str, why: str) -> None:
    for key in ("redactPattern", "capturePattern", "capturePersonalPattern"):
        r = run_cli("config", "set", f"memex.{key}", value)
        assert r.code == 1 and why in one_sentence(r.err), r.err
        assert git("config", "--get-all", f"memex.{key}", cwd=repo, check=False).stdout == ""


def test_config_set_adds_values_get_lists_them_unset_removes_one(repo: Path) -> None:
    assert run_cli("config", "set", "memex.redactPattern", PATTERN).code == 0
    assert run_cli("config", "set", "memex.redactPattern", "tkt_[a-f0-9]{32}").code == 0
    again = run_cli("config", "set", "memex.redactPattern", PATTERN)
    assert again.code == 0 and "already" in again.out
    assert git("config", "--get-all", "memex.redactPattern", cwd=repo).stdout.splitlines() == [PATTERN, "tkt_[a-f0-9]{32}"]
    assert run_cli("config", "get", "memex.redactPattern").out.splitlines() == [PATTERN, "tkt_[a-f0-9]{32}"]
    listed = {r["key"]: r for r in run_cli("config", "list", "--json").json()["settings"]}
    assert listed["memex.redactPattern"]["values"] == [PATTERN, "tkt_[a-f0-9]{32}"]
    assert run_cli("config", "unset", "memex.redactPattern", PATTERN).code == 0
    assert run_cli("config", "get", "memex.redactPattern").out.splitlines() == ["tkt_[a-f0-9]{32}"]
    missing = run_cli("config", "unset", "memex.redactPattern", PATTERN)
    assert missing.code == 1 and "has no" in one_sentence(missing.err)


def test_shape_test_allows_possessive_and_fixed_repeats() -> None:
    for ok in (r"(\w++\.)+com", r"(?>\w+\.)+com", r"(?:[A-Z]{3}-)+\d{4}", PATTERN):
        assert userregex.problem(ok) is None, ok
    assert userregex.too_slow(PATTERN) is False


def test_windows_cover_long_lines_with_overlap() -> None:
    text = "a\n" + "x" * 2500 + TOKEN + "\nb"
    pieces = list(userregex.windows(text))
    assert max(len(p) for _o, p in pieces) <= userregex.WINDOW
    assert any(TOKEN in p for _o, p in pieces)
    for offset, piece in pieces:
        assert text[offset:offset + len(piece)] == piece


# ------------------------------------------------------------------ every write path masks
def test_add_supersede_and_aliases_mask_the_team_format(repo: Path, isolated_env: Path) -> None:
    team(repo)
    r = run_cli("add", f"the staging key is {TOKEN} for now", "--alias", f"key {TOKEN}", "--target", "staging key",
                "--json")
    assert r.code == 0, r.err
    mid = r.json()["id"]
    assert PATTERN in r.json()["masked"]
    s = run_cli("supersede", mid, f"the staging key is now {TOKEN[:-1]}Z", "--json")
    assert s.code == 0, s.err
    files = all_files(isolated_env / "data")
    assert len(files) == 2
    assert not any(TOKEN in t or TOKEN[:-1] + "Z" in t for t in files.values())
    assert all("x" * len(TOKEN) in t and "ACME-" not in t for t in files.values())  # a team format keeps nothing


def test_capture_and_mcp_memory_add_mask_the_team_format(repo: Path, isolated_env: Path) -> None:
    from mcp_client import ok

    team(repo)
    added = ok("memory_add", {"text": f"the CI key is {TOKEN} in the vault"})
    assert added["masked"] == [PATTERN]
    r = run_cli("capture", f"remember that deploys to staging use {TOKEN}", "--json")
    assert r.code == 0 and r.json()["saved"], r.err
    files = all_files(isolated_env / "data")
    assert len(files) == 2 and not any(TOKEN in t for t in files.values())


def test_propose_masks_and_submit_refuses_what_was_written_before_the_pattern(ready: Path, isolated_env: Path) -> None:
    personal = run_cli("add", f"my key is {TOKEN}", "--scope", "personal", "--json").json()["id"]
    draft = run_cli("add", f"the shared key is {TOKEN}", "--json").json()["id"]
    team(ready)
    p = run_cli("propose", personal, "--json")
    assert p.code == 0, p.err
    outbox = isolated_env / "data" / "memories" / "outbox"
    proposed = [t for t in all_files(outbox).values() if "my key is" in t]
    assert proposed and TOKEN not in proposed[0]
    s = run_cli("submit", draft)
    assert s.code == 2 and PATTERN in one_sentence(s.err), s.err
    assert not (ready / MEM / f"{draft}.md").exists()


def test_search_masks_a_team_secret_a_teammate_committed_without_hooks(ready: Path) -> None:
    m = model.create(f"the vendor key is {TOKEN} today", scope="project", review_state="proposed")
    (ready / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "a teammate without hooks", cwd=ready)
    assert TOKEN in run_cli("search", "vendor key").out  # no pattern yet: nothing to mask
    team(ready)
    out = run_cli("search", "vendor key").out
    assert "vendor key" in out and TOKEN not in out


# ------------------------------------------------------------------ refused by the real hook and scan
def test_git_commit_am_refuses_a_memory_holding_a_team_secret(ready: Path) -> None:
    m = model.create("Releases are tagged from main.", scope="project", review_state="proposed")
    rel = f"{MEM}/{m.id}.md"
    text = frontmatter.serialize(m.fm, m.body)
    (ready / rel).write_text(text)
    git("add", rel, cwd=ready)
    git("commit", "-q", "-m", "a memory", cwd=ready)
    team(ready)
    (ready / rel).write_text(text.rstrip("\n") + f"\nThe vendor key is {TOKEN}.\n")
    before = git("rev-parse", "HEAD", cwd=ready).stdout
    r = git("commit", "-am", "leak", cwd=ready, check=False)
    assert r.returncode != 0
    assert f"{rel}:" in r.stderr and PATTERN in r.stderr and TOKEN not in r.stderr
    assert git("rev-parse", "HEAD", cwd=ready).stdout == before
    scan = run_cli("scan")
    assert scan.code == 1 and PATTERN in scan.out and TOKEN not in scan.out
    git("config", "--unset-all", "memex.redactPattern", cwd=ready)
    assert git("commit", "-q", "-am", "no team pattern: a plain note", cwd=ready, check=False).returncode == 0


# ------------------------------------------------------------------ capture triggers
def test_team_capture_triggers_route_to_project_and_personal(repo: Path) -> None:
    team(repo, "capturePattern", r"decision:\s*")
    team(repo, "capturePersonalPattern", r"(?i)pref(?:erence)?:\s*(?P<body>.+)")
    msg = "decision: we use postgres 16\npref: tabs over spaces\njust chatting here"
    r = run_cli("capture", msg, "--json")
    assert r.code == 0, r.err
    saved = {e["scope"]: e for e in r.json()["saved"]}
    assert saved["project"]["body"] == "we use postgres 16"
    assert saved["project"]["trigger"] == r"team:decision:\s*"
    assert saved["personal"]["body"] == "tabs over spaces"
    assert len(r.json()["saved"]) == 2
    off = run_cli("config", "set", "memex.keywordCapture", "false")
    assert off.code == 0
    assert run_cli("capture", "decision: we use redis", "--json").json()["saved"] == []


# ------------------------------------------------------------------ a bad pattern already in git config
def test_a_bad_pattern_in_git_config_is_reported_once_and_ignored(repo: Path) -> None:
    team(repo, value="ACME-(")
    team(repo, value=PATTERN)
    team(repo, "capturePattern", "(a+)+$")
    r = run_cli("capture", f"remember that the keys are {TOKEN} and {TOKEN[:-1]}Q", "--json")
    assert r.code == 0, r.err
    warnings = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(warnings) == 2 and "Traceback" not in r.err, r.err  # one per bad value, not per use
    assert "memex.redactPattern 'ACME-('" in r.err and "config unset" in r.err
    assert TOKEN not in str(r.json()["saved"])  # the good pattern still masks
    scan = run_cli("scan", "--staged")
    assert scan.code == 0 and len(scan.err.splitlines()) == 1 and "is ignored" in scan.err

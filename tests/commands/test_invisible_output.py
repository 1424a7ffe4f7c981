"""A memory's invisible characters show in text output (issue 31's left-over): a zero-width
space, a bidi override, a tag character, a private-use character and a terminal escape in a
body print as their ``\\uXXXX`` escapes in `search`, `list`, `show`, `context`, `sync-status`,
`capture`, `instruction list` and `distill` (`commands._common.visible`), while `--json` keeps the
exact text and the file keeps what was written. Through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memex.core import frontmatter
from git_memex.core.model import create

from conftest import git, run_cli

HIDDEN = {"\u200b": "\\u200b", "\u202e": "\\u202e", "\U000e0041": "\\udb40\\udc41", "\ue000": "\\ue000",
          "\u2060": "\\u2060", "\x1b": "\\u001b"}
BODY = ("The proxy listens on 80\u200b80, not \u202e08\u202c; \U000e0041\U000e0042 hidden \ue000 mark, "
        "word\u2060joiner and \x1b[31mred\x1b[0m text")


def _assert_visible(out: str, where: object) -> None:
    for raw, escaped in HIDDEN.items():
        assert raw not in out, (where, repr(raw), out)
        assert escaped in out, (where, escaped, out)


def test_search_list_show_and_context_escape_invisible_characters(ready: Path) -> None:
    r = run_cli("add", "-", "--json", input=BODY)
    assert r.code == 0, r.err
    mid = r.json()["id"]
    assert BODY in Path(r.json()["path"]).read_text(encoding="utf-8")  # the file keeps what was written
    for args in (("search", "proxy listens"), ("list",), ("show", mid), ("context",), ("context", "--query", "proxy"),
                 ("sync-status",)):
        shown = run_cli(*args)
        assert shown.code == 0, (args, shown.err)
        assert mid[:7] in shown.out or "proxy listens" in shown.out, (args, shown.out)
        _assert_visible(shown.out, args)
    # --json: parses to the exact text (the guard writes the same escapes, valid JSON)
    assert run_cli("show", mid, "--json").json()["body"] == BODY
    hits = run_cli("search", "proxy listens", "--json").json()["hits"]
    assert hits and hits[0]["snippet"] == BODY
    assert json.loads(run_cli("list", "--json").out)["memories"][0]["snippet"] == BODY


def test_a_title_and_tags_in_show_are_escaped_too(ready: Path) -> None:
    r = run_cli("add", "the deploy runs nightly", "--tags", "ops\u200bteam", "--json")
    assert r.code == 0, r.err
    path = Path(r.json()["path"])
    path.write_text(path.read_text(encoding="utf-8").replace("tags:", "title: Deploy\u202e schedule\ntags:"), "utf-8")
    out = run_cli("show", r.json()["id"]).out
    assert "\u200b" not in out and "ops\\u200bteam" in out, out
    assert "\u202e" not in out and "Deploy\\u202e schedule" in out, out


def test_capture_prints_what_it_saved_escaped(ready: Path) -> None:
    git("config", "memex.keywordCapture", "true", cwd=ready)
    r = run_cli("capture", "-", input="remember that the cache lives in /var/cache/app\u200bx\n")
    assert r.code == 0, r.err
    assert "\u200b" not in r.out and "app\\u200bx" in r.out, r.out


@pytest.mark.parametrize("command", [("distill",), ("instruction", "list")])
def test_rules_print_escaped(repo: Path, command: tuple[str, ...]) -> None:
    m = create("always run the linter\u200b before\u202e pushing", scope="project", type="workflow",
               created_by="local:someone-else")
    m.fm.update(role="instruction", review_state="approved", confidence="high")
    folder = repo / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    assert run_cli("instruction", "approve", m.id).code == 0
    git("config", "memex.defaultBranch", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "a rule", cwd=repo)
    r = run_cli(*command)
    assert r.code == 0, r.err
    assert "linter" in r.out, r.out
    assert "\u200b" not in r.out and "linter\\u200b before\\u202e pushing" in r.out, r.out

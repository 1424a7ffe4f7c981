"""The OWNERS file's lines and spellings (agents/owners.py): pure parsing, no git.

The gate's behaviour with real repositories is in tests/agents/test_owners_org_gate.py."""

from __future__ import annotations

from pathlib import Path

from git_memex.agents import owners
from git_memex.agents.owners import owner_email, owners_of, parse


def test_owners_are_spelled_as_people_are_and_nothing_else_matches() -> None:
    assert owner_email("local:Alice@Example.com") == "alice@example.com"
    assert owner_email("alice@example.com") == owner_email("<alice@example.com>") == "alice@example.com"
    for nobody in ("@platform-team", "github:alice", "local:Alice Smith", "Alice", "", None, "local:"):
        assert owner_email(nobody) is None, nobody


def test_the_last_matching_line_wins_and_an_empty_line_unowns() -> None:
    rules = parse("# owners\n*  local:a@x.io b@x.io  # everyone\n\npolicies/ local:sec@x.io\n"
                  "policies/draft-*.md\n**/lessons/*.md @team\nOWNERS a@x.io\n")
    assert owners_of(rules, "01J.md") == ("a@x.io", "b@x.io")
    assert owners_of(rules, "engineering/01J.md") == ("a@x.io", "b@x.io")
    assert owners_of(rules, "policies/01J.md") == ("sec@x.io",)
    assert owners_of(rules, "policies/deep/01J.md") == ("sec@x.io",)
    assert owners_of(rules, "policies/draft-01J.md") == ()  # a line with no owner
    assert owners_of(rules, "a/lessons/01J.md") == ()  # only a @team handle: nobody we can check
    assert owners_of(rules, "OWNERS") == ("a@x.io",)
    assert owners_of(parse(""), "01J.md") == () and owners_of(parse(None), "x.md") == ()


def test_a_lookalike_email_names_nobody() -> None:
    assert owners.owner_email("local:\u212aate@example.com") is None  # the Kelvin sign lowercases to k
    assert owners.owner_email("local:Kate@Example.com") == "kate@example.com"


def test_a_symbolic_ref_cannot_lead_out_of_the_remote(tmp_path: Path) -> None:
    git_dir = tmp_path / ".git"
    (git_dir / "refs" / "remotes" / "origin").mkdir(parents=True)
    (git_dir / "refs" / "heads").mkdir(parents=True)
    sha = "a" * 40
    (git_dir / "refs" / "heads" / "x").write_text(sha + "\n")
    (git_dir / "refs" / "remotes" / "origin" / "main").write_text(sha + "\n")
    (git_dir / "refs" / "remotes" / "origin" / "HEAD").write_text("ref: refs/remotes/origin/../../heads/x\n")
    assert owners.default_ref(tmp_path) is None
    (git_dir / "refs" / "remotes" / "origin" / "HEAD").write_text("ref: refs/remotes/origin/main\n")
    assert owners.default_ref(tmp_path) == "refs/remotes/origin/main"
    assert owners._ref_sha(git_dir, "refs/remotes/origin/main") == sha
    (git_dir / "refs" / "remotes" / "origin" / "main").write_text("HEAD\n")  # not an object id
    assert owners._ref_sha(git_dir, "refs/remotes/origin/main") is None

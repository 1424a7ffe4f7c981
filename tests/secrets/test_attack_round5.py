"""The integrated tree's last attack (issue 31): an `env:` prefix before a literal password, and
copies of a value found with words after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.secrets.redact import redact

from conftest import run_cli_process

ENV_LITERALS = [
    '{"token": "env:Xq7#kP9!zR3w"}', "DB_PASSWORD=env:a8f3k2m9q7x4z1w6", 'password: "env:Pq7#kP9!zR2"',
    "api_key = 'env:Pq7kP9zR2mW4'", "export SECRET_KEY=env:Pq8kP9zR2mW4", "token: env:Pq9kP9zR2mW4x",
]
ENV_REFERENCES = ["| auth.password | env:DB_PASS |", "password: env:DB_PASSWORD", "token: env:GITHUB_TOKEN"]


@pytest.mark.parametrize("text", ENV_LITERALS)
def test_env_before_a_literal_is_no_reference(text: str) -> None:
    """`env:` references a variable only when a variable's name follows (`#`, `!` are in none)."""
    value = text.split("env:", 1)[1].rstrip("\"'}")
    assert value not in redact(text).text


@pytest.mark.parametrize("text", ENV_REFERENCES)
def test_env_before_a_variable_name_is_a_reference(text: str) -> None:
    assert redact(text).text == text


def test_add_masks_env_literals_and_copies_of_a_value_found_with_words_after_it(ready: Path) -> None:
    for text in ENV_LITERALS:
        r = run_cli_process("add", text, "--json")
        assert r.code == 0 and r.json()["masked"], (text, r.out, r.err)
    secret = "Wq3mZ8xK2pL4"
    r = run_cli_process("add", f"db.password={secret} now", "--tags", secret, "--aliases", secret,
                        "--paths", f"x/{secret}", "--json")
    assert r.code == 0, r.err
    stored = Path(r.json()["path"]).read_text(encoding="utf-8")
    assert secret not in stored and secret.lower() not in stored, stored

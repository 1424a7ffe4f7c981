"""A password of one word and digits on a shell or .env line (`DB_PASSWORD=Password123`) is a
literal: a shell `NAME=value` holds no variable without `$`, so the identifier shapes that keep
`password = Password123` in code unmasked do not apply (issue 31's left-over, docs/security.md
"Choices")."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.secrets.redact import redact

from conftest import run_cli_process

SHELL_WORD_PASSWORDS = {
    "DB_PASSWORD=Password123": "Password123",
    "export DB_PASSWORD=Password123": "Password123",
    "PGPASSWORD=Secret2024 psql -h db -U app": "Secret2024",
    "REDIS_PASSWORD=password1": "password1",
    "  MYSQL_ROOT_PASSWORD=Welcome2024": "Welcome2024",
    "env ADMIN_PASSWORD=Passw0rd99 ./run.sh": "Passw0rd99",
    # found by an attack on branch int2 (each left as it was before): a compose or Kubernetes env
    # map, a compose list, a Makefile, a Dockerfile's ENV without "=", a .env line in lower case,
    # the first of a comma list
    "POSTGRES_PASSWORD: Password123": "Password123",
    "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: Password123\n": "Password123",
    "    environment:\n      - DB_PASSWORD=Password123\n": "Password123",
    "DB_PASSWORD := Password123": "Password123",
    "DB_PASSWORD ?= Password123": "Password123",
    "DB_PASSWORD::=Password123": "Password123",
    "ENV DB_PASSWORD Password123": "Password123",
    "FROM postgres:16\nENV POSTGRES_PASSWORD Secret2024\n": "Secret2024",
    "db_password=Password123": "Password123",
    "export db_password=Password123\n": "Password123",
}
# references, templates, names and settings stay (each left alone before the rule too)
LEFT_ALONE = [
    "DB_PASSWORD=$Password123",
    "DB_PASSWORD=${PASSWORD1}",
    "DB_PASSWORD=DB_PASSWORD_2",
    "PASSWORD_MIN_LENGTH=12",
    "DB_PASSWORD_FILE=/run/secrets/db1",
    "DB_PASSWORD=<password1>",
    "SECRET_KEY_ROTATION=Daily2",  # not a password-named key: the rule is for passwords only
    "connect(db_password=password1)",  # a keyword argument: code, not a .env line
    "    db_password=password1,",
    "ENV DB_PASSWORD $DB_PASSWORD1",
    "ENV PASSWORD_FILE /run/secrets/db1",
]
# Code that was masked as if its value were a password: a call, an attribute set from a variable
CODE = [
    "password = getPassword1()",
    "password = hashlib.sha256(password1)",
    "self.password = password1",
    "this.password = password1;",
]


@pytest.mark.parametrize("text", sorted(SHELL_WORD_PASSWORDS))
def test_a_word_and_digits_password_on_a_shell_line_is_masked(text: str) -> None:
    red = redact(text)
    assert SHELL_WORD_PASSWORDS[text] not in red.text, red.text
    assert red.masked == ("generic-secret-assignment",), red


@pytest.mark.parametrize("text", LEFT_ALONE)
def test_code_references_and_placeholders_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text", CODE)
def test_a_call_or_an_attribute_set_from_a_variable_stays(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text", ['DB_PASSWORD=Password123"x"', "DB_PASSWORD=Password123'x y'z", 'DB_PASSWORD=Password123"x"y ./run'])
def test_a_shell_word_with_quoted_parts_is_masked_whole(text: str) -> None:
    """In a shell, ``Password123"x"`` is one word: the value is all of it, masked to its end
    (before, ``"x"`` was left)."""
    red = redact(text)
    word = text.split("=", 1)[1].split(" ./", 1)[0]
    assert red.text == text.replace(word, "x" * len(word)), red.text


@pytest.mark.parametrize(("text", "masked"), [
    ("password = Pa55(word)", "password = xxxxxxxxxx"),
    ("DB_PASSWORD=Pa55(word)", "DB_PASSWORD=xxxxxxxxxx"),
    ("password: Tr0ub4dor&3(x)", "password: xxxxxxxxxxxxxx"),
    ("password: Pa55(word).", "password: xxxxxxxxxx."),
    ("(password: Zq8vR4wK)", "(password: xxxxxxxx)"),
    ("the password is Xk9(mQ2z), use it", "the password is xxxxxxxxx, use it"),
])
def test_a_password_holding_brackets_is_masked_whole_and_not_taken_for_a_call(text: str, masked: str) -> None:
    """A value whose name starts upper-case, or that holds no call shape, is no call (only a
    lower-case code name is: `getPassword1()`), and a closing bracket whose opener is in the value
    is part of it: `Pa55(word)` was masked to `xxxxxxxxx)`, its ")" left; the full stop after a
    value and a bracket opened before it stay."""
    assert redact(text).text == masked


def test_a_comma_list_masks_each_password() -> None:
    red = redact("DB_PASSWORD=Password123,REDIS_PASSWORD=password1")
    assert red.text == "DB_PASSWORD=xxxxxxxxxxx,REDIS_PASSWORD=xxxxxxxxx", red.text


def test_add_stores_a_shell_word_password_masked(ready: Path) -> None:
    r = run_cli_process("add", "staging: DB_PASSWORD=Password123 ./manage.py migrate", "--json")
    assert r.code == 0, r.err
    stored = Path(r.json()["path"]).read_text(encoding="utf-8")
    assert "Password123" not in stored and "DB_PASSWORD=" in stored, stored

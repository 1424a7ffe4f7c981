"""The outside attack's fourth round (issue 31), on the third round's rules: the cost of masking
a body secret's copies in every field, secrets main masked that the third round's rules left
raw, tags masked after they were lower-cased, and letters-only values copied into paths. Each
family through `redact` or `admit`, and through `git memex add` in a child process. Every secret
here is written for this file (FAKE)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from git_memex.core import model
from git_memex.secrets.redact import redact

from conftest import grows_linearly, run_cli_process

_ALNUM = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def _stored(isolated_env: Path, mid: str) -> str:
    return "\n".join(p.read_text("utf-8") for p in (isolated_env / "data").rglob(f"{mid}*.md"))


# ------------------------------------------------------------------ P1: copies in many fields

def _memory(n: int) -> model.Memory:
    """A body of n ``password: <14 alnum>`` lines and n tags: n fields against n values."""
    rnd = random.Random(n)
    values = ["".join(rnd.choice(_ALNUM) for _ in range(13)) + "7" for _ in range(n)]
    body = "".join(f"password: {v}\n" for v in values)
    tags = [f"topic-{i}" for i in range(n - 1)] + [values[0].lower()]
    return model.create(body, scope="project", review_state="proposed", tags=tags)


def test_copies_in_many_fields_cost_linear_time() -> None:
    """`admit` builds the search for the found values once for all the fields (`redact.CopyMask`):
    one build per string cost fields x values (1,000 tags and 2,559 values: 21 s)."""
    from git_memex.secrets.admission import admit

    m = _memory(50)
    admit(m)
    assert m.fm["tags"][-1] == "x" * 14 and m.fm["tags"][0] == "topic-0"
    ok, small, big = grows_linearly(lambda n: admit(_memory(n)), 800)
    assert ok, f"{big:.2f} s for 800 fields and values, {small:.2f} s for 200"


# ------------------------------------------------------------------ P2a: a value that goes on after a <private> span

PRIVATE_INSIDE = [
    "password: Ab3<private>x</private>.Qw9Zk7Lm2Pq8",
    "password: Ab3<private>x</private>/Qw9Zk7Lm2Pq8",
    "postgres://admin:Ab3<private>x</private>.Qw9Zk7Lm2Pq8@db/app",
    "postgres://admin:Sup3r<private>Secret</private>.99x@db/app",
]


@pytest.mark.parametrize("text", PRIVATE_INSIDE)
def test_a_value_that_goes_on_after_a_private_span_is_masked(text: str) -> None:
    out = redact(text).text
    assert "Qw9Zk7Lm2Pq8" not in out and ".99x" not in out and "Ab3" not in out, out
    assert redact(out).text == out


def test_add_masks_a_value_that_goes_on_after_a_private_span(ready: Path, isolated_env: Path) -> None:
    for text in PRIVATE_INSIDE:
        r = run_cli_process("add", text, "--json")
        assert r.code == 0, r.err
        stored = _stored(isolated_env, r.json()["id"])
        assert stored and "Qw9Zk7Lm2Pq8" not in stored and ".99x" not in stored, stored


# ------------------------------------------------------------------ P2b: passwords made of algorithm words

ALGORITHM_PASSWORDS = ["bcrypt2024", "Sha256Rsa2048", "Des3Md5Sha1", "Sha512Salt2024", "Hmac-Sha256-Key",
                       "Scrypt-N16384-Salt", "Totp2024Hotp", "Argon2id9"]
ALGORITHM_NAMES = ["HMAC-SHA256", "Argon2id", "AES-256-GCM", "PBKDF2", "scrypt-N16384", "varchar255",
                   "VARCHAR(255)", "CHAR(60)", "ChaCha20-Poly1305", "Ed25519"]


@pytest.mark.parametrize("value", ALGORITHM_PASSWORDS)
def test_a_password_made_of_algorithm_words_is_masked(value: str) -> None:
    assert redact(f"password: {value}").text == "password: " + "x" * len(value)


@pytest.mark.parametrize("value", ALGORITHM_NAMES)
def test_one_algorithm_or_type_name_is_left_alone(value: str) -> None:
    for text in (f"password: {value}", f"| password_hash | {value} |"):
        assert redact(text).text == text


# ------------------------------------------------------------------ P2c: a spaced value at the end of a key=value line

@pytest.mark.parametrize(
    "text",
    [
        "spring.datasource.password=Vq7kLm2pZx9w horse battery staple",
        "password = Vq7kLm2pZx9w horse battery staple",
        "  db.password=Vq7kLm2pZx9w horse battery staple",
    ],
)
def test_a_spaced_value_at_the_end_of_a_properties_line_is_masked_whole(text: str) -> None:
    out = redact(text).text
    assert "horse" not in out and "Vq7kLm2pZx9w" not in out, out


def test_a_key_in_mid_sentence_still_stops_before_prose() -> None:
    assert redact("set the password=Vq7kLm2pZx9w then restart").text == "set the password=xxxxxxxxxxxx then restart"


# ------------------------------------------------------------------ P2d: table passwords with a secret word

TABLE_PASSWORDS = {
    "Password123": "| DB_PASSWORD | Password123 |",
    "KeyLime2024Pie": "| DB_PASSWORD | KeyLime2024Pie |",
    "MySecret2024": "| DB_PASSWORD | MySecret2024 |",
    "Pass1234": "| DB_PASSWORD | Pass1234 |",
    "myPassword9Xq": "| DB_PASSWORD | myPassword9Xq |",
    "Welcome1Password": "| DB_PASSWORD | Welcome1Password |",
    "redis_pass_01": "| REDIS_PASSWORD | redis_pass_01 |",
    "KeyLime2024Pie ": "| service | password |\n|---|---|\n| db | KeyLime2024Pie |",
}


@pytest.mark.parametrize("value", sorted(TABLE_PASSWORDS))
def test_a_table_password_with_a_secret_word_is_masked(value: str) -> None:
    text = TABLE_PASSWORDS[value]
    assert redact(text).text == text.replace(value.strip(), "x" * len(value.strip()))


def test_a_column_of_secret_names_is_still_left_alone() -> None:
    for text in ("| Secret | Used by |\n|---|---|\n| `prod-db-Password2` | api |\n| `stripeKey2024` | billing |",
                 "| Secret name | service |\n|---|---|\n| DB_PASSWORD_2 | api |"):
        assert redact(text).text == text


def test_add_masks_the_fourth_rounds_regressions(ready: Path, isolated_env: Path) -> None:
    """Through `git memex add` in its own process: algorithm-word passwords, a spaced
    .properties value and table passwords are stored masked, as main stored them."""
    cases = {f"password: {v}": v for v in ALGORITHM_PASSWORDS}
    cases["spring.datasource.password=Vq7kLm2pZx9w horse battery staple"] = "horse battery"
    cases.update({text: value.strip() for value, text in TABLE_PASSWORDS.items()})
    for text, secret in cases.items():
        r = run_cli_process("add", "-", "--json", input=text)
        assert r.code == 0, (text, r.err)
        stored = _stored(isolated_env, r.json()["id"])
        assert stored and secret not in stored, (text, stored)


# ------------------------------------------------------------------ P3: a tag is read for secrets as given

TAG_SECRETS = {"AKIAIOSFODNN7EXAMPLE": "IOSFODNN7", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI": "SyDdI0hCZtE6",
               "password Xq7kLm2pZ9vR": "Xq7kLm2pZ9vR"}


def test_add_masks_a_secret_tag_before_it_is_lower_cased(ready: Path, isolated_env: Path) -> None:
    for i, (tag, secret) in enumerate(TAG_SECRETS.items()):
        r = run_cli_process("add", f"note {i} about the release", "--tags", f"release,{tag}", "--json")
        assert r.code == 0, (tag, r.err)
        assert r.json()["masked"], r.out
        stored = _stored(isolated_env, r.json()["id"])
        assert stored and secret.lower() not in stored.lower(), (tag, stored)
        assert "release" in stored


def test_mcp_memory_add_masks_a_secret_tag_before_it_is_lower_cased(repo: Path, isolated_env: Path) -> None:
    from mcp_client import ok

    data = ok("memory_add", {"text": "a note about the release", "tags": ["release", *TAG_SECRETS]})
    assert data["masked"], data
    stored = _stored(isolated_env, data["id"])
    assert stored, data
    for secret in TAG_SECRETS.values():
        assert secret.lower() not in stored.lower(), stored


# ------------------------------------------------------------------ P4: letters-only values stay in other fields

@pytest.mark.parametrize("word", ["PostgresSuperuser", "BitwardenCli", "AwsParameterStore", "TerraformCloud"])
def test_a_letters_only_password_is_masked_where_found_only(word: str) -> None:
    from git_memex.secrets.admission import admit

    m = model.create(f"password: {word}", scope="project", review_state="proposed",
                     tags=[word.lower()], paths=[f"roles/{word}.sql"])
    admit(m)
    assert word not in m.body  # still masked where it was found
    assert m.fm["tags"] == [word.lower()] and m.fm["paths"] == [f"roles/{word}.sql"], m.fm


def test_a_word_and_number_password_is_not_copied() -> None:
    from git_memex.secrets.admission import admit

    m = model.create("password: bcrypt2024", scope="project", review_state="proposed", tags=["bcrypt2024"])
    admit(m)
    assert "bcrypt2024" not in m.body and m.fm["tags"] == ["bcrypt2024"]


# ------------------------------------------------------------------ P5: smaller look-alikes

_E = '\\"'  # a quote escaped once: JSON written inside a string


@pytest.mark.parametrize(
    "text",
    [
        f"{{{_E}pass{_E}: {_E}partial{_E}}}",
        f"{{{_E}pass{_E}: {_E}passed{_E}}}",
        f"{{{_E}pass{_E}: {_E}through{_E}}}",
        f"{{{_E}password{_E}: {_E}C:\\\\\\\\Users\\\\\\\\bob\\\\\\\\secrets.json{_E}}}",
        f"{{{_E}password{_E}: {_E}%APPDATA%\\\\\\\\app\\\\\\\\key.pem{_E}}}",
        "| auth.password | env:DB_PASS |",
        "| password_hash | CHAR60 |",
    ],
)
def test_escaped_json_words_paths_and_env_references_are_left_alone(text: str) -> None:
    assert redact(text).text == text


def test_an_escaped_json_pass_that_looks_generated_is_still_masked() -> None:
    text = f"{{{_E}pass{_E}: {_E}Vq7kLm2pZx9w{_E}}}"
    assert "Vq7kLm2pZx9w" not in redact(text).text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail <private>bob</private>@corp.example", "mail [REDACTED]@corp.example"),
        ("see <private>host</private>:8443", "see [REDACTED]:8443"),
        ("release v<private>1</private>.2.3", "release v[REDACTED].2.3"),
    ],
)
def test_a_private_span_leaves_a_domain_a_port_and_a_version_mark(text: str, expected: str) -> None:
    assert redact(text).text == expected

"""Protocol enums, strict validation on write, lenient v1 reading (peer migration vectors)."""

from __future__ import annotations

import pytest

from git_memex.core import model
from git_memex.core.model import ValidationError

from conftest import vectors


def test_create_sets_every_protocol_key():
    m = model.create("Use uv for installs", scope="project", type="decision", tags=["Build Tools", "ci", "ci"])
    assert model.ULID_RE.match(m.id)
    fm = m.fm
    assert fm["schema_version"] == 2
    assert fm["visibility"] == "internal"
    assert fm["review_state"] == "draft"
    assert fm["tags"] == ["build-tools", "ci"]
    assert model.RFC3339_RE.match(fm["created_at"])
    assert fm["supersedes"] is None and fm["superseded_by"] is None


def test_personal_memories_are_private_and_not_in_review():
    m = model.create("I like dark mode", scope="personal")
    assert m.fm["visibility"] == "private"
    assert m.fm["review_state"] is None
    assert m.fm["repo_id"] is None


@pytest.mark.parametrize("scope", ["team", "public"])
def test_reserved_scopes_are_rejected(scope):
    with pytest.raises(ValidationError, match="reserved"):
        model.create("x y z", scope=scope)


@pytest.mark.parametrize(
    "key, value",
    [("type", "note"), ("status", "gone"), ("importance", "9"), ("role", "boss"), ("source", "web")],
)
def test_unknown_enum_values_are_rejected_on_write(key, value):
    m = model.create("x y z")
    m.fm[key] = value
    with pytest.raises(ValidationError, match=key):
        model.validate(m)


def test_bad_times_and_ids_are_rejected():
    m = model.create("x y z")
    m.fm["updated_at"] = 1758854400000
    with pytest.raises(ValidationError, match="RFC 3339"):
        model.validate(m)
    m = model.create("x y z")
    m.fm["supersedes"] = "../../etc/passwd"
    with pytest.raises(ValidationError, match="supersedes"):
        model.validate(m)


def test_empty_body_is_rejected():
    with pytest.raises(ValidationError, match="empty"):
        model.create("   ")


@pytest.mark.parametrize("case", vectors("migration", ids=lambda c: c["v1"]["id"]))
def test_protocol_migration_vectors(case):
    out, changes = model.normalize(case["v1"])
    for key, expected in case["v2_expect"].items():
        assert out[key] == expected, key
    assert changes
    # the original is not modified
    assert case["v1"].get("schema_version") != 2


def test_normalize_keeps_unknown_keys():
    out, _ = model.normalize({"id": "01TESTV1", "scope_kind": "user", "type": "note", "priority": 5,
                              "created_at": 1000, "custom_field": [1, 2]})
    assert out["custom_field"] == [1, 2]
    assert out["importance"] == "normal"
    assert out["created_at"] == "1970-01-01T00:00:01Z"


def test_new_ids_are_ulids_in_order():
    import time

    from ulid import ULID

    before = int(time.time() * 1000)
    ids = [model.new_id() for _ in range(2000)]
    after = int(time.time() * 1000)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for i in (ids[0], ids[-1]):
        assert model.ULID_RE.match(i)
        u = ULID.from_str(i)  # the reference implementation parses ours
        assert str(u) == i and before <= u.milliseconds <= after


def test_chosen_keys_agree_with_the_run_time_set():
    # `Chosen` exists only for the type checker; `_CHOSEN` is its spelling at run time
    import ast
    from pathlib import Path

    tree = ast.parse(Path(model.__file__).read_text(encoding="utf-8"))
    chosen = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Chosen")
    keys = {n.target.id for n in chosen.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    assert keys == model._CHOSEN


def test_create_refuses_a_keyword_it_does_not_know():
    with pytest.raises(TypeError, match="scoep"):
        model.create("the build cache lives in /var/cache/ci", scoep="project")

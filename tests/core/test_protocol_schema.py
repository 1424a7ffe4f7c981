"""The published JSON Schema of a schema_version 2 file: shipped, printed, true both ways.

It accepts every file our writer produces (through the real commands and the MCP server) and
files as the reference tool rewrites them; it refuses what our reader or our pre-commit checks
refuse. The shipped copy is `protocol_schema.build()`, which reads `core/model.py`, so it cannot
drift from the enums and bounds the code uses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from git_memex.core import frontmatter, model, protocol_schema
from git_memex.core.files import UnreadableMemory, parse_memory_bytes
from git_memex.secrets.scan import check_format

from conftest import git, peer_cases, run_cli

DATA = Path(__file__).resolve().parents[1] / "data"


def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(protocol_schema.shipped())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def schema_errors(fm: dict[str, Any]) -> list[str]:
    return [e.message for e in validator().iter_errors(json.loads(json.dumps(fm)))]


# ------------------------------------------------------------------ one source
def test_the_shipped_schema_is_what_the_model_builds() -> None:
    assert protocol_schema.shipped() == protocol_schema.render(), \
        "run `python -m git_memex.core.protocol_schema --write` after changing core/model.py"


def test_enums_required_keys_and_bounds_are_the_models() -> None:
    schema = json.loads(protocol_schema.shipped())
    props = schema["properties"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["required"]) == {"id", "schema_version", "scope", "type", "status"}
    assert props["schema_version"] == {"const": model.SCHEMA_VERSION, "description": props["schema_version"]["description"]}
    for key, allowed in model.ENUMS.items():
        values = [v for v in props[key]["enum"] if v not in (None, "")]
        assert values == list(allowed), key
    assert not set(model.RESERVED_SCOPES) & set(props["scope"]["enum"])
    for key in model.TIME_KEYS:
        assert props[key]["pattern"] == model.RFC3339_RE.pattern
    for key in model.LIST_KEYS:
        assert props[key]["maxItems"] == model.MAX_LIST_ITEMS
    for key in model.STR_KEYS - set(model.ENUMS) - {"supersedes", "superseded_by"}:
        assert props[key]["maxLength"] == model.MAX_TEXT_CHARS, key
    assert props["revision"]["maximum"] == model.MAX_INT - 1
    assert schema["additionalProperties"] is True  # unknown keys are kept by every writer


def test_git_memex_schema_prints_the_shipped_file(tmp_path: Path) -> None:
    r = run_cli("schema", cwd=tmp_path)  # anywhere: no repository needed
    assert r.code == 0 and r.err == ""
    assert r.out == protocol_schema.shipped()
    jsonschema.Draft202012Validator.check_schema(json.loads(r.out))
    assert run_cli("schema", "--bogus", cwd=tmp_path).code == 1


def test_the_schema_is_package_data() -> None:
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schemas/*.json"' in pyproject
    assert protocol_schema.SCHEMA_FILE.parent.name == "schemas"
    assert protocol_schema.SCHEMA_FILE.parent.parent == Path(model.__file__).resolve().parent.parent


# ------------------------------------------------------------------ accepts what we write
def _written(repo: Path) -> list[Path]:
    """Memory files of many kinds, written by the real commands and the MCP server."""
    from mcp_client import ok

    def add(*args: str) -> str:
        r = run_cli("add", *args, "--json")
        assert r.code == 0, r.err
        return r.json()["id"]

    assert run_cli("init", "--yes").code == 0
    add("Integration tests need docker compose up first", "--tags", "testing,ci", "--paths", "tests/**,compose.yml",
        "--type", "gotcha", "--importance", "high", "--confidence", "high")
    add("I prefer rebase over merge for feature branches", "--scope", "personal", "--type", "preference")
    add("Never commit generated protobuf files", "--role", "instruction", "--type", "constraint")
    add("The VPN is needed for the registry", "--visibility", "private", "--source", "user")
    add("Releases are cut from the release branch", "--aliases", "ship,发布", "--type", "workflow")
    add("k8s means kubernetes here", "--alias", "k8s", "--target", "kubernetes", "--type", "reference")
    add("数据库迁移要先备份", "--tags", "数据库", "--source", "inference")
    shared = add("Wheels upload to the internal index from CI", "--type", "decision")
    assert run_cli("submit", shared).code == 0
    assert run_cli("promote", shared).code == 0  # approved: review_history, scope_key, project_name
    new = run_cli("supersede", shared, "Wheels upload to the internal index from the release job", "--json").json()["id"]
    assert run_cli("submit", new).code == 0
    gone = add("The old build farm is in rack 4", "--scope", "personal")
    assert run_cli("forget", gone, "--soft").code == 0
    mine = add("My editor is set to 100 columns", "--scope", "personal")
    assert run_cli("propose", mine).code == 0  # derived_from
    ok("memory_add", {"content": "Staging resets every night", "source": "a-plugin"})  # source_detail
    ok("memory_add", {"text": "Flaky test list lives in the wiki", "source": "inference", "type": "observation"})
    assert run_cli("capture", "remember that the staging database is read-only on weekends").code == 0
    data_root = Path(run_cli("where", "--json").json()["data_root"])
    files = sorted(data_root.rglob("*.md")) + sorted((repo / ".ai" / "open-memex").glob("*.md"))
    return files


def test_every_file_our_writer_produces_is_valid(repo: Path) -> None:
    files = _written(repo)
    assert len(files) >= 14
    seen: dict[str, set[Any]] = {"scope": set(), "status": set(), "source": set(), "review_state": set()}
    keys: set[str] = set()
    for path in files:
        fm, _ = frontmatter.parse(path.read_text(encoding="utf-8"))
        assert schema_errors(fm) == [], (path, fm)
        for k in seen:
            seen[k].add(fm.get(k))
        keys |= set(fm)
    assert seen["scope"] >= {"personal", "project"} and seen["status"] >= {"active", "superseded", "retracted"}
    assert seen["source"] >= {"cli", "user", "inference", "tool", "keyword"}
    assert seen["review_state"] >= {"draft", "proposed", "approved"}
    assert keys >= {"tags", "paths", "aliases", "alias", "target", "review_history", "scope_key", "derived_from",
                    "source_detail", "instruction_state"}


# ------------------------------------------------------------------ accepts the reference tool's files
def _reference_files() -> list[Any]:
    own = json.loads((DATA / "interchange-cases.json").read_text(encoding="utf-8"))["rewritten"]
    return [pytest.param(c["file"], id=c["name"]) for c in own]


@pytest.mark.parametrize("text", _reference_files())
def test_files_as_the_reference_tool_rewrites_them_are_valid(text: str) -> None:
    fm, _ = frontmatter.parse(text)
    assert schema_errors(fm) == []


def test_the_reference_tools_migration_vectors_are_valid_once_normalised() -> None:
    doc = peer_cases()
    if doc is None:
        pytest.skip("the reference tool's vectors are not beside this checkout (../shared/bench/peer-cases)")
    cases = doc["migration"]
    assert cases
    for case in cases:
        v2, _ = model.normalize(case["v1"])
        assert schema_errors(v2) == [], case["v1"]["id"]
        assert {k: v2.get(k) for k in case["v2_expect"]} == case["v2_expect"]


# ------------------------------------------------------------------ rejects what our reader rejects
GOOD = ("---\nid: 01KB0Q4T5W3YV6M7D2N9Z8XH1C\nschema_version: 2\nrevision: 1\nscope: project\nvisibility: internal\n"
        "type: gotcha\nrole: knowledge\nimportance: normal\nstatus: active\nreview_state: draft\nsource: cli\n"
        "created_at: '2026-11-30T06:20:00Z'\nupdated_at: '2026-11-30T06:20:00Z'\nsupersedes: null\n"
        "tags:\n- testing\npaths: []\n---\n\nIntegration tests need docker compose up first.\n")


def _with(line: str, new: str | None) -> str:
    assert f"\n{line}\n" in GOOD, line
    return GOOD.replace(f"\n{line}\n", "\n" if new is None else f"\n{new}\n", 1)


BAD = [
    ("scope team", "scope: project", "scope: team"),
    ("scope public", "scope: project", "scope: public"),
    ("schema_version from the future", "schema_version: 2", "schema_version: 3"),
    ("schema_version 0", "schema_version: 2", "schema_version: 0"),
    ("schema_version as text", "schema_version: 2", "schema_version: 'two'"),
    ("numeric importance", "importance: normal", "importance: 5"),
    ("unknown importance", "importance: normal", "importance: urgent"),
    ("unknown status", "status: active", "status: weird"),
    ("unknown visibility", "visibility: internal", "visibility: everyone"),
    ("unknown role", "role: knowledge", "role: boss"),
    ("unknown review_state", "review_state: draft", "review_state: done"),
    ("unknown source", "source: cli", "source: gossip"),
    ("time not RFC 3339", "created_at: '2026-11-30T06:20:00Z'", "created_at: yesterday"),
    ("epoch time in a v2 file", "updated_at: '2026-11-30T06:20:00Z'", "updated_at: 1758854400000"),
    ("tags not a list", "tags:\n- testing", "tags: 5"),
    ("a tag not a string", "tags:\n- testing", "tags:\n- 5"),
    ("supersedes not an id", "supersedes: null", "supersedes: ../../etc/passwd"),
    ("revision negative", "revision: 1", "revision: -1"),
    ("no scope", "scope: project", None),
    ("no status", "status: active", None),
    ("no type", "type: gotcha", None),
    ("id not an id", "id: 01KB0Q4T5W3YV6M7D2N9Z8XH1C", "id: ../escape"),
]


def _reader_refuses(text: str) -> list[str]:
    """What the index's reader quarantines, and what the pre-commit checks refuse."""
    out = [f.rule for f in check_format("01KB0Q4T5W3YV6M7D2N9Z8XH1C.md", text, in_repo=True)]
    try:
        parse_memory_bytes(text.encode(), Path("01KB0Q4T5W3YV6M7D2N9Z8XH1C.md"))
    except UnreadableMemory as exc:
        out.append(str(exc))
    return out


def test_the_good_file_passes_both() -> None:
    assert _reader_refuses(GOOD) == []
    assert schema_errors(frontmatter.parse(GOOD)[0]) == []


@pytest.mark.parametrize(("line", "new"), [pytest.param(a, b, id=n) for n, a, b in BAD])
def test_what_our_reader_refuses_the_schema_refuses(line: str, new: str | None) -> None:
    text = _with(line, new)
    assert _reader_refuses(text), "our reader and checks accept it"
    assert schema_errors(frontmatter.parse(text)[0]), "the schema accepts it"


def test_a_file_from_a_newer_version_says_run_a_newer_git_memex(repo: Path) -> None:
    folder = repo / ".ai" / "open-memex"
    folder.mkdir(parents=True)
    (folder / "01KB0Q4T5W3YV6M7D2N9Z8XH1C.md").write_text(_with("schema_version: 2", "schema_version: 3"))
    scan = run_cli("scan")
    assert scan.code != 0 and "run a newer git-memex" in scan.out + scan.err
    assert "Traceback" not in scan.err
    reindex = run_cli("reindex")
    assert "schema_version 3 is newer than this git-memex reads (2); run a newer git-memex" in reindex.out
    git("add", "-A", cwd=repo)
    assert run_cli("list", "--json").json()["memories"] == []  # quarantined, not read as if it were v2

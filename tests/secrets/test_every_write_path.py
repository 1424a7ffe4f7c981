"""Issue 31's left-overs: every write path that admits a memory masks a value found as a secret
in one field wherever another field repeats it (`secrets.admission.admit` with the body's
values, one `redact.CopyMask` per admission), as `git memex add` does; through the real CLI and
the MCP client."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import run_cli, run_cli_process

SECRET = "Wq3mZ8xK2pL4"


def _hand_edited_personal(body: str, tags: list[str], paths: list[str]) -> tuple[str, Path]:
    """A personal memory written by `add`, then edited by hand in the data root (a person's own
    file: the body and the tags as they typed them, never through the barrier)."""
    r = run_cli("add", "--scope", "personal", "a note about the staging database", "--json")
    assert r.code == 0, r.err
    path = Path(r.json()["path"])
    text = path.read_text(encoding="utf-8")
    head, _, _ = text.rpartition("\n---\n")
    head = re.sub(r"\ntags:\n(?:- .*\n)*|\ntags: \[\]\n", "\n", head + "\n").rstrip("\n")
    head = re.sub(r"\npaths: \[\]", "", head)
    lists = "".join(f"\n{k}:\n" + "".join(f"- {v}\n" for v in vs) for k, vs in (("tags", tags), ("paths", paths)))
    path.write_text(head + lists.rstrip("\n") + "\n---\n\n" + body + "\n", encoding="utf-8")
    return str(r.json()["id"]), path


def _outbox_files(isolated_env: Path) -> str:
    return "\n".join(p.read_text("utf-8") for p in (isolated_env / "data").rglob("*.md")
                     if "personal" not in p.parts)


def test_propose_masks_a_body_secret_repeated_in_tags_and_paths(ready: Path, isolated_env: Path) -> None:
    mid, _ = _hand_edited_personal(f"db.password={SECRET}", ["staging", SECRET, "AKIAIOSFODNN7EXAMPLE"],
                                   [f"cfg/{SECRET}.yml"])
    r = run_cli_process("propose", mid, "--json")
    assert r.code == 0, r.err
    copy_id = r.json()["proposed"][0]["id"]
    stored = _outbox_files(isolated_env)
    assert copy_id in stored and "staging" in stored, stored
    assert SECRET.lower() not in stored.lower(), stored  # body, tag (lower-cased) and path
    assert "iosfodnn7" not in stored.lower(), stored  # a tag read as written, before it is lower-cased


def test_mcp_memory_propose_shows_and_writes_the_copies_masked(ready: Path, isolated_env: Path) -> None:
    from mcp_client import Person, ok

    mid, _ = _hand_edited_personal(f"db.password={SECRET}", ["staging", SECRET], [f"cfg/{SECRET}.yml"])
    yes = Person(True)
    out = ok("memory_propose", {"ids": [mid]}, person=yes)["proposed"]
    assert out and out[0]["source"] == mid
    assert SECRET.lower() not in yes.asked[0].lower(), yes.asked[0]  # what the person is shown
    assert "staging" in yes.asked[0]
    stored = _outbox_files(isolated_env)
    assert out[0]["id"] in stored and SECRET.lower() not in stored.lower(), stored

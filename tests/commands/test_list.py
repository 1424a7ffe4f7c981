"""`git memex list` through the CLI: both scopes under their headings."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli


def test_list_both_scopes_groups_personal_and_project_under_headings(repo: Path):
    p = run_cli("add", "I like short commit subjects", "--scope", "personal", "--json").json()["id"]
    q1 = run_cli("add", "The API is versioned under /v2", "--json").json()["id"]
    q2 = run_cli("add", "Integration tests need docker", "--json").json()["id"]
    out = run_cli("list").out.splitlines()
    assert out[0] == "Personal (this machine only):"
    head = out.index("Project:")
    personal, project = out[1:head], out[head + 1:]
    def named(lines: list[str], ids: list[str]) -> bool:  # each line opens with its id's unique prefix
        return len(lines) == len(ids) and all(i.startswith(ln.split()[0]) and len(ln.split()[0]) >= 7
                                              for ln, i in zip(lines, ids, strict=True))

    assert named(personal, [p])
    assert named(project, [q2, q1])  # newest first under each
    assert all(line.startswith("  ") for line in personal + project)
    only = run_cli("list", "--scope", "project").out.splitlines()
    assert "Project:" not in only and named(only, [q2, q1])
    run_cli("forget", p)
    out = run_cli("list").out.splitlines()
    assert out[0] == "Personal (this machine only): none" and out[1] == "Project:"

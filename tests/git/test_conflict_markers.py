"""A memory file that still holds merge conflict markers is never committed, indexed or served.

The conflict is made for real: `git memex init` installs the merge driver, two branches change
the same body line, `git merge` stops with the driver's conflict markers in the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import frontmatter, model
from git_memex.core.files import conflict_marker_line

from conftest import git, run_cli

MEM = ".ai/open-memex"
BODY = "Deploys run from the release branch.\n\nRollbacks run in CI.\n\nThe on-call rota is in the wiki.\n"


def _commit(work: Path, msg: str) -> None:
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", msg, cwd=work)


@pytest.fixture
def conflicted(repo: Path) -> tuple[Path, str]:
    """A merge stopped on a body conflict in one memory (through the installed driver)."""
    assert run_cli("init", "--yes").code == 0
    m = model.create(BODY, scope="project", review_state="proposed")
    rel = f"{MEM}/{m.id}.md"
    (repo / rel).write_text(frontmatter.serialize(m.fm, m.body))
    _commit(repo, "memory")
    assert run_cli("search", "rollbacks", "--json").json()["hits"]  # indexed before the merge
    git("checkout", "-q", "-b", "feature", cwd=repo)
    (repo / rel).write_text((repo / rel).read_text().replace("Rollbacks run in CI.", "Rollbacks run by hand."))
    _commit(repo, "theirs")
    git("checkout", "-q", "main", cwd=repo)
    (repo / rel).write_text((repo / rel).read_text().replace("Rollbacks run in CI.", "Rollbacks run nightly."))
    _commit(repo, "ours")
    r = git("merge", "--no-edit", "feature", cwd=repo, check=False)
    assert r.returncode == 1 and "git-memex merge-driver" in r.stderr, r.stdout + r.stderr
    text = (repo / rel).read_text()
    assert "<<<<<<< ours\n" in text and ">>>>>>> theirs\n" in text
    return repo, rel


def test_committing_conflict_markers_is_refused(conflicted):
    work, rel = conflicted
    line = conflict_marker_line((work / rel).read_text())
    assert line is not None
    git("add", rel, cwd=work)  # the markers are now "resolved" as far as git knows
    before = git("rev-parse", "HEAD", cwd=work).stdout
    r = git("commit", "-q", "--no-edit", cwd=work, check=False)
    assert r.returncode == 1
    assert f"{rel}:{line}: conflict-markers" in r.stderr and "git memex resolve" in r.stderr
    assert "secrets are never shown" not in r.stderr
    assert git("rev-parse", "HEAD", cwd=work).stdout == before
    # `git commit -a` in the middle of the merge stages the markers too: refused the same way
    r = git("commit", "-q", "-a", "--no-edit", cwd=work, check=False)
    assert r.returncode == 1 and f"{rel}:{line}: conflict-markers" in r.stderr


def test_scan_doctor_and_search_flag_the_file(conflicted):
    work, rel = conflicted
    git("add", rel, cwd=work)
    line = conflict_marker_line((work / rel).read_text())
    r = run_cli("scan")
    assert r.code == 1 and f"{rel}:{line}: conflict-markers" in r.out
    assert run_cli("scan", "--staged").code == 1
    r = run_cli("doctor")
    assert r.code == 1
    assert rel in r.out and f"conflict markers at line {line}" in r.out and "git memex resolve" in r.out
    assert r.out.count(rel) == 1  # listed once (as quarantined), not again as a scan finding
    for query in ("rollbacks nightly", "rollbacks by hand", "ours theirs"):
        assert run_cli("search", query, "--json").json()["hits"] == []
    listed = run_cli("list", "--json")
    assert listed.code == 0 and rel.rsplit("/", 1)[1][:-3] not in listed.out


def test_finishing_the_merge_brings_the_memory_back(conflicted):
    work, rel = conflicted
    fm, _ = frontmatter.parse(git("show", f"HEAD:{rel}", cwd=work).stdout)
    (work / rel).write_text(frontmatter.serialize(fm, BODY.replace("in CI.", "nightly, or by hand.")))
    git("add", rel, cwd=work)
    assert git("commit", "-q", "--no-edit", cwd=work, check=False).returncode == 0
    assert run_cli("doctor").code == 0
    assert run_cli("search", "rollbacks", "--json").json()["hits"]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> topic\nb\n", 2),
        ("<<<<<<< ours\nx\n||||||| base\nw\n=======\ny\n>>>>>>> theirs\n", 1),
        ("a\r\n<<<<<<< ours\r\nx\r\n=======\r\ny\r\n>>>>>>> theirs\r\n", 2),
        ("Title\n=======\n\ntext\n", None),  # a setext heading underline
        ("<<<<<<< only an opening line\ntext\n", None),
        ("    <<<<<<< indented, quoted\n=======\n    >>>>>>> end\n", None),
        ("<<<<<<<<< nine\n=======\n>>>>>>>>> nine\n", None),
    ],
)
def test_what_counts_as_conflict_markers(text: str, line: int | None):
    assert conflict_marker_line(text) == line


def test_a_setext_heading_is_not_a_conflict(repo: Path):
    assert run_cli("init", "--yes").code == 0
    m = model.create("Runbook\n=======\n\nRestart the worker first.", scope="project", review_state="proposed")
    (repo / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    git("add", "-A", cwd=repo)
    assert git("commit", "-q", "-m", "heading", cwd=repo, check=False).returncode == 0
    assert run_cli("scan").code == 0 and run_cli("doctor").code == 0
    assert [h["id"] for h in run_cli("search", "restart worker", "--json").json()["hits"]] == [m.id]


def test_the_conflict_can_be_reopened_for_resolve_after_git_add(conflicted):
    """The hint's way back: `git checkout -m -- PATH` restores the stages that `git add` dropped."""
    work, rel = conflicted
    git("add", rel, cwd=work)
    r = git("commit", "-q", "--no-edit", cwd=work, check=False)
    assert r.returncode == 1 and f"git checkout -m -- {rel}" in r.stderr
    assert run_cli("resolve", "--json").json()["conflicts"] == []
    git("checkout", "-m", "--", rel, cwd=work)
    assert [c["path"] for c in run_cli("resolve", "--json").json()["conflicts"]] == [rel]

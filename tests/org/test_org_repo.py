"""The org memory repo itself (docs/org.md, "The org repository"): `git memex init` inside it, then
the real pre-commit hook, `scan`, `doctor` and the real merge driver under `git merge` treat files
in subfolders of the memory folder (engineering/, decisions/, …) exactly as files directly in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
TOKEN = "ghp_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5N"
BODY = "Deploys run from the release branch.\n\nRollbacks run in CI.\n\nThe on-call rota is in the wiki.\n"


def org_text(mid: str, body: str, type_: str = "decision") -> str:
    return (f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: {type_}\nstatus: active\n"
            f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{body}")


@pytest.fixture
def org_repo(repo: Path) -> Path:
    """An org memory repo set up by `git memex init`, one memory in engineering/, committed."""
    r = run_cli("init", "--yes")
    assert r.code == 0, r.err
    folder = repo / MEM / "engineering"
    folder.mkdir(parents=True)
    (folder / "01JORGREPO0000000000000001.md").write_text(org_text("01JORGREPO0000000000000001", BODY))
    git("add", "-A", cwd=repo)
    g = git("commit", "-q", "-m", "org memory repo", cwd=repo, check=False)
    assert g.returncode == 0, g.stderr
    return repo


def _head(work: Path) -> str:
    return git("rev-parse", "HEAD", cwd=work).stdout


@pytest.mark.parametrize("folder", ["engineering", "architecture", "decisions", "lessons", "policies",
                                    "engineering/backend"])
def test_a_secret_in_a_subfolder_is_refused_by_the_hook(org_repo: Path, folder: str) -> None:
    mid = "01JORGREPO00000000000SECRT"
    rel = f"{MEM}/{folder}/{mid}.md"
    (org_repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (org_repo / rel).write_text(org_text(mid, f"The deploy bot token is {TOKEN} for now.\n"))
    git("add", rel, cwd=org_repo)
    before = _head(org_repo)
    g = git("commit", "-q", "-m", "leak", cwd=org_repo, check=False)
    assert g.returncode == 1, g.stderr
    assert rel in g.stderr and "secrets are never shown" in g.stderr and TOKEN not in g.stderr
    assert _head(org_repo) == before
    r = run_cli("scan", "--staged", cwd=org_repo)
    assert r.code == 1 and rel in r.out
    r = run_cli("scan", cwd=org_repo)  # the work tree, whole folder
    assert r.code == 1 and rel in r.out and TOKEN not in r.out
    r = run_cli("doctor", cwd=org_repo)
    assert r.code == 1 and rel in r.out and TOKEN not in r.out


@pytest.mark.parametrize(("text", "rule"), [
    (org_text("01JORGREPO0000000000000BAD", "<<<<<<< ours\nRollbacks run nightly.\n=======\n"
              "Rollbacks run by hand.\n>>>>>>> theirs\n"), "conflict-markers"),
    ("---\nid: 01JORGREPO0000000000000BAD\nscope: [unclosed\n---\nbody\n", "invalid-frontmatter"),
    (org_text("01JORGREPO0000000000000BAD", "body\n").replace("status: active", "status: sleeping"), "invalid"),
    (org_text("01JORGREPO00000000000OTHER", "a file named for another id\n"), "id-mismatch"),
])
def test_a_bad_file_in_a_subfolder_is_refused(org_repo: Path, text: str, rule: str) -> None:
    rel = f"{MEM}/decisions/01JORGREPO0000000000000BAD.md"
    (org_repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (org_repo / rel).write_text(text)
    git("add", rel, cwd=org_repo)
    before = _head(org_repo)
    g = git("commit", "-q", "-m", "bad", cwd=org_repo, check=False)
    assert g.returncode == 1 and f"{rel}:" in g.stderr and rule in g.stderr, g.stderr
    assert _head(org_repo) == before
    r = run_cli("doctor", cwd=org_repo)
    assert r.code == 1 and rel in r.out, r.out
    # the project index reads subfolders too: what it cannot read is an unreadable file, as at the top
    assert rule in r.out or f"unreadable file: {org_repo.resolve() / rel}:" in r.out, r.out


def test_a_successor_in_another_subfolder_is_not_dangling(org_repo: Path) -> None:
    old, new = "01JORGREPO0000000000000OLD", "01JORGREPO0000000000000NEW"
    (org_repo / MEM / "lessons").mkdir()
    (org_repo / MEM / "lessons" / f"{new}.md").write_text(org_text(new, "Retries need jitter.\n", "lesson"))
    git("add", "-A", cwd=org_repo)
    git("commit", "-q", "-m", "new", cwd=org_repo)
    (org_repo / MEM / "decisions").mkdir()
    stale = org_text(old, "Retries are immediate.\n").replace("status: active", f"status: superseded\n"
                                                                                f"superseded_by: {new}")
    (org_repo / MEM / "decisions" / f"{old}.md").write_text(stale)
    git("add", "-A", cwd=org_repo)
    r = git("commit", "-q", "-m", "old, superseded by a lesson", cwd=org_repo, check=False)
    assert r.returncode == 0, r.stderr
    # and one naming a successor that is nowhere is still refused
    gone = "01JORGREPO00000000000GHOST"
    (org_repo / MEM / "decisions" / f"{old}.md").write_text(stale.replace(new, gone))
    r = git("commit", "-q", "-am", "dangling", cwd=org_repo, check=False)
    assert r.returncode == 1 and "dangling-superseded-by" in r.stderr


def test_init_writes_an_attributes_line_covering_subfolders(org_repo: Path) -> None:
    attrs = (org_repo / ".gitattributes").read_text()
    assert f"{MEM}/**/*.md merge=memex" in attrs.splitlines()
    for rel in (f"{MEM}/x.md", f"{MEM}/engineering/x.md", f"{MEM}/engineering/backend/x.md"):
        out = git("check-attr", "merge", "--", rel, cwd=org_repo).stdout
        assert out.strip().endswith("merge: memex"), (rel, out)


def test_init_upgrades_the_older_flat_line(repo: Path) -> None:
    (repo / ".gitattributes").write_text(f"*.png binary\n{MEM}/*.md merge=memex\n")
    r = run_cli("init", "--yes", "--json")
    assert r.code == 0, r.err
    step = next(s for s in r.json()["steps"] if s["what"] == ".gitattributes")
    assert step["action"] == "updated"
    assert (repo / ".gitattributes").read_text() == f"*.png binary\n{MEM}/**/*.md merge=memex\n"
    assert run_cli("init", "--yes").out.strip().endswith("already set up; nothing changed")
    r = run_cli("init", "--uninstall", "--yes")
    assert r.code == 0 and (repo / ".gitattributes").read_text() == "*.png binary\n"


def test_doctor_warns_when_the_flat_line_leaves_subfolders_out(org_repo: Path) -> None:
    (org_repo / ".gitattributes").write_text(f"{MEM}/*.md merge=memex\n")
    r = run_cli("doctor", cwd=org_repo)
    line = next(x for x in r.out.splitlines() if x.startswith("warn") and ".gitattributes" in x)
    assert "subfolders" in line and "git memex init" in line


def test_a_subfolder_memory_merges_through_the_driver(org_repo: Path) -> None:
    """Both sides change different fields and body lines of engineering/X.md: the driver merges it
    cleanly (git's own line merge would conflict on the adjacent frontmatter lines)."""
    rel = f"{MEM}/engineering/01JORGREPO0000000000000001.md"
    path = org_repo / rel
    git("checkout", "-q", "-b", "feature", cwd=org_repo)
    path.write_text(path.read_text().replace("status: active\n", "status: active\ntags:\n- deploy\n")
                    .replace("Rollbacks run in CI.", "Rollbacks run by hand.")
                    .replace("updated_at: '2026-01-01T00:00:00Z'", "updated_at: '2026-01-03T00:00:00Z'"))
    git("commit", "-q", "-am", "theirs", cwd=org_repo)
    git("checkout", "-q", "main", cwd=org_repo)
    path.write_text(path.read_text().replace("status: active\n", "status: active\nimportance: high\n")
                    .replace("The on-call rota is in the wiki.", "The on-call rota is in PagerDuty.")
                    .replace("updated_at: '2026-01-01T00:00:00Z'", "updated_at: '2026-01-02T00:00:00Z'"))
    git("commit", "-q", "-am", "ours", cwd=org_repo)
    r = git("merge", "--no-edit", "feature", cwd=org_repo, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    text = path.read_text()
    assert "<<<<<<<" not in text
    assert "Rollbacks run by hand." in text and "PagerDuty" in text
    assert "importance: high" in text and "- deploy" in text
    assert "updated_at: '2026-01-03T00:00:00Z'" in text
    assert run_cli("doctor", cwd=org_repo).code == 0


def test_a_subfolder_body_conflict_is_resolvable(org_repo: Path) -> None:
    """Both sides change the same body line: the driver leaves markers, `git memex resolve` lists
    the subfolder file, and the commit of the markers is refused."""
    rel = f"{MEM}/engineering/01JORGREPO0000000000000001.md"
    path = org_repo / rel
    git("checkout", "-q", "-b", "feature", cwd=org_repo)
    path.write_text(path.read_text().replace("Rollbacks run in CI.", "Rollbacks run by hand."))
    git("commit", "-q", "-am", "theirs", cwd=org_repo)
    git("checkout", "-q", "main", cwd=org_repo)
    path.write_text(path.read_text().replace("Rollbacks run in CI.", "Rollbacks run nightly."))
    git("commit", "-q", "-am", "ours", cwd=org_repo)
    r = git("merge", "--no-edit", "feature", cwd=org_repo, check=False)
    assert r.returncode == 1 and "git-memex merge-driver" in r.stderr, r.stdout + r.stderr
    assert "<<<<<<< ours\n" in path.read_text()
    listed = run_cli("resolve", "--json", cwd=org_repo)
    assert [c["path"] for c in listed.json()["conflicts"]] == [rel], listed.out + listed.err
    git("add", rel, cwd=org_repo)
    r = git("commit", "-q", "--no-edit", cwd=org_repo, check=False)
    assert r.returncode == 1 and f"{rel}:" in r.stderr and "conflict-markers" in r.stderr


def test_a_merge_bringing_a_subfolder_secret_is_refused(org_repo: Path) -> None:
    """A secret committed elsewhere with --no-verify cannot enter through an automatic merge commit
    (pre-merge-commit)."""
    mid = "01JORGREPO00000000000SECRT"
    rel = f"{MEM}/policies/{mid}.md"
    git("checkout", "-q", "-b", "leak", cwd=org_repo)
    (org_repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (org_repo / rel).write_text(org_text(mid, f"Use {TOKEN} for the deploy bot.\n"))
    git("add", rel, cwd=org_repo)
    git("commit", "-q", "--no-verify", "-m", "leak", cwd=org_repo)
    git("checkout", "-q", "main", cwd=org_repo)
    (org_repo / "README.md").write_text("org memory\n")
    git("commit", "-q", "-am", "main moves", cwd=org_repo)
    before = _head(org_repo)
    r = git("merge", "--no-edit", "leak", cwd=org_repo, check=False)
    assert r.returncode != 0 and rel in r.stderr and TOKEN not in r.stderr, r.stdout + r.stderr
    assert _head(org_repo) == before


def test_init_in_a_fresh_clone_of_an_org_repo(tmp_path: Path) -> None:
    """An org repo made without git-memex (memories only in subfolders), cloned, then `init`: no
    `.gitkeep` is added to a folder whose memories sit in subfolders, and the hook guards them."""
    remote, seed = bare_and_clone(tmp_path, "seed")
    (seed / MEM / "lessons").mkdir(parents=True)
    (seed / MEM / "lessons" / "01JORGREPO0000000000000001.md").write_text(org_text("01JORGREPO0000000000000001", BODY))
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "org memories", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    work = tmp_path / "curator"
    git("clone", "-q", str(remote), str(work))
    r = run_cli("init", "--yes", cwd=work)
    assert r.code == 0, r.err
    status = sorted(x[3:] for x in git("status", "--porcelain", cwd=work).stdout.splitlines())
    assert status == [".gitattributes", "AGENTS.md"]
    rel = f"{MEM}/lessons/01JORGREPO0000000000000001.md"
    (work / rel).write_text((work / rel).read_text().replace("Rollbacks run in CI.", f"CI uses {TOKEN}."))
    g = git("commit", "-q", "-am", "leak", cwd=work, check=False)
    assert g.returncode == 1 and rel in g.stderr and TOKEN not in g.stderr

"""`git memex import --from open-memex [DIR]` through the real CLI: the reference tool's personal
memories and this project's outbox drafts come over with their ids, through the admission
barrier; a file that cannot be taken is quarantined with its reason (docs/bundle.md)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from conftest import git, run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "open-memex"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PERSONAL = "01JZ8Q4V7W3X5Y6Z7A8B9C0D2A"
V1 = "01PLANTEST"
DRAFT = "01JZ8Q4V7W3X5Y6Z7A8B9C0D2B"
OTHER = "01JZ8Q4V7W3X5Y6Z7A8B9C0D2C"
WIDGET = "project__widget__c3b177f21e90"


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))} if root.exists() else {}


def one_sentence(err: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("git-memex: ") and "Traceback" not in err, err


def memory_file(mid: str, scope_key: str, body: str, *, scope: str = "project", extra: str = "") -> str:
    return (f"---\nid: {mid}\nschema_version: 2\nscope_key: {scope_key}\nscope: {scope}\n"
            f"visibility: {'private' if scope == 'personal' else 'internal'}\nproject_name: widget\n"
            f"type: knowledge\nrole: knowledge\nimportance: normal\nstatus: active\n{extra}"
            f"source: \"\"\ncreated_at: \"2026-11-30T10:00:00Z\"\nupdated_at: \"2026-11-30T10:00:00Z\"\n"
            f"---\n\n{body}\n")


@pytest.fixture
def widget(repo: Path) -> Path:
    """`repo` with the origin whose reference scope key is project__widget__c3b177f21e90."""
    git("remote", "add", "origin", "git@github.com:Acme/Widget.git", cwd=repo)
    return repo


@pytest.fixture
def ref_root(tmp_path: Path) -> Path:
    """A copy of the reference data root in tests/data/open-memex."""
    root = tmp_path / "open-memex"
    shutil.copytree(FIXTURE / "memories", root / "memories")
    return root


def our_root() -> Path:
    return Path(os.environ["GIT_MEMEX_HOME"])


def test_personal_memories_and_this_projects_drafts_arrive_with_their_ids(widget: Path, ref_root: Path):
    r = run_cli("import", "--from", "open-memex", str(ref_root))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[-1] == ("imported 3, skipped 0 identical, 0 conflicts kept existing, 0 quarantined, "
                         "1 draft of other projects left")
    assert lines[0] == (f"left 1 draft of other (project__other__0123456789ab): run `git memex import --from "
                        f"open-memex {ref_root}` inside that project's clone")

    home = our_root()
    assert (home / "memories" / "personal" / f"{PERSONAL}.md").exists()
    assert (home / "memories" / "personal" / f"{V1}.md").exists()  # the v1 `user/` folder is personal too
    shown = run_cli("show", DRAFT, "--json").json()
    assert "/outbox/" in shown["path"] and shown["frontmatter"]["review_state"] == "draft"
    assert shown["frontmatter"]["scope_key"] == WIDGET and shown["frontmatter"]["tags"] == ["deploy"]
    v1 = run_cli("show", V1, "--json").json()
    assert v1["frontmatter"]["scope"] == "personal" and v1["frontmatter"]["created_at"] == "2025-09-26T02:40:00Z"
    assert [h["id"] for h in run_cli("search", "rebase", "--json").json()["hits"]] == [PERSONAL]
    assert run_cli("show", OTHER).code == 1  # another project's draft is not written here
    assert git("status", "--porcelain", cwd=widget).stdout == ""  # nothing in the work tree

    before = files_under(home)
    again = run_cli("import", "--from", "open-memex", str(ref_root), "--json")
    assert again.code == 0, again.err
    j = again.json()
    assert j["imported"] == [] and sorted(s["id"] for s in j["skipped_identical"]) == sorted([PERSONAL, V1, DRAFT])
    assert j["other_projects"] == [{"scope_key": "project__other__0123456789ab", "project_name": "other", "ids": [OTHER]}]
    assert j["source"] == "open-memex" and j["quarantined"] == []
    assert files_under(home) == before


def test_dry_run_reports_and_writes_nothing(widget: Path, ref_root: Path):
    before = files_under(our_root())
    r = run_cli("import", "--from", "open-memex", str(ref_root), "--dry-run", "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["dry_run"] is True and sorted(i["id"] for i in j["imported"]) == sorted([PERSONAL, V1, DRAFT])
    assert j["summary"].startswith("would import 3, skipped 0 identical")
    assert files_under(our_root()) == before


def test_the_default_root_is_the_reference_tools_own(widget: Path, tmp_path: Path):
    xdg = tmp_path / "xdg"
    shutil.copytree(FIXTURE / "memories", xdg / "open-memex" / "memories")
    r = run_cli("import", "--from", "open-memex", "--dry-run", "--json", env={"XDG_DATA_HOME": str(xdg)})
    assert r.code == 0, r.err
    assert r.json()["root"] == str(xdg / "open-memex") and len(r.json()["imported"]) == 3
    r = run_cli("import", "--from", "open-memex", "--dry-run", "--json",
                env={"XDG_DATA_HOME": str(tmp_path / "nowhere"), "OPEN_MEMEX_HOME": str(xdg / "open-memex")})
    assert r.code == 0, r.err
    assert r.json()["root"] == str(xdg / "open-memex")


def test_secrets_in_tags_and_title_are_masked(widget: Path, ref_root: Path):
    mid = "01JZ8Q4V7W3X5Y6Z7A8B9C0D2D"
    (ref_root / "memories" / WIDGET / f"{mid}.md").write_text(memory_file(
        mid, WIDGET, "The release bot logs in with its own token.",
        extra=f"title: release bot uses {SECRET}\ntags:\n  - {SECRET}\n  - release\n"))
    r = run_cli("import", "--from", "open-memex", str(ref_root), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["masked"][mid] and all("github" in rule for rule in j["masked"][mid]), j["masked"]
    assert f"the open-memex files in {ref_root} still hold them" in r.err
    shown = run_cli("show", mid, "--json").json()
    text = Path(shown["path"]).read_text()
    assert SECRET not in text and "release" in shown["frontmatter"]["tags"]
    assert SECRET not in run_cli("search", "release", "--json").out


def test_fifo_link_and_yaml_tag_are_quarantined_and_never_stop_the_others(widget: Path, ref_root: Path, tmp_path: Path):
    personal = ref_root / "memories" / "personal"
    os.mkfifo(personal / "01FIFOFIFOFIFO.md")  # a reader that opened it would wait forever
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "01LINKLINKLINK.md").write_text(memory_file("01LINKLINKLINK", "personal", "from outside", scope="personal"))
    (personal / "01LINKLINKLINK.md").symlink_to(outside / "01LINKLINKLINK.md")
    (ref_root / "memories" / "project__linked__0123456789ab").symlink_to(outside, target_is_directory=True)
    marker = tmp_path / "pwned"
    (personal / "01YAMLTAGYAML.md").write_text(
        f"---\nid: 01YAMLTAGYAML\nscope: personal\ntype: !!python/object/apply:os.system [\"touch {marker}\"]\n"
        "status: active\n---\n\nnot a memory\n")
    (personal / "01WRONGSCOPE0.md").write_text(memory_file("01WRONGSCOPE0", WIDGET, "a project memory misfiled"))
    before = files_under(our_root())
    r = run_cli("import", "--from", "open-memex", str(ref_root), "--json")
    assert r.code == 0, r.err
    j = r.json()
    why = {Path(q["path"]).name: q["reason"] for q in j["quarantined"]}
    assert set(why) == {"01FIFOFIFOFIFO.md", "01LINKLINKLINK.md", "01YAMLTAGYAML.md", "01WRONGSCOPE0.md"}
    assert "not a regular file" in why["01FIFOFIFOFIFO.md"]
    assert "symbolic link" in why["01LINKLINKLINK.md"]
    assert "YAML" in why["01YAMLTAGYAML.md"]
    assert "open-memex's personal folder" in why["01WRONGSCOPE0.md"]
    assert not marker.exists()
    assert "memories/project__linked__0123456789ab is a symbolic link; not followed" in r.err
    assert sorted(i["id"] for i in j["imported"]) == sorted([PERSONAL, V1, DRAFT])  # the others came over
    written = set(files_under(our_root())) - set(before)
    assert not any("LINK" in w or "FIFO" in w or "YAML" in w or "WRONG" in w for w in written), written
    text = run_cli("import", "--from", "open-memex", str(ref_root))
    assert f"quarantined {personal / '01FIFOFIFOFIFO.md'}: is not a regular file" in text.out
    assert text.out.splitlines()[-1].endswith("4 quarantined, 1 draft of other projects left")


def test_every_file_that_is_not_read_is_listed_with_its_reason(widget: Path, ref_root: Path):
    """Entries of a memory folder that are not `*.md` files were skipped without a word."""
    personal = ref_root / "memories" / "personal"
    (personal / "README.txt").write_text("notes about these memories\n")
    (personal / PERSONAL).write_text(memory_file(PERSONAL, "personal", "no .md suffix", scope="personal"))
    (personal / ".DS_Store").write_bytes(b"\0\0")
    (personal / "archive").mkdir()
    (personal / "archive" / f"{OTHER}.md").write_text(memory_file(OTHER, "personal", "one level down", scope="personal"))
    r = run_cli("import", "--from", "open-memex", str(ref_root), "--json")
    assert r.code == 0, r.err
    ignored = r.json()["ignored"]
    assert "memories/personal/README.txt is not named <id>.md, so it is not a memory file; not read" in ignored
    assert f"memories/personal/{PERSONAL} is not named <id>.md, so it is not a memory file; not read" in ignored
    assert "memories/personal/.DS_Store is a hidden file; not read" in ignored
    assert any(i.startswith("memories/personal/archive is a folder") for i in ignored)
    assert len(ignored) == 4
    for line in ignored:
        assert line in r.err  # warned on stderr too
    text = run_cli("import", "--from", "open-memex", str(ref_root), "--dry-run")
    assert "README.txt is not named <id>.md" in text.err


def test_a_differing_file_is_a_conflict_and_ours_is_kept(widget: Path, ref_root: Path):
    assert run_cli("import", "--from", "open-memex", str(ref_root)).code == 0
    draft = ref_root / "memories" / WIDGET / f"{DRAFT}.md"
    draft.write_text(draft.read_text().replace("Tuesdays", "Fridays"))
    r = run_cli("import", "--from", "open-memex", str(ref_root))
    assert r.code == 0, r.err
    assert f"conflict {DRAFT}: kept the one in the outbox (they differ in text)" in r.out
    assert "Tuesdays" in run_cli("show", DRAFT, "--json").json()["body"]


def test_drafts_from_before_the_origin_was_set_are_this_projects(repo: Path, ref_root: Path):
    """Without an origin the reference keys a project by its path (src/scope.ts resolveCwdScope)."""
    path = os.path.abspath(repo)
    key = f"project__{repo.name}__{hashlib.sha256(path.lower().encode()).hexdigest()[:12]}"
    (ref_root / "memories" / WIDGET).rename(ref_root / "memories" / key)
    r = run_cli("import", "--from", "open-memex", str(ref_root), "--json")
    assert r.code == 0, r.err
    assert {"id": DRAFT, "location": "outbox"} in r.json()["imported"]


def test_outside_a_repository_personal_memories_come_and_drafts_wait(nogit: Path, ref_root: Path):
    r = run_cli("import", "--from", "open-memex", str(ref_root))
    assert r.code == 0, r.err
    assert "imported 2, skipped 0 identical" in r.out
    assert f"left 1 draft of widget ({WIDGET}): run `git memex import --from open-memex {ref_root}` inside the " \
           "project's clone (this is not a repository)" in r.out
    assert run_cli("show", PERSONAL).code == 0 and run_cli("show", DRAFT).code == 1


def test_a_missing_or_foreign_folder_is_one_sentence_and_nothing_is_written(widget: Path, tmp_path: Path):
    assert run_cli("add", "I like short commit subjects", "--scope", "personal").code == 0
    before = files_under(our_root())
    r = run_cli("import", "--from", "open-memex", str(tmp_path / "nope"))
    assert r.code == 1 and "does not exist" in r.err
    one_sentence(r.err)
    r = run_cli("import", "--from", "open-memex", env={"XDG_DATA_HOME": str(tmp_path / "empty")})
    assert r.code == 1 and str(tmp_path / "empty" / "open-memex") in r.err and "DIR" in r.err
    one_sentence(r.err)
    (tmp_path / "plain").mkdir()
    r = run_cli("import", "--from", "open-memex", str(tmp_path / "plain"))
    assert r.code == 1 and "no memories/ folder" in r.err
    one_sentence(r.err)
    r = run_cli("import", "--from", "open-memex", str(our_root()))
    assert r.code == 1 and "git-memex's own data root" in r.err
    r = run_cli("import")
    assert r.code == 1 and "--from open-memex" in r.err
    one_sentence(r.err)
    r = run_cli("import", "--from", "mem0", str(tmp_path))
    assert r.code == 1 and "invalid choice" in r.err
    assert files_under(our_root()) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_an_unreadable_folder_stops_the_run_before_anything_is_written(widget: Path, ref_root: Path):
    folder = ref_root / "memories" / WIDGET
    folder.chmod(0)
    try:
        before = files_under(our_root())
        r = run_cli("import", "--from", "open-memex", str(ref_root))
        assert r.code == 2 and "nothing was imported" in r.err
        one_sentence(r.err)
        assert files_under(our_root()) == before  # not even the personal ones, listed first
    finally:
        folder.chmod(0o700)

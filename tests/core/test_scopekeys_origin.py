"""A project key that survives a rename (docs/project-keys.md): a real `git remote set-url origin …` in a
real repository must not hide this clone's outbox drafts and private memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, run_cli

OLD = "https://github.com/acme/widgets.git"


def one_sentence(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def add(*args: str) -> str:
    r = run_cli("add", *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def visible(*ids: str) -> None:
    """Each id is in list, search and (drafts) sync-status."""
    listed = run_cli("list", "--json")
    assert listed.code == 0, listed.err
    assert set(ids) <= {m["id"] for m in listed.json()["memories"]}, listed.out
    found = run_cli("search", "deploys", "--json")
    assert set(ids) <= {h["id"] for h in found.json()["hits"]}, found.out


def drafts_in_sync_status() -> set[str]:
    r = run_cli("sync-status", "--json")
    assert r.code == 0, r.err
    return {o["id"] for o in r.json()["outbox"]}


def key_of(repo: Path) -> str:
    return git("config", "memex.projectKey", cwd=repo, check=False).stdout.strip()


@pytest.fixture
def clone(repo: Path) -> Path:
    git("remote", "add", "origin", OLD, cwd=repo)
    assert run_cli("init", "--yes").code == 0
    return repo


def test_init_pins_the_key_and_a_renamed_origin_keeps_drafts_and_private(clone: Path) -> None:
    where = run_cli("where", "--json").json()
    assert key_of(clone) == where["project_key"] == where["natural_key"]
    assert where["project_key"].startswith("widgets-")
    draft = add("the deploys go out on tuesdays")
    private = add("the deploys need the vpn first", "--visibility", "private")
    for new in ("git@github.com:acme/gadgets.git", "https://github.com/newowner/gadgets.git",
                "https://github.com/me/fork-of-gadgets"):
        git("remote", "set-url", "origin", new, cwd=clone)
        visible(draft, private)
        assert draft in drafts_in_sync_status()
        where = run_cli("where", "--json").json()
        assert where["project_key"] != where["natural_key"] and where["project_key_pinned"] is True


def test_adding_an_origin_after_init_keeps_the_drafts(repo: Path) -> None:
    assert run_cli("init", "--yes").code == 0  # no origin yet: the key comes from the path
    draft = add("the deploys go out on tuesdays")
    git("remote", "add", "origin", "git@github.com:acme/widgets.git", cwd=repo)
    visible(draft)
    assert draft in drafts_in_sync_status()


def test_an_unpinned_clone_is_carried_over_once(clone: Path) -> None:
    git("config", "--unset", "memex.projectKey", cwd=clone)  # a clone set up before pinning
    old_key = run_cli("where", "--json").json()["project_key"]
    draft = add("the deploys go out on tuesdays")
    git("remote", "set-url", "origin", "https://github.com/acme/renamed.git", cwd=clone)
    first = run_cli("list", "--json")
    assert first.code == 0 and draft in {m["id"] for m in first.json()["memories"]}
    msg = one_sentence(first.err)
    assert old_key in msg and "memex.projectKey" in msg and "github.com/acme/renamed" in msg
    assert key_of(clone) == old_key
    again = run_cli("list", "--json")
    assert again.err == "" and draft in {m["id"] for m in again.json()["memories"]}
    assert draft in drafts_in_sync_status()


def test_drafts_an_older_version_wrote_under_the_new_key_are_carried_over_too(clone: Path, isolated_env: Path) -> None:
    git("config", "--unset", "memex.projectKey", cwd=clone)
    old_key = run_cli("where", "--json").json()["project_key"]
    first = add("the deploys go out on tuesdays")
    git("remote", "set-url", "origin", "https://github.com/acme/renamed.git", cwd=clone)
    new_key = run_cli("where", "--json").json()["natural_key"]
    outbox = isolated_env / "data" / "memories" / "outbox"
    (outbox / new_key).mkdir()
    later = (outbox / old_key / f"{first}.md").read_text().replace(first, "01KB0Q4T5W0000000000000000")
    (outbox / new_key / "01KB0Q4T5W0000000000000000.md").write_text(later.replace("tuesdays", "fridays"))
    r = run_cli("list", "--json")
    assert "1 written meanwhile under the new key moved there too" in one_sentence(r.err)
    assert {first, "01KB0Q4T5W0000000000000000"} <= {m["id"] for m in r.json()["memories"]}
    assert not (outbox / new_key).exists() and key_of(clone) == old_key


def test_scopes_lists_every_key_with_counts(clone: Path, tmp_path: Path, isolated_env: Path) -> None:
    add("the deploys go out on tuesdays")
    add("the deploys need the vpn first", "--visibility", "private")
    add("I like short commit messages", "--scope", "personal")
    other = tmp_path / "other"
    git("init", "-q", "-b", "main", str(other))
    git("remote", "add", "origin", "https://example.com/team/billing.git", cwd=other)
    assert run_cli("add", "billing runs nightly", cwd=other).code == 0
    r = run_cli("scopes", "--json")
    assert r.code == 0, r.err
    doc = r.json()
    rows = {s["key"]: s for s in doc["scopes"]}
    mine = rows[doc["current"]]
    assert doc["personal"] == 1
    assert (mine["drafts"], mine["private"], mine["current"], mine["clone"]) == (1, 1, True, str(clone))
    assert mine["origin"] == "github.com/acme/widgets"
    billing = next(s for k, s in rows.items() if k.startswith("billing-"))
    assert (billing["drafts"], billing["current"], billing["clone"]) == (1, False, str(other))
    text = run_cli("scopes")
    assert text.code == 0 and f"* {doc['current']}" in text.out and "personal memories: 1" in text.out


def test_doctor_reports_stranded_drafts_and_adopt_carries_them_over(clone: Path, isolated_env: Path) -> None:
    draft = add("the deploys go out on tuesdays")
    old_key = key_of(clone)
    # As left by a version without pinning: no pin, no record of the clone, then a transfer.
    git("config", "--unset", "memex.projectKey", cwd=clone)
    (isolated_env / "data" / "scopes.json").unlink()
    git("remote", "set-url", "origin", "https://github.com/newowner/widgets.git", cwd=clone)
    listed = run_cli("list", "--json").json()["memories"]
    assert draft not in {m["id"] for m in listed}  # the old key is nobody's: hidden until adopted
    doc = run_cli("doctor", "--json").json()
    warn = [c for c in doc["checks"] if c["name"] == "stranded drafts"]
    assert len(warn) == 1 and warn[0]["level"] == "warn" and f"scopes --adopt {old_key}" in warn[0]["detail"]
    r = run_cli("scopes", "--adopt", old_key, "--json")
    assert r.code == 0, r.err
    assert r.json()["moved"] == 1 and r.json()["kept"] == 0
    visible(draft)
    assert draft in drafts_in_sync_status()
    assert not [c for c in run_cli("doctor", "--json").json()["checks"] if c["name"] == "stranded drafts"]
    assert key_of(clone) == run_cli("where", "--json").json()["natural_key"]  # adopting pins this key


def test_adopt_skips_identical_and_keeps_conflicting_files(clone: Path, isolated_env: Path) -> None:
    base = isolated_env / "data" / "memories" / "outbox"
    draft = add("the deploys go out on tuesdays")
    other = add("the deploys need two approvals")
    mine = key_of(clone)
    stray = base / "widgets-0123456789ab"
    stray.mkdir()
    (stray / f"{draft}.md").write_bytes((base / mine / f"{draft}.md").read_bytes())  # identical copy
    changed = (base / mine / f"{other}.md").read_text().replace("two approvals", "three approvals")
    (stray / f"{other}.md").write_text(changed)
    r = run_cli("scopes", "--adopt", "widgets-0123456789ab", "--json")
    assert r.code == 0, r.err
    assert (r.json()["moved"], r.json()["skipped_identical"], r.json()["kept"]) == (0, 1, 1)
    assert not (stray / f"{draft}.md").exists()
    assert (stray / f"{other}.md").read_text() == changed  # kept where it was, nothing lost
    assert "two approvals" in (base / mine / f"{other}.md").read_text()


@pytest.mark.parametrize(("args", "needle"), [
    (("scopes", "--adopt", "nosuch-0123456789ab"), "no key"),
    (("scopes", "--adopt", "../../etc"), "no key"),
    (("config", "set", "memex.projectKey", "Not A Key"), "takes a key"),
])
def test_bad_project_key_input_is_one_sentence(clone: Path, isolated_env: Path, args: tuple[str, ...], needle: str) -> None:
    before = key_of(clone)
    r = run_cli(*args)
    assert r.code == 1 and needle in one_sentence(r.err), r.err
    assert key_of(clone) == before


def test_adopting_the_own_key_is_refused(clone: Path) -> None:
    r = run_cli("scopes", "--adopt", key_of(clone))
    assert r.code == 1 and "already this clone's key" in one_sentence(r.err)


def test_the_record_of_clones_holds_no_credentials(clone: Path, isolated_env: Path) -> None:
    git("remote", "set-url", "origin", "https://bob:hunter2secret@github.com/acme/widgets.git", cwd=clone)
    assert run_cli("list").code == 0
    text = (isolated_env / "data" / "scopes.json").read_text()
    assert "hunter2" not in text and "bob" not in text
    assert json.loads(text)["clones"][str(clone)]["origin"] == "github.com/acme/widgets"
    assert (isolated_env / "data" / "scopes.json").stat().st_mode & 0o077 == 0


def test_pointing_a_clone_at_a_fork_never_takes_the_fork_clones_drafts(tmp_path: Path, isolated_env: Path) -> None:
    """Clone A of upstream and clone B of the fork, neither ran `init`. A's `git remote set-url
    origin FORK` gives A the key B uses: A keeps its own drafts, and B's draft stays B's."""
    fork = "https://github.com/someone/widgets.git"
    a, b = tmp_path / "a", tmp_path / "b"
    for work, url in ((a, OLD), (b, fork)):
        work.mkdir()
        git("init", "-q", "-b", "main", cwd=work)
        git("remote", "add", "origin", url, cwd=work)
    mine = run_cli("add", "the deploys go out on tuesdays", "--json", cwd=a)
    theirs = run_cli("add", "the deploys of the fork go out on fridays", "--json", cwd=b)
    assert mine.code == 0 and theirs.code == 0, mine.err + theirs.err
    git("remote", "set-url", "origin", fork, cwd=a)
    r = run_cli("list", "--json", cwd=a)
    assert r.code == 0, r.err
    assert "moved there too" not in r.err and "Traceback" not in r.err, r.err
    assert mine.json()["id"] in {m["id"] for m in r.json()["memories"]}
    listed_b = run_cli("list", "--json", cwd=b)
    assert theirs.json()["id"] in {m["id"] for m in listed_b.json()["memories"]}, listed_b.out
    doc = run_cli("doctor", cwd=b)
    assert "no drafts stranded" in doc.out, doc.out

"""`export` and `import` through the real CLI: bundles move memories between data roots and
projects, and a bad bundle is refused with one sentence and nothing written (docs/bundle.md)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from conftest import git, run_cli

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def add(*args: str, **kw) -> str:
    r = run_cli("add", *args, "--json", **kw)
    assert r.code == 0, r.err
    return r.json()["id"]


def export(*args: str, **kw) -> dict:
    r = run_cli("export", *args, "--json", **kw)
    assert r.code == 0, r.err
    return r.json()


def imp(*args: str, **kw):
    return run_cli("import", *args, **kw)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))} if root.exists() else {}


def one_sentence(err: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("git-memex: ") and "Traceback" not in err, err


@pytest.fixture
def other_machine(tmp_path: Path) -> dict[str, str]:
    """The environment of a second machine: its own, empty data root."""
    return {"GIT_MEMEX_HOME": str(tmp_path / "new-machine")}


def test_personal_memories_and_drafts_move_to_a_new_machine(repo: Path, tmp_path: Path, other_machine):
    p = add("I prefer rebase over merge", "--scope", "personal", "--tags", "git")
    d = add("We deploy on Tuesdays with blue-green", "--type", "decision")
    add("the staging database lives on db7.internal", "--visibility", "private")
    out = tmp_path / "bundle.json"
    r = run_cli("export", "-o", str(out), "--json")
    assert r.code == 0, r.err
    res = r.json()
    assert res["count"] == 2 and res["counts"] == {"personal": 1, "outbox": 1}  # never the private one
    assert "1 personal memory" in r.err  # the warning
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    doc = json.loads(out.read_text())
    assert doc["format"] == "git-memex-bundle" and doc["version"] == 1 and doc["count"] == 2
    assert {e["id"]: e["location"] for e in doc["memories"]} == {p: "personal", d: "outbox"}

    r = imp(str(out), env=other_machine)
    assert r.code == 0, r.err
    assert r.out.strip() == "imported 2, skipped 0 identical, 0 conflicts kept existing"
    shown = run_cli("show", d, "--json", env=other_machine).json()
    assert shown["body"] == "We deploy on Tuesdays with blue-green" and "/outbox/" in shown["path"]
    assert shown["frontmatter"]["type"] == "decision" and shown["frontmatter"]["review_state"] == "draft"
    assert run_cli("show", p, "--json", env=other_machine).json()["frontmatter"]["tags"] == ["git"]
    listed = run_cli("search", "rebase", "--json", env=other_machine).json()
    assert [h["id"] for h in listed["hits"]] == [p]
    home = Path(other_machine["GIT_MEMEX_HOME"])
    assert (home / "memories" / "personal" / f"{p}.md").exists()
    assert git("status", "--porcelain", cwd=repo).stdout == ""  # nothing in the work tree

    again = imp(str(out), "--json", env=other_machine)
    assert again.code == 0, again.err
    j = again.json()
    assert j["summary"] == "imported 0, skipped 2 identical, 0 conflicts kept existing"
    assert sorted(s["id"] for s in j["skipped_identical"]) == sorted([p, d]) and j["imported"] == []


def test_private_memories_only_when_asked_and_they_stay_private(repo: Path, tmp_path: Path, other_machine):
    q = add("the staging database lives on db7.internal", "--visibility", "private")
    out = tmp_path / "b.json"
    assert export("--scope", "project", "-o", str(out))["count"] == 0
    res = export("--scope", "project", "--include-private", "-o", str(out))
    assert res["counts"] == {"private": 1}
    assert imp(str(out), env=other_machine).code == 0
    assert "/private/" in run_cli("show", q, "--json", env=other_machine).json()["path"]


def test_filters_type_tag_and_all(repo: Path, tmp_path: Path):
    a = add("Use ruff for linting", "--type", "howto", "--tags", "lint")
    b = add("Postgres 16 is the billing database", "--tags", "db")
    assert run_cli("supersede", b, "Postgres 17 is the billing database").code == 0
    out = tmp_path / "b.json"

    def ids(*args: str) -> set[str]:
        export("--scope", "project", *args, "-o", str(out))
        return {e["id"] for e in json.loads(out.read_text())["memories"]}

    assert ids("--type", "howto") == {a}
    assert ids("--tag", "LINT") == {a}
    assert b not in ids() and b in ids("--all")  # the superseded one travels only with --all
    assert len(ids("--all")) == 3


def test_stdout_bundle_imports(repo: Path, other_machine):
    p = add("I like tabs", "--scope", "personal")
    r = run_cli("export", "--scope", "personal")
    assert r.code == 0 and json.loads(r.out)["count"] == 1
    got = imp("-", input=r.out, env=other_machine)
    assert got.code == 0, got.err and "imported 1," in got.out
    assert run_cli("show", p, env=other_machine).code == 0


def test_a_bundle_with_personal_memories_is_never_written_into_a_work_tree(repo: Path):
    add("I like tabs", "--scope", "personal")
    add("Deploys are on Tuesdays")
    r = run_cli("export", "-o", str(repo / "bundle.json"))
    assert r.code == 2 and "work tree" in r.err
    assert not (repo / "bundle.json").exists()
    # project knowledge alone may be written there (a seed file to commit, for instance)
    assert run_cli("export", "--scope", "project", "-o", str(repo / "seed.json")).code == 0


def test_unwritable_out_is_one_sentence(repo: Path, tmp_path: Path):
    add("I like tabs", "--scope", "personal")
    r = run_cli("export", "-o", str(tmp_path / "missing" / "b.json"))
    assert r.code == 2 and "does not exist" in r.err
    one_sentence(r.err)
    # a folder nobody may create files in, whoever runs the test (root included)
    r = run_cli("export", "-o", "/proc/git-memex-bundle.json")
    assert r.code == 2 and "cannot write" in r.err and "nothing was written" in r.err
    one_sentence(r.err)


def test_a_different_copy_of_an_id_is_a_conflict_and_the_existing_one_is_kept(repo: Path, tmp_path: Path):
    d = add("We deploy on Tuesdays")
    e = add("Ruff is the linter")
    out = tmp_path / "b.json"
    export("--scope", "project", "-o", str(out))
    doc = json.loads(out.read_text())
    for entry in doc["memories"]:
        if entry["id"] == d:
            entry["body"] = "We deploy on Fridays"
    out.write_text(json.dumps(doc))
    r = imp(str(out))
    assert r.code == 0, r.err
    assert r.out.splitlines()[-1] == "imported 0, skipped 1 identical, 1 conflict kept existing"
    assert f"conflict {d}" in r.out and "text" in r.out
    assert run_cli("show", d, "--json").json()["body"] == "We deploy on Tuesdays"
    assert run_cli("show", e).code == 0


def test_import_masks_secrets_like_any_write(repo: Path, tmp_path: Path, other_machine):
    d = add("The release bot token lives in the vault")
    out = tmp_path / "b.json"
    export("--scope", "project", "-o", str(out))
    doc = json.loads(out.read_text())
    doc["memories"][0]["body"] = f"The release bot uses {SECRET} <private>and the old one</private>"
    out.write_text(json.dumps(doc))
    r = imp(str(out), "--json", env=other_machine)
    assert r.code == 0, r.err
    assert r.json()["masked"] == {d: ["github-pat"]} and "still holds them" in r.err
    body = run_cli("show", d, "--json", env=other_machine).json()["body"]
    assert SECRET not in body and SECRET[:4] in body and "old one" not in body
    files = files_under(Path(other_machine["GIT_MEMEX_HOME"]))
    assert not any(SECRET.encode() in v for v in files.values())


def test_approvals_do_not_travel_and_repo_memories_arrive_as_drafts(repo: Path, tmp_path: Path):
    assert run_cli("init", "--yes").code == 0
    rule = add("Always run the tests before pushing", "--role", "instruction")
    assert run_cli("submit", rule).code == 0
    out = tmp_path / "seed.json"
    export("--scope", "project", "-o", str(out))
    doc = json.loads(out.read_text())
    (entry,) = doc["memories"]
    assert entry["location"] == "repo" and entry["frontmatter"]["review_state"] == "proposed"
    entry["frontmatter"].update(instruction_state="approved", trust_level="trusted", approved_by="mallory")
    out.write_text(json.dumps(doc))
    # a second project, seeded from the first
    other = tmp_path / "other"
    other.mkdir()
    git("init", "-q", "-b", "main", cwd=other)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=other)
    r = imp(str(out), cwd=other)
    assert r.code == 0 and "imported 1," in r.out, r.err
    fm = run_cli("show", rule, "--json", cwd=other).json()
    assert "/outbox/" in fm["path"]
    f = fm["frontmatter"]
    assert (f["review_state"], f["instruction_state"], f["trust_level"]) == ("draft", "draft", "reviewed")
    assert "approved_by" not in f
    assert f["repo_id"] == run_cli("where", "--json", cwd=other).json()["repo_id"]


def test_dry_run_writes_nothing(repo: Path, tmp_path: Path, other_machine):
    add("I like tabs", "--scope", "personal")
    out = tmp_path / "b.json"
    export("-o", str(out))
    r = imp(str(out), "--dry-run", env=other_machine)
    assert r.code == 0 and r.out.strip() == "would import 1, skipped 0 identical, 0 conflicts kept existing"
    assert files_under(Path(other_machine["GIT_MEMEX_HOME"])) == {}


def _good_bundle(repo: Path, tmp_path: Path) -> dict:
    add("I like tabs", "--scope", "personal")
    add("Deploys are on Tuesdays")
    out = tmp_path / "good.json"
    export("-o", str(out))
    return json.loads(out.read_text())


BAD = {
    "truncated": lambda text, doc: text[: len(text) // 2],
    "not json": lambda text, doc: "hello, this is not a bundle\n",
    "foreign json": lambda text, doc: json.dumps({"memories": doc["memories"], "count": 2}),
    "not utf-8": lambda text, doc: b"\xff\xfe\x00garbage",
    "newer version": lambda text, doc: json.dumps({**doc, "version": 99}),
    "count disagrees": lambda text, doc: json.dumps({**doc, "count": 3}),
    "personal bound for the repo": lambda text, doc: json.dumps(
        {**doc, "memories": [doc["memories"][1], {**doc["memories"][0], "location": "repo"}]}),
    "invalid memory": lambda text, doc: json.dumps(
        {**doc, "memories": [doc["memories"][1], {**doc["memories"][0], "frontmatter": {
            **doc["memories"][0]["frontmatter"], "status": "forgotten"}}]}),
    "id twice": lambda text, doc: json.dumps({**doc, "count": 3, "memories": [*doc["memories"], doc["memories"][0]]}),
}


def test_a_secret_in_a_tag_is_masked_not_refused(repo: Path, tmp_path: Path, other_machine) -> None:
    """Like every write path, import masks every field (secrets.admission) rather than refusing."""
    doc = _good_bundle(repo, tmp_path)
    doc["memories"][0]["frontmatter"]["tags"] = [SECRET]
    bundle = tmp_path / "tagged.json"
    bundle.write_text(json.dumps(doc))
    r = imp(str(bundle), "--json", env=other_machine)
    assert r.code == 0, r.err
    written = b"".join(files_under(Path(other_machine["GIT_MEMEX_HOME"])).values())
    assert SECRET.encode() not in written and SECRET[:4].encode() + b"x" in written


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_bundle_is_refused_whole_with_one_sentence(repo: Path, tmp_path: Path, other_machine, kind: str):
    doc = _good_bundle(repo, tmp_path)
    data = BAD[kind](json.dumps(doc, indent=2), doc)
    bad = tmp_path / "bad.json"
    bad.write_bytes(data if isinstance(data, bytes) else data.encode())
    home = Path(other_machine["GIT_MEMEX_HOME"])
    for args in ((), ("--dry-run",)):
        r = imp(str(bad), *args, env=other_machine)
        assert r.code == 2, (kind, r.out, r.err)
        one_sentence(r.err)
        assert "nothing was imported" in r.err and r.out == ""
    assert files_under(home) == {}  # the valid memory before the bad one was not written either


def test_missing_file_and_project_memories_outside_a_repository(repo: Path, tmp_path: Path, nogit: Path):
    r = imp(str(tmp_path / "nope.json"))
    assert r.code == 1
    one_sentence(r.err)
    doc_path = tmp_path / "b.json"
    assert run_cli("add", "Deploys are on Tuesdays", cwd=repo).code == 0
    assert run_cli("export", "--scope", "project", "-o", str(doc_path), cwd=repo).code == 0
    r = imp(str(doc_path), cwd=nogit)
    assert r.code == 1 and "inside the project's repository" in r.err
    one_sentence(r.err)
    r = run_cli("export", "--scope", "project", cwd=nogit)
    assert r.code == 1
    one_sentence(r.err)


def test_unreadable_files_are_left_out_with_a_warning(repo: Path, tmp_path: Path, isolated_env: Path):
    add("I like tabs", "--scope", "personal")
    broken = isolated_env / "data" / "memories" / "personal" / "01ZZZZZZZZZZZZZZZZZZZZZZZZ.md"
    broken.write_text("---\nid: [not closed\n---\n\nbody\n")
    r = run_cli("export", "--scope", "personal", "-o", str(tmp_path / "b.json"), "--json")
    assert r.code == 0, r.err
    assert r.json()["count"] == 1 and "1 unreadable memory file left out" in r.err


def test_a_reference_tool_v1_entry_is_read_as_its_file_would_be(repo: Path, tmp_path: Path, other_machine):
    p = add("I like tabs", "--scope", "personal")
    out = tmp_path / "b.json"
    export("--scope", "personal", "-o", str(out))
    doc = json.loads(out.read_text())
    fm = doc["memories"][0]["frontmatter"]
    fm.pop("scope")
    fm.pop("importance")
    fm.update(scope_kind="user", scope_key="user", priority=9, schema_version=1, type="tip")
    out.write_text(json.dumps(doc))
    r = imp(str(out), env=other_machine)
    assert r.code == 0 and "imported 1," in r.out, r.err
    f = run_cli("show", p, "--json", env=other_machine).json()["frontmatter"]
    assert (f["scope"], f["importance"], f["type"], f["schema_version"]) == ("personal", "high", "howto", 2)


def test_any_odd_value_in_an_entry_is_refused_or_read_never_a_crash(repo: Path, tmp_path: Path):
    """Every frontmatter key and entry field set to each JSON kind: import (dry run, in-process)
    either accepts the memory or raises MemexError (one sentence); nothing else escapes."""
    from git_memex.core.context import load_context
    from git_memex.errors import MemexError
    from git_memex.upkeep.bundle import import_bundle

    add("I like tabs", "--scope", "personal", "--tags", "style")
    out = tmp_path / "b.json"
    export("--scope", "personal", "-o", str(out))
    doc = json.loads(out.read_text())
    entry = doc["memories"][0]
    odd = [None, 0, -1, 1.5, True, "", "x" * 300, [], [1, {"a": None}], {}, {"k": [1]}, "../../etc/passwd"]
    targets = [("frontmatter", k) for k in entry["frontmatter"]] + [("entry", k) for k in entry]
    ctx = load_context()
    outcomes = {"ok": 0, "refused": 0}
    for where, key in targets:
        for value in odd:
            e = json.loads(json.dumps(entry))
            (e["frontmatter"] if where == "frontmatter" else e)[key] = value
            out.write_text(json.dumps({**doc, "memories": [e]}))
            try:
                import_bundle(ctx, str(out), dry_run=True)
                outcomes["ok"] += 1
            except MemexError as exc:
                assert exc.message and "\n" not in exc.message
                outcomes["refused"] += 1
    assert outcomes["ok"] and outcomes["refused"]


def test_a_bundle_printed_into_a_file_is_guarded_like_out(repo: Path, tmp_path: Path):
    import subprocess
    import sys

    add("I like tabs", "--scope", "personal")

    def to_file(path: Path) -> subprocess.CompletedProcess:
        path.write_text("")
        path.chmod(0o644)
        with open(path, "w") as fh:  # as `git memex export > FILE` opens it
            return subprocess.run([sys.executable, "-m", "git_memex", "export"], stdout=fh, stderr=subprocess.PIPE,
                                  text=True, check=False)

    outside = tmp_path / "b.json"
    r = to_file(outside)
    assert r.returncode == 0 and "readable by you only" in r.stderr
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o600 and json.loads(outside.read_text())["count"] == 1
    inside = repo / "b.json"
    r = to_file(inside)
    assert r.returncode == 2 and "work tree" in r.stderr and inside.read_text() == ""


def test_a_personal_file_misplaced_in_the_repository_is_left_out(repo: Path, tmp_path: Path, other_machine):
    from git_memex.core import frontmatter, model

    assert run_cli("init", "--yes").code == 0
    m = model.create("I prefer rebase", scope="personal")
    (repo / ".ai" / "open-memex" / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    d = add("Deploys are on Tuesdays")
    out = tmp_path / "b.json"
    r = run_cli("export", "--scope", "project", "-o", str(out), "--json")
    assert r.code == 0 and r.json()["counts"] == {"outbox": 1} and "left out" in r.err
    assert imp(str(out), env=other_machine).code == 0  # the bundle it wrote is one import takes
    assert run_cli("show", d, env=other_machine).code == 0


def test_import_masks_a_teams_own_secret_format(repo: Path, tmp_path: Path, other_machine):
    """memex.redactPattern applies to import as to every write path (docs/team-patterns.md)."""
    token = "ACME-1234567890ABCDEF"
    d = add(f"the staging deploy token is {token}", "--scope", "personal")
    out = tmp_path / "b.json"
    export("--scope", "personal", "-o", str(out))
    assert token in out.read_text()  # not a built-in format: it is kept until the team names it
    git("config", "--add", "memex.redactPattern", "ACME-[A-Z0-9]{16}", cwd=repo)
    r = imp(str(out), "--json", env=other_machine)
    assert r.code == 0, r.err
    assert d in r.json()["masked"]
    files = files_under(Path(other_machine["GIT_MEMEX_HOME"]))
    assert files and not any(token.encode() in v for v in files.values())


def test_a_body_over_the_limit_is_refused_before_anything_masks_it(repo: Path, tmp_path: Path, other_machine) -> None:
    """The body limit (64 KiB) holds for the text as given: it is checked before the secret
    detector reads the text (whose cost grows with it: a 50 MB body took ~45 s of CPU before the
    limit refused it). This body is over the limit with a secret in it and a `<private>` part
    whose removal would bring it under: refused, naming the limit, whatever masking would make."""
    doc = _good_bundle(repo, tmp_path)
    body = ("We deploy on Tuesdays. " * 2900)[:65_000] + f" token {SECRET} <private>{'p' * 2000}</private>"
    assert len(body.encode()) > 65_536 > len(body.encode()) - 2000
    doc["memories"][0]["body"] = body
    big = tmp_path / "big-body.json"
    big.write_text(json.dumps(doc))
    r = imp(str(big), env=other_machine)
    assert r.code == 2, (r.out, r.err)
    one_sentence(r.err)
    assert "the limit is 65,536 bytes (64 KiB)" in r.err and "nothing was imported" in r.err
    assert SECRET not in r.err
    assert files_under(Path(other_machine["GIT_MEMEX_HOME"])) == {}
    r = run_cli("add", "-", input=body)  # `add` reads its text from stdin: the same rule, exit 1
    assert r.code == 1 and "the limit is 65,536 bytes (64 KiB)" in r.err, (r.code, r.err)
    one_sentence(r.err)


def test_frontmatter_text_over_the_limit_is_refused_before_anything_masks_it(repo: Path, tmp_path: Path,
                                                                              other_machine) -> None:
    doc = _good_bundle(repo, tmp_path)
    doc["memories"][0]["frontmatter"]["notes"] = f"{SECRET} " + "n" * 70_000
    big = tmp_path / "big-field.json"
    big.write_text(json.dumps(doc))
    r = imp(str(big), env=other_machine)
    assert r.code == 2, (r.out, r.err)
    one_sentence(r.err)
    assert "frontmatter holds more than 65,536 bytes of text" in r.err and SECRET not in r.err
    assert files_under(Path(other_machine["GIT_MEMEX_HOME"])) == {}


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_DATA bounds every allocation on Linux only")
def test_a_bundle_file_over_256_mib_is_refused_from_its_size_unread(tmp_path: Path) -> None:
    """A file over MAX_BUNDLE_BYTES (256 MiB, docs/bundle.md) is refused from its size: the process
    below may not allocate 160 MiB, so reading it into memory (as before) fails there."""
    import resource
    import subprocess

    big = tmp_path / "huge.json"
    with open(big, "wb") as fh:  # sparse: no disk used
        fh.truncate(300 * 1024 * 1024)

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (160 * 1024 * 1024, 160 * 1024 * 1024))

    r = subprocess.run([sys.executable, "-m", "git_memex", "import", str(big)], capture_output=True, text=True,
                       preexec_fn=small, cwd=tmp_path, timeout=120)
    assert r.returncode == 2, r.stderr
    one_sentence(r.stderr)
    assert "is larger than 256 MiB, so it is not a bundle; nothing was imported" in r.stderr

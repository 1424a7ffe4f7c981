"""`init` and `--uninstall` on the hook managers' files as people really leave them (issue 32,
an outside review of items 1, 2 and 14): links, empty files, folders where files go, broken
marker lines, CRLF files, a line commented out, keys with empty values. Each edit is checked
byte for byte, each refusal says why and changes nothing, and the notice every command prints
sees a scan that is not really there. These need no package registry: the files are the point
(the managers themselves run in tests/git/test_hook_manager_real.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model
from git_memex.git.hook import MARKER

from conftest import git, run_cli

MEM = ".ai/open-memex"
NOTICE = "are not checked for secrets"
BEGIN = "# >>> git-memex"
HUSKY_PACKAGE = json.dumps({"name": "app", "private": True, "scripts": {"prepare": "husky"},
                            "devDependencies": {"husky": "9.1.7"}}, indent=2) + "\n"
# husky 9's generated stub (`DIR/_/NAME`) and runner (`DIR/_/h`), as `husky` writes them
STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"'
RUNNER = ('#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\n'
          'i="${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh"\n[ -f "$i" ] && . "$i"\n'
          '[ "${HUSKY-}" = "0" ] && exit 0\nsh -e "$s" "$@"\n')


def husky_installed(work: Path, folder: str = ".husky") -> None:
    """What `npm install` leaves of husky 9 (its `prepare` run): the stubs and core.hooksPath."""
    stubs = work / folder / "_"
    stubs.mkdir(parents=True, exist_ok=True)
    (stubs / ".gitignore").write_text("*")
    (stubs / "h").write_text(RUNNER)
    for name in ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite"):
        (stubs / name).write_text(STUB)
        (stubs / name).chmod(0o755)
    git("config", "core.hooksPath", f"{folder}/_", cwd=work)


def committed_memory(work: Path) -> None:
    m = model.create("the staging database is db-stage-2", scope="project", review_state="approved")
    (work / MEM).mkdir(parents=True, exist_ok=True)
    (work / MEM / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    git("add", MEM, cwd=work)
    git("commit", "-q", "--no-verify", "-m", "a memory", cwd=work)


def notices(work: Path) -> list[str]:
    r = run_cli("list", cwd=work)
    assert r.code == 0, r.err
    return [line for line in r.err.splitlines() if NOTICE in line or "skip the secret scan" in line]


def init(work: Path, *extra: str) -> str:
    r = run_cli("init", "--yes", *extra, cwd=work)
    assert r.code == 0, r.err
    return r.out


def uninstall(work: Path) -> str:
    r = run_cli("init", "--uninstall", "--yes", cwd=work)
    assert r.code == 0, r.err
    return r.out


# ------------------------------------------------------------------ finding 12: links
def test_a_linked_managers_file_is_left_as_a_link_with_the_snippet(repo: Path):
    (repo / "shared").mkdir()
    (repo / "shared" / "pc.yaml").write_text("repos: []\n")
    (repo / ".pre-commit-config.yaml").symlink_to("shared/pc.yaml")
    (repo / "package.json").write_text(HUSKY_PACKAGE)
    (repo / "scripts").mkdir()
    (repo / "scripts" / "pc.sh").write_text("npm test\n")
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").symlink_to("../scripts/pc.sh")
    out = init(repo)
    for rel in (".pre-commit-config.yaml", ".husky/pre-commit"):
        assert (repo / rel).is_symlink(), rel  # still a link, its target untouched
        assert f"printed    {rel.split('/')[0] if rel.startswith('.pre') else 'husky'}" in out or \
            f"{rel}  (a symbolic link" in out, out
        assert f"{rel} was left alone (a symbolic link" in out, out
    assert (repo / "shared" / "pc.yaml").read_text() == "repos: []\n"
    assert (repo / "scripts" / "pc.sh").read_text() == "npm test\n"
    assert BEGIN in (repo / ".husky" / "pre-merge-commit").read_text()  # a plain file of its own: joined
    uninstall(repo)
    assert (repo / ".pre-commit-config.yaml").is_symlink() and (repo / ".husky" / "pre-commit").is_symlink()
    assert not (repo / ".husky" / "pre-merge-commit").exists()


# ------------------------------------------------------------------ finding 16: an empty file of theirs
@pytest.mark.parametrize("before", ["", "\n", "   \n\n"])
def test_an_empty_husky_file_that_was_there_stays_after_uninstall(repo: Path, before: str):
    (repo / "package.json").write_text(HUSKY_PACKAGE)
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text(before)
    init(repo)
    assert BEGIN in (repo / ".husky" / "pre-commit").read_text()
    uninstall(repo)
    assert (repo / ".husky" / "pre-commit").read_text() == before
    assert not (repo / ".husky" / "post-merge").exists()  # created by init, holding only our line: gone


# ------------------------------------------------------------------ finding 17: check before writing
def test_a_folder_where_a_hook_file_goes_stops_init_before_anything_changes(repo: Path):
    (repo / "package.json").write_text(HUSKY_PACKAGE)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "husky", cwd=repo)
    husky_installed(repo)
    (repo / ".husky" / "pre-merge-commit").mkdir()  # a folder where husky's hook file goes
    config = git("config", "--local", "--list", cwd=repo).stdout
    r = run_cli("init", "--yes", cwd=repo)
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert ".husky/pre-merge-commit is a folder" in r.err and "nothing was changed" in r.err, r.err
    assert "internal error" not in r.err
    assert git("status", "--porcelain", "--untracked-files=all", cwd=repo).stdout == ""  # no .ai/, no line
    assert git("config", "--local", "--list", cwd=repo).stdout == config
    assert sorted(p.name for p in (repo / ".husky").iterdir()) == ["_", "pre-merge-commit"]


# ------------------------------------------------------------------ finding 18: broken marker lines
def test_a_block_without_its_end_line_is_named_and_never_stacked(repo: Path):
    (repo / "package.json").write_text(HUSKY_PACKAGE)
    (repo / ".husky").mkdir()
    init(repo)
    hook = repo / ".husky" / "pre-commit"
    broken = "".join(x for x in hook.read_text().splitlines(keepends=True) if "<<< git-memex" not in x)
    hook.write_text(broken + "npm test\n")  # someone deleted our END line and added their own below
    before = hook.read_bytes()
    r = run_cli("init", "--uninstall", "--yes", cwd=repo)
    assert r.code == 0 and "kept       husky .husky/pre-commit" in r.out, r.out
    assert "no `# <<< git-memex` line closes" in r.out, r.out
    assert "updated    husky .husky/pre-commit" not in r.out  # nothing claimed that was not done
    assert hook.read_bytes() == before
    out = init(repo)
    assert "printed    husky .husky/pre-commit" in out and "marker lines are broken" in out, out
    assert hook.read_bytes() == before and hook.read_text().count(BEGIN) == 1  # no second block


# ------------------------------------------------------------------ finding 19: what the notice sees
def test_a_commented_out_husky_line_is_no_scan(repo: Path):
    (repo / "package.json").write_text(HUSKY_PACKAGE)
    husky_installed(repo)
    init(repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "set up", cwd=repo)
    committed_memory(repo)
    assert notices(repo) == []
    hook = repo / ".husky" / "pre-commit"
    hook.write_text("".join("# " + x if x.startswith("sh -c") else x for x in hook.read_text().splitlines(True)))
    said = notices(repo)
    assert len(said) == 1 and ".husky/pre-commit" in said[0] and "commented-out" in said[0], said
    checks = [c for c in run_cli("doctor", "--json", cwd=repo).json()["checks"] if c["name"] == "git hooks"]
    assert checks[0]["level"] == "fail" and "pre-commit" in checks[0]["detail"], checks
    init(repo)  # puts our line back
    assert notices(repo) == []
    (repo / ".husky" / "pre-merge-commit").unlink()  # deleted: merges go unchecked
    said = notices(repo)
    assert len(said) == 1 and ".husky/pre-merge-commit, which does not exist" in said[0], said


def test_a_hand_hook_that_mentions_git_memex_in_a_comment_is_no_scan(repo: Path):
    committed_memory(repo)
    hooks = repo / ".git" / "hooks"
    for name in ("pre-commit", "pre-merge-commit"):
        (hooks / name).write_text("#!/bin/sh\n# TODO: run git-memex hook pre-commit here\nexit 0\n")
        (hooks / name).chmod(0o755)
    said = notices(repo)
    assert len(said) == 1 and "does not run git-memex" in said[0], said
    for name in ("pre-commit", "pre-merge-commit"):  # the line itself, uncommented: reached
        (hooks / name).write_text(f"#!/bin/sh\nexec git-memex hook {name}\n")
    assert notices(repo) == []


# ------------------------------------------------------------------ finding 20: CRLF files
LEFTHOOK_CRLF = "pre-commit:\r\n  commands:\r\n    lint:\r\n      run: echo lint\r\n"
FRAMEWORK_CRLF = "repos:\r\n- repo: local\r\n  hooks:\r\n  - id: lint\r\n    name: lint\r\n    entry: 'true'\r\n" \
                 "    language: system\r\n"


@pytest.mark.parametrize(("rel", "text"), [("lefthook.yml", LEFTHOOK_CRLF), (".pre-commit-config.yaml", FRAMEWORK_CRLF)])
def test_a_crlf_file_keeps_its_line_ending(repo: Path, rel: str, text: str):
    (repo / rel).write_bytes(text.encode())
    out = init(repo)
    assert f"updated    {'lefthook' if rel.startswith('lefthook') else 'pre-commit'} {rel}" in out, out
    data = (repo / rel).read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b"git-memex" in data  # every line CRLF, ours too
    assert init(repo).endswith("already set up; nothing changed\n")
    uninstall(repo)
    assert (repo / rel).read_bytes() == text.encode()


# ------------------------------------------------------------------ finding 6: empty values, duplicate keys
@pytest.mark.parametrize("value", ["{}", "~", "null", "{ }   # nothing yet"])
def test_a_lefthook_key_with_an_empty_value_is_replaced_and_given_back(repo: Path, value: str):
    import yaml

    text = f"pre-commit:\n  commands:\n    lint:\n      run: echo lint\npost-checkout: {value}\n"
    (repo / "lefthook.yml").write_text(text)
    out = init(repo)
    assert "updated    lefthook lefthook.yml" in out, out
    new = (repo / "lefthook.yml").read_text()
    assert [x for x in new.splitlines() if x.startswith("post-checkout:")] == ["post-checkout:"]  # one key
    doc = yaml.safe_load(new)
    assert doc["post-checkout"]["commands"]["git-memex"]["run"].startswith("sh -c '")
    uninstall(repo)
    assert (repo / "lefthook.yml").read_text() == text


def test_a_lefthook_file_with_a_key_twice_is_left_alone(repo: Path):
    text = "pre-commit:\n  commands:\n    lint:\n      run: echo lint\npre-commit:\n  parallel: true\n"
    (repo / "lefthook.yml").write_text(text)
    out = init(repo)
    assert "printed    lefthook lefthook.yml" in out and "given twice" in out, out
    assert (repo / "lefthook.yml").read_text() == text


# ------------------------------------------------------------------ finding 1: a mention is not a hook
@pytest.mark.parametrize("mention", ["# memex-secrets: see the wiki\n", "ci:\n  skip: [memex-secrets]\n",
                                     "repos:\n- repo: local\n  hooks:\n  - id: memex-secrets\n    name: later\n"
                                     "    entry: 'true'\n    language: system\n    stages: [manual]\n"])
def test_a_mention_of_memex_secrets_is_not_the_scan(repo: Path, mention: str):
    text = mention + ("repos: []\n" if "repos:" not in mention else "")
    (repo / ".pre-commit-config.yaml").write_text(text)
    out = init(repo)
    assert "unchanged  pre-commit" not in out and "your memex-secrets hook runs the check" not in out, out
    assert ("updated    pre-commit .pre-commit-config.yaml" in out
            or "printed    pre-commit .pre-commit-config.yaml" in out), out
    committed_memory(repo)
    pre_commit = (repo / ".git" / "hooks" / "pre-commit").read_text()
    assert MARKER in pre_commit  # no framework hook installed here: our shim guards
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/usr/bin/env python3\n# pre-commit.com\nimport pre_commit\n")
    (repo / ".git" / "hooks" / "pre-commit").chmod(0o755)  # the framework's hook, as `pre-commit install` writes it
    if "updated" in out:
        assert notices(repo) == []
        (repo / ".pre-commit-config.yaml").write_text(text)  # our entry gone again: only the mention is left
    said = notices(repo)
    assert len(said) == 1 and ".pre-commit-config.yaml has no memex-secrets hook" in said[0], said


# ------------------------------------------------------------------ finding 2: husky's own folder
def test_husky_in_a_folder_of_its_own_is_joined_there(repo: Path):
    package = json.loads(HUSKY_PACKAGE)
    package["scripts"]["prepare"] = "husky .config/husky"
    (repo / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    (repo / ".config" / "husky").mkdir(parents=True)
    (repo / ".config" / "husky" / "pre-commit").write_text("npm test\n")
    out = init(repo)  # before npm install: found from the prepare script
    assert "updated    husky .config/husky/pre-commit" in out and not (repo / ".husky").exists(), out
    uninstall(repo)
    assert (repo / ".config" / "husky" / "pre-commit").read_text() == "npm test\n"
    husky_installed(repo, ".config/husky")  # after npm install: found from core.hooksPath
    committed_memory(repo)
    said = notices(repo)
    assert len(said) == 1 and "husky runs .config/husky/pre-commit, which has no git-memex line" in said[0], said
    out = init(repo)
    assert "updated    husky .config/husky/pre-commit" in out, out
    assert "chains" not in out and git("config", "core.hooksPath", cwd=repo).stdout.strip() == ".config/husky/_"
    assert notices(repo) == []


# ------------------------------------------------------------------ finding 8: switched off on purpose
def test_husky_switched_off_is_named(repo: Path, monkeypatch: pytest.MonkeyPatch):
    (repo / "package.json").write_text(HUSKY_PACKAGE)
    husky_installed(repo)
    init(repo)
    committed_memory(repo)
    assert notices(repo) == []
    init_sh = Path(os.environ["HOME"]) / ".config" / "husky" / "init.sh"
    init_sh.parent.mkdir(parents=True)
    init_sh.write_text("export HUSKY=0\n")
    said = notices(repo)
    assert len(said) == 1 and f"{init_sh} sets HUSKY=0" in said[0], said
    checks = [c for c in run_cli("doctor", "--json", cwd=repo).json()["checks"] if c["name"] == "git hooks"]
    assert [c["level"] for c in checks] == ["ok", "warn"] and "HUSKY=0" in checks[1]["detail"], checks
    init_sh.unlink()
    monkeypatch.setenv("HUSKY", "0")
    said = notices(repo)
    assert len(said) == 1 and "HUSKY=0 is set in this environment" in said[0], said


# ------------------------------------------------------------------ finding 5: stage names
@pytest.mark.parametrize(("default_stages", "ours"), [
    (None, None),  # no key: the entry runs at every hook type installed, the program skips the others
    ("[commit, merge-commit]", None),  # both commit stages run by default
    ("[commit, push]", ["commit", "merge-commit"]),  # the old spelling: a framework before 3.2
    ("[pre-push]", ["pre-commit", "pre-merge-commit"]),
])
def test_the_entry_names_stages_only_where_default_stages_leaves_a_commit_out(
        repo: Path, default_stages: str | None, ours: list[str] | None):
    import yaml

    head = f"default_stages: {default_stages}\n" if default_stages else ""
    (repo / ".pre-commit-config.yaml").write_text(head + "repos:\n- repo: local\n  hooks:\n  - id: lint\n"
                                                  "    name: lint\n    entry: 'true'\n    language: system\n")
    init(repo)
    doc = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    (hook,) = [h for r in doc["repos"] for h in r["hooks"] if h["id"] == "memex-secrets"]
    assert hook.get("stages") == ours, hook
    assert doc["default_install_hook_types"] == ["pre-commit", "pre-merge-commit"]


def test_the_frameworks_skip_is_named(repo: Path, monkeypatch: pytest.MonkeyPatch):
    (repo / ".pre-commit-config.yaml").write_text("repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n"
                                                  "    entry: 'true'\n    language: system\n")
    init(repo)
    committed_memory(repo)
    for name in ("pre-commit", "pre-merge-commit"):  # the framework's hooks, as `pre-commit install` writes them
        (repo / ".git" / "hooks" / name).write_text("#!/usr/bin/env python3\n# pre-commit.com\nimport pre_commit\n")
        (repo / ".git" / "hooks" / name).chmod(0o755)
    assert notices(repo) == []
    monkeypatch.setenv("SKIP", "lint,memex-secrets")
    said = notices(repo)
    assert len(said) == 1 and "SKIP names memex-secrets in this environment" in said[0], said


def test_a_lefthook_command_of_theirs_named_git_memex_is_left_alone(repo: Path):
    text = 'pre-commit:\n  commands:\n    "git-memex":\n      run: echo my own\n'
    (repo / "lefthook.yml").write_text(text)
    out = init(repo)
    assert "printed    lefthook lefthook.yml" in out and "a command named git-memex that init did not write" in out
    assert (repo / "lefthook.yml").read_text() == text


@pytest.mark.parametrize("text", [
    "# only a comment",  # no `repos:` and no newline at the end: both our blocks are appended
    "repos:\n  - repo: local\n    hooks:\n      - id: b\n        name: b\n        language: system\n"
    "        entry: |+\n          echo b\n\n\n",  # a `|+` scalar last keeps the blank lines after it
])
def test_framework_files_init_must_follow(repo: Path, text: str):
    from git_memex.git.reach import framework_has

    (repo / ".pre-commit-config.yaml").write_text(text)
    assert "updated    pre-commit .pre-commit-config.yaml" in init(repo)
    assert framework_has((repo / ".pre-commit-config.yaml").read_text())
    assert "unchanged  pre-commit .pre-commit-config.yaml" in init(repo)
    uninstall(repo)
    assert (repo / ".pre-commit-config.yaml").read_text() == text

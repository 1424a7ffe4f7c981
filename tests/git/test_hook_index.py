"""The pre-commit and pre-merge-commit hooks check what the commit records, under real git.

`git commit -a`, `git commit -- PATHS`, `-i` and `-o` stage into a temporary index and name it
in GIT_INDEX_FILE for the hook; `.git/index` still holds the old content then. Each commit form
below is made by git itself in a repository where `git memex init` installed the hooks, with
each kind of bad memory: a secret, broken frontmatter, a personal memory, conflict markers.

What git runs (measured with git 2.39): pre-commit for `git commit` in every form (also after
`merge --squash`, `cherry-pick -n`, a conflicted merge, and `cherry-pick --continue` after a
conflict); pre-merge-commit for a merge that commits by itself. A plain `cherry-pick`, `rebase`
and `rebase --continue` run neither, so a commit they copy is checked only where it was first
made; a commit made while a rebase is stopped (`edit`) is a normal `git commit` and is checked.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git, run_cli

MEM = ".ai/open-memex"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
KINDS = {
    "secret": "github-pat",
    "frontmatter": "invalid-frontmatter",
    "personal": "personal-memory-in-repo",
    "conflict": "conflict-markers",
}


def memory_text(body: str) -> tuple[str, str]:
    m = model.create(body, scope="project", review_state="proposed")
    return m.id, frontmatter.serialize(m.fm, m.body)


def spoil(text: str, kind: str) -> str:
    if kind == "secret":
        return text.rstrip("\n") + f"\nThe release bot uses {SECRET}.\n"
    if kind == "frontmatter":
        return text.replace("\nid: ", "\nid: [broken ", 1)
    if kind == "conflict":
        return text.replace("The changelog is generated.\n", "<<<<<<< ours\nThe changelog is generated.\n"
                            "=======\nThe changelog is written by hand.\n>>>>>>> theirs\n")
    assert "\nscope: project\n" in text
    return text.replace("\nscope: project\n", "\nscope: personal\n", 1)


@pytest.fixture
def memrepo(repo: Path) -> tuple[Path, str, str]:
    """A repository set up by `git memex init` with one good memory committed: (work, rel, text)."""
    assert run_cli("init", "--yes").code == 0
    mid, text = memory_text("Releases are tagged from main.\nThe changelog is generated.")
    rel = f"{MEM}/{mid}.md"
    (repo / rel).write_text(text)
    (repo / "other.txt").write_text("one\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "set up", cwd=repo)
    return repo, rel, text


def head(work: Path) -> str:
    return git("rev-parse", "HEAD", cwd=work).stdout.strip()


def side_branch_with(work: Path, rel: str, text: str, *, other: str | None = None) -> None:
    """Branch `side` commits `text` at rel with --no-verify (someone skipped the hook); main then
    diverges (changing other.txt to `other` when given, so that a pick of side conflicts)."""
    git("checkout", "-q", "-b", "side", cwd=work)
    (work / rel).write_text(text)
    if other is not None:
        (work / "other.txt").write_text("side\n")
    git("commit", "-q", "--no-verify", "-am", "side", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    (work / "other.txt").write_text(other if other is not None else "main\n")
    (work / "main.txt").write_text("main\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "main moves on", cwd=work)


Outcome = tuple[subprocess.CompletedProcess[str], str]  # the committing command, HEAD before it


def _edit_then(*args: str):
    def form(work: Path, rel: str, bad: str) -> Outcome:
        (work / rel).write_text(bad)
        (work / "other.txt").write_text("two\n")
        if "-i" in args:
            git("add", "other.txt", cwd=work)
        return git(*[rel if a == "PATH" else a for a in args], cwd=work, check=False), head(work)

    return form


def _squash(work: Path, rel: str, bad: str) -> Outcome:
    side_branch_with(work, rel, bad)
    git("merge", "-q", "--squash", "side", cwd=work)
    return git("commit", "-q", "-m", "squashed", cwd=work, check=False), head(work)


def _cherry_pick_n(work: Path, rel: str, bad: str) -> Outcome:
    side_branch_with(work, rel, bad)
    git("cherry-pick", "-n", "side", cwd=work)
    return git("commit", "-q", "-m", "picked", cwd=work, check=False), head(work)


def _cherry_pick_continue(work: Path, rel: str, bad: str) -> Outcome:
    side_branch_with(work, rel, bad, other="main\n")
    assert git("cherry-pick", "side", cwd=work, check=False).returncode != 0  # other.txt conflicts
    (work / "other.txt").write_text("both\n")
    git("add", "other.txt", cwd=work)
    before = head(work)
    return subprocess.run(["git", "cherry-pick", "--continue"], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "GIT_EDITOR": "true"}, check=False), before


def _rebase_edit_amend(work: Path, rel: str, bad: str) -> Outcome:
    (work / "third.txt").write_text("3\n")
    git("add", "third.txt", cwd=work)
    git("commit", "-q", "-m", "third", cwd=work)
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i '1s/^pick/edit/'"}
    r = subprocess.run(["git", "rebase", "-q", "-i", "HEAD~1"], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (work / rel).write_text(bad)
    return git("commit", "-q", "--amend", "-a", "--no-edit", cwd=work, check=False), head(work)


def _merge(work: Path, rel: str, bad: str) -> Outcome:
    side_branch_with(work, rel, bad)
    return git("merge", "--no-edit", "side", cwd=work, check=False), head(work)  # pre-merge-commit


FORMS = {
    "commit -a": _edit_then("commit", "-q", "-am", "x"),
    "commit -- path": _edit_then("commit", "-q", "-m", "x", "--", "PATH"),
    "commit -i path": _edit_then("commit", "-q", "-i", "-m", "x", "--", "PATH"),
    "commit -o path": _edit_then("commit", "-q", "-o", "-m", "x", "--", "PATH"),
    "commit --amend -a": _edit_then("commit", "-q", "--amend", "-a", "--no-edit"),
    "merge --squash + commit": _squash,
    "cherry-pick -n + commit": _cherry_pick_n,
    "cherry-pick --continue": _cherry_pick_continue,
    "rebase -i edit + commit --amend -a": _rebase_edit_amend,
    "merge (pre-merge-commit)": _merge,
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("form_name", list(FORMS))
def test_every_commit_form_checks_what_it_records(memrepo, form_name: str, kind: str):
    work, rel, text = memrepo
    r, before = FORMS[form_name](work, rel, spoil(text, kind))
    out = r.stdout + r.stderr
    assert r.returncode != 0, f"{form_name} committed a memory with {kind}: {out}"
    assert f"{rel}:" in out and KINDS[kind] in out, out
    assert ("(secrets are never shown)" in out) == (kind == "secret"), out
    assert SECRET not in out
    assert head(work) == before, f"{form_name} made a commit"


@pytest.mark.parametrize("args", [("commit", "-q", "-am", "x"), ("commit", "-q", "-m", "x", "--", "PATH")])
def test_a_good_edit_commits_through_the_temporary_index(memrepo, args):
    work, rel, text = memrepo
    (work / rel).write_text(text.replace("is generated.", "is generated by the release job."))
    r = git(*[rel if a == "PATH" else a for a in args], cwd=work, check=False)
    assert r.returncode == 0, r.stderr
    assert git("status", "--porcelain", "--", rel, cwd=work).stdout == ""


def test_a_commit_without_memory_files_is_never_blocked(memrepo):
    """A bad memory already in history (--no-verify) does not block commits that do not touch it."""
    work, rel, text = memrepo
    (work / rel).write_text(spoil(text, "frontmatter"))
    git("commit", "-q", "--no-verify", "-am", "skipped the hook", cwd=work)
    (work / "other.txt").write_text("three\n")
    r = git("commit", "-q", "-am", "unrelated", cwd=work, check=False)
    assert r.returncode == 0, r.stderr
    # ... and the hook's check of such a commit stays light: no libgit2, YAML or detect-secrets
    probe = ("import sys; from git_memex.git import hook; rc = hook.run('pre-commit', []); "
             "print(rc, sorted(m for m in ('pygit2', 'yaml', 'detect_secrets') if m in sys.modules))")
    (work / "other.txt").write_text("four\n")
    git("add", "other.txt", cwd=work)
    p = subprocess.run([sys.executable, "-c", probe], cwd=work, capture_output=True, text=True, check=False)
    assert p.stdout.strip() == "0 []", p.stdout + p.stderr


def test_scan_staged_reads_the_index_git_index_file_names(memrepo, tmp_path: Path):
    work, rel, text = memrepo
    (work / rel).write_text(spoil(text, "secret"))
    temp_index = tmp_path / "next-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(temp_index)}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=work, env=env, check=True)
    subprocess.run(["git", "add", rel], cwd=work, env=env, check=True)
    r = run_cli("scan", "--staged", env={"GIT_INDEX_FILE": str(temp_index)})
    assert r.code == 1 and f"{rel}:" in r.out and "github-pat" in r.out and SECRET not in r.out
    assert run_cli("scan", "--staged").code == 0  # the repository's own index holds the good file
    # git reads a relative GIT_INDEX_FILE against the work tree root (it gives hooks `.git/index`),
    # also when started in a subfolder
    (work / "sub").mkdir()
    rel_index = os.path.relpath(temp_index, work)
    r = run_cli("scan", "--staged", cwd=work / "sub", env={"GIT_INDEX_FILE": rel_index})
    assert r.code == 1 and "github-pat" in r.out, r.out + r.err


def test_pre_commit_framework_sees_commit_a(memrepo):
    """The framework's hooks (.pre-commit-hooks.yaml) get the files the commit records, also for
    `git commit -a`; `scan` reads them from the work tree, which then holds exactly that."""
    import yaml

    work, rel, text = memrepo
    hooks = yaml.safe_load((Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text())
    exe = str(Path(sys.executable).with_name("git-memex"))
    local = [{"id": h["id"], "name": h["name"], "entry": shlex.quote(exe) + h["entry"].removeprefix("git-memex"),
              "language": "system", "files": h["files"]} for h in hooks]
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    git("add", ".pre-commit-config.yaml", cwd=work)
    git("commit", "-q", "-m", "framework", cwd=work)
    pre_commit = str(Path(sys.executable).with_name("pre-commit"))
    env = {**os.environ, "PRE_COMMIT_HOME": str(work.parent / "pc-home")}
    subprocess.run([pre_commit, "install", "-f"], cwd=work, env=env, check=True, capture_output=True)
    (work / rel).write_text(spoil(text, "secret"))
    r = subprocess.run(["git", "commit", "-am", "x"], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "github-pat" in r.stdout + r.stderr, r.stdout + r.stderr
    (work / rel).write_text(spoil(text, "personal"))
    r = subprocess.run(["git", "commit", "-m", "x", "--", rel], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "personal-memory-in-repo" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("kind", ["good", "secret"])
def test_the_first_commit_of_a_repository_is_checked(tmp_path: Path, monkeypatch, kind: str):
    work = tmp_path / "fresh"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    monkeypatch.chdir(work)
    assert run_cli("init", "--yes").code == 0
    mid, text = memory_text("The first memory of this repository.")
    (work / MEM / f"{mid}.md").write_text(text if kind == "good" else spoil(text, kind))
    git("add", "-A", cwd=work)
    r = git("commit", "-q", "-m", "first", cwd=work, check=False)
    assert (r.returncode == 0) == (kind == "good"), r.stderr
    if kind != "good":
        assert "github-pat" in r.stderr and "unborn" not in r.stderr


def test_commit_a_in_a_linked_worktree_is_checked(memrepo, tmp_path: Path):
    work, rel, text = memrepo
    other = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "other", str(other), cwd=work)
    (other / rel).write_text(spoil(text, "secret"))
    r = git("commit", "-q", "-am", "x", cwd=other, check=False)
    assert r.returncode == 1 and f"{rel}:" in r.stderr and "github-pat" in r.stderr, r.stderr
    (other / rel).write_text(text.replace("is generated.", "is generated weekly."))
    assert git("commit", "-q", "-am", "x", cwd=other, check=False).returncode == 0


def test_an_intent_to_add_memory_is_not_part_of_the_commit(memrepo):
    """`git add -N` records an empty placeholder that a plain `git commit` leaves out."""
    work, rel, _text = memrepo
    draft = work / MEM / "01JHFQ8PMWKVX6KGZH2MXR6QJA.md"
    draft.write_text("half written\n")
    git("add", "-N", str(draft), cwd=work)
    (work / "other.txt").write_text("two\n")
    git("add", "other.txt", cwd=work)
    r = git("commit", "-q", "-m", "other", cwd=work, check=False)
    assert r.returncode == 0, r.stderr
    assert git("show", "--name-only", "--format=", "HEAD", cwd=work).stdout.split() == ["other.txt"]

"""The memory folder a teammate chose travels with the repository (docs/git.md): `config set
memex.memoryDir` (and `init` for a folder set only in this clone's config) writes the committed
`.gitmemex`; a fresh clone reads it; this clone's own config may still override it; `doctor`
flags a second memory folder."""

from __future__ import annotations

from pathlib import Path

from conftest import git, run_cli, run_cli_process

DIR = "team/memories"


def test_a_fresh_clone_uses_the_committed_memory_folder(tmp_path: Path):
    remote = tmp_path / "shared.git"
    git("init", "-q", "--bare", "-b", "main", str(remote))
    alice = tmp_path / "alice"
    git("clone", "-q", str(remote), str(alice))
    (alice / "README.md").write_text("demo\n")
    git("add", "README.md", cwd=alice)
    git("commit", "-q", "-m", "init", cwd=alice)
    r = run_cli("config", "set", "memex.memoryDir", DIR, cwd=alice)
    assert r.code == 0, r.err
    assert run_cli("init", "--yes", cwd=alice).code == 0
    assert (alice / DIR).is_dir() and not (alice / ".ai" / "open-memex").exists()
    d = run_cli("add", "the staging database is reset every monday", "--json", cwd=alice).json()["id"]
    assert run_cli("submit", d, cwd=alice).code == 0
    git("add", "-A", cwd=alice)
    git("commit", "-q", "-m", "set up git-memex", cwd=alice)
    git("push", "-q", "origin", "main", cwd=alice)

    bob = tmp_path / "bob"
    git("clone", "-q", str(remote), str(bob))
    got = run_cli("config", "get", "memex.memoryDir", cwd=bob)
    assert got.code == 0 and got.out.strip() == DIR
    hits = run_cli("search", "staging database", "--json", cwd=bob).json()["hits"]
    assert [h["id"] for h in hits] == [d]
    assert run_cli("init", "--yes", cwd=bob).code == 0
    assert not (bob / ".ai" / "open-memex").exists()  # no second folder
    assert git("status", "--porcelain", cwd=bob).stdout == ""
    # this clone's own config still overrides the committed file, and doctor names the second folder
    git("config", "memex.memoryDir", "mine", cwd=bob)
    assert run_cli("config", "get", "memex.memoryDir", cwd=bob).out.strip() == "mine"
    doc = run_cli("doctor", cwd=bob)
    assert "two memory folders" in doc.out + doc.err, doc.out


def test_doctor_flags_memories_left_in_the_default_folder(ready: Path):
    d = run_cli("add", "the deploy key rotates quarterly", "--json").json()["id"]
    assert run_cli("submit", d).code == 0
    assert run_cli("config", "set", "memex.memoryDir", DIR).code == 0
    assert (ready / ".gitmemex").is_file() and git("config", "--local", "--get", "memex.memoryDir",
                                                    cwd=ready, check=False).returncode == 1
    doc = run_cli("doctor")
    assert "two memory folders" in doc.out + doc.err and ".ai/open-memex" in doc.out + doc.err


def test_a_committed_memory_folder_that_is_a_file_is_one_sentence(repo: Path):
    (repo / ".gitmemex").write_text("[memex]\n\tmemoryDir = README.md\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "hostile setting", cwd=repo)
    r = run_cli("init", "--yes")
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert r.code == 2 and len(lines) == 1 and "is a file" in lines[0] and "Traceback" not in r.err
    assert git("status", "--porcelain", cwd=repo).stdout == ""


BAD_FOLDERS = ['a"b', "a#b", "a;b", "notes[1]", "a*b", "a?b", "a\tb", "a\u200bb", "x /y"]


def test_a_folder_git_config_or_a_pathspec_cannot_hold_as_written_is_refused(ready: Path):
    """`config set` writes `.gitmemex` unquoted, and the hooks read it with `git config -f` and put
    it in a `:(glob)` pathspec: `"` broke the file, `#`/`;` cut the value short for git alone,
    `*?[]` matched other folders."""
    for value in BAD_FOLDERS:
        r = run_cli_process("config", "set", "memex.memoryDir", value)
        assert r.code == 1, (value, r.out, r.err)
        assert r.err.count("\n") == 1 and "refused" in r.err and "Traceback" not in r.err, r.err
        assert not (ready / ".gitmemex").exists(), value
    ok = run_cli_process("config", "set", "memex.memoryDir", "team notes/memories")
    assert ok.code == 0, ok.err
    assert git("config", "-f", ".gitmemex", "memex.memoryDir", cwd=ready).stdout.strip() == "team notes/memories"


HAND_WRITTEN = [
    "notes # a comment", "notes; a comment", '"team notes"/mem', "team   notes", 'a\\"b', "plain\\tx",
    '"open', "bad\\qescape", '"quoted; not a comment"', "  spaced  ", "a\\\\b",
]


def test_a_hand_written_committed_folder_reads_as_git_reads_it(repo: Path):
    """`read_team_file` names the folder `git config -f .gitmemex` names (the hooks' reading) for
    any hand-written value: comments, quotes, escapes, whitespace, and a line git refuses."""
    from git_memex.core.settings import git_config_value

    for raw in HAND_WRITTEN:
        (repo / ".gitmemex").write_text(f"[memex]\n\tmemoryDir = {raw}\n")
        r = git("config", "-f", ".gitmemex", "memex.memoryDir", cwd=repo, check=False)
        want = r.stdout[:-1] if r.returncode == 0 else ""
        assert git_config_value(raw) == want, (raw, want)

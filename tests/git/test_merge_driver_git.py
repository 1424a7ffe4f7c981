"""The merge driver under real git: `.gitattributes` + `merge.memex.driver`, two branches, `git merge`.

Environment isolation (HOME, GIT_CONFIG_GLOBAL, author/committer) comes from the autouse
fixture in conftest.py; the driver runs as git runs it: a shell command in a new process.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memex.core.frontmatter import parse, serialize
from git_memex.git.merge import merge3_lines

ROOT = Path(__file__).resolve().parents[2]
MID = "01JHFQ8PMWKVX6KGZH2MXR6QJA"
REL = f".ai/open-memex/{MID}.md"
DIRECT = "import sys; from git_memex.commands.merge_driver import main; raise SystemExit(main(sys.argv[1:]))"


@pytest.fixture(autouse=True)
def _isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """conftest.py isolates too; repeated here so these tests never touch a real git config."""
    home = tmp_path_factory.mktemp("git-home")
    cfg = home / ".gitconfig"
    cfg.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    for key, value in {
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": str(cfg),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test User",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test User",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }.items():
        monkeypatch.setenv(key, value)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)


def driver_argv() -> list[str]:
    """The command git runs: `python -m git_memex merge-driver` (the real wiring in main.py)."""
    if (ROOT / "git_memex" / "main.py").exists():
        return [sys.executable, "-m", "git_memex", "merge-driver"]
    return [sys.executable, "-c", DIRECT]  # before main.py existed


def _env() -> dict[str, str]:
    pp = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + pp if pp else "")}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=check, env=_env()
    )


BASE_FM: dict[str, Any] = {
    "id": MID,
    "schema_version": 2,
    "revision": 1,
    "scope": "project",
    "visibility": "internal",
    "type": "decision",
    "status": "active",
    "review_state": "proposed",
    "created_at": "2026-03-01T09:00:00Z",
    "updated_at": "2026-03-01T09:00:00Z",
    "tags": ["db", "postgres"],
    "review_history": [{"at": "2026-03-01T09:00:00Z", "by": "alice", "action": "proposed"}],
}
BODY = "Use sqitch for migrations.\n\nEach change has deploy, revert and verify scripts.\n\nRollbacks run in CI.\n"


def memory(body: str = BODY, **changes: Any) -> str:
    return serialize({**BASE_FM, **changes}, body)


@pytest.fixture
def mrepo(repo: Path) -> Path:
    """A repo with the memex merge driver registered and one memory file committed on main."""
    cmd = " ".join(shlex.quote(a) for a in driver_argv())
    git(repo, "config", "merge.memex.name", "git-memex memory merge")
    git(repo, "config", "merge.memex.driver", f"{cmd} %O %A %B %P")
    (repo / ".gitattributes").write_text(".ai/open-memex/*.md merge=memex\n")
    write(repo, memory())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    return repo


def write(repo: Path, text: str | bytes, rel: str = REL) -> None:
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8", newline="")


def branches(repo: Path, ours: str | bytes, theirs: str | bytes) -> None:
    """`feature` commits theirs, `main` commits ours; main is checked out afterwards."""
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, theirs)
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    write(repo, ours)
    git(repo, "commit", "-q", "-am", "ours")


def test_fields_both_sides_changed_merge_clean(mrepo: Path) -> None:
    # Both sides append a tag, bump updated_at/revision and append a review entry: every one of
    # those is a line-level conflict for plain git, and a clean field merge for the driver.
    ours = memory(
        tags=["db", "postgres", "sqitch"],
        revision=2,
        updated_at="2026-03-03T10:00:00Z",
        review_state="approved",
        review_history=[
            *BASE_FM["review_history"],
            {"at": "2026-03-03T10:00:00Z", "by": "bob", "action": "approved"},
        ],
    )
    theirs = memory(
        body=BODY.replace("Rollbacks run in CI.", "Rollbacks run in CI, nightly."),
        tags=["db", "postgres", "ci"],
        revision=2,
        updated_at="2026-03-02T10:00:00Z",
        review_history=[
            *BASE_FM["review_history"],
            {"at": "2026-03-02T10:00:00Z", "by": "carol", "action": "commented"},
        ],
    )
    branches(mrepo, ours, theirs)
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert git(mrepo, "ls-files", "-u").stdout == ""
    fm, body = parse((mrepo / REL).read_text())
    assert fm["tags"] == ["db", "postgres", "sqitch", "ci"]
    assert fm["updated_at"] == "2026-03-03T10:00:00Z"
    assert fm["review_state"] == "approved"
    assert [e["by"] for e in fm["review_history"]] == ["alice", "carol", "bob"]
    assert "Rollbacks run in CI, nightly." in body
    assert git(mrepo, "status", "--porcelain").stdout == ""  # committed, nothing left over

    # The same histories without the driver: plain git cannot merge them.
    git(mrepo, "reset", "-q", "--hard", "HEAD~1")
    git(mrepo, "config", "--remove-section", "merge.memex")
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)  # git's own line merge
    assert r.returncode == 1
    assert "<<<<<<<" in (mrepo / REL).read_text()


def test_same_body_line_conflicts_with_both_sides(mrepo: Path) -> None:
    ours = memory(body=BODY.replace("Rollbacks run in CI.", "Rollbacks run in CI on every PR."))
    theirs = memory(
        body=BODY.replace("Rollbacks run in CI.", "Rollbacks run by hand."), importance="high"
    )
    branches(mrepo, ours, theirs)
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "fatal" not in r.stderr.lower()
    assert "git-memex merge-driver" in r.stderr and "conflict in body" in r.stderr
    text = (mrepo / REL).read_text()
    assert "Rollbacks run in CI on every PR.\n" in text and "Rollbacks run by hand.\n" in text
    assert "<<<<<<< ours\n" in text and "||||||| base\n" in text and ">>>>>>> theirs\n" in text
    assert "importance: high\n" in text  # the clean part of theirs is merged in
    stages = sorted(line.split()[2] for line in git(mrepo, "ls-files", "-u").stdout.splitlines())
    assert stages == ["1", "2", "3"]
    assert all(line.endswith(REL) for line in git(mrepo, "ls-files", "-u").stdout.splitlines())
    git(mrepo, "merge", "--abort")
    assert parse((mrepo / REL).read_text())[1] == ours.split("---\n\n", 1)[1].strip("\n")


def test_lifecycle_conflict_in_frontmatter(mrepo: Path) -> None:
    branches(mrepo, memory(status="deprecated"), memory(status="archived"))
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 1
    text = (mrepo / REL).read_text()
    assert (
        "<<<<<<< ours\nstatus: deprecated\n||||||| base\nstatus: active\n"
        "=======\nstatus: archived\n>>>>>>> theirs\n"
    ) in text
    assert len(git(mrepo, "ls-files", "-u").stdout.splitlines()) == 3


def test_garbage_content_is_a_plain_conflict_not_a_crash(mrepo: Path) -> None:
    branches(
        mrepo,
        b"not a memory\x00\xff\xfe\nours line\n",
        b"not a memory\x00\xff\xfe\ntheirs line\n",
    )
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "fatal" not in r.stderr.lower()
    assert "not a memory file" in r.stderr
    data = (mrepo / REL).read_bytes()
    assert b"ours line\n" in data and b"theirs line\n" in data and b"\x00\xff\xfe" in data
    assert len(git(mrepo, "ls-files", "-u").stdout.splitlines()) == 3


def test_garbage_that_merges_line_by_line_is_still_held_for_a_human(mrepo: Path) -> None:
    base = "# notes\none\ntwo\nthree\nfour\n"
    write(mrepo, base)
    git(mrepo, "commit", "-q", "-am", "plain")
    branches(mrepo, base.replace("one", "ONE"), base.replace("four", "FOUR"))
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 1
    assert (mrepo / REL).read_text() == "# notes\nONE\ntwo\nthree\nFOUR\n"


def test_add_add_merges_tags(repo: Path) -> None:
    cmd = " ".join(shlex.quote(a) for a in driver_argv())
    git(repo, "config", "merge.memex.driver", f"{cmd} %O %A %B %P")
    (repo / ".gitattributes").write_text(".ai/open-memex/*.md merge=memex\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attrs")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, memory(tags=["db", "ci"]))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "theirs")
    git(repo, "checkout", "-q", "main")
    write(repo, memory(tags=["db", "sqitch"]))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ours")
    r = git(repo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert parse((repo / REL).read_text())[0]["tags"] == ["db", "sqitch", "ci"]


def test_direct_module_entry_point_works_as_driver(mrepo: Path) -> None:
    """The driver module itself, without main.py: what `merge.memex.driver` could also name."""
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-c", DIRECT])
    git(mrepo, "config", "merge.memex.driver", f"{cmd} %O %A %B %P")
    branches(mrepo, memory(tags=["db", "postgres", "a"]), memory(tags=["db", "postgres", "b"]))
    r = git(mrepo, "merge", "--no-edit", "feature", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert parse((mrepo / REL).read_text())[0]["tags"] == ["db", "postgres", "a", "b"]


# --------------------------------------------------------------------------- the process itself


def run_driver(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*driver_argv(), *args], cwd=cwd, capture_output=True, env=_env(), timeout=60
    )


def _files(tmp: Path, base: bytes, ours: bytes, theirs: bytes) -> list[str]:
    paths = []
    for name, data in (("O", base), ("A", ours), ("B", theirs)):
        p = tmp / f".merge_file_{name}"
        p.write_bytes(data)
        paths.append(str(p))
    return paths


def test_driver_exit_codes_never_above_one(tmp_path: Path) -> None:
    good = memory().encode()
    cases: list[list[str]] = [
        [],
        ["only-one"],
        ["a", "b", "c", "d", "e"],
        [
            str(tmp_path / "missing-O"),
            str(tmp_path / "missing-A"),
            str(tmp_path / "missing-B"),
            REL,
        ],
        [str(tmp_path), str(tmp_path), str(tmp_path), REL],  # directories, not files
    ]
    inputs = [
        (good, good, good),
        (good, memory(status="deprecated").encode(), memory(status="archived").encode()),
        (b"", b"\x00\x01\x02", b"\xff\xfe\xfd"),
        (good, good[: len(good) // 2], good[len(good) // 3 :]),
        (b"---\n: : :\n---\n", b"---\n[\n---\n", b"---\n&a x: *a\n---\n"),
        (b"---\n" + b"k: " + b"[" * 5000 + b"\n---\n", good, good),
    ]
    for i, (b, o, t) in enumerate(inputs):
        d = tmp_path / f"in{i}"
        d.mkdir()
        cases.append([*_files(d, b, o, t), REL])
    for argv in cases:
        r = run_driver(*argv, cwd=tmp_path)
        assert r.returncode in (0, 1), (argv, r.returncode, r.stderr)
        assert b"Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.decode(errors="replace").strip().splitlines()) <= 1, r.stderr


def test_driver_usage_error_is_one_sentence(tmp_path: Path) -> None:
    r = run_driver("x", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.decode().startswith("git-memex merge-driver: expected 4 arguments")


def test_driver_missing_input_leaves_ours_untouched(tmp_path: Path) -> None:
    ours = tmp_path / "A"
    ours.write_bytes(b"keep me\n")
    r = run_driver(str(tmp_path / "nope"), str(ours), str(tmp_path / "nope2"), REL, cwd=tmp_path)
    assert r.returncode == 1
    assert ours.read_bytes() == b"keep me\n"
    assert r.stderr.decode().startswith(f"git-memex merge-driver: {REL}: cannot read")


def test_driver_writes_atomically_and_keeps_mode(tmp_path: Path) -> None:
    o, a, b = _files(
        tmp_path,
        memory().encode(),
        memory(tags=["db", "postgres", "x"]).encode(),
        memory(tags=["db", "postgres", "y"]).encode(),
    )
    os.chmod(a, 0o640)
    r = run_driver(o, a, b, REL, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert stat.S_IMODE(os.stat(a).st_mode) == 0o640
    assert parse(Path(a).read_text())[0]["tags"] == ["db", "postgres", "x", "y"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".merge_file_A",
        ".merge_file_B",
        ".merge_file_O",
    ]


def test_driver_preserves_invalid_bytes(tmp_path: Path) -> None:
    base = b"line one\nline two\n\xff\xfe raw\nline four\n"
    o, a, b = _files(
        tmp_path, base, base.replace(b"one", b"ONE"), base.replace(b"four", b"\x80FOUR")
    )
    r = run_driver(o, a, b, REL, cwd=tmp_path)
    assert r.returncode == 1
    assert Path(a).read_bytes() == b"line ONE\nline two\n\xff\xfe raw\nline \x80FOUR\n"


def test_driver_in_process_never_raises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from git_memex.commands.merge_driver import main

    assert main([]) == 1
    assert main([str(tmp_path)] * 3 + [REL]) == 1
    o, a, b = _files(tmp_path, b"x\n", b"y\n", b"z\n")
    assert main([o, a, b, REL]) == 1
    assert "<<<<<<< ours" in Path(a).read_text()


# --------------------------------------------------------------------------- git as the oracle

_OP = st.tuples(st.sampled_from(["edit", "insert", "delete"]), st.integers(0, 40))


def _mutate(lines: list[str], ops: list[tuple[str, int]], tag: str) -> list[str]:
    out = list(lines)
    for n, (op, pos) in enumerate(ops):
        i = pos % (len(out) + 1)
        if op == "insert":
            out.insert(i, f"{tag}{n}\n")
        elif out and op == "edit":
            out[min(i, len(out) - 1)] = f"{tag}{n}*\n"
        elif out:
            del out[min(i, len(out) - 1)]
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 15),
    st.lists(_OP, max_size=4),
    st.lists(_OP, max_size=4),
    st.booleans(),
)
def test_line_merge_matches_git_merge_file(
    n: int, ours_ops: list[tuple[str, int]], theirs_ops: list[tuple[str, int]], same: bool
) -> None:
    """With unambiguous (unique) lines, the body merge is exactly `git merge-file --diff3`."""
    base = [f"line {i}\n" for i in range(n)]
    ours = _mutate(base, ours_ops, "o")
    theirs = ours if same else _mutate(base, theirs_ops, "t")
    with tempfile.TemporaryDirectory() as d:
        for name, lines in (("b", base), ("o", ours), ("t", theirs)):
            Path(d, name).write_text("".join(lines))
        labels = ["-L", "ours", "-L", "base", "-L", "theirs"]
        p = subprocess.run(
            ["git", "merge-file", "-p", "--diff3", *labels, "o", "b", "t"],
            cwd=d,
            capture_output=True,
            text=True,
        )
    lines, clean = merge3_lines(base, ours, theirs)
    assert clean == (p.returncode == 0)
    assert "".join(lines) == p.stdout

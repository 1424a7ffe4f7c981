"""The pre-commit hook and `git memex scan` judge a staged memory file with the reader every
command uses (`core.files.judge_bytes`), so a commit the hook lets through is one `list` and
`doctor` read, and one they would quarantine is refused with the reader's reason. A file over the
size limit is refused from its blob's size, before its content is read; one that arrives by
`git pull` is named by its size alone. Real `git commit` / `git pull` running the hooks `git memex
init` installed."""

from __future__ import annotations

import base64
import os
import zlib
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git, run_cli, two_clones

MEM = ".ai/open-memex"


def memory_text(body: str = "Releases are tagged from main.") -> tuple[str, str]:
    m = model.create(body, scope="project", review_state="proposed")
    return m.id, frontmatter.serialize(m.fm, m.body)


def with_field(text: str, line: str) -> str:
    """`text` with one frontmatter line set as written (any earlier line of that key dropped)."""
    key = line.split(":", 1)[0]
    lines = [x for x in text.split("\n") if not x.startswith(key + ":")]
    lines.insert(2, line)
    return "\n".join(lines)


def index_reason(path: Path) -> str | None:
    """Why the index's own reader (`database._load`, what list, doctor and reindex use) leaves
    this file out; None when it reads it."""
    from git_memex.index.database import _load

    _raw, m, why = _load(path, None)
    return None if m is not None else why


READER_REFUSES = {
    "nested list": "tags: [[deploy]]",
    "negative revision": "revision: -1",
    "2,000 tags": "tags: [" + ", ".join(f"t{i}" for i in range(2000)) + "]",
    "20,000 tags": "tags: [" + ", ".join(f"t{i}" for i in range(20000)) + "]",
    "too many paths": "paths: [" + ", ".join(f"src/f{i}.py" for i in range(1001)) + "]",
    "too many aliases": "aliases: [" + ", ".join(f"a{i}" for i in range(1001)) + "]",
    "too many related": "related: [" + ", ".join(f"r{i}" for i in range(1001)) + "]",
    "long review_note": "review_note: " + "x" * 4097,
}


@pytest.mark.parametrize("kind", sorted(READER_REFUSES))
def test_a_commit_refuses_what_the_reader_would_quarantine(ready: Path, kind: str) -> None:
    mid, text = memory_text()
    rel = f"{MEM}/{mid}.md"
    (ready / rel).write_text(with_field(text, READER_REFUSES[kind]))
    reason = index_reason(ready / rel)
    assert reason, "the case must be one the reader quarantines"
    git("add", rel, cwd=ready)
    before = git("rev-parse", "HEAD", cwd=ready).stdout
    r = git("commit", "-q", "-m", "bad", cwd=ready, check=False)
    assert r.returncode == 1, r.stderr
    assert git("rev-parse", "HEAD", cwd=ready).stdout == before
    mine = [line for line in r.stderr.splitlines() if line.startswith(rel + ":")]
    assert len(mine) == 1 and reason in mine[0], r.stderr  # one line, the reader's reason
    assert "Traceback" not in r.stderr
    s = run_cli("scan", "--staged")
    assert s.code == 1 and reason in s.out, s.out + s.err
    s = run_cli("scan", rel)
    assert s.code == 1 and reason in s.out, s.out + s.err


def test_a_commit_the_hook_passes_is_one_every_command_reads(ready: Path) -> None:
    mid, text = memory_text()
    rel = f"{MEM}/{mid}.md"
    (ready / rel).write_text(with_field(text, "tags: [" + ", ".join(f"t{i}" for i in range(1000)) + "]"))
    git("add", rel, cwd=ready)
    r = git("commit", "-q", "-m", "good", cwd=ready, check=False)
    assert r.returncode == 0, r.stderr
    assert index_reason(ready / rel) is None
    assert mid[:7] in run_cli("list").out


def _noise(n: int) -> str:
    """`n` bytes of text that compresses poorly (so its loose object is about as large)."""
    raw = base64.b64encode(os.urandom(n * 3 // 4 + 3)).decode("ascii")[:n]
    return "\n".join(raw[i:i + 76] for i in range(0, n, 77))


def _big(mid: str, text: str, size: int) -> str:
    return text.rstrip("\n") + "\n" + _noise(size - len(text)) + "\n"


def test_an_oversized_blob_is_refused_from_its_size_without_being_read(ready: Path) -> None:
    mid, text = memory_text()
    rel = f"{MEM}/{mid}.md"
    (ready / rel).write_text(_big(mid, text, 3 * frontmatter.MAX_FILE_BYTES))
    git("add", rel, cwd=ready)
    oid = git("rev-parse", f":{rel}", cwd=ready).stdout.strip()
    loose = ready / ".git" / "objects" / oid[:2] / oid[2:]
    whole = zlib.decompress(loose.read_bytes())
    assert whole.startswith(b"blob ")
    # keep only the start of the object: its header still says the size, its content cannot be read
    os.chmod(loose, 0o644)
    loose.write_bytes(loose.read_bytes()[:4096])
    assert git("cat-file", "-s", oid, cwd=ready).stdout.strip() == str(len(whole) - whole.index(b"\0") - 1)
    assert git("cat-file", "blob", oid, cwd=ready, check=False).returncode != 0
    r = git("commit", "-q", "-m", "big", cwd=ready, check=False)
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith(rel + ":")]
    assert len(lines) == 1 and "too-large" in lines[0] and "is larger than 1024 KiB" in lines[0], r.stderr
    assert "could not read" not in r.stderr
    s = run_cli("scan", "--staged")
    assert s.code == 1 and "is larger than 1024 KiB" in s.out and "could not read" not in s.err, s.out + s.err


def test_an_oversized_file_arriving_by_pull_is_named_by_its_size(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    mine, theirs = two_clones(tmp_path)
    monkeypatch.chdir(mine)
    mid, text = memory_text()
    rel = f"{MEM}/{mid}.md"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    # a secret past the limit: the file is judged by its size, its content is not scanned
    (theirs / rel).write_text(_big(mid, text, 2 * frontmatter.MAX_FILE_BYTES) + f"token {token}\n")
    git("add", rel, cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "big", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)
    p = git("pull", "-q", "--ff-only", cwd=mine)
    named = [line for line in p.stderr.splitlines() if rel in line]
    assert len(named) == 1 and "is larger than 1024 KiB" in named[0], p.stderr
    assert "github" not in p.stderr.lower() and token not in p.stderr
    git("reset", "-q", "--hard", "HEAD~1", cwd=mine)
    r = run_cli("pull", "--json", cwd=mine)
    assert r.code == 0, r.err
    out = r.json()
    assert out["unreadable"] == [{"path": rel, "reason": "is larger than 1024 KiB"}]
    assert out["problems"] == []

"""The query API of `git_memex.index.stores.Stores`: rows, by_id, first, one, count.

Memories are made with the real command (add, submit) in real git repositories; the queries
run in process against the real SQLite indexes those commands wrote."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from git_memex.core.context import load_context
from git_memex.index.stores import Stores, select_sql

from conftest import git, one_commit_repo, run_cli


def _add(text: str, *args: str) -> str:
    r = run_cli("add", text, *args, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def _other_project(tmp_path: Path) -> Path:
    """A second repository with one draft of its own in the (shared) home index."""
    other = tmp_path / "other"
    other.mkdir()
    git("init", "-q", "-b", "main", cwd=other)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=other)
    r = run_cli("add", "the other project deploys on fridays", "--json", cwd=other)
    assert r.code == 0, r.err
    return other


def test_rows_repo_first_then_home_in_scope(repo: Path, tmp_path: Path) -> None:
    shared = _add("the billing service retries webhooks five times")
    r = run_cli("submit", shared, "--json")
    assert r.code == 0, r.err
    draft = _add("the billing dashboard is slow on mondays")
    mine = _add("I prefer short answers", "--scope", "personal")
    _other_project(tmp_path)
    with Stores(load_context(repo)) as st:
        st.refresh()
        got = st.rows(columns="m.id, m.location", order_by="m.id")
        # the repository's index first, then the home index; another project's draft is not in scope
        assert [(r["id"], r["location"]) for r in got] == [
            (shared, "repo"), *sorted([(draft, "outbox"), (mine, "personal")])]
        unscoped = st.rows(columns="m.id", scoped=False)
        assert len(unscoped) == len(got) + 1  # the other project's draft too
        assert st.count() == 3 and st.count(scoped=False) == 4
        assert [r["id"] for r in st.rows("m.location = ?", ("outbox",), columns="m.id")] == [draft]


def test_limit_and_order_apply_per_index(repo: Path) -> None:
    ids = [_add(f"fact number {n} about the cache layer") for n in range(3)]
    run_cli("submit", ids[0])
    with Stores(load_context(repo)) as st:
        st.refresh()
        got = st.rows(columns="m.id", order_by="m.id DESC", limit=1)
        # one row from each index: the repository's, then the newest of the two drafts
        assert [r["id"] for r in got] == [ids[0], ids[2]]


def test_by_id_keeps_the_first_index_copy(repo: Path) -> None:
    mid = _add("the queue drains every ten minutes")
    with Stores(load_context(repo)) as st:
        st.refresh()
        outbox_row = st.one(mid)
        assert outbox_row is not None and outbox_row["location"] == "outbox"
    # a stale copy of the same memory, now in the repository folder too (as after a pull)
    ctx = load_context(repo)
    assert ctx.memory_dir is not None
    ctx.memory_dir.mkdir(parents=True, exist_ok=True)
    (ctx.memory_dir / f"{mid}.md").write_bytes(Path(outbox_row["path"]).read_bytes())
    with Stores(load_context(repo)) as st:
        st.refresh()
        assert [r["location"] for r in st.rows("m.id = ?", (mid,))] == ["repo", "outbox"]
        assert st.by_id("m.id = ?", (mid,))[mid]["location"] == "repo"
        row = st.first("m.id = ?", (mid,), columns="m.location")
        assert row is not None and row[0] == "repo"
        assert st.one("01ZZZZZZZZZZZZZZZZZZZZZZZZ") is None


def test_count_distinct_and_match(repo: Path) -> None:
    a = _add("postgres vacuum runs nightly")
    _add("postgres replicas lag under load")
    with Stores(load_context(repo)) as st:
        st.refresh()
        assert st.count("m.id >= ? AND m.id < ?", (a[:10], a[:10] + "\U0010ffff"), distinct="m.id") >= 1
        hits = st.rows("m.status = 'active'", columns="m.id, bm25(memories_fts) AS rank", match="vacuum",
                       order_by="rank")
        assert [h["id"] for h in hits] == [a]
        with pytest.raises(sqlite3.OperationalError):
            st.rows(columns="m.id", match='"unbalanced')
        assert st.rows(columns="m.id", match='"unbalanced', skip_errors=True) == []


def test_rows_on_one_index_keeps_its_scope(repo: Path, tmp_path: Path) -> None:
    shared = _add("the billing service retries webhooks five times")
    assert run_cli("submit", shared).code == 0
    draft = _add("the billing dashboard is slow on mondays")
    _other_project(tmp_path)
    with Stores(load_context(repo)) as st:
        st.refresh()
        assert st.repo is not None
        assert [r["id"] for r in st.rows(columns="m.id", index=st.repo)] == [shared]
        # the home index alone, still scoped to this project: the other project's draft stays out
        assert [r["id"] for r in st.rows(columns="m.id", index=st.home)] == [draft]
        assert len(st.rows(columns="m.id", index=st.home, scoped=False)) == 2


def test_the_read_filters_live_beside_select_sql(repo: Path) -> None:
    """One definition of the scopes and the hidden statuses: the search engine and the CLI's
    --scope choices use the query API's."""
    from git_memex.commands.search import READ_SCOPES as CLI_SCOPES
    from git_memex.index import stores
    from git_memex.search import engine

    assert engine.scope_filter is stores.scope_filter and engine.HIDDEN_STATUSES is stores.HIDDEN_STATUSES
    assert engine.READ_SCOPES is stores.READ_SCOPES and CLI_SCOPES == stores.READ_SCOPES
    live = _add("the cache warms at noon")
    gone = _add("the cache warmed at midnight")
    assert run_cli("forget", gone, "--soft").code == 0  # retracted: hidden, still indexed
    cond, args = stores.visible("both")
    with Stores(load_context(repo)) as st:
        st.refresh()
        assert list(st.by_id(cond, args, columns="m.id")) == [live]
        assert st.by_id(*stores.visible("org"), columns="m.id") == {}


def test_select_sql_keeps_the_scope_ahead_of_the_caller_condition() -> None:
    sql = select_sql("m.id", "m.a = ? OR m.b = ?", scope="(m.project_key IS NULL OR m.project_key = ?)",
                     order_by="m.id", limit=True)
    # the caller's OR stays inside its parentheses: it cannot widen the scope
    assert sql == ("SELECT m.id FROM memories m WHERE (m.project_key IS NULL OR m.project_key = ?)"
                   " AND (m.a = ? OR m.b = ?) ORDER BY m.id LIMIT ?")


# ------------------------------------------------------------------ a full disk (issue 20.16)
@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A real 8 MiB tmpfs holding the data root and a repository set up by `init`; needs root
    (`mount -t tmpfs`), else skipped. Unmounted afterwards."""
    import os
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        monkeypatch.setenv("GIT_MEMEX_HOME", str(mnt / "data"))
        work = one_commit_repo(mnt / "work")
        monkeypatch.chdir(work)
        assert run_cli("init", "--yes").code == 0
        yield mnt
    finally:
        monkeypatch.chdir(tmp_path)
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(mnt: Path) -> Path:
    """Write a file until the disk says ENOSPC; return it (delete it to free the space)."""
    filler = mnt / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_leaves_reads_working_and_recovers_when_space_returns(small_disk: Path) -> None:
    """Reads go on from the memory files with one warning per index when the index cannot be
    written (ENOSPC on a real tmpfs); a write says it could not save, exit 2, nothing changed; once
    space is back everything works as before, with no warning."""
    for i in range(3):
        assert run_cli("add", f"project fact {i} about the kestrel proxy").code == 0
        assert run_cli("add", "--scope", "personal", f"personal note {i} about kestrel").code == 0
    assert run_cli("search", "kestrel").code == 0
    filler = _fill(small_disk)
    for args in (("search", "kestrel"), ("list", "--json"), ("context",), ("context", "--hook", "claude"),
                 ("reindex",), ("reindex", "--full"), ("doctor",)):
        r = run_cli(*args, input="{}" if "--hook" in args else None)
        assert r.code in ((0, 1) if args == ("doctor",) else (0,)), (args, r.code, r.err)
        assert "internal error" not in r.err and "Traceback" not in r.err, (args, r.err)
        if args[0] in ("search", "list"):
            assert "cannot write the index" in r.err, r.err
    hits = run_cli("search", "kestrel", "--json").json()["hits"]
    assert len(hits) == 6
    assert run_cli("list", "--json").json()["total"] == 6
    r = run_cli("add", "--scope", "personal", "a note the full disk cannot take")
    assert r.code == 2 and "No space left" in r.err and "internal error" not in r.err, r.err
    filler.unlink()
    r = run_cli("add", "--scope", "personal", "a note after space came back about kestrel")
    assert r.code == 0, r.err
    r = run_cli("search", "kestrel", "--json")
    assert r.code == 0 and "warning" not in r.err, r.err
    assert len(r.json()["hits"]) == 7


def _without_override() -> list[str]:
    """A prefix that runs a command as this user but without the power to ignore file modes: as
    root (CI, a container) `setpriv` drops the capabilities that override them; otherwise none."""
    if os.geteuid() != 0:
        return []
    import shutil

    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to test file modes as root"
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_a_read_only_index_file_is_read_around_with_one_warning(repo: Path) -> None:
    """An index file this user may not write (`chmod a-w`) was an internal error at the first
    write ("attempt to write a readonly database"). Now the command reads from the memory files
    and says how to get the index back, as with a full disk; `add` still saves."""
    import subprocess
    import sys

    mid = _add("the read-only index still finds this note", "--scope", "personal")
    home_index = Path(os.environ["GIT_MEMEX_HOME"]) / "index.db"
    repo_index = repo / ".git" / "memex" / "index.db"
    for index in (home_index, repo_index):
        assert index.is_file()
        index.chmod(0o400)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*_without_override(), sys.executable, "-m", "git_memex", *args], cwd=repo,
                              capture_output=True, text=True, timeout=120)

    listed = run("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert mid in listed.stdout
    assert "internal error" not in listed.stderr and "Traceback" not in listed.stderr
    assert "the index file is read-only" in listed.stderr and "chmod u+w" in listed.stderr
    added = run("add", "--scope", "personal", "a second note while the index is read-only")
    assert added.returncode == 0, added.stderr
    assert "read-only" in added.stderr
    for index in (home_index, repo_index):
        index.chmod(0o600)
    again = run("list", "--json")
    assert again.returncode == 0 and "read-only" not in again.stderr
    assert "a second note" in again.stdout

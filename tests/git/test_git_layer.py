"""The git-native layer with real repositories and the real git: init, hooks, pull, resolve."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model
from git_memex.core.project import normalize_remote_url, repo_id

from conftest import git, run_cli

MEM = ".ai/open-memex"


def write_memory(work: Path, body: str, **fm_overrides) -> str:
    m = model.create(body, scope="project", review_state="proposed")
    m.fm.update(fm_overrides)
    folder = work / MEM
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    return m.id


def commit_all(work: Path, msg: str = "memories") -> subprocess.CompletedProcess[str]:
    git("add", "-A", cwd=work)
    return git("commit", "-q", "-m", msg, cwd=work, check=False)


def search_ids(query: str, cwd: Path) -> list[str]:
    r = run_cli("search", query, "--json", cwd=cwd)
    assert r.code == 0, r.err
    return [h["id"] for h in r.json()["hits"]]


# ------------------------------------------------------------------ init
def test_init_is_idempotent_and_sets_everything_up(repo: Path):
    r = run_cli("init", "--yes", "--json")
    assert r.code == 0, r.err
    assert r.json()["changed"] is True
    assert (repo / MEM).is_dir()
    assert (repo / ".gitattributes").read_text() == f"{MEM}/**/*.md merge=memex\n"
    driver = git("config", "merge.memex.driver", cwd=repo).stdout
    assert "%O %A %B %P" in driver and "merge-driver" in driver
    agents = (repo / "AGENTS.md").read_text()
    assert agents.count("Project memory lives in .ai/open-memex/") == 1
    for name in ("pre-commit", "pre-merge-commit", "post-merge", "post-checkout", "post-rewrite"):
        assert os.access(repo / ".git" / "hooks" / name, os.X_OK)
    before = {p: p.read_bytes() for p in [repo / ".gitattributes", repo / "AGENTS.md", *(repo / ".git" / "hooks").iterdir()]}
    config_before = (repo / ".git" / "config").read_bytes()
    again = run_cli("init", "--yes", "--json")
    assert again.json()["changed"] is False
    assert {p: p.read_bytes() for p in before} == before
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert run_cli("doctor").code == 0


def test_init_outside_a_repository(nogit: Path):
    r = run_cli("init", "--yes")
    assert r.code == 1 and "not inside a git repository" in r.err


def test_existing_hook_is_chained_and_restored(repo: Path):
    hook = repo / ".git" / "hooks" / "pre-commit"
    original = "#!/bin/sh\necho original-hook-ran >&2\n"
    hook.write_text(original)
    hook.chmod(0o755)
    assert run_cli("init", "--yes").code == 0
    (repo / "x.txt").write_text("x")
    r = commit_all(repo)
    assert r.returncode == 0
    assert "original-hook-ran" in r.stderr
    # a failing original hook still blocks the commit
    hook_chained = repo / ".git" / "hooks" / "pre-commit.memex-chained"
    hook_chained.write_text("#!/bin/sh\necho no >&2\nexit 7\n")
    (repo / "y.txt").write_text("y")
    assert commit_all(repo).returncode != 0
    hook_chained.write_text(original)
    assert run_cli("init", "--uninstall").code == 0
    assert hook.read_text() == original
    assert not hook_chained.exists()
    assert not (repo / ".git" / "hooks" / "post-merge").exists()


def test_core_hooks_path_is_chained_not_written_in(repo: Path):
    git("config", "core.hooksPath", ".githooks", cwd=repo)
    assert run_cli("init", "--yes").code == 0
    assert not (repo / ".githooks").exists()  # a team's (often committed) folder is never written in
    assert (repo / ".git" / "memex-hooks" / "post-merge").exists()
    assert git("config", "--local", "core.hooksPath", cwd=repo).stdout.strip() == str(repo / ".git" / "memex-hooks")
    assert run_cli("init", "--uninstall").code == 0
    assert git("config", "--local", "core.hooksPath", cwd=repo).stdout.strip() == ".githooks"
    assert not (repo / ".git" / "memex-hooks").exists()


def test_pre_commit_framework_repo_gets_the_snippet_and_a_chaining_hook(repo: Path):
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    hook = repo / ".git" / "hooks" / "pre-commit"
    r = run_cli("init", "--yes")
    assert r.code == 0
    assert hook.exists()  # `repos: []` (flow style) is not edited: our hook runs the checks
    assert "memex-secrets" in r.out and "add this to it yourself" in r.out
    assert (repo / ".git" / "hooks" / "post-merge").exists()


def test_pre_commit_framework_with_the_snippet_pasted_keeps_its_hook(repo: Path):
    (repo / ".pre-commit-config.yaml").write_text("repos:\n  - repo: local\n    hooks:\n      - id: memex-secrets\n")
    hook = repo / ".git" / "hooks" / "pre-commit"
    r = run_cli("init", "--yes")
    assert r.code == 0
    # the framework is not installed in this clone (no `pre-commit install`): our hook runs the
    # checks until it is (the framework then runs ours as its `.legacy` hook, and init removes it)
    assert hook.exists() and b"git-memex hook shim" in hook.read_bytes()
    assert (repo / ".git" / "hooks" / "post-merge").exists()
    hook.write_text("#!/bin/sh\n# File generated by pre-commit: https://pre-commit.com\nexit 0\n")
    hook.chmod(0o755)
    r = run_cli("init", "--yes")
    assert r.code == 0 and b"git-memex" not in hook.read_bytes()  # the framework's hook is left alone


# ------------------------------------------------------------------ pre-commit hook
def test_commit_with_a_secret_is_refused_without_showing_it(repo: Path):
    run_cli("init", "--yes")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write_memory(repo, f"CI uses the token {secret} for releases")
    r = commit_all(repo)
    assert r.returncode == 1
    assert "github-pat" in r.stderr and f"{MEM}/" in r.stderr
    assert secret not in r.stderr and secret not in r.stdout
    assert git("rev-list", "--count", "HEAD", cwd=repo).stdout.strip() == "1"


def test_hook_scans_the_staged_blob_not_the_work_tree(repo: Path):
    run_cli("init", "--yes")
    secret = "AKIAIOSFODNN7EXAMPL3"
    mid = write_memory(repo, f"the key is {secret}")
    git("add", "-A", cwd=repo)
    path = repo / MEM / f"{mid}.md"
    path.write_text(path.read_text().replace(secret, "[removed]"))  # fixed on disk, not staged
    assert git("commit", "-q", "-m", "x", cwd=repo, check=False).returncode == 1
    git("add", "-A", cwd=repo)
    assert git("commit", "-q", "-m", "x", cwd=repo, check=False).returncode == 0


def test_a_merge_cannot_bring_a_secret_in(repo: Path):
    """An automatic merge commit runs pre-merge-commit, not pre-commit: both scan memory files."""
    run_cli("init", "--yes")
    commit_all(repo, "init memex")
    git("checkout", "-q", "-b", "theirs", cwd=repo)
    write_memory(repo, "the registry password is hunter2hunter2 for now", tags=["ci"])
    write_memory(repo, "token xoxb-730241958163-4719305826417-Kq8vRz2mWx5LpT9nYc3HdJ6s for the bot")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "someone skipped the hook", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    (repo / "other.txt").write_text("x\n")
    commit_all(repo, "diverge")
    head = git("rev-parse", "HEAD", cwd=repo).stdout
    r = git("merge", "--no-edit", "theirs", cwd=repo, check=False)
    assert r.returncode != 0
    assert "slack" in (r.stdout + r.stderr)
    assert git("rev-parse", "HEAD", cwd=repo).stdout == head  # no merge commit was made
    git("merge", "--abort", cwd=repo)


@pytest.mark.parametrize("override", [{"scope": "personal"}, {"visibility": "private"}])
def test_personal_or_private_memory_cannot_be_committed(repo: Path, override):
    run_cli("init", "--yes")
    write_memory(repo, "my own preference about editors", **override)
    r = commit_all(repo)
    assert r.returncode == 1
    assert ("personal-memory-in-repo" in r.stderr) or ("private-memory-in-repo" in r.stderr)


def test_invalid_frontmatter_cannot_be_committed(repo: Path):
    run_cli("init", "--yes")
    (repo / MEM / "01JHFQ8PMWKVX6KGZH2MXR6QJA.md").write_text("---\nid: [broken\n---\n\nbody\n")
    r = commit_all(repo)
    assert r.returncode == 1 and "invalid-frontmatter" in r.stderr


# ------------------------------------------------------------------ two clones
@pytest.fixture
def clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin))
    a = tmp_path / "a"
    b = tmp_path / "b"
    git("clone", "-q", str(origin), str(a))
    (a / "README.md").write_text("x\n")
    git("add", "-A", cwd=a)
    git("commit", "-q", "-m", "init", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    git("clone", "-q", str(origin), str(b))
    assert run_cli("init", "--yes", cwd=a).code == 0
    commit_all(a, "set up git-memex")
    git("push", "-q", "origin", "main", cwd=a)
    git("pull", "-q", cwd=b)
    assert run_cli("init", "--yes", cwd=b).code == 0  # each clone registers its own driver and hooks
    assert git("status", "--porcelain", cwd=b).stdout == ""
    return origin, a, b


def test_plain_git_pull_reindexes_through_the_hook(clones):
    _origin, a, b = clones
    assert search_ids("kubernetes", b) == []  # builds b's index
    mid = write_memory(a, "kubernetes pods need a readiness probe on /healthz")
    assert commit_all(a).returncode == 0
    git("push", "-q", "origin", "main", cwd=a)
    r = git("pull", cwd=b)
    assert "git-memex: index updated (1 added" in r.stderr
    # the hook already indexed it: look in b's index without refreshing
    from git_memex.index.database import Index

    db = b / ".git" / "memex" / "index.db"
    with Index(db) as idx:
        assert idx.conn.execute("SELECT count(*) FROM memories WHERE id=?", (mid,)).fetchone()[0] == 1
    assert search_ids("readiness probe", b) == [mid]


def test_memex_pull_fast_forwards_and_reindexes(clones):
    _origin, a, b = clones
    r = run_cli("pull", cwd=b)
    assert r.code == 0 and "already up to date" in r.out
    mid = write_memory(a, "the search-indexer reads from the events topic")
    commit_all(a)
    git("push", "-q", "origin", "main", cwd=a)
    r = run_cli("pull", "--json", cwd=b)
    assert r.code == 0, r.err
    res = r.json()
    assert res["state"] == "fast-forward" and res["changed"] == [f"{MEM}/{mid}.md"]
    assert git("rev-parse", "HEAD", cwd=b).stdout == git("rev-parse", "HEAD", cwd=a).stdout
    assert search_ids("events topic", b) == [mid]


def test_memex_pull_refuses_to_merge_a_diverged_branch(clones):
    _origin, a, b = clones
    write_memory(a, "change on a")
    commit_all(a)
    git("push", "-q", "origin", "main", cwd=a)
    write_memory(b, "change on b")
    commit_all(b)
    head = git("rev-parse", "HEAD", cwd=b).stdout
    status = git("status", "--porcelain", cwd=b).stdout
    r = run_cli("pull", cwd=b)
    assert r.code == 2 and "diverged" in r.err and "git pull --rebase" in r.err
    assert git("rev-parse", "HEAD", cwd=b).stdout == head
    assert git("status", "--porcelain", cwd=b).stdout == status


def test_memex_pull_without_upstream_or_remote(repo: Path):
    r = run_cli("pull")
    assert r.code == 2 and "no remote" in r.err
    git("remote", "add", "origin", "https://example.invalid/x.git", cwd=repo)
    r = run_cli("pull")
    assert r.code == 2 and "no upstream" in r.err


def test_memex_pull_with_unreachable_remote(clones, tmp_path: Path):
    _origin, _a, b = clones
    git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=b)
    r = run_cli("pull", cwd=b)
    assert r.code == 2 and "could not fetch" in r.err and "nothing was changed" in r.err
    # git's own `fatal:` line, not its closing advice ("and the repository exists.")
    assert "does not appear to be a git repository" in r.err and "repository exists" not in r.err
    assert len(r.err.strip().splitlines()) == 1
    # local work goes on
    assert run_cli("add", "offline note about caching", cwd=b).code == 0


# ------------------------------------------------------------------ branches and worktrees
def test_checkout_keeps_search_on_the_branch(repo: Path):
    run_cli("init", "--yes")
    commit_all(repo, "init memex")
    git("checkout", "-q", "-b", "feature", cwd=repo)
    mid = write_memory(repo, "the feature flag service caches for 30 seconds")
    commit_all(repo)
    assert search_ids("feature flag", repo) == [mid]
    r = git("checkout", "main", cwd=repo)
    assert "index updated" in r.stderr
    assert search_ids("feature flag", repo) == []
    git("checkout", "-q", "feature", cwd=repo)
    assert search_ids("feature flag", repo) == [mid]


def test_two_worktrees_each_search_their_own_checkout(repo: Path, tmp_path: Path):
    run_cli("init", "--yes")
    commit_all(repo, "init memex")
    other = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "other", str(other), cwd=repo)
    mid_main = write_memory(repo, "rabbitmq queues are durable on main")
    commit_all(repo)
    mid_other = write_memory(other, "rabbitmq queues are transient on other")
    commit_all(other)
    assert search_ids("rabbitmq queues", repo) == [mid_main]
    assert search_ids("rabbitmq queues", other) == [mid_other]
    w1 = run_cli("where", "--json", cwd=repo).json()
    w2 = run_cli("where", "--json", cwd=other).json()
    assert w1["repo_id"] == w2["repo_id"]
    assert w1["repo_index"] != w2["repo_index"]


def test_rebase_runs_post_rewrite(repo: Path):
    run_cli("init", "--yes")
    commit_all(repo, "init memex")
    git("checkout", "-q", "-b", "topic", cwd=repo)
    mid = write_memory(repo, "grpc deadlines default to five seconds")
    commit_all(repo)
    assert search_ids("grpc deadlines", repo) == [mid]
    git("checkout", "-q", "main", cwd=repo)
    (repo / "other.txt").write_text("x")
    commit_all(repo, "other")
    git("checkout", "-q", "topic", cwd=repo)
    r = git("rebase", "main", cwd=repo)
    assert r.returncode == 0
    assert search_ids("grpc deadlines", repo) == [mid]


# ------------------------------------------------------------------ resolve
def _conflict(repo: Path, edit_ours, edit_theirs) -> str:
    """Make a real conflicted merge of one memory file with plain git (no driver)."""
    mid = write_memory(repo, "line one\nline two\nline three", tags=["base"])
    commit_all(repo, "base")
    path = repo / MEM / f"{mid}.md"
    git("checkout", "-q", "-b", "theirs", cwd=repo)
    fm, body = frontmatter.parse(path.read_text())
    edit_theirs(fm)
    path.write_text(frontmatter.serialize(fm, fm.pop("_body", body)))
    commit_all(repo, "theirs")
    git("checkout", "-q", "main", cwd=repo)
    fm, body = frontmatter.parse(path.read_text())
    edit_ours(fm)
    path.write_text(frontmatter.serialize(fm, fm.pop("_body", body)))
    commit_all(repo, "ours")
    r = git("merge", "theirs", cwd=repo, check=False)
    assert r.returncode != 0, "expected a textual conflict without the driver"
    return mid


def test_resolve_merges_a_plain_git_conflict(repo: Path):
    # no init: a fresh clone or a hosting site's merge button never runs our driver
    def ours(fm):
        fm["tags"] = ["base", "ours-tag"]
        fm["importance"] = "high"

    def theirs(fm):
        fm["tags"] = ["base", "theirs-tag"]
        fm["review_state"] = "approved"

    mid = _conflict(repo, ours, theirs)
    listed = run_cli("resolve", "--json").json()["conflicts"]
    assert [c["id"] for c in listed] == [mid]
    r = run_cli("resolve", mid)
    assert r.code == 0, r.out + r.err
    fm, _ = frontmatter.parse((repo / MEM / f"{mid}.md").read_text())
    assert fm["tags"] == ["base", "ours-tag", "theirs-tag"]
    assert fm["importance"] == "high" and fm["review_state"] == "approved"
    assert git("ls-files", "-u", cwd=repo).stdout == ""
    assert run_cli("resolve", "--json").json()["conflicts"] == []


def test_resolve_leaves_a_real_conflict_for_a_human(repo: Path):
    def ours(fm):
        fm["_body"] = "line one\nline two (ours)\nline three"

    def theirs(fm):
        fm["_body"] = "line one\nline two (theirs)\nline three"

    mid = _conflict(repo, ours, theirs)
    path = repo / MEM / f"{mid}.md"
    before = path.read_bytes()
    r = run_cli("resolve", mid)
    assert r.code == 3
    assert "body" in r.out and "(ours)" in r.out and "(theirs)" in r.out
    assert path.read_bytes() == before
    assert git("ls-files", "-u", cwd=repo).stdout != ""


def test_resolve_unknown_target(repo: Path):
    r = run_cli("resolve", "nothing")
    assert r.code == 1


# ------------------------------------------------------------------ repo_id
@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/Widgets.git",
        "https://github.com/acme/widgets",
        "https://user:tok@github.com/acme/widgets.git/",
        "ssh://git@github.com:22/acme/widgets.git",
        "git://github.com/acme/widgets",
    ],
)
def test_ssh_and_https_forms_give_one_repo_id(url: str):
    assert normalize_remote_url(url) == "github.com/acme/widgets"
    assert repo_id(url, Path("/x")) == repo_id("https://github.com/acme/widgets.git", Path("/y"))


def test_repo_id_follows_origin(repo: Path):
    git("remote", "add", "origin", "git@github.com:acme/widgets.git", cwd=repo)
    w = run_cli("where", "--json").json()
    assert w["repo_id"] == repo_id("https://github.com/acme/widgets", Path("/"))
    assert w["project_key"].startswith("widgets-")


def test_hook_entry_rejects_unknown_hook(repo: Path):
    r = run_cli("hook", "pre-push")
    assert r.code == 1 and "unknown hook" in r.err


def test_python_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "git_memex", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("git-memex ")


def test_memex_pull_on_a_branch_the_remote_does_not_have(clones):
    _origin, _a, b = clones
    git("switch", "-q", "-c", "feature", cwd=b)
    r = run_cli("pull", cwd=b)
    assert r.code == 2 and "origin has no branch feature" in r.err
    assert "git push -u origin feature" in r.err and "--set-upstream-to" not in r.err
    # the remote has it, this branch just does not track it: then set-upstream-to is the fix
    git("push", "-q", "origin", "feature", cwd=b)
    r = run_cli("pull", cwd=b)
    assert r.code == 2 and "git branch --set-upstream-to=origin/feature" in r.err
    git("branch", "-q", "--set-upstream-to=origin/feature", cwd=b)
    assert run_cli("pull", cwd=b).code == 0


def test_memex_pull_when_the_remote_deleted_the_upstream_branch(clones):
    _origin, _a, b = clones
    git("switch", "-q", "-c", "gone", cwd=b)
    git("push", "-q", "-u", "origin", "gone", cwd=b)
    git("push", "-q", "origin", ":gone", cwd=b)  # deleted on the remote (and its tracking ref here)
    head = git("rev-parse", "HEAD", cwd=b).stdout
    r = run_cli("pull", cwd=b)
    assert r.code == 2 and "origin has no such branch" in r.err and "git push -u origin gone" in r.err
    assert len(r.err.strip().splitlines()) == 1 and git("rev-parse", "HEAD", cwd=b).stdout == head


def test_installed_hooks_are_the_shipped_shim_files_with_the_command_filled_in(repo: Path):
    from git_memex.git import hook

    shipped = Path(__file__).resolve().parents[2] / "hooks"  # the top-level hooks/ of this checkout
    assert sorted(p.name for p in shipped.iterdir()) == sorted(hook.HOOK_NAMES)
    assert run_cli("init", "--yes").code == 0
    command = hook.memex_command()
    for name in hook.HOOK_NAMES:
        source = (shipped / name).read_text()
        assert os.access(shipped / name, os.X_OK), name
        assert subprocess.run(["sh", "-n", str(shipped / name)], check=False).returncode == 0, name
        installed = (repo / ".git" / "hooks" / name).read_text()
        # only the line naming the command (and its arguments) differs from the shipped file
        diff = [(a, b) for a, b in zip(source.splitlines(), installed.splitlines(), strict=True) if a != b]
        assert diff[0] == ("memex=git-memex", f"memex={shlex.quote(command[0])}"), (name, diff)  # a path may hold a space
        assert all('"$memex"' in b and f"hook {name}" in b for _, b in diff[1:]), (name, diff)
        assert len(diff) == (1 if len(command) == 1 else 2), (name, diff)

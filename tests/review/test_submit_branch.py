"""`submit --branch` and MCP `memory_submit`'s `branch` (issue 31, the attack's first finding; issue 32,
item 13), in a real repository with a real bare origin:

- the branch is a plain new branch name: `origin/main`, `refs/heads/main`, `heads/main`,
  `refs/remotes/origin/main`, the default branch in any spelling, a pseudo-ref, a name an existing tag
  or remote-tracking ref already has, and a name holding a token are refused in one sentence (exit 1)
  before anything is written; before, `origin/main` made `refs/heads/origin/main`, so `origin/main`
  resolved to the agent's commit and the printed `git push -u origin refs/heads/main` pushed local
  main to the default branch;
- the commit goes on that branch alone: the user's HEAD, index and work tree (a dirty file, staged
  changes) are exactly as before, and the next `add` and commit happen where the user was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, run_cli, run_cli_process
from mcp_client import err, ok

MEM = ".ai/open-memex"
TOKEN = "ghp_" + "Q7r8S9t0U1v2W3x4Y5z6A7b8C9d0E1f2G3h4"  # the shape of a GitHub token, made up


def add(text: str) -> str:
    r = run_cli("add", text, "--json")
    assert r.code == 0, r.err
    return r.json()["id"]


def refs(work: Path) -> str:
    return git("for-each-ref", "--format=%(refname) %(objectname)", cwd=work).stdout


def outbox(isolated_env: Path) -> list[Path]:
    return sorted((isolated_env / "data" / "memories" / "outbox").rglob("*.md"))


@pytest.fixture
def origin(ready: Path, tmp_path: Path) -> Path:
    """`ready` with a bare origin that has main (and origin/HEAD), a tag v1 and a branch feature."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    git("remote", "add", "origin", str(bare), cwd=ready)
    git("push", "-q", "-u", "origin", "main", cwd=ready)
    git("remote", "set-head", "origin", "main", cwd=ready)
    git("tag", "v1", cwd=ready)
    git("push", "-q", "origin", "main:feature", cwd=ready)
    git("fetch", "-q", "origin", cwd=ready)
    return ready


REFUSED = [
    ("origin/main", "the name of a remote"),
    ("origin/feature", "the name of a remote"),
    ("origin/brand-new", "the name of a remote"),
    ("refs/heads/main", "spells a ref"),
    ("refs/heads/memex/review", "spells a ref"),
    ("heads/main", "spells a ref"),
    ("refs/remotes/origin/main", "spells a ref"),
    ("remotes/origin/main", "spells a ref"),
    ("tags/v1", "spells a ref"),
    ("main", "default branch"),
    ("Main", "default branch"),
    ("MAIN", "default branch"),
    ("FETCH_HEAD", "git keeps for its own refs"),
    ("ORIG_HEAD", "git keeps for its own refs"),
    ("v1", "already the name of refs/tags/v1"),
    (f"feat/{TOKEN}", "looks like a secret"),
    # the misc attack: look-alikes of main, more pseudo-refs, a branch only a remote has, a long name
    ("\uff4d\uff41\uff49\uff4e", "not a plain ASCII character"),  # fullwidth, main under NFKC
    ("main\u200b", "not a plain ASCII character"),  # a zero-width space
    ("m\u0430in", "not a plain ASCII character"),  # a Cyrillic а
    ("MA\u0130N", "not a plain ASCII character"),  # İ, whose lower case is i + a dot
    ("\u017fain", "not a plain ASCII character"),  # ſ, s under case folding
    ("AUTO_MERGE", "git keeps for its own refs"),
    ("REVERT_HEAD", "git keeps for its own refs"),
    ("head", "git keeps for its own refs"),  # .git/HEAD on a case-insensitive file system
    ("Head", "git keeps for its own refs"),
    ("master", "default or integration branch"),
    ("Develop", "default or integration branch"),
    ("feature", "already a branch of a remote (refs/remotes/origin/feature)"),
    ("a" * 300, "at most 200"),
]


@pytest.mark.parametrize(("name", "why"), REFUSED, ids=[ascii(n)[1:25] for n, _ in REFUSED])
def test_a_submit_branch_is_a_plain_new_branch_name(origin: Path, isolated_env: Path, name: str, why: str) -> None:
    d = add("the deploy script needs the VPN")
    before, head = refs(origin), git("rev-parse", "HEAD", cwd=origin).stdout
    r = run_cli("submit", d, "--branch", name)
    assert r.code == 1 and why in r.err and "nothing was changed" in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and r.out == "" and "Traceback" not in r.err
    assert TOKEN not in r.err and TOKEN[4:20] not in r.err
    msg = err("memory_submit", {"ids": [d], "branch": name})
    assert why in msg and TOKEN not in msg and TOKEN[4:20] not in msg and "--branch" not in msg
    # nothing was written: no ref, no journal, the draft still in the outbox, origin/main is origin's
    assert refs(origin) == before and git("rev-parse", "HEAD", cwd=origin).stdout == head
    assert not list((isolated_env / "data" / "journal").glob("*.json"))
    assert [p.stem for p in outbox(isolated_env)] == [d]
    assert git("rev-parse", "origin/main", cwd=origin).stdout == git("rev-parse", "refs/remotes/origin/main",
                                                                     cwd=origin).stdout
    # and a plain name works
    res = run_cli("submit", d, "--branch", "memex/review", "--json")
    assert res.code == 0, res.err
    assert res.json()["push_command"] == "git push -u --force-with-lease=refs/heads/memex/review: origin refs/heads/memex/review:refs/heads/memex/review"


def test_a_token_in_the_branch_is_never_printed_or_made(origin: Path, isolated_env: Path) -> None:
    d = add("the release notes live in docs/changes")
    r = run_cli("submit", d, "--branch", f"feat/{TOKEN}", "--json")
    assert r.code == 1 and TOKEN not in r.out + r.err and "looks like a secret" in r.json()["error"]
    assert TOKEN not in refs(origin)


def test_submit_to_a_branch_leaves_the_checkout_index_and_work_tree_as_they_were(
        origin: Path, isolated_env: Path) -> None:
    work = origin
    (work / "app.py").write_text("print('v1')\n")
    git("add", "app.py", cwd=work)
    git("commit", "-qm", "app", cwd=work)
    (work / "app.py").write_text("print('v2, staged')\n")
    git("add", "app.py", cwd=work)
    (work / "app.py").write_text("print('v3, not staged')\n")  # dirty on top of staged
    (work / "notes.txt").write_text("untracked\n")
    (work / "README.md").write_text("demo, edited\n")  # an unstaged edit of a tracked file
    head = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    status = git("status", "--porcelain", cwd=work).stdout
    staged = git("diff", "--cached", cwd=work).stdout
    unstaged = git("diff", cwd=work).stdout
    index = (work / ".git" / "index").read_bytes()

    d = add("feature flags are read at startup only")
    r = run_cli("submit", d, "--branch", "memex/review", "--json")
    assert r.code == 0, r.err
    res = r.json()
    assert res["branch"] == "memex/review" and res["checkout"] == "main" and res["committed"]
    # the user's side: exactly as before
    assert git("symbolic-ref", "--short", "HEAD", cwd=work).stdout.strip() == "main"
    assert git("rev-parse", "HEAD", cwd=work).stdout.strip() == head
    assert git("status", "--porcelain", cwd=work).stdout == status
    assert git("diff", "--cached", cwd=work).stdout == staged and git("diff", cwd=work).stdout == unstaged
    assert (work / ".git" / "index").read_bytes() == index
    assert (work / "app.py").read_text() == "print('v3, not staged')\n"
    assert not (work / MEM / f"{d}.md").exists()
    # the branch: one commit on top of HEAD, holding the memory file and nothing else
    assert git("rev-parse", "memex/review~1", cwd=work).stdout.strip() == head
    changed = git("diff-tree", "--no-commit-id", "--name-only", "-r", "memex/review", cwd=work).stdout.split()
    assert changed == [f"{MEM}/{d}.md"]
    assert "review_state: proposed" in git("show", f"memex/review:{MEM}/{d}.md", cwd=work).stdout
    assert outbox(isolated_env) == []
    # the text says so, and the push it prints works from here, without a checkout
    d2 = add("the cache is warmed at deploy")
    text = run_cli("submit", d2, "--branch", "memex/other")
    assert text.code == 0, text.err
    assert "you are still on main" in text.out and "git memex push --branch memex/other --yes" in text.out
    # the next add and commit happen on main, where the user is
    d3 = add("the next draft stays in the outbox")
    git("commit", "-qam", "the user's own work", cwd=work)
    assert git("symbolic-ref", "--short", "HEAD", cwd=work).stdout.strip() == "main"
    assert git("rev-parse", "HEAD~1", cwd=work).stdout.strip() == head
    assert git("branch", "--contains", "HEAD", cwd=work).stdout.split() == ["*", "main"]
    assert [p.stem for p in outbox(isolated_env)] == [d3]
    # over MCP too: the agent is told the user's checkout stayed where it was
    data = ok("memory_submit", {"ids": [d3], "branch": "memex/agent"})
    assert data["checkout"] == "main" and data["branch"] == "memex/agent"
    assert git("symbolic-ref", "--short", "HEAD", cwd=work).stdout.strip() == "main"
    assert git("rev-parse", "memex/agent~1", cwd=work).stdout.strip() == git("rev-parse", "HEAD", cwd=work).stdout.strip()


@pytest.mark.slow  # ~6 s: three killed processes and their reruns
@pytest.mark.parametrize("point", ["submit.after_journal", "submit.after_files", "submit.after_commit"])
def test_a_branch_submit_killed_at_any_point_then_rerun_commits_once_and_never_switches(
        origin: Path, isolated_env: Path, point: str) -> None:
    d = add("queue consumers must be idempotent")
    head = git("rev-parse", "HEAD", cwd=origin).stdout.strip()
    r = run_cli_process("submit", d, "--branch", "memex/review", env={"GIT_MEMEX_CRASH_AT": point})
    assert r.code == 137
    assert git("symbolic-ref", "--short", "HEAD", cwd=origin).stdout.strip() == "main"
    r = run_cli("submit", d, "--branch", "memex/review", "--json")
    assert r.code == 0, r.err
    assert r.json()["branch"] == "memex/review"  # the journaled plan, not memex/review-2
    assert git("symbolic-ref", "--short", "HEAD", cwd=origin).stdout.strip() == "main"
    assert git("rev-parse", "HEAD", cwd=origin).stdout.strip() == head
    assert git("rev-list", "--count", f"{head}..memex/review", cwd=origin).stdout.strip() == "1"
    assert git("branch", "--list", "memex/review-*", cwd=origin).stdout == ""
    assert outbox(isolated_env) == [] and not (origin / MEM / f"{d}.md").exists()


def test_with_the_default_branch_unknown_its_usual_names_and_the_init_branch_are_refused(
        tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone of an empty origin (no origin/HEAD), set up on `dev`: `--branch main` made `main-2`
    beside a local main and `Main` made `Main`."""
    bare = tmp_path / "empty.git"
    git("init", "-q", "--bare", str(bare))
    work = tmp_path / "clone"
    git("clone", "-q", str(bare), str(work))
    monkeypatch.chdir(work)
    (work / "README.md").write_text("demo\n")
    git("add", "README.md", cwd=work)
    git("commit", "-qm", "init", cwd=work)
    git("switch", "-q", "-c", "dev", cwd=work)
    assert run_cli("init", "--yes").code == 0
    d = add("the api gateway times out after 30 seconds")
    for name in ("main", "Main", "master", "dev", "DEV"):
        r = run_cli("submit", d, "--branch", name)
        assert r.code == 1 and "default" in r.err and "nothing was changed" in r.err, (name, r.err)
    assert git("branch", "--list", cwd=work).stdout.split() == ["*", "dev", "main"]
    assert run_cli("submit", d, "--branch", "memex/review").code == 0


def test_a_refusal_suggests_only_a_name_it_would_take(origin: Path, isolated_env: Path) -> None:
    git("remote", "add", "memex", str(origin / ".." / "origin.git"), cwd=origin)  # memex/review names its branch
    d = add("the deploy script needs the VPN")
    r = run_cli("submit", d, "--branch", "origin/x")
    assert r.code == 1 and "such as memex-review" in r.err and "memex/review" not in r.err, r.err
    r = run_cli("submit", d, "--branch", "memex/review")
    assert r.code == 1 and "the name of a remote" in r.err
    git("remote", "add", "team/a", str(origin / ".." / "origin.git"), cwd=origin)  # a remote name with a slash
    r = run_cli("submit", d, "--branch", "team/a/x")
    assert r.code == 1 and "starts with team/a/, the name of a remote" in r.err, r.err
    r = run_cli("submit", d, "--branch", "memex-review", "--json")
    assert r.code == 0 and r.json()["branch"] == "memex-review", r.err


def test_push_uses_full_refspecs_and_never_lands_on_a_branch_someone_else_made(
        origin: Path, isolated_env: Path, tmp_path: Path) -> None:
    bare = tmp_path / "origin.git"
    # a tag of the same name arriving after the submit: before, "src refspec … matches more than one"
    assert run_cli("submit", add("the deploy script needs the VPN"), "--branch", "memex/review").code == 0
    git("tag", "memex/review", "main", cwd=origin)
    r = run_cli("push", "--branch", "memex/review", "--yes")
    assert r.code == 0 and "pushed 1 commit" in r.out, r.out + r.err
    assert git("rev-parse", "refs/heads/memex/review", cwd=bare).stdout == git("rev-parse", "refs/heads/memex/review",
                                                                             cwd=origin).stdout
    assert git("tag", "--list", cwd=bare).stdout == ""  # the branch went, not the tag
    # a teammate makes memex/next on origin after this submit made its own memex/next here
    assert run_cli("submit", add("the cache is warmed at deploy"), "--branch", "memex/next").code == 0
    mate = tmp_path / "mate"
    git("clone", "-q", str(bare), str(mate))
    git("push", "-q", "origin", "main:memex/next", cwd=mate)
    theirs = git("rev-parse", "refs/heads/memex/next", cwd=bare).stdout
    r = run_cli("push", "--branch", "memex/next", "--yes")  # not fetched yet: the empty lease refuses it
    assert r.code == 2 and "nothing was pushed" in r.err, r.out + r.err
    assert git("rev-parse", "refs/heads/memex/next", cwd=bare).stdout == theirs
    git("fetch", "-q", "origin", cwd=origin)  # fetched: refused before git is asked
    r = run_cli("push", "--branch", "memex/next", "--yes")
    assert r.code == 2 and "did not create" in r.err and "nothing was pushed" in r.err, r.err
    assert git("rev-parse", "refs/heads/memex/next", cwd=bare).stdout == theirs

"""A project naming its org repos in a committed file (`org add --share`, `init` offering them),
`doctor` explaining org problems, and bad org input (docs/org.md). Real git throughout: a bare org
remote, a project remote, clones of it; the terminal case runs `init` under a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import bare_and_clone, git, run_cli

MEM = ".ai/open-memex"
FILE = f"{MEM}/orgs.gitconfig"
DEPLOY = "01JORG00000000000000DEPLOY"
LEAK = "01JORG0000000000000000LEAK"
TOKEN = "ghp_" + "Mn4Bv6Cx8Zl0Kj2Hg4Fd6Sa8Po0Iu2Yt4Re6W"


def org_file(folder: Path, mid: str, body: str, type_: str = "decision") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{mid}.md").write_text(
        f"---\nid: {mid}\nschema_version: 2\nscope: org\ntype: {type_}\nstatus: active\n"
        f"created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n---\n{body}\n")


def push_all(seed: Path, msg: str) -> None:
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", msg, cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)


@pytest.fixture
def org(tmp_path: Path) -> tuple[Path, Path]:
    remote, seed = bare_and_clone(tmp_path)
    org_file(seed / MEM / "decisions", DEPLOY, "Deploys go through the blue green pipeline, never by hand.")
    push_all(seed, "an org memory")
    return remote, seed


@pytest.fixture
def shared(tmp_path: Path, org: tuple[Path, Path]) -> tuple[Path, Path, Path]:
    """(project a, its bare remote, org remote): a subscribes with --share and pushes the file."""
    remote, _ = org
    proj = tmp_path / "proj.git"
    git("init", "-q", "--bare", "-b", "main", str(proj))
    a = tmp_path / "a"
    git("clone", "-q", str(proj), str(a))
    assert run_cli("init", "--yes", cwd=a).code == 0
    r = run_cli("org", "add", "acme", str(remote), "--share", cwd=a)
    assert r.code == 0, r.err
    assert f"named it in {FILE}" in r.out
    git("add", "-A", cwd=a)
    git("commit", "-q", "-m", "set up, naming the org", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    return a, proj, remote


def fresh_clone(tmp_path: Path, proj: Path, name: str = "c") -> Path:
    c = tmp_path / name
    git("clone", "-q", str(proj), str(c))
    return c


def data_root() -> Path:
    return Path(os.environ["GIT_MEMEX_HOME"])


def subscribed(work: Path) -> list[str]:
    return [o["name"] for o in run_cli("org", "list", "--json", cwd=work).json()["orgs"]]


def doctor_lines(work: Path, level: str | None = None) -> list[str]:
    out = run_cli("doctor", cwd=work).out.splitlines()
    return [x for x in out if level is None or x.startswith(level)]


# ------------------------------------------------------------------ naming the org repos
def test_share_writes_the_committed_file(shared: tuple[Path, Path, Path]) -> None:
    a, _, remote = shared
    text = (a / FILE).read_text()
    assert '[org "acme"]' in text and f"url = {remote}" in text
    assert git("config", "--file", str(a / FILE), "org.acme.url").stdout.strip() == str(remote)
    assert git("ls-files", FILE, cwd=a).stdout.strip() == FILE  # committed
    assert run_cli("scan", cwd=a).code == 0  # not a memory file: the checks leave it alone
    assert run_cli("search", "blue green", "--json", cwd=a).json()["hits"][0]["id"] == DEPLOY


def test_init_outside_a_terminal_prints_the_commands(shared: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, proj, remote = shared
    c = fresh_clone(tmp_path, proj)
    r = run_cli("init", cwd=c)  # stdin and stdout are pipes: not a terminal
    assert r.code == 0, r.err
    assert f"{FILE} names 1 org memory repo this clone is not subscribed to" in r.out
    assert f"  git memex org add acme {remote}\n" in r.out
    assert subscribed(c) == []  # printed, not run
    j = run_cli("init", "--yes", "--json", cwd=c).json()
    assert [(o["name"], o["state"], o["command"]) for o in j["orgs"]] == [
        ("acme", "offered", f"git memex org add acme {remote}")]
    # the printed command, run as printed, subscribes
    line = next(x.strip() for x in r.out.splitlines() if x.strip().startswith("git memex org add"))
    assert run_cli(*line.split()[2:], cwd=c).code == 0
    assert subscribed(c) == ["acme"]
    r = run_cli("init", cwd=c)
    assert "org add" not in r.out and r.out.strip().endswith("already set up; nothing changed")  # not offered again


def test_init_subscribe_flag_for_scripts(shared: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, proj, _ = shared
    c = fresh_clone(tmp_path, proj)
    r = run_cli("init", "--subscribe", "--json", cwd=c)
    assert r.code == 0, r.err
    assert [(o["name"], o["state"]) for o in r.json()["orgs"]] == [("acme", "subscribed")]
    assert subscribed(c) == ["acme"]
    assert git("config", "--local", "memex.org.acme.url", cwd=c).returncode == 0  # this clone only
    assert run_cli("search", "blue green", "--json", cwd=c).json()["hits"][0]["org"] == "acme"
    again = run_cli("init", "--subscribe", "--json", cwd=c).json()
    assert "orgs" not in again and again["changed"] is False


def _in_a_terminal(args: list[str], cwd: Path, answers: list[str]) -> tuple[int, str]:
    """Run the CLI with stdin and stdout on a real pseudo-terminal; answer each prompt in turn."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        try:
            os.chdir(cwd)
            os.execvpe(sys.executable, [sys.executable, "-m", "git_memex", *args], os.environ)
        finally:
            os._exit(127)  # never return into pytest from the child
    out = b""
    pending = list(answers)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if pending and out.rstrip().endswith(b"]:"):
                os.write(fd, (pending.pop(0) + "\n").encode())
                out += b"\n"
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def test_init_in_a_terminal_asks_per_org(shared: tuple[Path, Path, Path], tmp_path: Path, org: tuple[Path, Path]) -> None:
    a, proj, remote = shared
    other = tmp_path / "other.git"
    shutil.copytree(remote, other)
    r = run_cli("org", "add", "beta", str(other), "--share", cwd=a)
    assert r.code == 0, r.err
    git("commit", "-q", "-am", "a second org", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    c = fresh_clone(tmp_path, proj)
    # editor? none; git hooks? y; then one question per org: acme yes, beta no
    code, out = _in_a_terminal(["init"], c, ["none", "y", "y", "n"])
    assert code == 0, out
    assert f"Subscribe to org memory repo acme ({remote})? (y/n)" in out
    assert f"Subscribe to org memory repo beta ({other})? (y/n)" in out
    assert subscribed(c) == ["acme"]
    code, out = _in_a_terminal(["init"], c, ["none", "y", "n"])  # only beta is asked about again
    assert "repo acme" not in out and "repo beta" in out and code == 0


@pytest.mark.parametrize(("text", "words"), [
    ('[org "Acme!"]\n\turl = /x\n', "'Acme!' is not a valid org name"),
    ('[org "acme"]\n\tbranch = main\n', "org acme has no url"),
    ('[org "acme"]\n\turl = "ext::sh -c touch% /tmp/pwned"\n', "ext:: transport, which runs a command"),
    ('[org "acme"]\n\turl = --upload-pack=touch\n', "starting with '-'"),
    ('[org "acme"\n\turl = /x\n', "cannot be read"),
    ('[remote "acme"]\n\turl = /x\n', "remote.acme.url is not an org entry"),
])
def test_a_bad_entry_is_one_sentence_and_init_completes(tmp_path: Path, text: str, words: str) -> None:
    c = tmp_path / "c"
    c.mkdir()
    git("init", "-q", "-b", "main", cwd=c)
    (c / MEM).mkdir(parents=True)
    (c / FILE).write_text(text)
    r = run_cli("init", "--subscribe", cwd=c)
    assert r.code == 0 and "Traceback" not in r.err
    assert words in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert (c / ".gitattributes").is_file() and subscribed(c) == []  # set up all the same, nothing subscribed
    assert not (data_root() / "org").exists() or os.listdir(data_root() / "org") == []
    warn = [x for x in doctor_lines(c, "warn") if "org file" in x]
    assert len(warn) == 1 and words in warn[0]


@pytest.mark.parametrize(("kind", "words"), [("unreachable", "cannot clone"),
                                             ("plain", "is not a memory repository")])
def test_init_subscribe_to_an_unreachable_or_non_memory_url(tmp_path: Path, kind: str, words: str) -> None:
    url = tmp_path / "nowhere.git"
    if kind == "plain":  # a git repository without a memory folder
        git("init", "-q", "--bare", "-b", "main", str(url))
        seed = tmp_path / "seed"
        git("clone", "-q", str(url), str(seed))
        (seed / "README.md").write_text("not memory\n")
        push_all(seed, "plain")
    c = tmp_path / "c"
    c.mkdir()
    git("init", "-q", "-b", "main", cwd=c)
    (c / MEM).mkdir(parents=True)
    (c / FILE).write_text(f'[org "acme"]\n\turl = {url}\n')
    r = run_cli("init", "--subscribe", "--json", cwd=c)
    assert r.code == 0 and "Traceback" not in r.err
    assert "warning: cannot subscribe to org acme: " in r.err and words in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert [o["state"] for o in r.json()["orgs"]] == ["failed"]
    assert subscribed(c) == [] and (c / ".gitattributes").is_file()
    assert git("config", "--get-regexp", r"^memex\.org\.", cwd=c, check=False).stdout == ""
    assert any("names org acme, which this clone is not subscribed to" in x for x in doctor_lines(c, "warn"))


def test_init_leaves_an_org_subscribed_to_another_url(shared: tuple[Path, Path, Path], tmp_path: Path,
                                                      org: tuple[Path, Path]) -> None:
    a, proj, remote = shared
    other = tmp_path / "fork.git"
    shutil.copytree(remote, other)
    assert run_cli("org", "remove", "acme", cwd=a).code == 0  # the data root's clone of acme is a's
    c = fresh_clone(tmp_path, proj)
    assert run_cli("org", "add", "acme", str(other), cwd=c).code == 0
    r = run_cli("init", "--subscribe", cwd=c)
    assert r.code == 0 and f"names org acme at {remote}, but this clone subscribes to acme at {other}" in r.err
    assert run_cli("org", "list", "--json", cwd=c).json()["orgs"][0]["url"] == str(other)
    assert any("org file" in x and str(other) in x for x in doctor_lines(c, "warn"))


def test_remove_share_drops_the_entry(shared: tuple[Path, Path, Path]) -> None:
    a = shared[0]
    r = run_cli("org", "remove", "acme", "--share", cwd=a)
    assert r.code == 0, r.err
    assert not (a / FILE).exists() and subscribed(a) == []
    r = run_cli("org", "remove", "acme", "--share", cwd=a)
    assert r.code == 1 and "not subscribed" in r.err


def test_share_an_already_subscribed_org(org: tuple[Path, Path], tmp_path: Path) -> None:
    remote, _ = org
    a = tmp_path / "a"
    a.mkdir()
    git("init", "-q", "-b", "main", cwd=a)
    assert run_cli("org", "add", "acme", str(remote), cwd=a).code == 0
    r = run_cli("org", "add", "acme", str(remote), "--share", cwd=a)
    assert r.code == 0 and "already subscribed; named it in" in r.out
    assert git("config", "--file", str(a / FILE), "org.acme.url").stdout.strip() == str(remote)
    r = run_cli("org", "add", "beta", "ext::sh -c id", "--share", cwd=a)
    assert r.code == 1 and "runs a command" in r.err and "beta" not in (a / FILE).read_text()


# ------------------------------------------------------------------ doctor
@pytest.fixture
def sub(org: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project a subscribed to acme, the org clone, the org seed)."""
    remote, seed = org
    a = tmp_path / "a"
    a.mkdir()
    git("init", "-q", "-b", "main", cwd=a)
    assert run_cli("init", "--yes", cwd=a).code == 0
    assert run_cli("org", "add", "acme", str(remote), cwd=a).code == 0
    return a, data_root() / "org" / "acme", seed


def org_lines(work: Path) -> tuple[int, list[str]]:
    r = run_cli("doctor", cwd=work)
    assert "Traceback" not in r.err
    return r.code, [x for x in r.out.splitlines() if "org acme" in x or "org file" in x or "org memory" in x]


def test_doctor_ok_for_a_healthy_subscription(sub: tuple[Path, Path, Path]) -> None:
    code, lines = org_lines(sub[0])
    assert code == 0 and len(lines) == 1 and lines[0].startswith("ok") and "follows" in lines[0]


def test_doctor_a_clone_deleted_by_hand(sub: tuple[Path, Path, Path]) -> None:
    a, clone, _ = sub
    shutil.rmtree(clone)
    code, lines = org_lines(a)
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith("fail") and "missing (deleted by hand?)" in lines[0]
    assert "`git memex org remove acme && git memex org add acme " in lines[0]


def test_doctor_an_origin_that_no_longer_matches(sub: tuple[Path, Path, Path], tmp_path: Path) -> None:
    a, clone, _ = sub
    git("remote", "set-url", "origin", str(tmp_path / "elsewhere.git"), cwd=clone)
    code, lines = org_lines(a)
    assert code == 1 and len(lines) == 1 and "the clone's origin is" in lines[0]
    fix = lines[0].split("run `", 1)[1].rstrip("`")
    assert subprocess.run(fix, shell=True, cwd=a, capture_output=True, env={
        **os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}).returncode == 0
    assert org_lines(a)[0] == 0


def test_doctor_a_diverged_clone(sub: tuple[Path, Path, Path]) -> None:
    a, clone, seed = sub
    (clone / "local.txt").write_text("x\n")
    git("add", "local.txt", cwd=clone)
    git("commit", "-q", "-m", "local", cwd=clone)
    code, lines = org_lines(a)
    assert code == 1 and len(lines) == 1 and "has 1 commit(s) that origin/main lacks" in lines[0]
    (seed / "other.txt").write_text("y\n")
    push_all(seed, "upstream moves")
    git("fetch", "-q", "origin", cwd=clone)
    code, lines = org_lines(a)
    assert code == 1 and "has diverged from origin/main" in lines[0] and "reset --hard origin/main" in lines[0]


def test_doctor_a_missing_upstream_and_a_detached_head(sub: tuple[Path, Path, Path]) -> None:
    a, clone, _ = sub
    git("branch", "--unset-upstream", cwd=clone)
    code, lines = org_lines(a)
    assert code == 1 and len(lines) == 1 and "has no upstream" in lines[0]
    assert "branch --set-upstream-to origin/main" in lines[0]
    git("branch", "--set-upstream-to", "origin/main", cwd=clone)
    git("checkout", "-q", "--detach", cwd=clone)
    code, lines = org_lines(a)
    assert code == 1 and "HEAD is detached" in lines[0] and "checkout main" in lines[0]


def test_doctor_a_stale_and_an_unreadable_org_index(sub: tuple[Path, Path, Path]) -> None:
    a, clone, seed = sub
    org_file(seed / MEM / "lessons", "01JORG0000000000000LESSON", "Retries need jitter and a cap.", "lesson")
    push_all(seed, "a lesson")
    git("pull", "-q", "--ff-only", cwd=clone)  # by hand, not `org pull`
    code, lines = org_lines(a)
    assert code == 0 and len(lines) == 1 and lines[0].startswith("warn") and "index is stale" in lines[0]
    assert "git memex reindex" in lines[0]
    assert org_lines(a)[1][0].startswith("ok")  # doctor's own refresh brought it in line
    index = clone / ".git" / "memex" / "index.db"
    for extra in ("-wal", "-shm"):
        Path(str(index) + extra).unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    code, lines = org_lines(a)
    assert code == 1 and "unreadable" in lines[0] and "git memex reindex" in lines[0]
    assert org_lines(a)[0] == 0


def test_doctor_a_clone_with_changes_of_its_own(sub: tuple[Path, Path, Path]) -> None:
    a, clone, _ = sub
    path = clone / MEM / "decisions" / f"{DEPLOY}.md"
    path.write_text(path.read_text().replace("never by hand", "by hand on Fridays"))
    code, lines = org_lines(a)
    assert code == 0 and lines[0].startswith("warn") and "changes of its own (1 file(s))" in lines[0]


# ------------------------------------------------------------------ bad org files
def test_an_org_file_with_a_secret_is_masked_everywhere_and_doctor_fails(sub: tuple[Path, Path, Path],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    a, _, seed = sub
    org_file(seed / MEM / "engineering", LEAK, f"The staging deploy bot token is {TOKEN} until rotation.")
    path = seed / MEM / "engineering" / f"{LEAK}.md"  # in frontmatter fields too, which no write path left there
    path.write_text(path.read_text().replace("status: active\n", f"status: active\ntitle: bot {TOKEN}\n"
                                             f"tags:\n- staging\n- {TOKEN}\naliases:\n- {TOKEN}\n"))
    # pushed past the hooks (the org repo's clone here has none): it reaches subscribers anyway
    push_all(seed, "a leak")
    assert run_cli("org", "pull", cwd=a).code == 0
    outs = [run_cli("search", "staging", "deploy", "bot", "--json", cwd=a),
            run_cli("search", "staging", "deploy", "bot", cwd=a),
            run_cli("list", "--scope", "org", "--json", cwd=a),
            run_cli("list", cwd=a),
            run_cli("context", "-q", "staging deploy bot token", "--json", cwd=a)]
    for r in outs:
        assert r.code == 0, r.err
        assert TOKEN not in r.out and TOKEN[:4] in r.out.replace(TOKEN, ""), r.out  # masked, its documented prefix ghp_ kept
    assert LEAK in outs[0].out

    import anyio
    import mcp

    from git_memex.agents.mcp_server import build_server

    monkeypatch.chdir(a)

    async def main() -> list[str]:
        async with mcp.Client(build_server(a)) as client:
            got = []
            for tool, args in (("memory_search", {"query": "staging deploy bot"}), ("memory_get", {"id": LEAK}),
                               ("memory_list", {"scope": "org"})):
                res = await client.call_tool(tool, args)
                assert not res.is_error
                got.append(str(res.structured_content) + "".join(getattr(c, "text", "") for c in res.content))
            return got

    for text in anyio.run(main):
        assert TOKEN not in text
    code, lines = org_lines(a)
    leak = [x for x in lines if "org memory" in x]
    assert code == 1 and len(leak) == 1 and LEAK in leak[0] and "holds a secret" in leak[0] and TOKEN not in leak[0]


def test_an_org_file_with_conflict_markers_is_quarantined_and_reported(sub: tuple[Path, Path, Path]) -> None:
    a, _, seed = sub
    bad = "01JORG00000000000000MARKED"
    org_file(seed / MEM / "policies", bad, "<<<<<<< ours\nFreeze merges on Fridays.\n=======\n"
             "Merge any weekday.\n>>>>>>> theirs")
    push_all(seed, "a botched merge")
    r = run_cli("org", "pull", "--json", cwd=a)
    assert r.code == 0 and r.json()["orgs"][0]["reindexed"]["quarantined"] == 1
    for query in ("freeze merges fridays", "merge any weekday"):
        assert run_cli("search", query, "--json", cwd=a).json()["hits"] == []
    code, lines = org_lines(a)
    quarantined = [x for x in lines if bad in x]
    assert code == 1 and len(quarantined) == 1 and quarantined[0].startswith("fail")
    assert "conflict markers" in quarantined[0] and "fix it in the org repository" in quarantined[0]


def test_doctor_names_the_commit_a_stale_org_index_was_built_from(sub: tuple[Path, Path, Path]) -> None:
    a, clone, _ = sub
    index = clone / ".git" / "memex" / "index.db"
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = 'deadbeef' WHERE key = 'org_commit'")
    code, lines = org_lines(a)
    assert "built from deadbeef" in lines[0]


def test_share_that_cannot_write_the_file_takes_the_subscription_back(org: tuple[Path, Path], tmp_path: Path) -> None:
    remote, _ = org
    a = tmp_path / "a"
    a.mkdir()
    git("init", "-q", "-b", "main", cwd=a)
    (a / MEM).mkdir(parents=True)
    (a / FILE).write_text('[org "beta"]\n\turl = /somewhere/beta.git\n')
    (a / (FILE + ".lock")).write_text("")  # another git config is writing it
    r = run_cli("org", "add", "acme", str(remote), "--share", cwd=a)
    assert r.code == 2 and "cannot write" in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert subscribed(a) == [] and not (data_root() / "org" / "acme").exists()
    assert git("config", "--get-regexp", r"^memex\.org\.", cwd=a, check=False).stdout == ""
    assert (a / FILE).read_text() == '[org "beta"]\n\turl = /somewhere/beta.git\n'


@pytest.mark.parametrize("share", [True, False], ids=["add-share", "remove-share"])
def test_share_when_the_file_is_a_folder(org: tuple[Path, Path], tmp_path: Path, share: bool) -> None:
    """`orgs.gitconfig` is a folder: one sentence, exit 2, and the subscription taken back (add) or
    left as it was (remove)."""
    remote, _ = org
    a = tmp_path / "a"
    a.mkdir()
    git("init", "-q", "-b", "main", cwd=a)
    (a / FILE).mkdir(parents=True)
    if not share:
        assert run_cli("org", "add", "acme", str(remote), cwd=a).code == 0
        before = subscribed(a)
        r = run_cli("org", "remove", "acme", "--share", cwd=a)
        assert subscribed(a) == before and (data_root() / "org" / "acme").is_dir()
    else:
        r = run_cli("org", "add", "acme", str(remote), "--share", cwd=a)
        assert subscribed(a) == [] and not (data_root() / "org" / "acme").exists()
        assert git("config", "--get-regexp", r"^memex\.org\.", cwd=a, check=False).stdout == ""
    assert r.code == 2 and "orgs.gitconfig" in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert "internal error" not in r.err and (a / FILE).is_dir()

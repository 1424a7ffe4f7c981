"""A team's first week, scripted as one story (issue 32, "Done when"): each step runs on what the
steps before it left, so a break BETWEEN steps fails here even where every step's own test passes.

Real parts only: the git binary, a bare origin, two clones (Alice, the maintainer, and Bob), each
with its own git identity in its own clone's config and its own data root; the hooks git runs;
husky and lefthook from the npm registry installed as their users do (`npm install` running
husky's `prepare`, `lefthook install` run again); `git memex init` answered on a terminal; the
agent configs' commands started with a new login shell's PATH, the MCP server through the
official stdio client; no `gh` anywhere on PATH; the real `git memex remote-server` on 127.0.0.1.

- test_a_week_with_husky: set-up with husky and a teammate's `npm install` (item 1), agent
  configs from a new shell (3), a rule approved and committed plainly (4), review by a plain
  `git merge` (5), a conflict taken with `--theirs` (6), an approval in someone else's name
  (7), proposals that crossed on the remote server and its review command (8).
- test_a_week_with_lefthook: `lefthook install`, init, `lefthook install` again and a teammate's
  clone (item 2), then a conflict taken with `--ours` under lefthook's hooks (6).
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from git_memex.core import frontmatter, model

from conftest import run_cli, user_profile

sys.path[:0] = [str(Path(__file__).parent / d) for d in ("git", "review", "remote")]
from test_hook_manager_join import (  # noqa: E402  (tests/git)
    LEFTHOOK,
    VENV_BIN,
    WITH_MEMEX,
    lefthook_install,
    npm,
    npm_cache,
)
from test_review_without_github import path_without_gh  # noqa: E402  (tests/review)

from client_support import remote_server  # noqa: E402  (tests/remote)

__all__ = ["npm_cache"]  # the session's npm cache fixture (tests/git/test_hook_manager_join.py)

FOLDER = ".ai/open-memex"
# A fake AWS key pair written for this test (the format: `AKIA` and 16 of [A-Z0-9]; a 40-character
# secret), in a memory's body as a person pastes it.
KEY_ID = "AKIA" + "TEAMWEEK7Q2XJ4PZ"
KEY_SECRET = "fQ3rT8vLk2" + "Wn9sB4xHm7" + "Pj1cY6dGz0" + "Ae5uR2tNq8"
LEAK = f"the staging deploy role\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {KEY_SECRET}\n"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
NOT_ON_LOGIN_PATH = "git-memex is not on the PATH a new login shell gets"
BOT = ("Staging deploys go through the deploy-bot.\n\n"
       "The bot posts every deploy in #staging.\n\n"
       "Rollback is `deploy-bot rollback staging`.\n")


@dataclass
class Person:
    name: str
    email: str
    work: Path
    data: Path  # the data root (GIT_MEMEX_HOME) of this person's machine

    @property
    def env(self) -> dict[str, str]:
        return {"GIT_MEMEX_HOME": str(self.data)}

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """git as this person runs it in their clone, from a shell whose PATH has git-memex, node and
        git and no `gh` (the `team` fixture's); the hooks git starts get this environment."""
        r = subprocess.run(["git", *args], cwd=self.work, capture_output=True, text=True, timeout=600,
                           env={**os.environ, **self.env})
        if check:
            assert r.returncode == 0, f"{self.name}: git {' '.join(args)}: {r.stdout}{r.stderr}"
        return r

    def memex(self, *args: str, code: int | None = 0) -> Any:
        """`git memex ARGS` in this person's clone; with `--json` the document, else the Result."""
        r = run_cli(*args, cwd=self.work, env=self.env)
        if code is not None:
            assert r.code == code, f"{self.name}: git memex {' '.join(args)} -> {r.code}: {r.out}{r.err}"
        return r.json() if "--json" in args and r.code == 0 else r

    def file(self, mid: str) -> Path:
        return self.work / FOLDER / f"{mid}.md"

    def read(self, mid: str) -> tuple[dict[str, Any], str]:
        return frontmatter.parse(self.file(mid).read_text("utf-8"))

    def edit(self, mid: str, body: str | None = None, **changes: object) -> None:
        """What a person's editor does to a memory file: a field or the body changed, nothing else."""
        meta, old = self.read(mid)
        meta.update(changes)
        self.file(mid).write_text(frontmatter.serialize(meta, old if body is None else body), encoding="utf-8")

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.strip()

    def branch(self) -> str:
        return self.git("branch", "--show-current").stdout.strip()


def valid(p: Person, mid: str) -> tuple[dict[str, Any], str]:
    """The memory file parses and passes the model's strict checks, with no conflict marker left."""
    text = p.file(mid).read_text("utf-8")
    assert "<<<<<<<" not in text and ">>>>>>>" not in text, text
    meta, body = frontmatter.parse(text)
    model.validate(model.from_parsed(meta, body))
    return meta, body


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Person, Person, Path]:
    """(alice, bob, bare origin): each identity lives in its own clone's git config (the fixture's
    GIT_AUTHOR_*/GIT_COMMITTER_* variables would speak for both, so they go), and PATH holds
    git-memex, node and git but no `gh`."""
    for role in ("AUTHOR", "COMMITTER"):
        for what in ("NAME", "EMAIL"):
            monkeypatch.delenv(f"GIT_{role}_{what}", raising=False)
    monkeypatch.setenv("PATH", WITH_MEMEX)
    monkeypatch.setenv("PATH", path_without_gh(tmp_path))
    assert shutil.which("gh") is None and shutil.which("git-memex") is not None
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    alice = Person("Alice Maintainer", "alice@example.com", tmp_path / "alice", tmp_path / "alice-data")
    bob = Person("Bob Builder", "bob@example.com", tmp_path / "bob", tmp_path / "bob-data")
    return alice, bob, bare


def clone(p: Person, bare: Path) -> None:
    subprocess.run(["git", "clone", "-q", str(bare), str(p.work)], check=True, capture_output=True)
    p.git("config", "user.name", p.name)
    p.git("config", "user.email", p.email)


def leak_is_refused(p: Person) -> None:
    """A memory holding the fake AWS key, `git add`-ed and committed by plain `git commit` (from a
    shell with git-memex on PATH): the hook git runs refuses it and never shows the key; the
    branch does not move. The file is taken out again afterwards."""
    m = model.create(LEAK, scope="project", review_state="proposed")
    rel = f"{FOLDER}/{m.id}.md"
    (p.work / FOLDER).mkdir(parents=True, exist_ok=True)
    (p.work / rel).write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    before = p.head()
    p.git("add", rel)
    r = p.git("commit", "-q", "-m", "note the staging role", check=False)
    said = r.stdout + r.stderr
    assert r.returncode != 0 and "aws-access-key-id" in said, f"{p.name}'s key went in: {said}"
    assert KEY_ID not in said and KEY_SECRET not in said, said
    assert p.head() == before
    p.git("rm", "-q", "--cached", rel)
    (p.work / rel).unlink()


def hooks_path(p: Person) -> str:
    return p.git("config", "core.hooksPath", check=False).stdout.strip()


# ------------------------------------------------------------------ init answered on a terminal
def init_on_a_terminal(p: Person) -> tuple[str, list[str]]:
    """`git memex init` run by the person at a terminal (a pseudo-terminal is its stdin and
    stdout), answering `none` to the editor question and `y` to every other. (output, questions)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal is the pty
        os.chdir(p.work)
        os.execve(str(Path(VENV_BIN) / "git-memex"), ["git-memex", "init"], {**os.environ, **p.env})
    out, questions = "", list[str]()
    while True:
        ready, _, _ = select.select([fd], [], [], 120)  # a hang guard (a question nobody answers), no measure
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"init waits for an answer nobody gives: {out}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk.decode("utf-8", "replace")
        while out.count("]: ") > len(questions):
            q = out.split("]: ")[len(questions)].rsplit("\n", 1)[-1]
            questions.append(q)
            os.write(fd, b"none\n" if "editor" in q else b"y\n")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, out
    return out.replace("\r\n", "\n"), questions


# ------------------------------------------------------------------ a new login shell
def new_shell(home: Path) -> dict[str, str]:
    """What a new login shell's programs get: HOME and the system's folders plus ~/.local/bin."""
    return {"HOME": str(home), "PATH": f"{SYSTEM_PATH}:{home}/.local/bin", "LANG": "C.UTF-8"}


def login_shell_finds(home: Path, command: str) -> str:
    """`command -v COMMAND` in a real login shell started with nothing of this environment."""
    r = subprocess.run(["env", "-i", f"HOME={home}", "bash", "-lc", f"command -v {command}"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=60)
    return r.stdout.strip() if r.returncode == 0 else ""


def mcp_from_a_new_shell(command: str, args: list[str], cwd: Path, env: dict[str, str], query: str) -> list[str]:
    """The official MCP client starts COMMAND ARGS over stdio with `env` (a new shell's), as the
    editor does, and searches: the ids found."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> list[str]:
        params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            res = await s.call_tool("memory_search", {"query": query})
            assert not res.is_error, res.content
            assert isinstance(res.structured_content, dict)
            return [h["id"] for h in res.structured_content["hits"]]

    return anyio.run(main)


def written_commands(work: Path, home: Path) -> dict[str, str]:
    """The program each agent config init wrote starts: where -> first word of its command."""
    mcp = json.loads((work / ".mcp.json").read_text())["mcpServers"]["memex"]
    found = {".mcp.json": mcp["command"]}
    settings = json.loads((work / ".claude" / "settings.json").read_text())
    for event, entries in settings["hooks"].items():
        for entry in entries:
            for hook in entry["hooks"]:
                if "memex" in hook["command"]:
                    found[f".claude/settings.json {event}"] = hook["command"].split()[0]
    import tomllib

    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())
    found["~/.codex/config.toml"] = codex["mcp_servers"]["memex"]["command"]
    opencode = json.loads("\n".join(line for line in (work / "opencode.jsonc").read_text().splitlines()
                                    if not line.lstrip().startswith("//")))
    found["opencode.jsonc"] = opencode["mcp"]["servers"]["memex"]["command"][0]  # its v2 shape
    return found


# ------------------------------------------------------------------ the week, with husky
def husky_project(work: Path) -> None:
    (work / ".gitignore").write_text("node_modules\n")
    (work / "README.md").write_text("the team's service\n")
    (work / "package.json").write_text(json.dumps({"name": "team-app", "version": "1.0.0", "private": True,
                                                   "scripts": {"prepare": "husky"},
                                                   "devDependencies": {"husky": "9.1.7"}}, indent=2) + "\n")


@pytest.mark.slow
def test_a_week_with_husky(team: tuple[Person, Person, Path], npm_cache: Path) -> None:
    alice, bob, bare = team
    home = Path.home()

    # --- 1. Alice sets the repository up with husky and accepts joining it; Bob clones -----------
    clone(alice, bare)
    husky_project(alice.work)
    npm(npm_cache, alice.work, "install")  # husky's `prepare`: core.hooksPath=.husky/_
    assert hooks_path(alice) == ".husky/_"
    alice.git("add", "-A")
    alice.git("commit", "-q", "-m", "the service, with husky")
    said, asked = init_on_a_terminal(alice)
    (join,) = [q for q in asked if "husky" in q]
    assert "add git-memex's secret scan to .husky (committed" in join, asked
    assert "husky .husky/pre-commit" in said, said
    assert "git-memex" in (alice.work / ".husky" / "pre-commit").read_text()
    assert hooks_path(alice) == ".husky/_"  # husky keeps its folder
    leak_is_refused(alice)

    # --- 3. agent configs, started from a new login shell ---------------------------------------
    r = alice.memex("init", "--yes", "--client", "claude", "--claude-hooks")
    if not login_shell_finds(home, "git-memex"):  # only the install shell's PATH has it: init says so
        assert NOT_ON_LOGIN_PATH in r.out, r.out
    # the README's set-up: git-memex linked into ~/.local/bin, which a user's login profile puts on PATH
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    (home / ".local" / "bin" / "git-memex").symlink_to(Path(VENV_BIN) / "git-memex")
    user_profile(home)
    for client in (("claude", "--claude-hooks"), ("codex",), ("opencode",)):
        r = alice.memex("init", "--yes", "--client", *client)
        assert NOT_ON_LOGIN_PATH not in r.out, r.out
    real = (Path(VENV_BIN) / "git-memex").resolve()
    for where, command in written_commands(alice.work, home).items():
        found = login_shell_finds(home, command) if os.sep not in command else command
        assert found and Path(found).resolve() == real, f"{where}: {command!r} from a new login shell: {found!r}"
        assert Path(shutil.which(command, path=new_shell(home)["PATH"]) or "").resolve() == real, where
    alice.git("add", "-A")
    alice.git("commit", "-q", "-m", "set up git-memex with husky and the agents")
    alice.git("push", "-q", "-u", "origin", "main")

    clone(bob, bare)
    bob.memex("init", "--yes")
    npm(npm_cache, bob.work, "install")  # after init: husky's prepare sets core.hooksPath again
    assert hooks_path(bob) == ".husky/_"
    leak_is_refused(bob)
    assert bob.git("status", "--porcelain").stdout == ""

    # --- 4. a rule approved and committed with a plain `git commit`, served in Bob's clone -------
    rule = alice.memex("add", "Use pnpm, never npm, to add dependencies", "--role", "instruction",
                       "--type", "workflow", "--json")["id"]
    alice.memex("submit", rule)
    alice.memex("instruction", "approve", rule)
    alice.git("commit", "-q", "-m", "the pnpm rule")  # no -a, no add
    assert alice.git("status", "--porcelain").stdout == "", "approve left part of the rule uncommitted"
    alice.git("push", "-q")
    bob.git("pull", "-q", "--ff-only")
    served = bob.memex("context")
    assert "Use pnpm, never npm" in served.out and "[not served" not in served.out, served.out
    assert rule in [i["id"] for i in bob.memex("context", "--json")["instructions"]]
    # ... and the agent started tomorrow gets it: Claude's SessionStart hook and the MCP server,
    # each started with a new login shell's PATH in Bob's clone
    settings = json.loads((bob.work / ".claude" / "settings.json").read_text())
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    hook = subprocess.run(["sh", "-c", start], cwd=bob.work, env=new_shell(home), capture_output=True, text=True,
                          input=json.dumps({"cwd": str(bob.work), "hook_event_name": "SessionStart"}), timeout=120)
    assert hook.returncode == 0 and "Use pnpm, never npm" in hook.stdout, hook.stdout + hook.stderr
    server = json.loads((bob.work / ".mcp.json").read_text())["mcpServers"]["memex"]
    assert rule in mcp_from_a_new_shell(server["command"], server.get("args", []), bob.work, new_shell(home), "pnpm")

    # --- 5. Bob proposes on a branch, Alice merges with plain git, pr-status applies without gh --
    mid = bob.memex("add", BOT, "--type", "decision", "--json")["id"]
    bob.memex("submit", mid, "--branch", "memex/staging-bot")
    assert bob.branch() == "main", "submit --branch left Bob on the review branch"
    bob.git("push", "-q", "-u", "origin", "memex/staging-bot")
    alice.git("fetch", "-q", "origin")
    alice.git("merge", "-q", "--no-ff", "origin/memex/staging-bot", "-m", "Merge branch 'memex/staging-bot'")
    merge = alice.head()
    alice.git("push", "-q", "origin", "main")
    bob.git("pull", "-q", "--ff-only")
    assert bob.read(mid)[0]["review_state"] == "proposed"
    r = bob.memex("pr-status", "--apply")
    assert f"applied {mid}: proposed → published (by local:alice@example.com)" in r.out, r.out
    meta, _ = bob.read(mid)
    assert meta["review_state"] == "published" and meta["approved_by"] == "local:alice@example.com"
    assert merge[:10] in meta["review_history"][-1]["note"]
    bob.git("commit", "-q", "-m", "publish the staging-bot decision")  # pr-status staged it
    assert bob.git("status", "--porcelain").stdout == ""
    bob.git("push", "-q")
    alice.git("pull", "-q", "--ff-only")
    assert alice.read(mid)[0]["review_state"] == "published"

    # --- 6. both edit the memory on two branches; the merge conflicts; resolve --theirs ---------
    bob.git("checkout", "-q", "-b", "bob/bot-wording")
    bob.edit(mid, body=BOT.replace("go through the deploy-bot.", "go through the deploy-bot, after the smoke tests."),
             importance="high", tags=["staging"])
    bob.git("commit", "-q", "-am", "staging: after the smoke tests")
    bob.git("push", "-q", "-u", "origin", "bob/bot-wording")
    bob.git("checkout", "-q", "main")
    alice.edit(mid, body=BOT.replace("go through the deploy-bot.", "go through the deploy-bot, on weekdays."),
               importance="low", aliases=["staging deploys"])
    alice.git("commit", "-q", "-am", "staging: weekdays only")
    alice.git("fetch", "-q", "origin")
    r = alice.git("merge", "origin/bob/bot-wording", "-m", "Merge bob/bot-wording", check=False)
    assert r.returncode != 0 and "CONFLICT" in r.stdout, r.stdout + r.stderr
    assert "<<<<<<<" in alice.file(mid).read_text("utf-8")
    r = alice.memex("resolve", mid, "--theirs")
    meta, body = valid(alice, mid)
    assert body.startswith("Staging deploys go through the deploy-bot, after the smoke tests.\n"), body
    assert "on weekdays" not in body and "#staging" in body and meta["importance"] == "high"  # Bob's side
    assert meta["aliases"] == ["staging deploys"] and meta["tags"] == ["staging"]  # both sides' own changes
    assert meta["review_state"] == "published"
    assert alice.git("diff", "--name-only", "--diff-filter=U").stdout == ""
    alice.git("commit", "-q", "--no-edit")  # the merge concluded through husky's pre-commit hook
    assert len(alice.git("log", "-1", "--format=%P").stdout.split()) == 2
    alice.git("push", "-q", "origin", "main")
    bob.git("pull", "-q", "--ff-only")
    assert bob.read(mid) == alice.read(mid)
    assert [h["id"] for h in bob.memex("search", "smoke tests", "--json")["hits"]] == [mid]

    # --- 7. Bob approves Alice's second rule: in her name he cannot, in his own he does ----------
    second = alice.memex("add", "Every migration ships with its down script", "--role", "instruction",
                         "--type", "workflow", "--json")["id"]
    alice.memex("submit", second)  # on main, submit commits the proposal itself
    assert alice.git("status", "--porcelain").stdout == ""
    alice.git("push", "-q")
    bob.git("pull", "-q", "--ff-only")
    before = bob.file(second).read_bytes()
    r = bob.memex("instruction", "approve", second, "--by", "alice@example.com", code=None)
    assert r.code != 0 and "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1, r.out + r.err
    assert bob.file(second).read_bytes() == before
    assert not (bob.work / FOLDER / ".approvals" / f"{second}.json").exists()
    assert bob.git("status", "--porcelain").stdout == ""
    bob.memex("instruction", "approve", second)
    meta, _ = bob.read(second)
    assert "bob@example.com" in str(meta["approved_by"]) and "alice" not in str(meta["approved_by"]), meta
    record = json.loads((bob.work / FOLDER / ".approvals" / f"{second}.json").read_text())
    assert record["approver"]["email"] == "bob@example.com", record
    bob.git("commit", "-q", "-m", "approve the migration rule")
    assert bob.git("status", "--porcelain").stdout == ""
    bob.git("push", "-q")
    alice.git("pull", "-q", "--ff-only")
    served_ids = [i["id"] for i in alice.memex("context", "--json")["instructions"]]
    assert second in served_ids and rule in served_ids

    # --- 8. proposals that crossed on the remote server; Alice reviews from the command line -----
    with remote_server(alice.work.parent) as srv:
        alice.memex("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["reviewer"]), "--json")
        bob.memex("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"]), "--json")
        assert bob.memex("propose", mid, "--to", "remote", "team", "--json")["revision"] == 1
        alice.memex("remote", "pull", "team", "--json")
        text = alice.read(mid)[1]
        alice.edit(mid, body=text.replace("in #staging", "in #staging and #deploys"))
        assert alice.memex("propose", mid, "--to", "remote", "team", "--json")["revision"] == 2
        bob.edit(mid, body=text.replace("rollback staging`.", "rollback staging`, then page on-call."))
        out = bob.memex("propose", mid, "--to", "remote", "team", "--json")  # based on revision 1: stale
        assert out["revision"] == 3 and out["merged_with"]["revision"] == 2, out
        doc = srv.call("GET", f"/memories/{mid}", role="reader")
        body = frontmatter.parse(doc["file"])[1]
        assert "#staging and #deploys" in body and "then page on-call" in body  # nothing lost
        assert bob.read(mid)[1] == body
        alice.memex("remote", "pull", "team", "--json")
        # her own copy still says revision 2's text: she reads the revision under review, then approves it
        shown = alice.memex("show", "--remote", "team", mid, "--json")
        assert "then page on-call" in json.dumps(shown), shown
        out = alice.memex("remote", "review", "team", mid, "--approve", "--read-remote", "--note", "both changes read",
                          "--json")
        assert (out["reviewed_revision"], out["review_state"]) == (3, "approved"), out
        meta = frontmatter.parse(srv.call("GET", f"/memories/{mid}", role="reader")["file"])[0]
        assert meta["review_state"] == "approved" and meta["review_note"] == "both changes read"
        audit = [json.loads(line) for line in (srv.root / "audit.jsonl").read_text().splitlines()]
        reviews = [(e["who"], e["decision"], e["from_revision"]) for e in audit
                   if e["id"] == mid and e["event"] == "review" and e["outcome"] == "committed"]
        assert reviews == [("reviewer1", "approve", 3)], reviews  # the reviewer's token's name, the revision read


# ------------------------------------------------------------------ the week, with lefthook
TEAM_LEFTHOOK = "pre-commit:\n  commands:\n    lint:\n      run: echo team lint\n"


@pytest.mark.slow
def test_a_week_with_lefthook(team: tuple[Person, Person, Path], npm_cache: Path) -> None:
    alice, bob, bare = team

    # --- 2. lefthook install, init, lefthook install again: the scan still refuses -------------
    clone(alice, bare)
    (alice.work / ".gitignore").write_text("node_modules\n")
    (alice.work / "package.json").write_text('{"name": "team-app", "version": "1.0.0", "private": true}\n')
    (alice.work / "lefthook.yml").write_text(TEAM_LEFTHOOK)
    npm(npm_cache, alice.work, "install", "-E", LEFTHOOK)
    lefthook_install(alice.work)
    alice.git("add", "-A")
    alice.git("commit", "-q", "-m", "the service, with lefthook")
    said = alice.memex("init", "--yes").out
    assert "lefthook lefthook.yml" in said, said
    lefthook_install(alice.work)  # lefthook rewrites .git/hooks
    leak_is_refused(alice)
    again = alice.memex("init", "--yes")  # rerunning init after lefthook: repairs or changes nothing
    leak_is_refused(alice)
    assert "Warning" not in again.out and "move one of them away" not in again.err, again.out + again.err
    alice.git("add", "-A")
    r = alice.git("commit", "-q", "-m", "lefthook and git-memex")  # the team's lint runs too
    assert "team lint" in r.stdout + r.stderr, r.stdout + r.stderr
    alice.git("push", "-q", "-u", "origin", "main")

    clone(bob, bare)
    bob.memex("init", "--yes")
    npm(npm_cache, bob.work, "install")  # the lock file's lefthook
    lefthook_install(bob.work)
    leak_is_refused(bob)

    # --- 6. a conflict taken with --ours, concluded under lefthook's hooks -----------------------
    mid = alice.memex("add", BOT, "--type", "decision", "--json")["id"]
    alice.memex("submit", mid)  # its own commit, through lefthook's pre-commit hook
    alice.git("push", "-q")
    bob.git("pull", "-q", "--ff-only")
    bob.git("checkout", "-q", "-b", "bob/bot-wording")
    bob.edit(mid, body=BOT.replace("go through the deploy-bot.", "go through the deploy-bot, after the smoke tests."),
             importance="high", tags=["staging"])
    bob.git("commit", "-q", "-am", "staging: after the smoke tests")
    bob.git("push", "-q", "-u", "origin", "bob/bot-wording")
    alice.edit(mid, body=BOT.replace("go through the deploy-bot.", "go through the deploy-bot, on weekdays."),
               importance="low", aliases=["staging deploys"])
    alice.git("commit", "-q", "-am", "staging: weekdays only")
    alice.git("fetch", "-q", "origin")
    r = alice.git("merge", "origin/bob/bot-wording", "-m", "Merge bob/bot-wording", check=False)
    assert r.returncode != 0 and "CONFLICT" in r.stdout, r.stdout + r.stderr
    alice.memex("resolve", mid, "--ours")
    meta, body = valid(alice, mid)
    assert body.startswith("Staging deploys go through the deploy-bot, on weekdays.\n"), body
    assert "smoke tests" not in body and meta["importance"] == "low"  # Alice's side
    assert meta["aliases"] == ["staging deploys"] and meta["tags"] == ["staging"]  # both sides' own changes
    alice.git("commit", "-q", "--no-edit")  # through lefthook's pre-commit hook
    assert len(alice.git("log", "-1", "--format=%P").stdout.split()) == 2
    alice.git("push", "-q", "origin", "main")
    bob.git("checkout", "-q", "main")
    bob.git("pull", "-q", "--ff-only")
    assert bob.read(mid) == alice.read(mid)

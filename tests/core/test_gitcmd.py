"""core/gitcmd.py is the one place git-memex starts git, and its `fail` option turns "git is not
installed / took too long / failed" into one sentence (a MemexError, exit 2)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import git_memex
from git_memex.core.gitcmd import Fail, finish_git, git_text, run_git, start_git
from git_memex.errors import FAILED, MemexError

from conftest import git, run_cli_process

PACKAGE = Path(git_memex.__file__).parent
RUNNER = PACKAGE / "core" / "gitcmd.py"
# what else the package starts (the first word of its command line), none of them git
OTHER_PROGRAMS = {"sys.executable", "'gh'", "shell"}  # shell: the user's login shell (agents/clients.py)
STARTERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput",
            "create_subprocess_exec", "create_subprocess_shell", "system", "popen", "execv", "execvp",
            "execvpe", "execl", "execlp", "spawnv", "spawnvp", "spawnl", "spawnlp", "posix_spawn", "posix_spawnp"}
FAIL = Fail("git is not installed or not on PATH; nothing was changed",
            "git took more than a moment and was stopped; nothing was changed",
            "git could not do it ({}); nothing was changed")


def _starts(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each list or tuple spelled with "git" first, and for each process start
    whose program is not one of OTHER_PROGRAMS."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip() == "git":
                found.append((node.lineno, ast.unparse(node)[:60]))
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            owner = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
            if name not in STARTERS or owner not in ("subprocess", "os", "asyncio", ""):
                continue
            if owner == "" and name != "Popen":
                continue  # a function of the module's own (`run`, `call`…)
            argv = node.args[0] if node.args else None
            program = argv.elts[0] if isinstance(argv, (ast.List, ast.Tuple)) and argv.elts else argv
            if program is None or ast.unparse(program) not in OTHER_PROGRAMS:
                found.append((node.lineno, ast.unparse(node)[:60]))
    return found


def test_no_module_but_gitcmd_starts_git():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == RUNNER:
            continue
        for line, what in _starts(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {what}")
    assert offenders == []
    assert _starts(ast.parse(RUNNER.read_text(encoding="utf-8")))  # the check sees gitcmd's own


def test_gitcmd_imports_only_the_standard_library():
    imported = set()
    for node in ast.parse(RUNNER.read_text(encoding="utf-8")).body:  # module level: what `import` costs
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


def one_sentence(exc: pytest.ExceptionInfo[MemexError], sentence: str) -> None:
    assert exc.value.code == FAILED
    assert str(exc.value) == sentence
    assert "\n" not in str(exc.value) and "Traceback" not in str(exc.value)


def test_git_missing_from_path_is_one_sentence(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    empty = tmp_path / "no-programs"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(MemexError) as exc:
        run_git(["status"], repo, fail=FAIL)
    one_sentence(exc, FAIL.missing)
    with pytest.raises(MemexError) as exc:
        git_text(["status"], repo, fail=FAIL)
    one_sentence(exc, FAIL.missing)
    assert run_git(["status"], repo) is None  # without `fail`: None, as before
    assert start_git(["status"], repo) is None and finish_git(None) is None


def test_a_timeout_is_one_sentence(repo: Path):
    slow = ["-c", "alias.slow=!sleep 2", "slow"]  # a real git, running an alias that outlasts the timeout
    with pytest.raises(MemexError) as exc:
        run_git(slow, repo, timeout=0.2, fail=FAIL)
    one_sentence(exc, FAIL.slow)
    assert git_text(slow, repo, timeout=0.2) is None
    assert finish_git(start_git(slow, repo), timeout=0.2) is None


def test_a_failure_names_gits_own_line(repo: Path):
    with pytest.raises(MemexError) as exc:
        run_git(["rev-parse", "--verify", "no-such-branch{}"], repo, fail=FAIL)
    one_sentence(exc, "git could not do it (Needed a single revision); nothing was changed")
    quiet = Fail(FAIL.missing, FAIL.slow)  # no `failed`: a non-zero exit is the caller's to read
    r = git_text(["rev-parse", "--verify", "no-such-branch"], repo, fail=quiet)
    assert r is not None and r.returncode != 0 and "Needed a single revision" in r.stderr


def test_two_calls_at_once_return_the_same_result_type(repo: Path):
    git("config", "memex.memoryDir", "notes", cwd=repo)
    first, second = start_git(["rev-parse", "--show-toplevel"], repo), start_git(["config", "memex.memoryDir"], repo)
    top, cfg = finish_git(first, timeout=60), finish_git(second, timeout=60)
    assert top is not None and Path(top.stdout.strip()) == repo.resolve()
    assert cfg is not None and cfg.stdout == "notes\n" and cfg.returncode == 0
    one = git_text(["config", "memex.memoryDir"], repo)
    assert one is not None and type(one) is type(cfg) and one.stdout == cfg.stdout


def test_init_without_git_on_path_says_so_in_one_sentence(repo: Path, tmp_path: Path):
    bin_dir = tmp_path / "only-python"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    r = run_cli_process("init", env={"PATH": str(bin_dir)})  # a process started without git
    assert r.code == FAILED, r.err
    assert "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert "git is not installed or not on PATH" in r.err


def test_large_input_and_output_pass_whole_both_ways(repo: Path, tmp_path: Path):
    """git is started without the subprocess module (posix_spawn, select.poll): an input and an
    output many times a pipe's buffer pass whole, stderr beside them, and a folder that is not
    there is git not started (None), as before."""
    blob = bytes(range(256)) * 1200  # 300 KiB, every byte value
    r = run_git(["hash-object", "-w", "--stdin"], repo, input=blob)
    assert r is not None and r.returncode == 0
    oid = r.stdout.strip()
    many = (oid + b"\n") * 6 + b"0" * 40 + b"\n"
    r = run_git(["cat-file", "--batch"], repo, input=many)
    assert r is not None and r.returncode == 0
    header = oid + b" blob " + str(len(blob)).encode() + b"\n"
    assert r.stdout == (header + blob + b"\n") * 6 + b"0" * 40 + b" missing\n"
    big_input = b"".join(b"%d\n" % i for i in range(60000))  # ~350 KB in, git reads it all
    r = run_git(["hash-object", "--stdin"], repo, input=big_input)
    assert r is not None and r.returncode == 0 and len(r.stdout.strip()) == 40
    r = run_git(["rev-parse", "--verify", "no-such-thing"], repo)
    assert r is not None and r.returncode != 0 and b"Needed a single revision" in r.stderr
    assert run_git(["status"], tmp_path / "not-there") is None
    assert start_git(["status"], tmp_path / "not-there") is None


def _fake_git(folder: Path, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "git"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    return folder


CHILD = """
import os, sys
from git_memex.core.gitcmd import Fail, finish_git, run_git, start_git
{body}
"""


def _child(body: str, path: Path, cwd: Path, pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    """A Python process running `body` with `path` first on PATH; its own time limit turns a hang
    into a failure of this test rather than a hang of the suite."""
    env = {**os.environ, "PATH": f"{path}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-c", CHILD.format(body=body)], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=90, pass_fds=pass_fds, check=False)


def test_a_git_that_closes_its_output_and_keeps_running_is_timed_out(repo: Path, tmp_path: Path):
    """Both pipes at their end does not mean git has ended: the wait for it keeps the deadline."""
    fake = _fake_git(tmp_path / "bin", "exec >&- 2>&- </dev/null\nexec sleep 600\n")
    r = _child("try:\n    run_git(['status'], timeout=0.5, fail=Fail('missing', 'git too slow.'))\n"
               "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
               "print(finish_git(start_git(['status'], None), timeout=0.5))", fake, repo)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["MemexError git too slow.", "None"]


def test_a_git_left_running_is_stopped_by_default(repo: Path):
    """`finish_git` (every command's context: two git calls at once) has a time limit unless told."""
    import inspect

    assert inspect.signature(finish_git).parameters["timeout"].default == 120


def test_git_inherits_no_descriptor_but_its_three(repo: Path, tmp_path: Path):
    """As `subprocess`'s close_fds: a descriptor this process inherited (a shell's `exec 7>file`)
    does not reach git, so a git that lingers holds no pipe of its caller open."""
    fake = _fake_git(tmp_path / "bin", 'for f in /proc/$$/fd/*; do readlink "$f"; done\n')
    marker = tmp_path / "inherited.txt"
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT)
    try:
        os.set_inheritable(fd, True)
        r = _child(f"assert os.get_inheritable({fd})\nprint(run_git(['x']).stdout.decode())", fake, repo,
                   pass_fds=(fd,))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert str(marker) not in r.stdout and r.stdout.strip(), r.stdout


def test_a_deleted_current_folder_is_one_sentence(repo: Path, tmp_path: Path):
    gone = tmp_path / "gone"
    gone.mkdir()
    r = subprocess.run([sys.executable, "-c", "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]);"
                        "from git_memex.main import main; sys.exit(main(['search', 'build']))", str(gone)],
                       text=True, capture_output=True, timeout=90, check=False)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().splitlines() == [
        "git-memex: the current folder no longer exists (it was deleted or moved); cd into your project again"]

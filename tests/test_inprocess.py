"""`run_cli` (in this process, tests/inprocess.py) gives what `python -m git_memex` gives, and
every module-level name the package changes at run time is either reset before each call or
kept for a stated reason."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from conftest import git, run_cli, run_cli_process
from inprocess import KEPT, RESET

PACKAGE = Path(__file__).resolve().parents[1] / "git_memex"
_MUTATORS = {"append", "add", "update", "clear", "setdefault", "pop", "popitem", "extend", "insert",
             "remove", "discard", "sort", "reverse", "difference_update", "intersection_update"}


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _module_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        for node in ast.walk(stmt) if isinstance(stmt, (ast.If, ast.Try)) else [stmt]:
            if isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def changed_at_run_time() -> dict[str, str]:
    """{"module.NAME": "file:line"} for each module-level name a function rebinds (`global`) or
    changes in place (item or attribute assignment, a mutating method, through a local alias
    too), and each function under a cache decorator ("module.func()")."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = _module_level_names(tree)
        imported = {a.asname or a.name: f"{n.module}.{a.name}" for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("git_memex") for a in n.names}
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if any("cache" in ast.unparse(d) for d in fn.decorator_list):
                found.setdefault(f"{module}.{fn.name}()", f"{path.name}:{fn.lineno}")
            params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
            alias = {t.id: n.value.id for n in ast.walk(fn) if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Name) and n.value.id in top for t in n.targets if isinstance(t, ast.Name)}
            for node in ast.walk(fn):
                names: list[str | None] = []
                if isinstance(node, ast.Global):
                    names = list(node.names)
                elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                    names = [_root(t) for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))]
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
                    names = [_root(node.func.value)]
                for name in names:
                    if name is None or name in params:
                        continue
                    name = alias.get(name, name)
                    if name in top:
                        key = f"{module}.{name}"
                    elif name in imported and "." in imported[name].removeprefix("git_memex."):
                        key = imported[name]  # `from git_memex.x import NAME`, then NAME changed here
                    else:
                        continue
                    found.setdefault(key, f"{path.name}:{getattr(node, 'lineno', 0)}")
    return {k: v for k, v in found.items() if not _is_module(k)}


_PROCESS_READS = {"os.getcwd", "os.environ", "os.getenv", "Path.home", "Path.cwd", "sys.argv"}


def read_at_import() -> dict[str, str]:
    """{"module.NAME": "file:line"} for each module-level name set, at import, from the process's
    cwd, environment or arguments (a new process reads them again; a call in this one does not)."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for node in ast.walk(stmt):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                        isinstance(n, ast.Attribute) and ast.unparse(n) in _PROCESS_READS for n in ast.walk(node.value or node)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            found.setdefault(f"{module}.{t.id}", f"{path.name}:{node.lineno}")
    return found


def _is_module(key: str) -> bool:
    """`from git_memex.git import org` then `org.add(...)`: a call, not state."""
    return (PACKAGE.parent / key.replace(".", "/")).with_suffix(".py").is_file()


def test_every_module_level_state_is_reset_or_kept_for_a_reason():
    decided = {f"{m}.{n}" for m, (names, _) in RESET.items() for n in names}
    decided |= {k.split("[")[0] for k in KEPT}
    changed = changed_at_run_time()
    undecided = {k: where for k, where in changed.items() if k not in decided}
    assert not undecided, (
        f"module-level state that outlives a call, undecided: {undecided}; reset it in tests/inprocess.py "
        "RESET (what a new process starts without) or name it in KEPT with the reason it may stay")
    from_the_process = read_at_import()
    not_reset = {k: where for k, where in from_the_process.items() if k not in decided - set(KEPT)}
    assert not not_reset, f"read from the process at import, not reset before each call: {not_reset}"
    gone = {k for k in decided if k not in changed and k not in from_the_process}
    assert not gone, f"RESET/KEPT name state the package no longer changes: {gone}"


def test_the_scan_sees_each_shape_of_change():
    found = changed_at_run_time()
    assert "git_memex.core.caller.NAME" in found  # `global NAME`
    assert "git_memex.core.files.WRITTEN" in found  # WRITTEN.append(...)
    assert "git_memex.core.plainyaml._SCALARS" in found  # scalars = _SCALARS; scalars[raw] = ...
    assert "git_memex.core.userregex.problem()" in found  # @functools.lru_cache
    assert "git_memex.index.database.DAMAGED" in found  # changed from another module too
    assert "git_memex.core.data_root._START_CWD" in read_at_import()  # os.getcwd() at import


# ------------------------------------------------------------------ the same as a process
@pytest.fixture
def seeded(ready: Path) -> Path:
    assert run_cli("add", "the kestrel proxy timeout is 45 seconds \x1b]8;;https://x.test\x07link\x1b]8;;\x07",
                   "--scope", "project").code == 0
    git("config", "memex.redactPattern", "ACME-(", cwd=ready)  # refused: a warning on every command
    return ready


CASES = [
    ("--version",),
    ("--help",),
    ("search",),  # a usage error: exit 1
    ("no-such-command",),
    ("search", "kestrel", "--json"),
    ("list", "--json"),
    ("show", "01ZZZZZZZZZZZZZZZZZZZZZZZZ"),  # no such memory
    ("where",),
    ("status",),
    ("config", "get", "memex.memoryDir"),
    ("schema",),
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_run_cli_gives_what_a_process_gives(seeded: Path, args: tuple[str, ...]):
    def steady(out: str) -> str:
        # A search score carries a recency boost from the clock: it moves in its sixth decimal
        # about once in a hundred runs a second apart, so it is the one value not compared.
        return re.sub(r'"score": [0-9.e-]+', '"score": S', out)

    here = run_cli(*args)
    there = run_cli_process(*args)
    assert (here.code, steady(here.out), here.err) == (there.code, steady(there.out), there.err)
    again = run_cli(*args)  # and again: nothing left over from the first call
    assert (again.code, steady(again.out), again.err) == (here.code, steady(here.out), here.err)


def test_stdin_and_its_bytes_reach_the_command_as_in_a_process(ready: Path, tmp_path: Path):
    apart = {"GIT_MEMEX_HOME": str(tmp_path / "root-of-the-process")}
    for text in ("the wal is archived hourly\r\nand kept 7 days", "ünïcödé on stdin"):
        here = run_cli("add", "-", "--scope", "personal", "--json", input=text)
        there = run_cli_process("add", "-", "--scope", "personal", "--json", input=text, env=apart)
        assert here.code == there.code == 0, (here.err, there.err)
        mine = run_cli("show", here.json()["id"], "--json")
        theirs = run_cli_process("show", there.json()["id"], "--json", env=apart)
        assert mine.json()["body"] == theirs.json()["body"]


def test_cwd_and_env_are_the_calls_own_and_put_back(ready: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = Path.cwd()
    r = run_cli("where", cwd=elsewhere, env={"GIT_MEMEX_HOME": str(tmp_path / "other-root")})
    there = run_cli_process("where", cwd=elsewhere, env={"GIT_MEMEX_HOME": str(tmp_path / "other-root")})
    assert (r.code, r.out, r.err) == (there.code, there.out, there.err)
    assert str(tmp_path / "other-root") in r.out
    assert Path.cwd() == before and os.environ["GIT_MEMEX_HOME"] != str(tmp_path / "other-root")


def test_a_crash_point_is_refused_in_process(ready: Path):
    with pytest.raises(AssertionError, match="run_cli_process"):
        run_cli("add", "x", env={"GIT_MEMEX_CRASH_AT": "store.before_rename"})

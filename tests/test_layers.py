"""The layering docs/architecture.md promises, read from the source: no module imports a module of
a higher layer, and the rooms' modules import one another without cycles.

Every import of a git-memex module counts, wherever it is written (module level, inside a
function, in a `try`), except the ones under `if TYPE_CHECKING:`: those never run (the project
spells `TYPE_CHECKING = False`), so they neither load a module nor close a cycle, and they are
where a lower module names a higher type for mypy (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import ast
from pathlib import Path

import git_memex

PACKAGE = Path(git_memex.__file__).parent

# Lowest first. A module belongs to the layer of the longest prefix naming it; `git_memex`
# itself (the version) is only the package's __init__.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bottom", ("git_memex", "git_memex.errors")),
    ("core", ("git_memex.core",)),
    ("index, search, secrets", ("git_memex.index", "git_memex.search", "git_memex.secrets")),
    ("operations and rooms", ("git_memex.ops", "git_memex.agents", "git_memex.review", "git_memex.upkeep",
                              "git_memex.git", "git_memex.remote")),
    ("adapters", ("git_memex.commands", "git_memex.agents.mcp_server", "git_memex.agents.mcp_stdio",
                  "git_memex.agents.mcp_tools",
                  "git_memex.agents.mcp_schema", "git_memex.remote.server", "git_memex.main", "git_memex.__main__", "git_memex.manpage")),
)

# Imports of a higher layer that remain, each with why. Nothing else may be added here without
# saying so in docs/architecture.md.
EXCEPTIONS = {
    # the backstop masking of every write (`file_text` admits each string of a memory before
    # its bytes are written); moving `file_text`/`write_memory` above core removes it
    ("git_memex.core.files", "git_memex.secrets.admission"),
}

# Cycles that stay inside one room, each a pair of lazy imports of two halves of one job.
ROOM_CYCLES = (
    {"git_memex.core.files", "git_memex.core.context"},  # atomic writes ↔ the data root they prepare
    {"git_memex.index.changes", "git_memex.index.database"},  # the index ↔ which of its files changed
    {"git_memex.agents.mcp_server", "git_memex.agents.mcp_tools"},  # the MCP server ↔ its tools
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    where = PACKAGE.parent.joinpath(*name.split("."))
    return where.with_suffix(".py").exists() or (where / "__init__.py").exists()


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for each git-memex module `path` imports at run time: `from a.b import c`
    names the module `a.b.c` when there is one, else `a.b`."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "git_memex")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] == "git_memex":
                for a in node.names:
                    full = f"{source}.{a.name}"
                    found.append((node.lineno, full if is_module(full) else source))
        for sub in ast.iter_child_nodes(node):
            visit(sub)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def layer_of(name: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for level, (_title, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            named = name == p or (p != "git_memex" and name.startswith(p + "."))
            if named and (best is None or len(p) > best[0]):
                best = (len(p), level)
    return None if best is None else best[1]


def graph() -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line}, over the whole package."""
    out: dict[str, dict[str, int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        edges: dict[str, int] = {}
        for line, target in imports(path):
            edges.setdefault(target, line)
        out[module_name(path)] = edges
    return out


def cycles(g: dict[str, dict[str, int]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in g or w == v:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: set[str] = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)

    for v in sorted(g):
        if v not in index:
            strong(v)
    return found


def test_every_module_has_a_layer():
    assert [m for m in graph() if layer_of(m) is None] == []


def test_no_module_imports_a_higher_layer():
    offenders = []
    for mod, edges in graph().items():
        here = layer_of(mod)
        for target, line in edges.items():
            there = layer_of(target)
            if here is not None and there is not None and there > here and (mod, target) not in EXCEPTIONS:
                offenders.append(f"{mod}:{line} ({LAYERS[here][0]}) imports {target} ({LAYERS[there][0]})")
    assert offenders == []


def test_core_imports_only_core_and_the_bottom():
    g = graph()
    above = sorted(f"{m} → {t}" for m, edges in g.items() if layer_of(m) == 1
                   for t in edges if (layer_of(t) or 0) > 1 and (m, t) not in EXCEPTIONS)
    assert above == []


def test_the_exceptions_are_still_needed():
    g = graph()
    assert [e for e in sorted(EXCEPTIONS) if e[1] not in g.get(e[0], {})] == []


def test_the_cycles_issue_24_named_are_gone():
    g = graph()
    pairs = [("git_memex.agents.gate", "git_memex.agents.owners"),
             ("git_memex.search.engine", "git_memex.search.semantic"),
             ("git_memex.core.files", "git_memex.core.plainyaml"),
             ("git_memex.commands.merge_driver", "git_memex.main"),
             ("git_memex.upkeep.inventory", "git_memex.upkeep.inventory_page")]
    together = {frozenset(c) for c in cycles(g)}
    still = [f"{a} ↔ {b}" for a, b in pairs if any({a, b} <= c for c in together)]
    assert still == []


def test_no_cycle_but_the_room_cycles():
    g = graph()
    for a, b in EXCEPTIONS:  # reported by the layer test already
        g[a].pop(b, None)
    unexpected = [sorted(c) for c in cycles(g) if not any(c <= allowed for allowed in ROOM_CYCLES)]
    assert unexpected == []


def test_the_checker_sees_function_level_imports_and_skips_type_checking_ones():
    g = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert cycles(g) == [{"a", "b", "c"}]
    src = PACKAGE / "core" / "files.py"
    lines = dict((t, n) for n, t in imports(src))
    assert "git_memex.core.plainyaml" in lines  # imported inside parse_for_index
    tree = ast.parse(src.read_text(encoding="utf-8"))
    func_level = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.col_offset > 0}
    assert lines["git_memex.core.plainyaml"] in func_level
    typed = PACKAGE / "core" / "person.py"  # names core.context.Context under TYPE_CHECKING only
    assert "git_memex.core.context" not in {t for _n, t in imports(typed)}

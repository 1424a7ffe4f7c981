"""Every built-in pattern that reads memory text, fed the inputs that make a backtracking engine
slow, each case timed against itself at a quarter of the size (`conftest.grows_linearly`).

Run by tests/secrets/test_linear.py in a child process (a pattern that never returns cannot be
stopped inside the process that runs it); also runnable by hand:
``python tests/secrets/linear_sweep.py [N]`` prints one JSON line per slow case and a summary.

The patterns are found, not listed: every `Rx` held by a module of `git_memex.secrets` (at any
depth of its tuples, lists and dicts), every row of `secrets.formats`' table (its pattern and
anchor, as RE2 runs them), the detect-secrets patterns as they run (`dsplugins._ds_patterns`), and
the Python `re` patterns of the other modules that read memory text on a write or hook path
(`OTHER_MODULES`).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conftest (grows_linearly)

from conftest import grows_linearly  # noqa: E402

# Modules outside git_memex.secrets whose regexes read memory text (a body, a frontmatter value,
# a prompt) on a write or hook path. Their patterns stay on Python's re (none can backtrack
# badly, docs/security.md says why, one by one); this sweep is the check.
OTHER_MODULES = ("git_memex.core.textproc", "git_memex.core.model", "git_memex.core.frontmatter",
                 "git_memex.agents.capture", "git_memex.review.contradictions", "git_memex.review.disagreement")

SIZE = 16384
NON_ASCII = "é"


def _walk(value: object, depth: int = 0) -> Iterator[object]:
    from git_memex.secrets.dsplugins import DsRegex
    from git_memex.secrets.formats import Format
    from git_memex.secrets.rx import Rx

    if isinstance(value, Rx | DsRegex | re.Pattern):
        yield value
    elif isinstance(value, Format):  # run by `formats.find` on RE2 as written: the same program
        yield _format_rx(value.pattern)
        if value.anchor:
            yield _format_rx(value.anchor)
    elif depth < 3 and isinstance(value, tuple | list):
        for v in value:
            yield from _walk(v, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            yield from _walk(v, depth + 1)


_FORMAT_RX: dict[str, object] = {}


def _format_rx(pattern: str) -> object:
    from git_memex.secrets.rx import Rx

    return _FORMAT_RX.setdefault(pattern, Rx(pattern, raw=True))


def patterns() -> list[tuple[str, object]]:
    """(name, pattern) of every pattern this sweep covers, each once."""
    import git_memex.secrets as pkg
    from git_memex.agents import capture
    from git_memex.secrets import dsplugins

    out: dict[int, tuple[str, object]] = {}

    def add(name: str, value: object) -> None:
        for p in _walk(value):
            out.setdefault(id(p), (name, p))

    modules = [f"git_memex.secrets.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]
    for modname in [*OTHER_MODULES, *modules]:  # a pattern imported from elsewhere: its own module's
        module = importlib.import_module(modname)
        for attr, value in vars(module).items():
            add(f"{modname}.{attr}", value)
    for rule, regex, _group in dsplugins._ds_patterns():
        add(f"dsplugins {rule}", regex)
    for name, _scope, _literal, src, fold in capture._RULE_SOURCES:
        add(f"capture rule {name}", capture._pattern(name, src, fold))
    return sorted(out.values(), key=lambda np: np[0])


def source_of(p: object) -> str:
    from git_memex.secrets.dsplugins import DsRegex
    from git_memex.secrets.rx import Rx

    if isinstance(p, Rx):
        return p.pattern if p.raw else p.python
    if isinstance(p, DsRegex):
        return p.pattern
    assert isinstance(p, re.Pattern)
    return p.pattern


_ESCAPES = {"w": "a_", "W": " -", "s": " \t", "S": "a-", "d": "07", "D": "a ", "b": "", "n": "\n",
            "t": "\t", "r": "\r", "A": "", "Z": "", "z": "", "p": "aA"}


def pieces(source: str) -> tuple[list[str], list[str]]:
    """(literals, probe characters) of a pattern's source: the runs of literal text it holds, and
    characters each of its classes accepts (ends of ranges, single members, and for a negated
    class characters outside it)."""
    literals: list[str] = []
    probes: list[str] = []
    cur: list[str] = []
    i, n = 0, len(source)

    def flush() -> None:
        if len(cur) >= 2:
            literals.append("".join(cur))
        cur.clear()

    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            e = source[i + 1]
            if e in _ESCAPES:
                probes.extend(_ESCAPES[e])
                flush()
                i += 2
                if e == "p" and i < n and source[i] == "{":
                    i = source.find("}", i) + 1 or n
                elif e == "p":
                    i += 1
                continue
            if e == "x":
                cur.append(chr(int(source[i + 2 : i + 4], 16)))
                i += 4
                continue
            cur.append(e)
            i += 2
            continue
        if c == "[":
            flush()
            j = i + 1
            negated = source.startswith("^", j)
            j += negated
            members: list[str] = []
            if source.startswith("]", j):
                members.append("]")
                j += 1
            while j < n and source[j] != "]":
                if source[j] == "\\" and j + 1 < n:
                    members.extend(_ESCAPES.get(source[j + 1], source[j + 1]))
                    j += 2
                    continue
                if j + 2 < n and source[j + 1] == "-" and source[j + 2] != "]":
                    members.extend((source[j], source[j + 2]))
                    j += 3
                    continue
                members.append(source[j])
                j += 1
            probes.extend(("a", "A", "0", " ", "-", NON_ASCII) if negated else members)
            i = j + 1
            continue
        if c in "()|":
            flush()
            if source.startswith("(?", i):
                close = i + 2
                while close < n and source[close] not in ")>:":
                    close += 1
                if source.startswith("(?P<", i):
                    close = source.find(">", i)
                i = close + 1
                continue
            i += 1
            continue
        if c in "*+?{}.^$":
            # a quantifier applies to the last literal character only: it ends the run before it
            if c in "*+?{" and cur:
                last = cur.pop()
                flush()
                probes.append(last)
            else:
                flush()
            if c == "{":
                i = source.find("}", i) + 1 or n
                continue
            if c == ".":
                probes.extend(("a", " "))
            i += 1
            continue
        cur.append(c)
        i += 1
    flush()
    # a few of each, deterministic: the longest literals, the first probes
    lits = sorted(set(literals), key=lambda s: (-len(s), s))[:8]
    probe_set = list(dict.fromkeys(p for p in probes if p))[:10] or ["a"]
    return lits, probe_set


def _run_then(c: str, d: str, lead: str = "") -> Callable[[int], str]:
    return lambda size: lead + c * (size - len(lead) - len(d)) + d


def texts(source: str) -> Iterator[tuple[str, Callable[[int], str]]]:
    """(label, make(size)) of the adversarial inputs for one pattern."""
    lits, probes = pieces(source)

    def fill(unit: str) -> Callable[[int], str]:
        return lambda size: (unit * (size // max(1, len(unit)) + 1))[:size]

    for c in probes:  # long runs of each character class the pattern uses
        yield f"run {c!r}", fill(c)
        for d in probes[:6]:  # … ended by a character of another class (a match that fails late)
            if d != c:
                yield f"run {c!r} then {d!r}", _run_then(c, d)
    for lit in lits:
        for c in probes[:5]:
            yield f"{lit!r} then a run of {c!r}", _run_then(c, "", lead=lit)
            for d in probes[:3]:  # near misses: the literal, a run, a character that ends it
                yield f"({lit!r} {c!r}*40 {d!r})*", fill(lit + c * 40 + d)
    if lits:
        yield "literals one after another", fill("".join(lits))
        for c in probes[:3]:
            yield f"literals between {c!r}", fill(c.join(lits) + c)


def _runner(p: object, mode: str) -> Callable[[str], object]:
    if mode == "finditer":
        return lambda t: len(list(p.finditer(t)))  # type: ignore[attr-defined]
    if mode == "match":
        return lambda t: p.match(t)  # type: ignore[attr-defined]
    return lambda t: p.fullmatch(t)  # type: ignore[attr-defined]


def sweep(size: int = SIZE) -> Iterator[dict[str, object]]:
    """One record per case that did not grow linearly (none, when every pattern is linear),
    then a summary record."""
    cases = 0
    found = patterns()
    for name, p in found:
        source = source_of(p)
        if not hasattr(p, "fullmatch"):
            modes: tuple[str, ...] = ("finditer",)
        elif isinstance(p, re.Pattern) and source.endswith("\\Z"):
            modes = ("match", "fullmatch")  # a whole-value pattern (frontmatter's scalars): never searched
        else:
            modes = ("finditer", "match", "fullmatch")
        for label, make in texts(source):
            for mode in modes:
                run = _runner(p, mode)
                cases += 1
                case = lambda n, run=run, make=make: run(make(n))  # noqa: E731
                linear, small, big = grows_linearly(case, size, 8)  # a pair that looks quadratic is timed again
                if not linear:
                    yield {"pattern": name, "source": source_of(p)[:120], "input": label, "mode": mode,
                           "quarter_s": round(small, 4), "full_s": round(big, 4)}
    yield {"summary": True, "patterns": len(found), "cases": cases}


if __name__ == "__main__":
    for record in sweep(int(sys.argv[1]) if len(sys.argv) > 1 else SIZE):
        print(json.dumps(record, ensure_ascii=False), flush=True)

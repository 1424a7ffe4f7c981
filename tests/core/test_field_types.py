"""Issue 20, hole 10: one poisoned frontmatter value never breaks a command.

A seeded generator writes hostile values for every known key (and an unknown one) into an
otherwise good memory file. Each must end as "saved" (read, indexed, written back) or
"quarantined with a reason" (UnreadableMemory, one sentence); anything else is an escape.
The figure is printed (`-s`) and recorded in docs/security.md; the goal is 0. A sample goes
through the real CLI, and the three values of the issue through a teammate's push and `git pull`.
"""

from __future__ import annotations

import random
import signal
from pathlib import Path

import pytest

from git_memex.core import frontmatter
from git_memex.core.files import UnreadableMemory, parse_for_index, read_memory
from git_memex.core.frontmatter import KEY_ORDER
from git_memex.index.schema import fts_fields, memory_row

from conftest import git, run_cli

MID = "01K6AB3XZQ7WVD9J1M2N4P5Q6R"
GOOD = {
    "id": MID, "schema_version": "2", "revision": "1", "scope": "project", "visibility": "internal",
    "type": "fact", "role": "knowledge", "importance": "normal", "trust_level": "reviewed",
    "status": "active", "review_state": "approved", "source": "cli", "confidence": "medium",
    "created_at": "'2026-01-01T00:00:00Z'", "updated_at": "'2026-01-01T00:00:00Z'",
    "tags": "[alpha]", "paths": "[]", "related": "[]",
}
ATOMS = [
    "9" * 5000, "-" + "9" * 400, "9" * 30, "1e999", "-.inf", ".nan", "0x" + "f" * 40, "0o777", "1_000",
    "!!float x", "!!int zz", "!!bool maybe", "!!binary aGk=", "!!timestamp 2026-01-01", "!!set {a}",
    "!!omap [a: 1]", "!!python/object:os.system x", "!foo bar", "!!str", "!!null x", "!<tag:x> y",
    "true", "no", "~", "null", "''", '""', "[]", "{}", "[1, 2]", "{a: 1}", "[[a]]", "[{a: b}]",
    "[null]", "[true, 3.5]", "- a", "2026-13-45", "12:30:00", "1:2:3", "'\x1b[31mred'",
    '"\\u202Eevil"', '"\\x00"', "a" * 5000, "|\n  block\n  text", ">\n  folded", "&a x", "*a",
    "<<", "=", "[a, [b, [c, [d, [e, [f, [g]]]]]]]", "?", "%", "@x", "`x", "'unterminated",
    "[" * 50, "{" * 50 + "}" * 50, '"\\' + "U0010FFFF" + '"', "-1", "0", "3.14", "2**63",
    str(2**63), str(2**63 + 1), str(2**53), "-" + str(2**64), "253402300800000", "1e308",
]


def hostile_values(seed: int, count: int) -> list[str]:
    """The atoms, then random mixes of them (a seeded generator: the same cases every run)."""
    rng = random.Random(seed)
    out = list(ATOMS)
    while len(out) < count:
        a, b = rng.choice(ATOMS), rng.choice(ATOMS)
        form = rng.randrange(5)
        out.append([f"[{a}, {b}]", f"{a} {b}", f"!!str {a}", f"[{a}]", f"{{k: {a}}}"][form])
    return out[:count]


def file_text(key: str, value: str) -> str:
    fm = dict(GOOD)
    fm[key] = value
    lines = [f"{k}: {v}" for k, v in fm.items()]
    return "---\n" + "\n".join(lines) + "\n---\n\nthe body of a poisoned memory\n"


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang


def outcome(path: Path) -> str:
    """'saved', 'quarantined: reason', or 'ESCAPE: what happened' for the file at path."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)  # a generous budget per case: only a hang trips it
    try:
        raw = path.read_bytes()
        try:
            m = parse_for_index(path, raw)
            full = read_memory(path)
        except UnreadableMemory as exc:
            reason = str(exc)
            if not reason or "\n" in reason or len(reason) > 400:
                return f"ESCAPE: reason {reason[:80]!r} is not one sentence"
            try:
                read_memory(path)
            except UnreadableMemory:
                return f"quarantined: {reason}"
            return "ESCAPE: the fast reader quarantined what the full reader accepts"
        if m.fm != full.fm:
            return "ESCAPE: the two readers read different values"
        fts_fields(memory_row(m, "project", "k"))
        frontmatter.parse(frontmatter.serialize(m.fm, m.body))
        return "saved"
    except _Hang:
        return "ESCAPE: hang"
    except Exception as exc:  # noqa: BLE001 - anything else is what this test counts
        return f"ESCAPE: {type(exc).__name__}: {str(exc)[:120]}"
    finally:
        signal.alarm(0)


def test_fuzzed_values_end_saved_or_quarantined(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    keys = [*KEY_ORDER, "title", "x_unknown"]
    values = hostile_values(20, 10 * len(keys))
    escapes: list[str] = []
    tried = saved = 0
    for i, value in enumerate(values):
        key = keys[i % len(keys)] if i >= len(ATOMS) else keys[(i * 7) % len(keys)]
        for k in {key, "revision", "tags", "title"} if i < len(ATOMS) else {key}:
            if k == "id":
                continue
            path = tmp_path / f"{MID}.md"
            path.write_text(file_text(k, value), encoding="utf-8")
            res = outcome(path)
            tried += 1
            saved += res == "saved"
            if res.startswith("ESCAPE"):
                escapes.append(f"{k}: {value[:40]!r} -> {res}")
    with capsys.disabled():
        print(f"\nfrontmatter fuzz: {tried} values tried, {saved} saved, {tried - saved - len(escapes)} "
              f"quarantined with a reason, {len(escapes)} escapes")
    assert not escapes, "\n".join(escapes[:20])


SAMPLE = ["9" * 5000, "!!float x", "!!int zz", "[{a: b}]", "{a: 1}", "1e999", "[1, 2]", str(2**64), "!!binary aGk="]


@pytest.mark.parametrize("key", ["revision", "title", "tags", "created_at", "scope", "related"])
def test_a_sample_through_the_cli_is_quarantined_and_nothing_else_stops(ready: Path, key: str):
    folder = ready / ".ai" / "open-memex"
    ids = []
    for n, value in enumerate(SAMPLE):
        mid = MID[:-2] + f"{n:02d}"
        ids.append(mid)
        (folder / f"{mid}.md").write_text(file_text(key, value).replace(MID, mid), encoding="utf-8")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "poison", cwd=ready)  # as a hostile teammate would
    for args in (("reindex", "--full"), ("list",), ("search", "poisoned"), ("doctor",),
                 ("add", "--scope", "personal", "still works after poison")):
        r = run_cli(*args)
        assert "internal error" not in r.err, (args, r.err)
        assert r.code in (0, 1), (args, r.code, r.err)
    r = run_cli("reindex", "--full")
    assert r.code == 0 and "quarantined" in r.out


def test_a_poisoned_value_pulled_from_a_teammate_breaks_nothing(tmp_path: Path, ready: Path):
    remote = tmp_path / "team.git"
    git("init", "-q", "--bare", "-b", "main", str(remote))
    git("remote", "add", "origin", str(remote), cwd=ready)
    git("push", "-q", "origin", "main", cwd=ready)
    mate = tmp_path / "mate"
    git("clone", "-q", str(remote), str(mate))
    folder = mate / ".ai" / "open-memex"
    for n, (key, value) in enumerate([("revision", "9" * 5000), ("title", "!!float x"), ("tags", "!!int zz")]):
        mid = MID[:-2] + f"{n:02d}"
        (folder / f"{mid}.md").write_text(file_text(key, value).replace(MID, mid), encoding="utf-8")
    git("add", "-A", cwd=mate)
    git("commit", "-q", "-m", "teammate's memories", cwd=mate)
    git("push", "-q", "origin", "main", cwd=mate)
    pull = git("pull", "-q", "origin", "main", cwd=ready, check=False)
    assert pull.returncode == 0, pull.stderr
    assert "internal error" not in pull.stderr + pull.stdout
    for args in (("add", "--scope", "personal", "mine still saves"), ("reindex", "--full"), ("list",),
                 ("search", "poisoned"), ("context",)):
        r = run_cli(*args)
        assert r.code == 0, (args, r.code, r.err)
        assert "internal error" not in r.err
    assert "quarantined" in run_cli("reindex", "--full").out

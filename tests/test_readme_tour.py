"""The README's short tour shows what the commands print today: each `$ git memex …` line of its
first console block is run in a fresh repository, in order, and its output compared with the
lines under it (ids, which differ on every run, and the `--explain` figures made neutral)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
ULID = re.compile(r"\b01[0-9A-HJKMNP-TV-Z]{5,24}\b")
FIGURES = re.compile(r"\d+(\.\d+)?")


def tour() -> list[tuple[list[str], list[str]]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8").split("## A short tour", 1)[1]
    block = text.split("```console\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[list[str], list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ git memex "):
            steps.append((shlex.split(line[len("$ git memex "):]), []))
        else:
            steps[-1][1].append(line)
    return steps


VALUE = re.compile(r"^((?:created|updated) .*?)  \(.*\)$")  # init's value: a key or a path of this machine


def neutral(line: str) -> str:
    line = VALUE.sub(r"\1  (VALUE)", ULID.sub("ID", line.rstrip()))
    if line.startswith(("corpus:", "    rank ")):
        line = FIGURES.sub("N", line)
    if line.startswith("semantic lane:"):  # on or off, by whether the optional extra is installed
        line = "semantic lane: …"
    return line


def test_the_readme_tour_prints_what_the_commands_print(repo: Path) -> None:
    steps = tour()
    assert len(steps) >= 6
    for argv, want in steps:
        r = run_cli(*argv)
        assert r.code == 0, (argv, r.err)
        got = [neutral(x) for x in r.out.splitlines()]
        assert got == [neutral(x) for x in want], f"README tour, `git memex {shlex.join(argv)}`:\n" + r.out

"""The entry point's own flags (main.py's parser), through the CLI: -v and --version."""

from __future__ import annotations

from pathlib import Path

from git_memex import __version__

from conftest import run_cli


def test_dash_v_prints_the_version(nogit: Path):
    for flag in ("-v", "--version"):
        r = run_cli(flag)
        assert r.code == 0 and r.out.strip() == f"git-memex {__version__}", (flag, r.out, r.err)


def test_a_plain_search_has_the_arguments_the_parser_gives() -> None:
    """`search WORD...` with no option skips argparse (`commands.search.plain`): every argument it
    makes is the parser's own default, so the command cannot tell the two apart."""
    from git_memex.commands.search import DEFAULTS, plain
    from git_memex.main import build_parser

    parsed, extras = build_parser("search").parse_known_args(["search", "kestrel", "proxy"])
    fast = plain(["search", "kestrel", "proxy"])
    assert fast is not None and not extras
    for name in (*DEFAULTS, "query", "command", "func"):
        assert getattr(fast, name) == getattr(parsed, name), name
    for argv in (["search", "--json", "x"], ["search", "x", "--limit", "3"], ["search", "-"], ["search"], ["list"]):
        assert plain(argv) is None, argv  # an option, a dash or no word: the parser's to read

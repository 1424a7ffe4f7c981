"""The entry point's own flags (main.py's parser), through the CLI: -v and --version."""

from __future__ import annotations

from pathlib import Path

from git_memex import __version__

from conftest import run_cli


def test_dash_v_prints_the_version(nogit: Path):
    for flag in ("-v", "--version"):
        r = run_cli(flag)
        assert r.code == 0 and r.out.strip() == f"git-memex {__version__}", (flag, r.out, r.err)

"""The man page is generated from the parser; this fails when it is out of date."""

from __future__ import annotations

import importlib
from pathlib import Path

from git_memex.main import COMMANDS
from git_memex.manpage import render

ROOT = Path(__file__).resolve().parents[1]


def test_man_page_is_current():
    current = (ROOT / "man" / "git-memex.1").read_text(encoding="utf-8")
    assert current == render(), "man/git-memex.1 is out of date: run `make man`"


def test_every_command_in_the_spec_is_registered():
    for name, module in COMMANDS.items():
        mod = importlib.import_module(f"git_memex.commands.{module}")
        assert hasattr(mod, "register"), name

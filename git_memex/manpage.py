"""Render man/git-memex.1 from the argparse parser (`make man`; a test keeps it current).

Needs the dev dependency argparse-manpage; users never import this module.
"""

from __future__ import annotations

import os
import sys

from git_memex import __version__

MAN_DATE = "2026-11-30"


def render() -> str:
    os.environ["COLUMNS"] = "80"  # argparse wraps help text to the terminal width
    from argparse_manpage.manpage import Manpage

    from git_memex.main import build_parser

    parser = build_parser()
    data = {
        "date": MAN_DATE,
        "version": __version__,
        "project_name": "git-memex",
        "manual_title": "git-memex manual",
        "manual_section": 1,
    }
    return str(Manpage(parser, _data=data))


if __name__ == "__main__":
    sys.stdout.write(render())

"""Render man/git-memex.1 from the argparse parser (`make man`; a test keeps it current).

Needs the dev dependency argparse-manpage; users never import this module. The page is
installed as `<prefix>/share/man/man1/git-memex.1` (pyproject `data-files`, also for editable
installs: see `build_hooks.py`), where `man` finds it from the venv's `bin` on PATH, so
`man git-memex`, `git help memex` and `git memex --help` show it.
"""

from __future__ import annotations

import os
import sys

from git_memex import __version__

MAN_DATE = "2026-11-30"
SHORT_DESCRIPTION = "git-native memory for AI coding agents"
"""The NAME line's description: what whatis and apropos index."""


def _expand_choice_help(parser: object) -> None:
    """Give subcommand summaries the `%` expansion argparse gives them in `--help`.

    argparse expands `%%` (and `%(prog)s`) in a subcommand's `help=`; argparse-manpage prints
    it as written, so `%%O` would reach the page doubled."""
    import argparse

    for action in getattr(parser, "_actions", []):
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.help and "%" in choice.help:
                    choice.help = choice.help % {"prog": choice.dest}
            for sub in action.choices.values():
                _expand_choice_help(sub)


def render() -> str:
    os.environ["COLUMNS"] = "80"  # argparse wraps help text to the terminal width
    from argparse_manpage.manpage import Manpage

    from git_memex.main import build_parser

    parser = build_parser()
    _expand_choice_help(parser)
    data = {
        "date": MAN_DATE,
        "version": __version__,
        "project_name": "git-memex",
        "manual_title": "git-memex manual",
        "manual_section": 1,
        "description": SHORT_DESCRIPTION,
    }
    return safe_troff(str(Manpage(parser, _data=data)))


REQUESTS = frozenset({"TH", "SH", "SS", "TP", "PP", "IP", "RS", "RE", "B", "I", "BR", "IR", "nf", "fi", "br"})
"""The macros argparse-manpage writes. A line that starts with `.` or `'` and names anything else
is help text that the wrap put at a line start (`.claude/settings.json`)."""


def safe_troff(page: str) -> str:
    """Escape help text that troff would read as a request: a line starting with `.` or `'`.

    troff takes such a line as a macro call and drops it (`.gitattributes` vanished from the
    page, `.ai/open-memex` gave "a special character is not allowed in a name"). `\\&` is a
    zero-width character, so the line prints as written."""
    out = []
    for line in page.split("\n"):
        if line[:1] in (".", "'"):
            name = line[1:].split(" ", 1)[0]
            if line[:1] == "'" or name not in REQUESTS:
                line = "\\&" + line
        out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())

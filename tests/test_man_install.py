"""`pip install` (plain and editable) puts the man page where `man` finds it from the venv's bin.

Real installs into fresh venvs, then the real `man`, `git help` and `git memex --help` with only
that venv's bin (and the system's) on PATH. Needs man-db (`.ci/run` installs it) and a package
index that serves setuptools for the isolated build (the one `make install` used).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from git_memex.manpage import SHORT_DESCRIPTION

from conftest import copy_checkout, from_registry

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


def _missing(what: str) -> NoReturn:
    """A tool this test needs is absent: a failure in CI, a visible skip elsewhere."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: .ci/run must provide it)")
    pytest.skip(f"{what}; .ci/run installs it")


@pytest.fixture(scope="module")
def man_exe() -> str:
    exe = shutil.which("man")
    if exe is None:
        _missing("`man` is not installed (apt-get install -y man-db)")
    return exe


def _install(tmp: Path, editable: bool) -> Path:
    """A copy of this checkout installed into a new venv; returns the venv."""
    src = copy_checkout(tmp / "src")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
           *(["-e"] if editable else []), str(src)]
    r = from_registry(cmd, timeout=600)
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["?"])[-1]
        if "setuptools" in r.stderr and ("Could not find" in r.stderr or "No matching distribution" in r.stderr):
            _missing(f"no package index serves setuptools for the isolated build ({tail})")
        pytest.fail(f"pip install failed: {r.stderr}")
    return venv


def _env(venv: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH=f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", MANPAGER="cat", PAGER="cat",
               MANWIDTH="80", GIT_PAGER="cat", HOME=str(tmp))
    return env


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["plain", "editable"])
def test_pip_install_puts_the_man_page_where_man_finds_it(tmp_path: Path, man_exe: str, editable: bool):
    venv = _install(tmp_path, editable)
    page = venv / "share" / "man" / "man1" / "git-memex.1"
    assert page.is_file(), f"no {page} after pip install{' -e' if editable else ''}"
    assert page.read_text(encoding="utf-8") == (ROOT / "man" / "git-memex.1").read_text(encoding="utf-8")
    env = _env(venv, tmp_path)
    where = subprocess.run([man_exe, "-w", "git-memex"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert where.returncode == 0 and Path(where.stdout.strip()) == page, where.stdout + where.stderr
    for argv in (["git", "help", "memex"], ["git", "memex", "--help"], [man_exe, "git-memex"]):
        r = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (argv, r.stderr)
        text = r.stdout
        assert "git-memex - " + SHORT_DESCRIPTION in " ".join(text.split()), (argv, text[:400])
        assert "SYNOPSIS" in text and "merge-driver" in text, argv


def test_the_name_line_has_a_description_whatis_can_index(man_exe: str):
    lexgrog = shutil.which("lexgrog")
    if lexgrog is None:
        _missing("`lexgrog` (man-db) is not installed")
    r = subprocess.run([lexgrog, str(ROOT / "man" / "git-memex.1")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f'"git-memex - {SHORT_DESCRIPTION}"' in r.stdout, r.stdout


def test_merge_driver_placeholders_are_printed_once():
    page = (ROOT / "man" / "git-memex.1").read_text(encoding="utf-8")
    assert "%%" not in page
    assert page.count("%O %A %B %P") >= 2  # the command list and the merge-driver section
    r = subprocess.run([sys.executable, "-m", "git_memex", "merge-driver", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "%%" not in r.stdout and "%O %A %B %P" in " ".join(r.stdout.split())
    r = subprocess.run([sys.executable, "-m", "git_memex", "--help"], capture_output=True, text=True)
    assert "%%" not in r.stdout and "(%O %A %B %P)" in r.stdout


def test_the_real_man_renders_every_line_with_no_warning(man_exe: str, tmp_path: Path):
    """troff drops a help line that starts with `.` (`.gitattributes`) and warns on usage lines
    too long for the page; `man --warnings` turns each into a line on stderr."""
    env = {**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80", "HOME": str(tmp_path)}
    r = subprocess.run([man_exe, "--warnings", "-l", str(ROOT / "man" / "git-memex.1")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = " ".join(r.stdout.split())
    for words in (".claude/settings.json", ".gitattributes line", "in .ai/open-memex/orgs.gitconfig"):
        assert words in text, words

"""The conftest guard (`real_places_untouched`): a test that writes into the real data root or the
real HOME's git config fails. Checked with a real pytest run in a new process whose "real" HOME
is a temp folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INNER = '''
import os
import subprocess
from pathlib import Path

REAL = Path(os.environ["REAL_HOME_FOR_GUARD"])


def test_clean():
    assert True


def test_writes_the_real_data_root():
    folder = REAL / ".local" / "share" / "git-memex" / "memories" / "personal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "01JZZZZZZZZZZZZZZZZZZZZZZZ.md").write_text("x")


def test_writes_the_real_git_config():
    subprocess.run(["git", "config", "--file", str(REAL / ".gitconfig"), "memex.autoPull", "true"], check=True)
'''


@pytest.mark.slow  # an inner pytest run: ~16 s under two workers
def test_a_test_that_writes_the_real_data_root_or_git_config_fails(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    (real / ".local" / "share" / "git-memex").mkdir(parents=True)
    (real / ".gitconfig").write_text("[user]\n\tname = Someone\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(Path(__file__).with_name("conftest.py"), suite / "conftest.py")
    shutil.copy(Path(__file__).with_name("inprocess.py"), suite / "inprocess.py")
    (suite / "test_inner.py").write_text(INNER)
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_MEMEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(real), REAL_HOME_FOR_GUARD=str(real))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        "-o", "addopts=", "test_inner.py"], cwd=suite, env=env, capture_output=True, text=True,
                       timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "3 passed, 2 errors" in out, out  # the two writers error at teardown, the clean one does not
    assert "ERROR test_inner.py::test_clean" not in out
    assert f"this test wrote into the real {real / '.local' / 'share' / 'git-memex'}" in out
    assert f"this test wrote into the real {real / '.gitconfig'}" in out

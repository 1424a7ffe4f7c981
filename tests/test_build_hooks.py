"""The hook shims live in the top-level `hooks/` and a wheel ships them as `git_memex/hooks/`
(build_hooks.BuildPy): a real `pip wheel` of a copy of this checkout, then that wheel installed
into a fresh venv (not editable) and its `git memex init` run in a real repository, which must
install exactly those files. The editable install (`make install`) is checked by
tests/git/test_git_layer.py::test_installed_hooks_are_the_shipped_shim_files_with_the_command_filled_in.

Needs a package index that serves setuptools for the isolated build, as tests/test_man_install.py.
"""

from __future__ import annotations

import os
import re
import site
import stat
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import copy_checkout, git

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "hooks"
IN_CI = os.environ.get("CI", "").lower() == "true"


def _wheel(tmp: Path) -> Path:
    """`python -m pip wheel --no-deps` of a copy of this checkout (the checkout itself stays clean)."""
    src = copy_checkout(tmp / "src")
    out = tmp / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(src)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        if "setuptools" in r.stderr and ("Could not find" in r.stderr or "No matching distribution" in r.stderr):
            if IN_CI:
                pytest.fail(f"no package index serves setuptools for the isolated build: {r.stderr}")
            pytest.skip("no package index serves setuptools for the isolated build")
        pytest.fail(f"pip wheel failed: {r.stderr}")
    (wheel,) = out.glob("git_memex-*.whl")
    return wheel


def _shims() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(HOOKS.iterdir()) if p.is_file()}


@pytest.mark.slow
def test_a_wheel_ships_the_top_level_hooks_and_its_init_installs_exactly_those(tmp_path: Path, repo: Path):
    shims = _shims()
    assert sorted(shims) == ["post-checkout", "post-merge", "post-rewrite", "pre-commit", "pre-merge-commit"]
    assert not (ROOT / "git_memex" / "hooks").exists()  # one copy of each shim in the source tree
    wheel = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as z:
        inside = {i.filename: i for i in z.infolist() if i.filename.startswith("git_memex/hooks/")}
        assert sorted(inside) == [f"git_memex/hooks/{n}" for n in shims], sorted(inside)
        for name, data in shims.items():
            info = inside[f"git_memex/hooks/{name}"]
            assert z.read(info) == data, name  # byte for byte
            assert (info.external_attr >> 16) & stat.S_IXUSR, f"{name} is not executable in the wheel"

    # a fresh venv, the wheel installed into it (not editable); the dependencies are this venv's,
    # appended after the fresh venv's own site-packages, so git_memex comes from the wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    vpy = venv / "bin" / "python"
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(vpy), "install", "--quiet", "--no-deps",
                        str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    fresh_site = Path(subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                     capture_output=True, text=True, check=True).stdout.strip())
    ours = [p for p in {*site.getsitepackages(), sysconfig.get_path("purelib")} if Path(p).is_dir()]
    (fresh_site / "zz_test_deps.pth").write_text("".join(f"{p}\n" for p in ours))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"
    where = subprocess.run([str(vpy), "-c", "import git_memex; print(git_memex.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(fresh_site), where  # the wheel's copy, not this checkout's

    r = subprocess.run([str(venv / "bin" / "git-memex"), "init", "--yes"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    hooks_dir = Path(git("rev-parse", "--git-path", "hooks", cwd=repo).stdout.strip())
    hooks_dir = hooks_dir if hooks_dir.is_absolute() else repo / hooks_dir
    ours_installed = sorted(p.name for p in hooks_dir.iterdir()
                            if p.is_file() and b"git-memex hook shim" in p.read_bytes())
    assert ours_installed == sorted(shims)
    for name, data in shims.items():
        installed = (hooks_dir / name).read_bytes()
        assert os.access(hooks_dir / name, os.X_OK), name
        # init fills in only the command it found (this venv's git-memex): put the placeholder back
        line = re.search(rb"(?m)^memex=(.*)$", installed)
        assert line is not None and line.group(1) == str(venv / "bin" / "git-memex").encode()
        restored = re.sub(rb"(?m)^memex=.*$", b"memex=git-memex", installed, count=1)
        assert restored == data, name  # byte for byte otherwise

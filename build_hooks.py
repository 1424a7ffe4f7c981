"""Build-time help for setuptools (named in pyproject.toml; never installed, never imported at run time).

The hook shims live in `hooks/` at the top of the repository, beside `git_memex/`, and a wheel
ships them inside the package as `git_memex/hooks/`, where `git_memex.git.hook.shims_dir` finds
them: `BuildPy` copies them there (modes kept: they are executable). An editable install copies
nothing (setuptools' `build_py` does no work in editable mode); `shims_dir` then reads the
checkout's `hooks/`, so there is one copy of each shim in the source tree.

The man page is a `data-files` entry, so a wheel puts it at `<prefix>/share/man/man1/git-memex.1`,
where `man` finds it from the venv's `bin` on PATH. setuptools' editable install skips data files
(its `editable_wheel` asks the distribution for `has_data`, which only the install command has;
pypa/setuptools#3399), so `pip install -e .` would leave `git help memex` without a page. This
subclass installs them as the non-editable part of the editable wheel, as setuptools intends.
"""

from __future__ import annotations

import os

from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

HOOKS = "hooks"  # the top-level folder of shims
SHIPPED_AS = os.path.join("git_memex", "hooks")  # where a wheel holds them


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = os.path.join(self.build_lib, SHIPPED_AS)
        self.mkpath(target)
        for name in sorted(os.listdir(HOOKS)):
            if os.path.isfile(os.path.join(HOOKS, name)):
                self.copy_file(os.path.join(HOOKS, name), os.path.join(target, name))


class EditableWheel(editable_wheel):
    def _run_install(self, category: str) -> None:
        if category == "data":
            if self.distribution.has_data_files():
                self.run_command("install_data")
            return
        super()._run_install(category)

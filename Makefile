# `make test` is the one command that installs everything and runs every check (CI runs it).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: test install lint man bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'

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

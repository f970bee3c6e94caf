# The two commands a newcomer needs: `make run` and `make test`. `make setup` is what both use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test lint typecheck pytest schemas clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: setup
	$(BIN)/lineup serve

lint: setup
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: setup
	$(BIN)/mypy

pytest: setup
	./scripts/ensure-services
	$(BIN)/pytest

test: lint typecheck pytest

schemas: setup
	$(BIN)/lineup schemas --out docs/spec/schemas

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# The two commands a newcomer needs: `make run` and `make test`. `make setup` is what both use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The web app (web/, Vite): its dependencies, then its build into the Python package.
WEB_DEPS := web/node_modules/.installed
WEB_BUILT := src/lineup/hub/static/index.html
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) \
	web/index.html web/package.json web/tsconfig.json web/vite.config.ts

.PHONY: setup run test lint typecheck pytest webtest web schemas clean

setup: $(STAMP) $(WEB_BUILT)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

web: $(WEB_BUILT)

$(WEB_DEPS): web/package.json web/package-lock.json
	cd web && npm ci
	touch $(WEB_DEPS)

$(WEB_BUILT): $(WEB_DEPS) $(WEB_SOURCES)
	cd web && npm run build

webtest: $(WEB_DEPS)
	cd web && npm test

run: setup
	$(BIN)/lineup serve

lint: setup
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

# Two processes side by side: the in-process suites (unit, integration) keep the CPU busy
# while the suites of real processes (end-to-end, cluster) mostly wait on hubs, agents and
# liveness windows; the second one's output is printed when both are done. Each process
# migrates its own template databases (named by pid), and ports and databases are throwaway.
# Browser tests run after, in their own process: Playwright's sync API keeps an event loop
# running in the main thread, which the asyncio-based suites must not inherit.
PROCESS_SUITES_LOG := test-artifacts/pytest-processes.log

pytest: setup
	./scripts/ensure-services
	mkdir -p test-artifacts
	$(BIN)/pytest -p no:cacheprovider tests/e2e tests/cluster >$(PROCESS_SUITES_LOG) 2>&1 & \
	processes=$$!; \
	$(BIN)/pytest -p no:cacheprovider tests/unit tests/integration; in_process=$$?; \
	wait $$processes; real_processes=$$?; \
	echo "--- tests/e2e tests/cluster ---"; cat $(PROCESS_SUITES_LOG); \
	test $$in_process -eq 0 && test $$real_processes -eq 0
	$(BIN)/pytest tests/browser

test: lint typecheck webtest pytest

# The protocol's JSON Schemas and the OpenAPI document, then the web app's types made from them.
schemas: setup
	$(BIN)/lineup schemas --out docs/spec/schemas --openapi docs/spec/openapi.json
	cd web && npm run gen:types

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

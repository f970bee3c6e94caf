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

# Hermes Agent (tests/e2e/test_hermes.py): in a virtualenv of its own, pinned, since it pins
# dependencies of its own; lineup goes in beside it, as `lineup hermes install` expects.
HERMES_VENV := .venv-hermes
HERMES_STAMP := $(HERMES_VENV)/.installed
HERMES_AGENT := hermes-agent==0.19.0

.PHONY: setup run test lint typecheck pytest webtest web schemas clean hermes-venv tstest \
	wukongim-sdk wukongim-vectors mcp-hosts relay-peer engines

# The MCP tests' npm packages: the conformance suite and a real MCP host (the Codex CLI,
# some 420 MB) — for the tests only, so `make run` does not fetch them.
MCP_HOSTS := tests/mcp-conformance/node_modules/.installed

setup: $(STAMP) $(WEB_BUILT)

$(MCP_HOSTS): tests/mcp-conformance/package.json tests/mcp-conformance/package-lock.json
	cd tests/mcp-conformance && npm ci --no-audit --no-fund
	touch $(MCP_HOSTS)

mcp-hosts: $(MCP_HOSTS)

# The hosted-engine tests' real engines besides Codex: Pi and Claude Code, pinned (about
# 600 MB) — for the tests only; LineUp itself runs without Node.js.
ENGINES := tests/engines/node_modules/.installed
$(ENGINES): tests/engines/package.json tests/engines/package-lock.json
	cd tests/engines && npm ci --no-audit --no-fund
	touch $(ENGINES)

engines: $(ENGINES)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

hermes-venv: $(HERMES_STAMP)

$(HERMES_STAMP): pyproject.toml
	test -x $(HERMES_VENV)/bin/python || $(PYTHON) -m venv $(HERMES_VENV)
	$(HERMES_VENV)/bin/pip install --quiet '$(HERMES_AGENT)'
	$(HERMES_VENV)/bin/pip install --quiet -e .
	touch $(HERMES_STAMP)

web: $(WEB_BUILT)

$(WEB_DEPS): web/package.json web/package-lock.json
	cd web && npm ci
	touch $(WEB_DEPS)

$(WEB_BUILT): $(WEB_DEPS) $(WEB_SOURCES)
	cd web && npm run build

webtest: $(WEB_DEPS)
	cd web && npm test

# The TypeScript SDK (sdk-ts/): strict type check, its build into dist/, then its tests, which
# start real hubs with the virtualenv's `lineup`.
SDK_TS_DEPS := sdk-ts/node_modules/.installed

$(SDK_TS_DEPS): sdk-ts/package.json sdk-ts/package-lock.json
	cd sdk-ts && npm ci
	touch $(SDK_TS_DEPS)

tstest: setup $(SDK_TS_DEPS)
	cd sdk-ts && npm run build && LINEUP_BIN=$(CURDIR)/$(BIN)/lineup npm test

# The official WuKongIM JS SDK, bundled for Node: the relay codec's tests run it to check the
# Python side against it, and `make wukongim-vectors` regenerates the vectors they keep.
WUKONGIM := scripts/wukongim-vectors
WUKONGIM_SDK := $(WUKONGIM)/dist/sdk.mjs
$(WUKONGIM_SDK): $(WUKONGIM)/package.json $(WUKONGIM)/package-lock.json $(WUKONGIM)/sdk.mjs
	cd $(WUKONGIM) && npm ci --no-audit --no-fund && npm run build

wukongim-sdk: $(WUKONGIM_SDK)

wukongim-vectors: $(WUKONGIM_SDK)
	cd $(WUKONGIM) && npm run vectors

# The relay tests' peer (tests/support/relay_peer/): a loopback WuKongIM server and
# TangSengDaoDao API stub under Node, whose one dependency is `ws`.
RELAY_PEER := tests/support/relay_peer
RELAY_PEER_DEPS := $(RELAY_PEER)/node_modules/.installed
$(RELAY_PEER_DEPS): $(RELAY_PEER)/package.json $(RELAY_PEER)/package-lock.json
	cd $(RELAY_PEER) && npm ci --no-audit --no-fund
	touch $(RELAY_PEER_DEPS)

relay-peer: $(RELAY_PEER_DEPS)

run: setup
	$(BIN)/lineup serve

lint: setup
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

# Three processes side by side: the in-process suites (unit, integration) are CPU-bound, so
# they run as two halves — the integration tests on SQLite with the unit tests, and those on
# PostgreSQL (whose server does part of their work) — while the suites of real processes
# (end-to-end, cluster) mostly wait on hubs, agents and liveness windows. The other two
# outputs are printed when all are done. Each process migrates its own template databases
# (named by pid), and ports and databases are throwaway.
# Browser tests run after, in their own process: Playwright's sync API keeps an event loop
# running in the main thread, which the asyncio-based suites must not inherit.
PROCESS_SUITES_LOG := test-artifacts/pytest-processes.log
POSTGRES_SUITES_LOG := test-artifacts/pytest-postgres.log
pytest: setup hermes-venv $(WUKONGIM_SDK) $(RELAY_PEER_DEPS) $(MCP_HOSTS) $(ENGINES)
	./scripts/ensure-services
	mkdir -p test-artifacts
	$(BIN)/pytest -p no:cacheprovider tests/e2e tests/cluster >$(PROCESS_SUITES_LOG) 2>&1 & \
	processes=$$!; \
	$(BIN)/pytest -p no:cacheprovider -m postgres tests/integration >$(POSTGRES_SUITES_LOG) 2>&1 & \
	postgres=$$!; \
	$(BIN)/pytest -p no:cacheprovider -m "not postgres" tests/unit tests/integration; in_process=$$?; \
	wait $$postgres; on_postgres=$$?; \
	wait $$processes; real_processes=$$?; \
	echo "--- tests/integration on PostgreSQL ---"; cat $(POSTGRES_SUITES_LOG); \
	echo "--- tests/e2e tests/cluster ---"; cat $(PROCESS_SUITES_LOG); \
	test $$in_process -eq 0 && test $$on_postgres -eq 0 && test $$real_processes -eq 0
	$(BIN)/pytest tests/browser

test: lint typecheck webtest tstest pytest

# The protocol's JSON Schemas and the OpenAPI document, then the web app's and the TypeScript
# SDK's types made from them.
schemas: setup $(SDK_TS_DEPS)
	$(BIN)/lineup schemas --out docs/spec/schemas --openapi docs/spec/openapi.json
	cd web && npm run gen:types
	cd sdk-ts && npm run gen:types

clean:
	rm -rf $(VENV) $(HERMES_VENV) .pytest_cache .mypy_cache .ruff_cache

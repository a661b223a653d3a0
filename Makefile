# Parley — the README's two commands are `make serve` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
CLOCK ?= real
CONFIG ?= examples/operator.yaml
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.DEFAULT_GOAL := help
.PHONY: help install install-local serve demo demo-chat demo-model test lint format typecheck unit synth deploy destroy bench screenshot clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  %-14s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local]'
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed-local

install-local: $(VENV)/.installed-local ## Create the virtualenv with what the local server needs

# The Node tools the tests use (asl-validator, the reference JSONata), as package-lock.json pins them;
# npm writes node_modules/.package-lock.json, so the step runs again only when the lock changes.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(VENV)/.installed-dev node_modules/.package-lock.json ## Create the virtualenv with everything (tests, CDK, linters), the Node tools and Debian's chromium
	@# The browser tests drive Debian's chromium through Playwright (never `playwright install`: no browser
	@# download is possible); installed here where missing, with sudo when not root.
	@command -v chromium >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium for the browser tests"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y --no-install-recommends chromium; }

serve: install-local ## Install, then start the local server on 127.0.0.1:8000 (CLOCK=manual for tests)
	$(BIN)/parley serve --host $(HOST) --port $(PORT) --config $(CONFIG) --clock $(CLOCK)

demo: install-local ## Start Parley, the demo chat and the demo model at once (examples/operator-demo.yaml); Ctrl-C stops all three
	$(BIN)/python -m parley.demo.together --host $(HOST) --port $(PORT) --config examples/operator-demo.yaml --clock $(CLOCK)

demo-chat: install-local ## Start the demo chat tool server on 127.0.0.1:9001 (see docs/demo-chat.md)
	$(BIN)/parley demo-chat --host $(HOST) --port 9001

demo-model: install-local ## Start the demo model on 127.0.0.1:9100 (OpenAI-compatible at /v1, Anthropic at /anthropic)
	$(BIN)/parley demo-model --host $(HOST) --port 9100

lint: install ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install ## Format the code with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: install ## mypy --strict over the core package and the CDK app
	$(BIN)/mypy
	MYPYPATH=cdk $(BIN)/mypy cdk/app.py cdk/parley_cdk

unit: install ## Only the tests, in parallel
	$(BIN)/pytest -n 2 -q

test: install lint typecheck unit ## Install and run every check: ruff, mypy, all tests

CDK_ARGS ?=
STAGE ?= dev
synth: install ## Synthesize the CDK app without Docker into cdk/cdk.out (STAGE=dev|prod); offline once the first run cached the layer's wheels
	cd cdk && ../$(BIN)/python app.py -c stage=$(STAGE) $(CDK_ARGS)

deploy: install ## Deploy a stage with the CDK CLI (needs AWS credentials; STAGE=dev|prod)
	cd cdk && PATH="$(CURDIR)/$(BIN):$$PATH" npx --yes aws-cdk@2 deploy --no-notices -c stage=$(STAGE) $(CDK_ARGS)

destroy: install ## Delete a stage's stack (STAGE=dev|prod; prod keeps its table and bucket)
	cd cdk && PATH="$(CURDIR)/$(BIN):$$PATH" npx --yes aws-cdk@2 destroy --no-notices -c stage=$(STAGE) $(CDK_ARGS)

bench: install ## Print the benchmark figures
	$(BIN)/python -m benchmarks

screenshot: install ## Take the inbox's screenshot again (the browser test) and copy it to docs/inbox.png
	$(BIN)/pytest -q -p no:xdist tests/browser/test_inbox.py -k pictured
	cp build/test-artifacts/inbox.png docs/inbox.png

clean: ## Remove the virtualenv and build outputs
	rm -rf $(VENV) cdk/cdk.out build .mypy_cache .ruff_cache .pytest_cache .hypothesis

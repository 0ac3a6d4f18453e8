# cooked-mcp: every target installs what it needs into .venv by itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install generate generate-check lint test coverage bench demo clean interop remote agents requirements golden dist bundle install-check lower-bounds newest

install: $(STAMP)

# A virtualenv in $(1) with a current pip (--group needs 25.1), taken from the pip of $(PYTHON) when
# that has one (pip --python, pip 22.3 and later): one install, ~1.9 s CPU, where venv's bundled pip
# and then the upgrade cost ~5.5 s. Without a usable pip there, ensurepip and the upgrade.
define venv_with_pip
test -x $(1)/bin/python || $(PYTHON) -m venv --without-pip $(1)
$(PYTHON) -m pip --python $(1)/bin/python install --quiet --upgrade pip 2>/dev/null \
  || { $(1)/bin/python -m ensurepip --upgrade >/dev/null && $(1)/bin/python -m pip install --quiet --upgrade pip; }
endef

$(STAMP): pyproject.toml src/fake/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "cooked-mcp needs Python 3.11 or newer")'
	$(call venv_with_pip,$(VENV))
	$(BIN)/python -m pip install --quiet -e . -e ./src/fake --group dev
	touch $(STAMP)

# cooked-mcp's packages live in three folders (src/handwritten, src/generated, src/runtime), so
# setuptools installs it editable through an import hook and always says so in an "Editable
# installation" box (InformationOnly, not a deprecation); only that note is silenced.
$(STAMP): export PYTHONWARNINGS = ignore:Editable installation

generate: $(STAMP)
	$(BIN)/python -m codegen

# Fails when the committed generated files differ from what the features produce.
generate-check: $(STAMP)
	$(BIN)/python -m codegen --check

lint: $(STAMP)
	$(BIN)/ruff check codegen src tests bench distribution agents
	$(BIN)/ruff format --check codegen src tests bench distribution agents
	$(BIN)/mypy codegen distribution src/handwritten/cooked_mcp src/generated/cooked_mcp_generated src/runtime/cooked_mcp_runtime src/fake/cooked_fake

# The suite starts cooked-mcp (and the fake, and the checks) over a hundred times. With
# PYTHONDONTWRITEBYTECODE set, as it often is in containers and CI, the editable sources never get
# bytecode and every start compiles them again (~0.04 s CPU each); compiling them once here is what
# Python does by itself without that variable. A stale file is only recompiled in memory.
test: generate-check lint
	$(BIN)/python -m compileall -q src
	$(BIN)/python -m pytest -q

# The whole suite under coverage.py, lines and branches ([tool.coverage] in pyproject.toml), with
# every process the tests start measured too (tests/servers.py hands coverage's settings on): the
# figure per package, the TOTAL, the least-covered files, and an HTML report in build/coverage/html.
COVERAGE := $(BIN)/python -m coverage
COVERED := $(sort $(dir $(wildcard src/handwritten/cooked_mcp/*.py src/handwritten/cooked_mcp/*/*.py \
  src/runtime/cooked_mcp_runtime/*.py src/generated/cooked_mcp_generated/*.py)))
coverage: export COVERAGE_FILE = $(CURDIR)/build/coverage/.coverage
coverage: generate-check
	rm -rf build/coverage && mkdir -p build/coverage
	$(BIN)/python -m compileall -q src
	$(COVERAGE) run -m pytest -q
	$(COVERAGE) combine -q
	@for package in $(COVERED); do \
	  printf '%-44s %6s%%\n' "$$package" "$$($(COVERAGE) report --include="$$package*.py" --format=total)"; done
	@printf '%-44s %6s%%\n' TOTAL "$$($(COVERAGE) report --format=total)"
	@$(COVERAGE) report --sort=cover --skip-covered > build/coverage/report.txt
	@echo "least covered (all of them: build/coverage/report.txt):" && sed -n '3,12p' build/coverage/report.txt
	$(COVERAGE) html -q
	@echo "HTML report: build/coverage/html/index.html"

# The requirement map (docs/requirements.md) and build/requirements.md from collection alone: seconds.
requirements: $(STAMP)
	$(BIN)/python -m pytest -q --collect-only --write-requirements >/dev/null
	@echo "wrote docs/requirements.md and build/requirements.md"

# Re-render the codegen fixture spec into tests/tooling/golden/expected after a deliberate template change.
golden: $(STAMP)
	$(BIN)/python -m codegen --features tests/tooling/golden/spec/features --table tests/tooling/golden/spec/tools.yaml --out tests/tooling/golden/expected

# Outside MCP clients (TypeScript SDK, Inspector CLI, conformance suite; pinned in
# interop/package-lock.json, installed under interop/node_modules) against the real server.
INTEROP_STAMP := interop/node_modules/.installed

$(INTEROP_STAMP): interop/package.json interop/package-lock.json
	cd interop && npm ci --no-audit --no-fund --loglevel=error
	touch $@

interop: $(STAMP) $(INTEROP_STAMP)
	node interop/run.mjs

# Remote mode (OAuth) against outside parts (interop/remote/run.mjs): the TypeScript SDK's OAuth
# client (DCR and CIMD), the conformance suite's authorization-server scenarios (0.2.0-alpha.12,
# pinned in interop/remote/) and make interop's server scenarios through a token-adding proxy,
# a headless Chromium (Debian's chromium, driven by playwright-core; screenshots in
# build/remote/) and Caddy (Debian's caddy, tls internal) in front. caddy and
# chromium are installed with apt-get when missing and possible; a part without them is skipped, said why.
REMOTE_STAMP := interop/remote/node_modules/.installed

$(REMOTE_STAMP): interop/remote/package.json interop/remote/package-lock.json
	cd interop/remote && npm ci --no-audit --no-fund --loglevel=error
	touch $@

remote: $(STAMP) $(INTEROP_STAMP) $(REMOTE_STAMP)
	@if ! command -v caddy >/dev/null || ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq --no-install-recommends caddy chromium >/dev/null 2>&1 \
	      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends caddy chromium >/dev/null 2>&1; } \
	      || echo "remote: apt-get could not install caddy and chromium; the parts that need them are skipped"; \
	  else echo "remote: caddy or chromium is missing and apt-get cannot run here; the parts that need them are skipped"; fi; \
	fi
	interop/node_modules/.bin/node interop/remote/run.mjs

# Agent frameworks (OpenAI Agents SDK, Pydantic AI, LangChain, Google Gen AI, FastMCP, smolagents),
# each pinned in agents/requirements/NAME.txt and installed once into build/agents/NAME, drive
# every mode of every tool through their own conversion and call path (agents/run.py).
AGENT_LIBS := openai-agents pydantic-ai langchain google-genai fastmcp smolagents

build/agents/%/.installed: agents/requirements/%.txt
	rm -rf build/agents/$*
	$(call venv_with_pip,build/agents/$*)
	build/agents/$*/bin/python -m pip install --quiet -r $<
	touch $@

agents: $(STAMP) $(AGENT_LIBS:%=build/agents/%/.installed)
	$(BIN)/python agents/run.py

bench: $(STAMP)
	$(BIN)/python -m bench

# VARIANTS="bare-lists question-flags" (or "observed") runs it against the fake's contract variants.
demo: generate
	$(BIN)/python -m cooked_fake.demo $(foreach v,$(VARIANTS),--variant $(v))

clean:
	rm -rf $(VENV) build dist cooked-mcp.mcpb .mypy_cache .ruff_cache .hypothesis interop/node_modules interop/remote/node_modules distribution/mcpb/node_modules
	find . \( -name __pycache__ -o -name '*.egg-info' \) -type d -prune -exec rm -rf {} +

# `make help`: what each target does (the first target, install, stays the default).
.PHONY: help
help:
	@echo "make install         create .venv and install cooked-mcp with its dev tools (PYTHON=python3.12 to choose)"
	@echo "make demo            the real server driven by an MCP client against the fake Cooked (no account needed)"
	@echo "make test            generate-check, lint and the whole test suite (4 to 6 minutes on 2 cores)"
	@echo "make lint            ruff and mypy --strict"
	@echo "make coverage        the whole suite under coverage.py (branches, started processes too): per package, TOTAL, HTML in build/coverage"
	@echo "make generate        regenerate src/generated from features/ (generate-check: fail if it would change)"
	@echo "make requirements    write docs/requirements.md and build/requirements.md from collection alone (seconds)"
	@echo "make golden          re-render the codegen golden files after a deliberate template change"
	@echo "make bench           the performance benchmark against the fake Cooked (about 4 minutes)"
	@echo "make interop         outside MCP clients (TypeScript SDK, Inspector, conformance) against the real server; needs node"
	@echo "make remote          remote mode (OAuth) with outside clients, conformance, headless Chromium and Caddy; needs node"
	@echo "make agents          six agent frameworks (pinned, build/agents/) call every mode of every tool, plain and strict"
	@echo "make dist            the wheel and sdist in dist/ (python -m build)"
	@echo "make bundle          cooked-mcp.mcpb, the Claude Desktop extension (mcpb validate when node is here)"
	@echo "make install-check   every README install route from the built wheel, in fresh environments, timed"
	@echo "make lower-bounds    the whole suite on the lowest dependency releases pyproject.toml allows"
	@echo "make newest          the transports' tests on the newest dependency releases pyproject.toml allows"
	@echo "make clean           remove .venv, build/, dist/, the bundle, node_modules, *.egg-info and caches"
	@echo "Run cooked-mcp --help for its flags, environment variables and config keys; README.md and docs/ for the rest."

# --- packaging: the wheel, the MCP Bundle and the install checks (README "Install for real use") ---
DIST := dist
MCPB := distribution/mcpb/node_modules/.bin/mcpb

# The wheel and sdist, built by the standard front end (an isolated build, as PyPI's would be).
dist: $(STAMP)
	rm -rf $(DIST) && mkdir -p build
	$(BIN)/python -m build --outdir $(DIST) . > build/dist.log 2>&1 || (cat build/dist.log; exit 1)
	@ls -1 $(DIST)

# cooked-mcp.mcpb for Claude Desktop; checked with the official mcpb CLI when node is here.
bundle: dist
	$(BIN)/python -m distribution bundle $(DIST)/cooked_mcp-*.whl cooked-mcp.mcpb
	@if command -v node >/dev/null 2>&1; then \
		npm ci --prefix distribution/mcpb --no-audit --no-fund --loglevel=error && \
		rm -rf build/bundle && $(MCPB) unpack cooked-mcp.mcpb build/bundle >/dev/null && \
		$(MCPB) validate build/bundle/manifest.json; \
	else echo "node not found: skipping mcpb validate (the manifest is still checked against the vendored schema by the tests)"; fi

# Each README install route from the built wheel, in fresh environments, against the fake Cooked.
install-check: bundle
	COOKED_MCP_INSTALL_CHECK=1 $(BIN)/python -m pytest -q tests/distribution
	@cat build/install-check/timings.md

# The suite on the lowest dependency releases pyproject.toml allows (distribution/lower-bounds.txt).
RUNTIME_DEPS := (mcp|httpx|pydantic|pydantic_core|sniffio|anyio|starlette|uvicorn|sse-starlette|h11)
LOWER := build/lower-bounds
lower-bounds:
	rm -rf $(LOWER)
	$(call venv_with_pip,$(LOWER))
	$(LOWER)/bin/python -m pip install --quiet -c distribution/lower-bounds.txt -e . -e ./src/fake --group dev
	$(LOWER)/bin/python -m pip list 2>/dev/null | grep -E -i '^$(RUNTIME_DEPS) '
	$(LOWER)/bin/python -m pytest -q -p no:cacheprovider

# The newest releases pyproject.toml allows (pip --upgrade), on what they can break: the SDK's
# contract, both transports and their bounds, the outside-process scenarios (about 4 minutes).
NEWEST := build/newest
NEWEST_TESTS := tests/tools/test_sdk_contract.py tests/transports tests/hardening tests/scenarios tests/confirmation tests/prompts
newest:
	rm -rf $(NEWEST)
	$(call venv_with_pip,$(NEWEST))
	$(NEWEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e . -e ./src/fake --group dev
	$(NEWEST)/bin/python -m pip list 2>/dev/null | grep -E -i '^$(RUNTIME_DEPS) '
	$(NEWEST)/bin/python -m pytest -q -p no:cacheprovider $(NEWEST_TESTS)

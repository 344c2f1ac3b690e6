# Reach — `make help` lists every target.
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
UV    := $(VENV)/bin/uv
UV_VERSION := 0.13.8
MEMBERS := -e services/common -e services/shop -e gateway -e agent -e retriever -e cli
STAMP := $(VENV)/.synced
SOURCES := services/common/src services/shop/src gateway/src agent/src retriever/src cli/src
# Every service, CLI and test process imports from these. Bytecode is compiled once here
# (and at install for the dependencies) rather than by each process: with
# PYTHONDONTWRITEBYTECODE set, as on many CI machines, every process otherwise compiled
# everything it imported (~3 s of CPU for the gateway and the agent) and kept nothing.
BYTECODE = $(PY) -m compileall -q -j 0 $(SOURCES)

.DEFAULT_GOAL := help
.PHONY: help install run test lint typecheck manifest-schema db-upgrade lock bench-embedder bench-retriever bench-gateway bench-routing bench-shipped bench-agent bench-shortlist bench-metrics bench-outputs bench-mcp bench-registry bench-gateway-start faults fuzz fuzz-requests fuzz-arguments fuzz-wide soak images clean

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml */pyproject.toml services/*/pyproject.toml
	@test -x $(UV) || { python3 -m venv $(VENV) && $(VENV)/bin/pip install -q uv==$(UV_VERSION); }
	VIRTUAL_ENV=$(VENV) $(UV) pip sync -q --compile-bytecode requirements.lock && VIRTUAL_ENV=$(VENV) $(UV) pip install -q --no-deps $(MEMBERS) && touch $@

install: $(STAMP) ## Create .venv with uv and install the locked dependencies

run: $(STAMP) ## Run the whole stack (embedded Postgres + Redis unless DATABASE_URL / REDIS_URL)
	@$(BYTECODE)
	$(PY) -m reach_common.stack run

# One worker per core, at most 4, each with its own embedded Postgres and Redis (one
# process when DATABASE_URL / REDIS_URL name shared servers: see tests/conftest.py).
# TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= auto
test: $(STAMP) ## Run unit and integration tests against real Postgres and Redis
	@$(BYTECODE)
	$(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist worksteal

faults: $(STAMP) ## Fault matrix: run tests/faults and print fault x service, errors, lost, duplicates, recovery
	$(PY) scripts/fault_matrix.py

fuzz: $(STAMP) ## Schemathesis against the four services' OpenAPI (the long run; CI runs a short one)
	$(PY) scripts/fuzz.py --examples 100

fuzz-requests: $(STAMP) ## The longest /run requests, built to be costly, against every catalogue in the repo
	$(PY) scripts/fuzz_requests.py manifests $(wildcard tests/data/*/manifests)

fuzz-arguments: $(STAMP) ## Tool calls with ~1 MB of arguments: each call's time and how long the event loop stalled
	$(PY) scripts/fuzz_arguments.py

fuzz-wide: $(STAMP) ## /run against tools with enums of 40,000 and 80,000 options and 10,000 parameters
	$(PY) scripts/fuzz_wide_tools.py

SOAK_MINUTES ?= 30
soak: $(STAMP) ## Soak: mixed traffic at a fixed rate for SOAK_MINUTES (30) minutes; per-minute RSS, fds, DB connections
	$(PY) scripts/soak.py --minutes $(SOAK_MINUTES)

lint: $(STAMP) ## ruff check, format check and the import-linter contracts
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/lint-imports

typecheck: $(STAMP) ## mypy --strict over every package
	$(VENV)/bin/mypy

manifest-schema: $(STAMP) ## Regenerate manifests/schema.json from the manifest model
	$(PY) -m gateway manifest-schema > manifests/schema.json

db-upgrade: $(STAMP) ## Migrate the database to head
	$(PY) -m reach_common.stack db-upgrade

lock: ## Re-resolve dependencies: uv.lock (local), then the committed requirements.lock
	$(UV) lock && $(UV) export -q --frozen --no-emit-workspace --all-groups --format requirements-txt -o requirements.lock

bench-embedder: $(STAMP) ## Embedder latency: p50/p95 for one short query, and batch throughput
	$(PY) scripts/bench_embedder.py

clean: ## Remove .venv (keeps .reach/ data)
	rm -rf $(VENV)

bench-retriever: $(STAMP) ## Retriever quality and speed on a BEIR folder: make bench-retriever DATASET=path
	$(PY) scripts/bench_retriever.py $(DATASET)

bench-gateway: $(STAMP) ## Gateway overhead: the same load on shop directly and through /tools/{id}/invoke
	$(PY) scripts/bench_gateway.py
	$(PY) scripts/bench_invoke_layer.py

bench-metrics: $(STAMP) ## Metrics middleware: cost per request with and without it
	$(PY) scripts/bench_metrics.py

bench-outputs: $(STAMP) ## Output checks: cost of the budget and output_schema checks on a small output
	$(PY) scripts/bench_outputs.py

bench-routing: $(STAMP) ## Routing quality and latency: make bench-routing DATASET=path [EXAMPLES=n] (tools.jsonl + queries.jsonl)
	$(PY) scripts/bench_routing.py $(DATASET) $(if $(EXAMPLES),--examples $(EXAMPLES))

bench-shipped: $(STAMP) ## Routing quality on the shipped tools: make bench-shipped [REQUESTS=path.jsonl] [MANIFESTS=dir] [TODAY=YYYY-MM-DD]
	$(PY) scripts/bench_shipped.py $(if $(MANIFESTS),--manifests $(MANIFESTS)) $(if $(TODAY),--today $(TODAY)) $(REQUESTS)

bench-agent: $(STAMP) ## Agent per-turn overhead and a concurrency run against recorded model responses
	$(PY) scripts/bench_agent.py

bench-shortlist: $(STAMP) ## The agent's tool shortlist on a large catalogue: make bench-shortlist DATASET=path (tools.jsonl + queries.jsonl)
	$(PY) scripts/bench_tool_shortlist.py $(DATASET)

bench-mcp: $(STAMP) ## MCP overhead: p50/p99 of /mcp tools/call vs POST /tools/{id}/invoke, same tool, one run
	$(PY) scripts/bench_mcp.py

bench-registry: $(STAMP) ## Registry at 10,000 tools: rate one by one (start vs end), bulk seconds, replica lag, /run misses, replica start
	$(PY) scripts/bench_registry.py

bench-gateway-start: $(STAMP) ## A gateway process's start with the shipped tools: time to ready and CPU, tool vectors stored vs emptied
	$(PY) scripts/bench_gateway_start.py

images: ## Build the four service images (needs Docker)
	docker compose build

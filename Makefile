# poolsight: every target a user or CI needs. `make help` lists them.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Every download goes to .cache/ (git-ignored): pip's too.
export PIP_CACHE_DIR := $(CURDIR)/.cache/pip

.DEFAULT_GOAL := help

help: ## list every target
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

KERNEL_DIR := simulator/kernel
KERNEL_SRC := $(KERNEL_DIR)/Cargo.toml $(KERNEL_DIR)/Cargo.lock $(wildcard $(KERNEL_DIR)/src/*.rs)
CARGO := cargo
CARGO_ARGS := --manifest-path $(KERNEL_DIR)/Cargo.toml

# An editable install: the top-level folders are mapped to poolsight.* (pyproject.toml),
# and setuptools-rust builds the simulator's kernel (Rust + PyO3) in place as
# poolsight/_kernel.*.so; a change to the kernel's sources builds it again.
$(STAMP): pyproject.toml $(KERNEL_SRC)
	command -v $(CARGO) >/dev/null || { echo "Rust (cargo) is needed to build the simulator kernel: https://rustup.rs"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP) ## the Python environment (.venv): poolsight (editable), pinned dependencies, the compiled kernel

install: venv ## venv + every service's software, downloaded once into .cache/
	$(BIN)/poolsight install

up: install ## start the stack and wait until every service is healthy
	$(BIN)/poolsight up

down: venv ## stop what `up` started
	$(BIN)/poolsight down

status: venv ## each service's state, address, PID, memory and health
	$(BIN)/poolsight status

demo: install ## the main job: stack up, jobs submitted, a scenario generated, a Trino summary every 10 s
	$(BIN)/poolsight demo

lint: venv ## ruff (check, format), mypy, import layers (import-linter), and the kernel's cargo fmt and clippy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tests/typecheck.py
	$(BIN)/python -m tests.importcheck
	$(CARGO) fmt $(CARGO_ARGS) --check
	$(CARGO) clippy $(CARGO_ARGS) --all-targets -- -D warnings

# The tests that need no service run in parallel (pytest-xdist), each in one process of its own
# at a time: they took 4.6 min in one process, 2.4 min in two on the 2-core machine. The stack
# tests share one stack, so they run after them in one process.
UNIT_WORKERS ?= 2

unit: venv ## the tests that need no services: pytest outside tests/stack/, and the kernel's cargo tests
	$(BIN)/pytest -q -m 'not stack' -n $(UNIT_WORKERS)
	$(CARGO) test $(CARGO_ARGS)

browser: venv ## Debian's chromium for the dashboard's browser tests (Playwright drives it; no browser download)
	$(BIN)/python -c "from poolsight.infra.install import chromium; print(chromium())"

kernel-test: venv ## the kernel's own tests (cargo test)
	$(CARGO) test $(CARGO_ARGS)

# The stack tests wait on the services much of the time: lint and the kernel's tests (pure CPU,
# nothing timed) run beside them at the lowest priority, their output printed at the end.
test: install browser ## everything CI runs: unit tests, tests against the real stack, and beside them lint and the kernel's cargo tests
	$(BIN)/pytest -q -ra --durations=10 -m 'not stack' -n $(UNIT_WORKERS)
	bash tests/beside.sh var/beside-stack.log "$(MAKE) --no-print-directory lint kernel-test" -- \
	  $(BIN)/pytest -q -ra --durations=25 -m stack

simulate-example: venv ## offline simulation of the CloudPhysics block trace (no services)
	$(BIN)/poolsight simulate ../shared/data/traces/cloudPhysicsIO.csv --page-column lbn --time-column time \
	  --window-panes 1000 --pool-size 8192

bench-sim: venv ## simulator throughput and accuracy vs libcachesim (benchmark-only GPL peer)
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m bench.sim

bench-decode: venv ## getpages/s of the simulation job's decoding: the compiled kernel vs fastavro + from_record (no services)
	$(BIN)/python -m bench.decode

bench-ingest: install ## getpages/s into and out of Kafka (generator, trace collector, consumer) vs raw Kafka; trace readers (CSV, SMF, GTF)
	$(BIN)/python -m bench.ingest $(ARGS)

bench-pipeline: install ## getpages/s from the generator through Flink into Iceberg, and freshness via Trino
	$(BIN)/python -m bench.pipeline $(ARGS)

bench-history: install ## dashboard and view queries over 90 days of panes + 13 months of rollups (own Trino; ARGS=--days 3 --pools 5)
	$(BIN)/python -m bench.history $(ARGS)

soak: install ## the stack flat out for 20 minutes, every process's RSS each 10 s: peak and growth against its ceiling (ARGS='--minutes 5')
	$(BIN)/python -m bench.soak $(ARGS)
chaos: install ## kill -9 each service in turn under a streaming workload; totals in Iceberg must equal what was produced (ARGS='--trials 3')
	$(BIN)/python -m bench.chaos $(ARGS)
bench-dashboard: install browser ## first paint of the pool page with 24 h of 1-minute panes, in Chromium, vs its queries in turn
	$(BIN)/python -m bench.dashboard

compose-check: install ## docker-compose.yml end to end under podman: images built, stack up, a scenario from the host, totals in Trino (ARGS='--keep')
	$(BIN)/python -m bench.compose_check $(ARGS)

clean: ## remove runtime data and logs (var/); keeps the download cache
	-$(BIN)/poolsight down
	rm -rf var

distclean: clean ## also remove .venv and the download cache
	rm -rf $(VENV) .cache

.PHONY: help venv install up down status demo lint unit kernel-test test simulate-example bench-sim bench-decode bench-ingest bench-pipeline bench-history soak chaos compose-check clean distclean

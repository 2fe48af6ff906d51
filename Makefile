# pg_strom - see README.md.  Every target does its own set-up first.
SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help setup build install start stop demo test test-rust test-sql test-versions lint gpu-bundle gpu-check bench soak clean

help:
	@echo "make demo    - set up, build, start the cluster, run the demo"
	@echo "make test    - set up, build, run every test (what CI runs)"
	@echo "make lint    - rustfmt, ShellCheck, ruff, module cycles, clippy (tier 1 of make test)"
	@echo "make test-rust - the Rust tests (tier 2 of make test)"
	@echo "make test-sql - build, install, the SQL tests (scripts/test-sql.sh, tier 3 of make test)"
	@echo "make test-versions - PostgreSQL 15 (Debian's: build, install, SQL tests), 16 and 17 (compile) (tier 4)"
	@echo "make start   - start the development cluster (writes .run/env)"
	@echo "make stop    - stop it"
	@echo "make bench SF=1 - the Star Schema Benchmark at scale SF (results/bench)"
	@echo "make soak N=10000 - sqlsmith statements with pg_strom on vs off"
	@echo "make gpu-bundle - build what scripts/gpu-check.sh needs into .carry/"
	@echo "make gpu-check - the GPU check (docs/gpu-check.md): runs it on a GPU machine, says how elsewhere"

setup:
	@scripts/setup.sh

build install: setup
	@scripts/build.sh

start: install
	@scripts/cluster.sh start

stop:
	@scripts/cluster.sh stop

demo: start
	@scripts/demo.sh

# the ci profile (Cargo.toml) unless PGSTROM_PROFILE says otherwise, and
# clippy as the compiler of the workspace's crates (scripts/env.sh); both
# apply to the install this target depends on too
test: export PGSTROM_PROFILE ?= ci
test: export PGSTROM_CLIPPY ?= 1
test: install
	@scripts/test.sh

# the tiers of `make test` one at a time (scripts/test.sh), with its
# profile and clippy, so that they share its compiled crates; `make lint`
# runs clippy itself (cargo clippy) unless PGSTROM_CLIPPY=1
lint: export PGSTROM_PROFILE ?= ci
lint: setup
	@scripts/test.sh lint

test-rust: export PGSTROM_PROFILE ?= ci
test-rust: export PGSTROM_CLIPPY ?= 1
test-rust: setup
	@scripts/test.sh rust

test-versions: export PGSTROM_PROFILE ?= ci
test-versions: export PGSTROM_CLIPPY ?= 1
test-versions: setup
	@scripts/test.sh versions

# scripts/test-sql.sh, through test.sh for its GPU detection
test-sql: export PGSTROM_PROFILE ?= ci
test-sql: export PGSTROM_CLIPPY ?= 1
test-sql: install
	@scripts/test.sh sql

# On a GPU machine (nvidia-smi lists a GPU) with .carry/ from `make
# gpu-bundle`: scripts/gpu-check.sh, which builds nothing.  Elsewhere: how.
gpu-check:
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  scripts/gpu-check.sh; \
	else \
	  echo "gpu-check: no GPU on this machine.  The GPU check (docs/gpu-check.md) runs on a GPU machine:"; \
	  echo "  1. here: make gpu-bundle  (build, then fill .carry/)"; \
	  echo "  2. copy the checkout with .carry/ to the GPU machine (the device tool: run with carry [\".carry\"])"; \
	  echo "  3. there, from the repository root: scripts/gpu-check.sh"; \
	  echo "     (or in parts, one call each: PGSTROM_GPU_CHECK_PARTS=runtime, sql, sql2, cluster)"; \
	fi

bench: install
	@scripts/bench.sh $(or $(SF),1) results/bench

soak: start
	@. .run/env && python3 scripts/diff-check.py --setup-only && python3 scripts/soak.py --queries $(or $(N),10000)

gpu-bundle: install
	@scripts/gpu-bundle.sh

clean: stop
	cargo clean
	rm -rf results .carry .ruff_cache

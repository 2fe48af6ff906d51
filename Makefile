# pg_strom - see README.md.  Every target does its own set-up first.
SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help setup build install start stop demo test test-rust test-sql lint gpu-bundle gpu-check bench soak clean

help:
	@echo "make demo    - set up, build, start the cluster, run the demo"
	@echo "make test    - set up, build, run every test (what CI runs)"
	@echo "make start   - start the development cluster (writes .run/env)"
	@echo "make stop    - stop it"
	@echo "make bench SF=1 - the Star Schema Benchmark at scale SF (results/bench)"
	@echo "make soak N=10000 - sqlsmith statements with pg_strom on vs off"
	@echo "make gpu-bundle - build what scripts/gpu-check.sh needs into .carry/"

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

bench: install
	@scripts/bench.sh $(or $(SF),1) results/bench

soak: start
	@. .run/env && python3 scripts/diff-check.py --setup-only && python3 scripts/soak.py --queries $(or $(N),10000)

gpu-bundle: install
	@scripts/gpu-bundle.sh

clean: stop
	cargo clean
	rm -rf results .carry

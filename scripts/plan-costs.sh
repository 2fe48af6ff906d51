#!/usr/bin/env bash
# scripts/plan-costs.sh FILE.sql... - for cost-model work: each query's plan
# with pg_strom on and off (EXPLAIN, costs shown) and the device paths the
# planner weighed (pg_strom's DEBUG2 lines: workers, rows, groups, cost).
# Connects with the PG* environment (for example `. .run/bench/env` and
# PGDATABASE=tpch after `scripts/bench.sh tpch ...`).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/plan-costs.sh FILE.sql..."; exit 2; }
for f in "$@"; do
  q=$(grep -v '^[[:space:]]*--' "$f")
  echo "== $f: pg_strom on (the device paths weighed, then the plan)"
  psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = debug2" -c "EXPLAIN $q" 2>&1 \
    | grep -E '^(DEBUG: +Gpu|[^D])' || true
  echo "== $f: pg_strom off"
  psql -X -q -v ON_ERROR_STOP=1 -c "SET pg_strom.enabled = off" -c "EXPLAIN $q"
done

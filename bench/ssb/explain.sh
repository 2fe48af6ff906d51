#!/usr/bin/env bash
# bench/ssb/explain.sh MODE QUERY... - EXPLAIN ANALYZE of SSB queries on
# the benchmark's cluster (scripts/bench.sh started it and loaded the
# data), in MODE pg, strom or arrow, with the settings ssb.py uses, after
# one warm-up run; extra settings come from $SSB_SET ("name=value ...").
# Ends with the GPU service's Arrow column cache counters.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/env.sh
# shellcheck source=/dev/null  # (the benchmark cluster's, written by scripts/cluster.sh)
. "$RUN/bench/env" || exit 1
mode=$1; shift
cores=$(nproc)
set_sql="SET max_parallel_workers_per_gather = $cores; SET max_parallel_workers = $cores;"
case $mode in
  pg) set_sql+=" SET pg_strom.enabled = off;" ;;
  strom) ;;
  arrow) set_sql+=" SET search_path = ssb_arrow, public;" ;;
  *) echo "mode: pg, strom or arrow"; exit 2 ;;
esac
for kv in ${SSB_SET:-}; do set_sql+=" SET ${kv%%=*} = '${kv#*=}';"; done
for q in "$@"; do
  sql=$(cat "bench/ssb/queries/$q.sql")
  echo "== $q ($mode) ${SSB_SET:-}"
  psql -XAtq -c "$set_sql" -c "$sql" >/dev/null
  psql -Xq -c "$set_sql" -c "\\timing on" -c "$sql" -c "EXPLAIN (ANALYZE, VERBOSE off, COSTS off) $sql" | grep -v '^$'
done
psql -Xq -c "SELECT arrow_cache_bytes, arrow_cache_hits, arrow_cache_misses, arrow_cache_read_bytes FROM pgstrom.gpu_service_status" 2>&1

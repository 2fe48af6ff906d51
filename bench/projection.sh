#!/usr/bin/env bash
# bench/projection.sh [ROWS] - GPU Projection (pg_strom.enable_gpu_projection)
# on and off, against PostgreSQL, in one run (docs/benchmark.md).
#
# Against the running cluster of the environment, on the GPU machine after
# scripts/carry-install.sh: a table of ROWS rows (default 20,000,000) of
# three float8 coordinates; PG-Strom's write-ups' distance and another expression
# computed for the rows of a filter passing 50%, consumed above the scan
# (OFFSET 0 keeps them in the scan's output), serial and with 8 workers,
# each timed 3 times (the median).  Results must be equal.
set -euo pipefail
rows=${1:-20000000}
db=pgstrom_projection
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
psql -XAtq <<SQL
CREATE EXTENSION pg_strom;
SELECT pgstrom.random_setseed(64);
CREATE TABLE t AS SELECT id, pgstrom.random_float(0, 0, 1000) AS x, pgstrom.random_float(0, 0, 1000) AS y,
       pgstrom.random_float(0, 0, 1000) AS z FROM generate_series(1, $rows) id;
VACUUM ANALYZE t;
SQL
q="SELECT count(*), sum(dist), sum(v) FROM (SELECT sqrt((x-200)*(x-200) + (y-300)*(y-300) + (z-400)*(z-400)) AS dist, x * y - z AS v FROM t WHERE z < 500 OFFSET 0) s"
force="SET pg_strom.gpu_setup_cost = 0; SET pg_strom.heap_gather_cost = 0; SET pg_strom.engine = ${PGSTROM_BENCH_ENGINE:-gpu};"
run() { # settings -> "ms|result"
  local out ms res
  out=$(psql -XAq -F, <<SQL
$1
$q;
\timing on
$q;
$q;
$q;
SQL
)
  ms=$(grep -o 'Time: [0-9.]*' <<<"$out" | awk '{print $2}' | sort -n | sed -n 2p)
  # sums of floats: compared to 12 significant digits (parallel sums vary in the last bits)
  res=$(grep -v '^Time:\|^$\|Timing is on' <<<"$out" | awk -F, '{printf "%s,%.12g,%.12g\n", $1, $2, $3}' | sort -u | md5sum | cut -c1-8)
  echo "$ms|$res"
}
printf '%-7s %10s %10s %10s %8s %8s  %s\n' workers "pg ms" "cpu-proj" "gpu-proj" "gpu/cpu" "pg/gpu" results
fail=0
for w in 0 8; do
  par="SET max_parallel_workers_per_gather = $w;"
  IFS='|' read -r pg rpg <<<"$(run "$par SET pg_strom.enabled = off;")"
  IFS='|' read -r off roff <<<"$(run "$force $par SET pg_strom.enable_gpu_projection = off;")"
  IFS='|' read -r on ron <<<"$(run "$force $par SET pg_strom.enable_gpu_projection = on;")"
  same=equal
  if [ "$rpg" != "$roff" ] || [ "$rpg" != "$ron" ]; then same=DIFFERENT; fail=1; fi
  printf '%-7s %10s %10s %10s %8.2f %8.2f  %s\n' "$w" "$pg" "$off" "$on" \
    "$(awk "BEGIN{print $off / $on}")" "$(awk "BEGIN{print $pg / $on}")" "$same"
  psql -XAtq -c "$force $par EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q" | grep -E "Custom Scan|GPU Projection|Heap Read|Workers Launched" | sed 's/^/    /'
done
psql -XAtq -d postgres -c "DROP DATABASE $db"
exit $fail

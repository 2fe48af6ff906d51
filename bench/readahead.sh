#!/usr/bin/env bash
# bench/readahead.sh [ROWS] - reading ahead (pg_strom.chunk_read_ahead) on
# and off, against PostgreSQL, in one run (docs/benchmark.md, "Read-ahead").
#
# Against the running cluster of the environment (PGHOST/PGPORT), on the
# GPU machine after scripts/carry-install.sh: a table t of ROWS rows
# (default 20,000,000: id, a = id % 1000, x, a 32-byte text) and a
# dimension d; a GpuScan and a GpuPreAgg over a GpuJoin, serial and with 8
# workers, each timed 3 times (the median) with read-ahead off, on, and
# with pg_strom off.  Results must be equal; prints ms and ratios.
set -euo pipefail
rows=${1:-20000000}
db=pgstrom_readahead
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
export PGDATABASE=$db
psql -XAtq <<SQL
CREATE EXTENSION pg_strom;
CREATE TABLE t AS SELECT i AS id, (i % 1000)::int4 AS a, (i * 7 % 101)::float8 AS x, md5(i::text) AS s
  FROM generate_series(1, $rows) i;
CREATE TABLE d AS SELECT i AS a, i % 3 AS g FROM generate_series(0, 1499) i;
VACUUM ANALYZE t, d;
SQL
queries=(
  "scan|SELECT count(*), sum(id), min(s) FROM (SELECT id, s FROM t WHERE a < 10 AND x > 50 OFFSET 0) q"
  "join-agg|SELECT g, count(*), sum(id) FROM t JOIN d ON t.a = d.a WHERE x > 10 GROUP BY g ORDER BY g"
)
force="SET pg_strom.gpu_setup_cost = 0; SET pg_strom.heap_gather_cost = 0; SET pg_strom.engine = ${PGSTROM_BENCH_ENGINE:-gpu};"
# median of 3 timed runs after one warm-up; the result of the last
run() { # settings query -> "ms|result"
  local out
  out=$(psql -XAq -F, <<SQL
$1
SELECT count(*) FROM ($2) w;
\timing on
$2;
$2;
$2;
SQL
)
  local ms res
  ms=$(grep -o 'Time: [0-9.]*' <<<"$out" | awk '{print $2}' | sort -n | sed -n 2p)
  res=$(grep -v '^Time:\|^$\|Timing is on' <<<"$out" | md5sum | cut -c1-8)
  echo "$ms|$res"
}
printf '%-9s %-7s %10s %10s %10s %8s %8s  %s\n' query workers "pg ms" "off ms" "on ms" "on/off" "pg/on" results
fail=0
for w in 0 8; do
  par="SET max_parallel_workers_per_gather = $w;"
  for q in "${queries[@]}"; do
    IFS='|' read -r name sql <<<"$q"
    plan=$(psql -XAtq -c "$force $par EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $sql" | grep -E "Custom Scan|Heap Read|Workers Launched" | tr -s ' ' | paste -sd';')
    IFS='|' read -r pg rpg <<<"$(run "$par SET pg_strom.enabled = off;" "$sql")"
    IFS='|' read -r off roff <<<"$(run "$force $par SET pg_strom.chunk_read_ahead = off;" "$sql")"
    IFS='|' read -r on ron <<<"$(run "$force $par SET pg_strom.chunk_read_ahead = on;" "$sql")"
    same=equal
    if [ "$rpg" != "$roff" ] || [ "$rpg" != "$ron" ]; then same=DIFFERENT; fail=1; fi
    printf '%-9s %-7s %10s %10s %10s %8.2f %8.2f  %s\n' "$name" "$w" "$pg" "$off" "$on" \
      "$(awk "BEGIN{print $off / $on}")" "$(awk "BEGIN{print $pg / $on}")" "$same"
    echo "          plan: $plan"
  done
done
psql -XAtq -d postgres -c "DROP DATABASE $db"
exit $fail

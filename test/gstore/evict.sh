#!/usr/bin/env bash
# test/gstore/evict.sh - GPU store copies give way when GPU memory runs
# short.
#
# A cluster of its own whose GPU may take 1320 MB (pg_strom.gpu_memory_budget)
# holds two gstore_fdw tables whose copies in GPU memory do not fit
# together beside a query's request.  The sizes: a copy of 3 million rows
# of three 8-byte columns holds 144 MB of values and row versions (192 MB
# with its arrays grown by doubling), and a GpuPreAgg over it is one chunk
# (up to 4 million rows of a copy) whose request takes 1024 MB (a power
# of two; the first GPU run of this test, at a 512 MB budget, failed on
# it): one copy and the request fit (1216 MB), two copies and the
# request do not (1408 MB).  One session reads the first table on the GPU (its copy is
# built), then the second (the first copy, idle now, is dropped to make
# room: the service log says so), then the first again (built anew from
# the backend's replay).  Every answer equals pg_strom off's.  Without
# eviction the second query would wait 30 s for memory and fail.
#
# Only with a GPU: the CPU engine keeps its copies in host memory, outside
# any budget (the script says it skipped).
# Usage: test/gstore/evict.sh (the cluster of the environment tells whether
# a GPU is there; scripts/env.sh's variables)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
if [ "$(q -d postgres -c "SELECT pgstrom.active_engine()" 2>/dev/null)" != gpu ]; then
  echo "gstore-evict: skipped: no GPU engine in this cluster (the CPU engine's copies live in host memory)"
  exit 0
fi
fail=0
bad() { echo "gstore-evict: FAIL: $*"; fail=1; }
cluster=/tmp/pgstrom_gstore_evict
files=/tmp/pgstrom_gstore_evict_files
port=54351
"$root/scripts/cluster.sh" stop "$cluster" >/dev/null 2>&1
rm -rf "$cluster" "$files" && mkdir -p "$files" && chmod 1777 "$files"
PGSTROM_EXTRA_CONF="pg_strom.gpu_memory_budget = 1320
pg_strom.arrow_cache_size = 0" "$root/scripts/cluster.sh" start "$cluster" "$port" >/dev/null || {
  echo "gstore-evict: FAIL: the cluster did not start"
  exit 1
}
export PGHOST=$cluster/sock PGPORT=$port PGDATABASE=postgres
# the device code (seeded from the other test clusters, or built now)
engine=
for _ in $(seq 300); do
  engine=$(q -c "SELECT pgstrom.active_engine()" 2>/dev/null)
  [ "$engine" = gpu ] && break
  sleep 1
done
[ "$engine" = gpu ] || bad "the cluster's engine is '$engine', not gpu, after 300 s"
# two tables of 3 million rows (above)
q <<SQL || bad "loading the tables"
CREATE FOREIGN TABLE ea (id int8, x float8, y float8) SERVER gstore_fdw
  OPTIONS (base_file '$files/ea.base', redo_log_file '$files/ea.redo');
CREATE FOREIGN TABLE eb (id int8, x float8, y float8) SERVER gstore_fdw
  OPTIONS (base_file '$files/eb.base', redo_log_file '$files/eb.redo');
INSERT INTO ea SELECT i, i % 1000, i % 7 FROM generate_series(1, 3000000) i;
INSERT INTO eb SELECT i, i % 997, i % 11 FROM generate_series(1, 3000000) i;
SQL
# one session: it replays each table once
out=$(q -F ' ' 2>&1 <<'SQL'
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SELECT 'a1', count(*), sum(x), sum(y) FROM ea;
SELECT 'b1', count(*), sum(x), sum(y) FROM eb;
SELECT 'a2', count(*), sum(x), sum(y) FROM ea;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*), sum(x), sum(y) FROM eb;
SET pg_strom.enabled = off;
SELECT 'off_a', count(*), sum(x), sum(y) FROM ea;
SELECT 'off_b', count(*), sum(x), sum(y) FROM eb;
SQL
)
echo "$out" | grep -E '^(a1|b1|a2|off_)|GpuPreAgg|GPU Store' | sed 's/^/gstore-evict: /'
val() { echo "$out" | awk -v k="$1" '$1 == k { $1 = ""; print }'; }
[ -n "$(val off_a)" ] || bad "no answer with pg_strom off: $out"
[ "$(val a1)" = "$(val off_a)" ] || bad "first read of ea: '$(val a1)', pg_strom off: '$(val off_a)'"
[ "$(val b1)" = "$(val off_b)" ] || bad "read of eb: '$(val b1)', pg_strom off: '$(val off_b)'"
[ "$(val a2)" = "$(val off_a)" ] || bad "second read of ea: '$(val a2)', pg_strom off: '$(val off_a)'"
grep -q "GpuPreAgg" <<<"$out" || bad "the reads did not run on the device: $out"
grep -q "GPU Store: eb (copy in GPU" <<<"$out" || bad "EXPLAIN ANALYZE does not show eb's copy in GPU memory"
n=$(grep -c "dropped the idle copy of GPU store table" "$cluster/server.log")
if [ "$n" -ge 2 ]; then
  echo "gstore-evict: the service log says $n idle copies were dropped for memory"
else
  bad "the service log says $n idle copies were dropped (expected at least 2)"
fi
"$root/scripts/cluster.sh" stop "$cluster" >/dev/null 2>&1
rm -rf "$files"
[ "$fail" = 0 ] && echo "gstore-evict: ok"
exit "$fail"

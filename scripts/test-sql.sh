#!/usr/bin/env bash
# scripts/test-sql.sh - the tests that need a running PostgreSQL:
#   1. pg_regress suites (test/schedule, then test/schedule-gpu or
#      test/schedule-nogpu depending on PGSTROM_EXPECT_GPU), and the
#      isolation suites (test/isolation: concurrent sessions)
#      and the Arrow_Fdw fuzz test (test/arrow/fuzz.py, bounded time)
#   1c. the differential harness (scripts/diff-check.py over test/diff, and
#      test/diff-fail, which it must reject), a bounded sqlsmith soak
#      (scripts/soak.py, 1,000 statements), then the SSB and TPC-H
#      benchmarks at scale 0.01 in every mode (bench/ssb/ssb.py,
#      bench/tpch/tpch.py), results compared, and README.md's examples as
#      written (scripts/readme-check.py)
#   1b. pg2arrow and mysql2arrow end to end (test/pg2arrow, test/mysql2arrow:
#      a private MariaDB server)
#   1d. PostgreSQL's own regression SQL with pg_strom off and on, compared
#      statement by statement (scripts/pg-regress-diff.py; the files are
#      fetched by scripts/pg-regress-fetch.sh, cached outside the clone)
#   2. docs/settings.md lists exactly the pg_strom.* settings, defaults too,
#      and docs/device-functions.md exactly the device function catalog
#   3. without shared_preload_libraries, CREATE EXTENSION fails cleanly
# Each run uses fresh clusters under $RUN/test*.  Used by `make test` and by
# scripts/gpu-check.sh.  Exit status is non-zero when anything fails.
# PGSTROM_SQL_STEPS picks steps (default: all): regress arrow isolation
# service pg2arrow mysql2arrow diff shapes soak ssb tpch readme pgregress docs ("arrow" needs
# "regress" before it; shapes, soak and ssb set up the differential
# harness's database themselves when "diff" is not among them).  The GPU
# check runs them in two calls, each under the device tool's 10 minutes.
set -uo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"

expect_gpu=${PGSTROM_EXPECT_GPU:-0}
base=$RUN
port=${PGSTROM_TEST_PORT:-54329}
results=${PGSTROM_RESULTS:-$PGSTROM_ROOT/results}
mkdir -p "$results"
failures=()
t0=$(date +%s)
# mark WHAT: how long the tests took so far (CI's log shows where time goes)
mark() { echo "test-sql: [$(( $(date +%s) - t0 )) s] $1 done"; }

steps=" ${PGSTROM_SQL_STEPS:-regress arrow isolation service pg2arrow mysql2arrow diff shapes soak ssb tpch readme pgregress docs} "
want() { [[ "$steps" == *" $1 "* ]]; }

fresh_cluster() { # dir port
  "$PGSTROM_ROOT/scripts/cluster.sh" stop "$1" >/dev/null 2>&1 || true
  rm -rf "$1"
  "$PGSTROM_ROOT/scripts/cluster.sh" start "$1" "$2"
}

# --- 1. regression suites --------------------------------------------------
dir=$base/test
# heap_gather_cost = 0 (and arrow_convert_cost = 0, the same for Arrow
# tables): the tests' tables are small (thousands of rows),
# where the host's gather cost would keep most plans on PostgreSQL; the
# tests judge offloaded execution, the benchmark judges plan choice.  The
# device's operator and row costs as a GPU's, also on the CPU engine
# (whose defaults are PostgreSQL's own): the same plans on both engines
PGSTROM_EXTRA_CONF="pg_strom.heap_gather_cost = 0
pg_strom.arrow_convert_cost = 0
pg_strom.gpu_operator_cost = 0.00015625
pg_strom.gpu_tuple_cost = 0.002
${PGSTROM_EXTRA_CONF:-}" fresh_cluster "$dir" "$port" || { echo "test-sql: cannot start the test cluster"; exit 1; }
# shellcheck source=/dev/null  # (written by scripts/cluster.sh)
. "$dir/env"
schedules=("$PGSTROM_ROOT/test/schedule")
if [ "$expect_gpu" = 1 ]; then
  schedules+=("$PGSTROM_ROOT/test/schedule-gpu")
else
  schedules+=("$PGSTROM_ROOT/test/schedule-nogpu")
fi
if want regress; then
regress="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress"
rm -rf "$results/regress"
# Arrow files for test/sql/arrow_fdw.sql (a fixed path: it is in the
# expected output); pyarrow from .deps/pytest or the system
rm -rf /tmp/pgstrom_arrow_test
if ! PYTHONPATH="$TEST_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}" \
     python3 "$PGSTROM_ROOT/test/arrow/gen.py" /tmp/pgstrom_arrow_test; then
  failures+=("arrow test files")
fi
major=$(pg_major)
if "$regress" --bindir="$PG_BINDIR" --host="$PGHOST" --port="$PGPORT" --user="$PGUSER" \
     --inputdir="$PGSTROM_ROOT/test" --outputdir="$results/regress" \
     --dbname=pgstrom_regression "${schedules[@]/#/--schedule=}"; then
  :
elif [ "$major" != 18 ]; then
  # The expected output is PostgreSQL 18's: an older server's is judged
  # after normalizing what only the version changes (EXPLAIN's row
  # counts, InitPlan names, table widths); the tests whose SQL the
  # version lacks are listed with why.
  skips=()
  if [ "$major" -lt 18 ]; then
    skips+=(--skip "arrow_fdw=CREATE FOREIGN TABLE ... (LIKE ...) is PostgreSQL 18's"
            --skip "plan_shapes=UPDATE ... RETURNING old.*, new.* is PostgreSQL 18's")
  fi
  if [ "$major" -lt 17 ]; then
    skips+=(--skip "device_eval=its tables hold infinite intervals, PostgreSQL 17's"
            --skip "gpuscan=its tables hold infinite intervals, PostgreSQL 17's"
            --skip "preagg_merge=its first plan sums an interval, offloaded from PostgreSQL 17 (whose sum(interval) state pg_strom computes)")
  fi
  if [ "$major" -lt 16 ]; then
    skips+=(--skip "gpu_service=PostgreSQL 15 plans an ordered aggregate without the Sort node the expected plan shows")
  fi
  if ! python3 "$PGSTROM_ROOT/scripts/regress-versions.py" "$PGSTROM_ROOT/test/expected" \
       "$results/regress/results" "$major" "${skips[@]}"; then
    failures+=("pg_regress (PostgreSQL $major)")
  fi
else
  failures+=("pg_regress")
  [ -f "$results/regress/regression.diffs" ] && cat "$results/regress/regression.diffs"
fi
mark "pg_regress"
fi

if want arrow; then
# Arrow_Fdw fuzzing: mutated files must read or fail, never crash
if ! PGDATABASE=pgstrom_regression python3 "$PGSTROM_ROOT/test/arrow/fuzz.py" /tmp/pgstrom_arrow_test \
     --seconds "${PGSTROM_FUZZ_SECONDS:-20}"; then
  failures+=("arrow fuzz")
fi
mark "arrow fuzz"
# the device paths over every readable test file against the plain scan
if ! PGDATABASE=pgstrom_regression python3 "$PGSTROM_ROOT/test/arrow/device_vs_plain.py" /tmp/pgstrom_arrow_test; then
  failures+=("arrow device vs plain")
fi
# without a GPU, again with the CPU engine in the GPU service, which reads
# fixed-width columns from the files itself (decimals widened there)
if [ "$expect_gpu" != 1 ] && ! PGOPTIONS="${PGOPTIONS:-} -c pg_strom.cpu_engine_in_service=on" \
     PGDATABASE=pgstrom_regression python3 "$PGSTROM_ROOT/test/arrow/device_vs_plain.py" /tmp/pgstrom_arrow_test; then
  failures+=("arrow device vs plain (CPU engine in the service)")
fi

# writable Arrow_Fdw: other sessions, the writer lock, kill -9 mid-transaction
if ! TEST_PYTHONPATH="$TEST_PYTHONPATH" "$PGSTROM_ROOT/test/arrow/write_crash.sh"; then
  failures+=("arrow write")
fi
mark "arrow write"
fi

if want isolation; then
# --- 1b. isolation suites: concurrent sessions (MVCC under GpuScan) --------
isolation="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress"
rm -rf "$results/isolation"
if ! "$isolation" --bindir="$PG_BINDIR" --host="$PGHOST" --port="$PGPORT" --user="$PGUSER" \
     --inputdir="$PGSTROM_ROOT/test/isolation" --outputdir="$results/isolation" \
     --dbname=pgstrom_isolation --schedule="$PGSTROM_ROOT/test/isolation/schedule"; then
  failures+=("isolation")
  [ -f "$results/isolation/regression.diffs" ] && cat "$results/isolation/regression.diffs"
fi
# Gstore_Fdw across crashes: a killed writer, a torn log, an interrupted
# checkpoint, the postmaster killed (the cluster is started again)
if ! "$PGSTROM_ROOT/test/gstore/crash.sh" "$dir" "$port"; then
  failures+=("gstore crash")
fi
# a database whose checkpoint timer runs is copied, renamed and dropped
if ! "$PGSTROM_ROOT/test/gstore/dropdb.sh"; then
  failures+=("gstore dropdb")
fi
# GPU store copies give way when GPU memory runs short (with a GPU: a
# cluster of its own with a small memory budget)
if ! "$PGSTROM_ROOT/test/gstore/evict.sh"; then
  failures+=("gstore evict")
fi
# the files the server writes (Arrow, redo log, base file): PostgreSQL's
# mode for its own files (this cluster: no group access)
if ! "$PGSTROM_ROOT/test/files/modes.sh" "$dir/data" 600; then
  failures+=("file modes")
fi
mark "isolation"
fi

if want service; then
# --- 1b'. the GPU service killed under running queries ----------------------
if ! "$PGSTROM_ROOT/test/service/crash.sh"; then
  failures+=("service crash")
fi
if ! "$PGSTROM_ROOT/test/service/leak.sh"; then
  failures+=("service leak")
fi
if ! "$PGSTROM_ROOT/test/service/interrupts.sh"; then
  failures+=("service interrupts")
fi
if ! "$PGSTROM_ROOT/test/service/device_fault.sh"; then
  failures+=("device fault")
fi
if ! "$PGSTROM_ROOT/test/service/gpudirect.sh"; then
  failures+=("gpudirect")
fi
mark "service tests"
fi
if want pg2arrow; then
# --- 1b''. pg2arrow end to end ------------------------------------------------
if ! TEST_PYTHONPATH="$TEST_PYTHONPATH" "$PGSTROM_ROOT/test/pg2arrow/run.sh"; then
  failures+=("pg2arrow")
fi
mark "pg2arrow"
fi
if want mysql2arrow; then
# --- 1b'''. mysql2arrow end to end, against a private MariaDB server -------
if ! TEST_PYTHONPATH="$TEST_PYTHONPATH" MYSQL2ARROW_TEST_PORT=$((port + 20)) "$PGSTROM_ROOT/test/mysql2arrow/run.sh"; then
  failures+=("mysql2arrow")
fi
mark "mysql2arrow"
fi

# --- 1c. differential harness, tiny SSB benchmark ----------------------------
export PYTHONPATH="$BENCH_PYTHONPATH:$TEST_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"

# --- 1d. PostgreSQL's own regression SQL, pg_strom off vs on ---------------
# (scripts/pg-regress-diff.py: its own clusters under $RUN/pg-regress, ports
# 54340-54342; the default pass, a GEQO pass, the CPU engine in the GPU
# service and the query rewrites kept wherever they apply;
# PGSTROM_PG_REGRESS_SHAPES
# names others, "none" skips the tier).  Independent of the steps below:
# it runs beside them, its output kept until they are done.
shapes=${PGSTROM_PG_REGRESS_SHAPES:-default,geqo,service,rewrites,exchange}
pgr_pid=
if want pgregress && [ "$shapes" != none ]; then
  pgr_log=$(mktemp)
  PGSTROM_RESULTS="$results" python3 "$PGSTROM_ROOT/scripts/pg-regress-diff.py" --shapes "$shapes" >"$pgr_log" 2>&1 &
  pgr_pid=$!
fi

if want diff; then
if ! python3 "$PGSTROM_ROOT/scripts/diff-check.py" --sf 0.01; then
  failures+=("diff-check")
fi
mark "diff-check"
elif want shapes || want soak || want ssb || want readme; then
  python3 "$PGSTROM_ROOT/scripts/diff-check.py" --sf 0.01 --setup-only >/dev/null || failures+=("diff-check set-up")
fi
if want shapes; then
# the join and aggregation queries again under each planner shape (GEQO,
# each join method off, serial, parallel): results only
if ! python3 "$PGSTROM_ROOT/scripts/diff-check.py" --no-setup --shapes --only gpujoin_,preagg_join,preagg_seed,ssb_q,part_; then
  failures+=("diff-check shapes")
fi
mark "diff-check shapes"
fi
if want diff; then
# without a GPU: the GpuPreAgg and SSB queries again with the CPU engine
# in the GPU service, where the heap direct path reads the tables' blocks
# from the files (docs/gpu_service.md, "Heap tables"); on a GPU the
# service's GPU did so in the run above
if [ "${PGSTROM_EXPECT_GPU:-0}" != 1 ]; then
  for only in preagg_ ssb_ part_; do
    out=$(PGOPTIONS="${PGOPTIONS:-} -c pg_strom.cpu_engine_in_service=on" \
          python3 "$PGSTROM_ROOT/scripts/diff-check.py" --no-setup --only "$only" 2>&1)
    rc=$?
    # (per line: each of the harness's lines gets the prefix)
    # shellcheck disable=SC2001
    echo "$out" | sed "s/^diff-check: /diff-check (CPU engine in the service, $only): /"
    [ $rc = 0 ] || failures+=("diff-check in the service $only")
  done
fi
# the Arrow queries, and the GpuPreAgg and SSB queries over heap tables
# (the heap direct path reads their blocks from the files), again with
# GPUDirect SQL forced on and off (on a GPU: cuFile, or pinned buffers;
# docs/gpu_service.md, "GPUDirect SQL" and "Heap tables")
if [ "${PGSTROM_EXPECT_GPU:-0}" = 1 ]; then
  for mode in on off; do
    # a new GPU service, whose column cache is empty: the files are read
    # again, by the path the setting picks
    svc=$(psql -XAtq -d pgstrom_diff -c "SELECT pid FROM pgstrom.gpu_service_info()")
    [ -n "$svc" ] && kill -9 "$svc"
    for _ in $(seq 60); do
      now=$(psql -XAtq -d pgstrom_diff -c "SELECT pid FROM pgstrom.gpu_service_info()" 2>/dev/null)
      [ -n "$now" ] && [ "$now" != "$svc" ] && break
      sleep 0.5
    done
    # (threshold 0: the test files' buffers are small, all go by cuFile)
    out=$(PGOPTIONS="${PGOPTIONS:-} -c pg_strom.gpudirect=$mode -c pg_strom.gpudirect_threshold=0" \
          python3 "$PGSTROM_ROOT/scripts/diff-check.py" --no-setup --only arrow_,preagg_,ssb_ 2>&1)
    rc=$?
    read -r cuf pinned < <(psql -XAt -F' ' -d pgstrom_diff -c \
      "SELECT arrow_cache_cufile_bytes[1], arrow_cache_read_bytes[1] - arrow_cache_cufile_bytes[1] FROM pgstrom.gpu_service_info()")
    echo "$out" | sed "s/^diff-check: \([0-9]* queries.*\)/diff-check (gpudirect=$mode): \1; the new service read ${cuf:-?} bytes by cuFile, ${pinned:-?} through pinned buffers/; s/^diff-check: FAILED/diff-check (gpudirect=$mode): FAILED/"
    [ $rc = 0 ] || failures+=("diff-check gpudirect=$mode")
  done
fi
neg=$(PGDATABASE=pgstrom_diff python3 "$PGSTROM_ROOT/scripts/diff-check.py" --dir "$PGSTROM_ROOT/test/diff-fail" --no-setup 2>&1)
neg_files=("$PGSTROM_ROOT"/test/diff-fail/queries/*.sql)
nfiles=${#neg_files[@]}
if [ "$(grep -c '^FAIL' <<<"$neg")" = "$nfiles" ] \
   && [ "$(grep -c 'results differ\|expected an error\|plan does not use' <<<"$neg")" = "$nfiles" ]; then
  echo "test-sql: diff-check rejects all $nfiles files of test/diff-fail, each for its reason"
else
  echo "$neg"; echo "test-sql: diff-check accepted a file of test/diff-fail"
  failures+=("diff-check self-test")
fi
fi
if want soak; then
if ! python3 "$PGSTROM_ROOT/scripts/soak.py" --queries "${PGSTROM_SOAK_QUERIES:-1000}"; then
  failures+=("soak")
fi
mark "soak"
fi
if want ssb; then
if ! PGDATABASE=pgstrom_diff python3 "$PGSTROM_ROOT/bench/ssb/ssb.py" all --sf 0.01 --runs 1 \
     --data "$dir/ssb-data" --out "$results/ssb-tiny"; then
  failures+=("ssb-tiny")
fi
mark "ssb-tiny"
fi
if want tpch; then
# TPC-H at scale 0.01 in every mode, in its own database (its part,
# supplier and customer are not SSB's); the test cluster's
# heap_gather_cost = 0 offloads more of the heap mode's plans than a
# default cluster would
createdb pgstrom_tpch 2>/dev/null
psql -X -q -d pgstrom_tpch -c "CREATE EXTENSION IF NOT EXISTS pg_strom" >/dev/null
if ! PGDATABASE=pgstrom_tpch python3 "$PGSTROM_ROOT/bench/tpch/tpch.py" all --sf 0.01 --runs 1 \
     --data "$dir/tpch-data" --out "$results/tpch-tiny"; then
  failures+=("tpch-tiny")
fi
mark "tpch-tiny"
fi
if want readme; then
# every SQL example and pg2arrow command of README.md, as written, in a copy
# of the harness's database (SSB's lineorder at SF 0.01: the ssb step, or
# generated here)
if [ "$(psql -X -A -t -d pgstrom_diff -c "SELECT to_regclass('lineorder') IS NOT NULL")" != t ]; then
  PGDATABASE=pgstrom_diff python3 "$PGSTROM_ROOT/bench/ssb/ssb.py" gen --sf 0.01 >/dev/null || failures+=("readme set-up")
fi
if ! python3 "$PGSTROM_ROOT/scripts/readme-check.py" --db pgstrom_diff; then
  failures+=("readme")
fi
mark "readme"
fi
if [ -n "$pgr_pid" ]; then
  wait "$pgr_pid"; rc=$?
  cat "$pgr_log"; rm -f "$pgr_log"
  [ $rc = 0 ] || failures+=("pg-regress")
  mark "pg-regress"
fi

if want docs; then
# --- 2. settings documented ------------------------------------------------
docs=$PGSTROM_ROOT/docs/settings.md
live=$(psql -XAtq -F'|' -c "SELECT name, coalesce(boot_val, '') FROM pg_settings
                              WHERE name LIKE 'pg_strom.%' OR name LIKE 'arrow_fdw.%'
                              ORDER BY name COLLATE \"C\"")
documented=$(grep -E '^\| `(pg_strom|arrow_fdw)\.' "$docs" \
  | awk -F'|' '{gsub(/[ `]/, "", $2); d=$4; gsub(/^ +| +$/, "", d); gsub(/`/, "", d); if (d == "(empty)") d=""; print $2 "|" d}' | LC_ALL=C sort -t'|' -k1,1)
if [ "$live" != "$documented" ]; then
  echo "test-sql: docs/settings.md does not match pg_settings:"
  diff <(echo "$live") <(echo "$documented")
  failures+=("docs/settings.md")
else
  echo "test-sql: docs/settings.md lists all $(echo "$live" | wc -l) pg_strom.* and arrow_fdw.* settings with their defaults"
fi
if [ "$("$PGSTROM_ROOT/scripts/device-functions-doc.sh")" = "$(grep -E '^\| [0-9]' "$PGSTROM_ROOT/docs/device-functions.md")" ]; then
  echo "test-sql: docs/device-functions.md lists the $(psql -XAtq -c 'SELECT count(*) FROM pgstrom.device_functions') device functions"
else
  echo "test-sql: docs/device-functions.md does not match pgstrom.device_functions:"
  diff <("$PGSTROM_ROOT/scripts/device-functions-doc.sh") <(grep -E '^\| [0-9]' "$PGSTROM_ROOT/docs/device-functions.md")
  failures+=("docs/device-functions.md")
fi
fi
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null

if want docs; then
# --- 3. not preloaded ------------------------------------------------------
dir=$base/test-nopreload
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
rm -rf "$dir"
out=$(PGSTROM_EXTRA_CONF="shared_preload_libraries = ''" PGSTROM_NO_EXTENSION=1 \
      "$PGSTROM_ROOT/scripts/cluster.sh" start "$dir" $((port + 1)) 2>&1) || echo "$out"
# shellcheck source=/dev/null  # (written by scripts/cluster.sh)
. "$dir/env"
msg=$(psql -XAtq -v VERBOSITY=verbose -c 'CREATE EXTENSION pg_strom' 2>&1)
if grep -q '55000' <<<"$msg" && grep -q 'pg_strom must be loaded via shared_preload_libraries' <<<"$msg" \
   && grep -q 'HINT' <<<"$msg" && [ "$(psql -XAtq -c 'SELECT 1')" = 1 ]; then
  echo "test-sql: CREATE EXTENSION without preloading fails with SQLSTATE 55000 and a hint; the server stays up"
else
  echo "test-sql: unexpected result of CREATE EXTENSION without preloading:"; echo "$msg"
  failures+=("not-preloaded")
fi
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null
# --- 3'. a cluster that allows group access (initdb -g): the files the
# server writes are group-readable, as PostgreSQL's own are there
dir=$base/test-group
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
rm -rf "$dir"
out=$(PGSTROM_INITDB_OPTS=--allow-group-access "$PGSTROM_ROOT/scripts/cluster.sh" start "$dir" $((port + 2)) 2>&1) \
  || echo "$out"
# shellcheck source=/dev/null  # (written by scripts/cluster.sh)
. "$dir/env"
if ! "$PGSTROM_ROOT/test/files/modes.sh" "$dir/data" 640; then
  failures+=("file modes (group access)")
fi
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null
fi

if [ ${#failures[@]} -gt 0 ]; then
  for d in "$base"/test*/server.log; do echo "--- tail of $d"; tail -n 20 "$d"; done
  # last, where a log that keeps only the end of the output shows it
  echo "test-sql: FAILED: ${failures[*]}"
  exit 1
fi
echo "test-sql: all passed"

#!/usr/bin/env bash
# test/service/gpudirect.sh - GPUDirect SQL: the storage path by which the
# GPU service reads Arrow columns into GPU memory (docs/gpu_service.md,
# "GPUDirect SQL").
#
# Everywhere: the settings (pg_strom.gpudirect auto/on/off, a bad value
# refused, pg_strom.gpudirect_threshold in kB) and the service's status
# column (NULL without a GPU).
# With a GPU (PGSTROM_EXPECT_GPU=1, the GPU check): a GpuPreAgg over an
# Arrow table with pg_strom.gpudirect = off, on and auto, and on with a
# threshold above every buffer.  Each run appends a row first (a changed
# file is never served from the column cache, so its columns are read
# again).  Results must equal PostgreSQL's; EXPLAIN ANALYZE's Storage Read
# must show off reading through pinned buffers only; on reading with cuFile
# (all but buffers under the 1MB threshold) when cuFile took the file (and `with GPUDirect SQL` in GPU Preference),
# else naming cuFile's refusal and reading through pinned buffers; auto as
# on when the service's cuFile runs peer to peer, as off otherwise; the
# high threshold sending every buffer through pinned buffers.
set -uo pipefail
db=pgstrom_gpudirect
fail=0
bad() { echo "gpudirect: FAIL: $*"; fail=1; }
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
service_db "$db" 1000000 1000 || { echo "gpudirect: FAIL: cannot create database $db"; exit 1; }
q() { psql -XAtq "$@" 2>&1; }
arrow=/tmp/pgstrom_gpudirect_$$.arrow
rm -f "$arrow" "$arrow.pgstrom-undo"
q -c "CREATE FOREIGN TABLE ta (id int8, a int4, x float8) SERVER arrow_fdw OPTIONS (file '$arrow', writable 'true')" \
  -c "INSERT INTO ta SELECT id, a, x FROM t" >/dev/null

# settings
for v in auto on off; do
  [ "$(q -c "SET pg_strom.gpudirect = $v" -c "SHOW pg_strom.gpudirect")" = "$v" ] || bad "pg_strom.gpudirect = $v not taken"
done
out=$(q -c "SET pg_strom.gpudirect = always")
grep -q 'invalid value for parameter "pg_strom.gpudirect": "always"' <<<"$out" || bad "a bad value was taken: $out"
[ "$(q -c "SET pg_strom.gpudirect_threshold = '2MB'" -c "SHOW pg_strom.gpudirect_threshold")" = "2MB" ] \
  || bad "pg_strom.gpudirect_threshold does not take units"
status=$(q -c "SELECT coalesce(gpudirect, '(null)') FROM pgstrom.gpu_service_info()")

finish() {
  psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
  rm -f "$arrow" "$arrow.pgstrom-undo"
  exit $fail
}
if [ "${PGSTROM_EXPECT_GPU:-0}" != 1 ]; then
  [ "$status" = "(null)" ] || bad "a service without a GPU reports GPUDirect SQL: $status"
  [ $fail = 0 ] && echo "gpudirect: without a GPU: settings checked, no GPUDirect SQL reported (the storage paths run in the GPU check)"
  finish
fi
echo "gpudirect: the service says: $status"
case "$status" in
  *"peer-to-peer"*) p2p=1 ;;
  "(null)") bad "a service with a GPU says nothing of GPUDirect SQL"; p2p=0 ;;
  *) p2p=0 ;;
esac

query="SELECT d.g, count(*), sum(ta.id), sum(ta.x) FROM ta JOIN d ON ta.a = d.a GROUP BY d.g ORDER BY d.g"
summary=()
n=0
for run in off on auto on-threshold; do
  n=$((n + 1))
  mode=${run%-threshold}
  extra=""
  [ "$run" = on-threshold ] && extra="SET pg_strom.gpudirect_threshold = '1GB';"
  q -c "INSERT INTO ta VALUES ($((2000000 + n)), $n, 0.5)" >/dev/null
  want=$(q -c "SET pg_strom.enabled = off; $query")
  got=$(q -c "$settings SET pg_strom.gpudirect = $mode; $extra $query")
  [ "$got" = "$want" ] || bad "$run: the result differs from PostgreSQL's"
  q -c "INSERT INTO ta VALUES ($((3000000 + n)), $n, 0.25)" >/dev/null
  plan=$(q -c "$settings SET pg_strom.gpudirect = $mode; $extra EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query")
  grep -q "GpuPreAgg" <<<"$plan" || { bad "$run: not a GpuPreAgg: $plan"; continue; }
  read_line=$(grep -o 'Storage Read: .*' <<<"$plan")
  [ -n "$read_line" ] || { bad "$run: no Storage Read in EXPLAIN ANALYZE: $plan"; continue; }
  cufile=$(sed -E 's/.*cuFile: ([^,]*),.*/\1/' <<<"$read_line")
  pinned=$(sed -E 's/.*pinned buffers: ([^,]*),.*/\1/' <<<"$read_line")
  direct=0; grep -q "with GPUDirect SQL" <<<"$plan" && direct=1
  refused=0; grep -q "cuFile refused the file" <<<"$read_line" && refused=1
  case "$run" in
    off) expect_cufile=0 ;;
    on) expect_cufile=$((1 - refused)) ;;
    auto) expect_cufile=$((p2p * (1 - refused))) ;;
    on-threshold) expect_cufile=0 ;;
  esac
  if [ "$expect_cufile" = 1 ]; then
    # buffers under the threshold (1MB: validity bitmaps) stay pinned
    [ "$cufile" != "0 bytes" ] && [[ "$pinned" =~ (bytes|KB)$ ]] || bad "$run: not read by cuFile: $read_line"
    [ $direct = 1 ] || bad "$run: cuFile read, GPU Preference does not say so: $plan"
  else
    [ "$cufile" = "0 bytes" ] && [ "$pinned" != "0 bytes" ] || bad "$run: not read through pinned buffers: $read_line"
    if [ "$run" = off ] || [ "$run" = auto ]; then [ $direct = 0 ] || bad "$run: GPU Preference claims GPUDirect SQL"; fi
  fi
  if [ "$run" = on ] && [ $refused = 1 ]; then
    why=$(grep -o 'cuFile refused the file: [^)]*' <<<"$read_line")
    summary+=("on: $why, read through pinned buffers ($pinned)")
  else
    summary+=("$run: cuFile $cufile, pinned buffers $pinned")
  fi
done
# cuFile's own log goes beside the device code, not into the data directory
datadir=$(q -c "SHOW data_directory")
[ -e "$datadir/cufile.log" ] && bad "cuFile wrote its log into the data directory"
[ $fail = 0 ] && echo "gpudirect: 4 GpuPreAgg runs over an Arrow table equal to PostgreSQL's; $(IFS=';'; s="${summary[*]}"; echo "${s//;/; }")"
finish

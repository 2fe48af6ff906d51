#!/usr/bin/env bash
# test/service/device_fault.sh - a GPU that faults mid-query (docs/gpu_service.md,
# "When a GPU faults").
#
# With a GPU (PGSTROM_EXPECT_GPU=1, the GPU check): pgstrom.inject_device_fault()
# makes GPU0 store to an illegal address in place of a later kernel launch,
# as a bug in device code or an Xid error would; its CUDA context can do no
# more work.  For a GpuScan and an inner GpuJoin + GpuPreAgg the query must
# finish on the CPU engine with a WARNING naming the GPU and the driver's
# error, and PostgreSQL's result; a FULL GpuJoin (inner rows' matched flags
# were on the GPU) must end with an ERROR naming the GPU and the HINT.
# Each time the service restarts (new pid, the fault in the server log), the
# postmaster does not, and the next query runs on the GPU again.
# Without a GPU: the function's errors (not superuser, no GPU to fault).
set -uo pipefail
db=pgstrom_device_fault
fail=0
bad() { echo "device-fault: FAIL: $*"; fail=1; }

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
service_db "$db" 1000000 1000 || { echo "device-fault: FAIL: cannot create database $db"; exit 1; }
q() { psql -XAtq "$@" 2>&1; }

# the function is for superusers only, and needs a GPU in the service
q -c "DROP ROLE IF EXISTS pgstrom_fault_user" -c "CREATE ROLE pgstrom_fault_user" \
  -c "GRANT USAGE ON SCHEMA pgstrom TO pgstrom_fault_user" >/dev/null
out=$(q -c "SET ROLE pgstrom_fault_user" -c "SELECT pgstrom.inject_device_fault()")
grep -q "permission denied for function inject_device_fault" <<<"$out" || bad "a non-superuser could call it: $out"
# granted EXECUTE by mistake: the function checks itself
q -c "GRANT EXECUTE ON FUNCTION pgstrom.inject_device_fault(int, int) TO pgstrom_fault_user" >/dev/null
out=$(q -c "SET ROLE pgstrom_fault_user" -c "SELECT pgstrom.inject_device_fault()")
grep -q "ERROR:  permission denied to inject a device fault" <<<"$out" || bad "a non-superuser with EXECUTE could call it: $out"
q -c "DROP OWNED BY pgstrom_fault_user" -c "DROP ROLE pgstrom_fault_user" >/dev/null
out=$(q -c "SELECT pgstrom.inject_device_fault(-1)")
grep -q "must not be negative" <<<"$out" || bad "a negative count was taken: $out"
out=$(q -c "SELECT pgstrom.inject_device_fault(0, 7)")
grep -q "ERROR:  cannot inject a fault into GPU7: the GPU service has no usable GPU7" <<<"$out" \
  || bad "a fault was armed on a GPU the service does not have: $out"

if [ "${PGSTROM_EXPECT_GPU:-0}" != 1 ]; then
  psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
  [ $fail = 0 ] && echo "device-fault: without a GPU: superusers only, no GPU to fault: clear errors (the faults themselves run in the GPU check)"
  exit $fail
fi

# name | query | plan node it must use | launches before the fault | expected outcome
scenarios=(
  "scan|SELECT count(*), sum(id) FROM (SELECT id FROM t WHERE a < 10 AND x > 50 OFFSET 0) s|GpuScan|3|result"
  "join-agg|SELECT count(*), sum(x) FROM t JOIN d ON t.a = d.a WHERE x > 10|GpuPreAgg|2|result"
  "full-join|SELECT count(*) FROM (SELECT t.id, d.g FROM t FULL JOIN d ON t.a = d.a OFFSET 0) s|GpuJoin|2|error"
)
small="SET pg_strom.chunk_rows = 100000;"
started=$(q -c "SELECT pg_postmaster_start_time()")
log="$(dirname "$PGHOST")/server.log" # scripts/cluster.sh
for sc in "${scenarios[@]}"; do
  IFS='|' read -r name query node launches outcome <<<"$sc"
  plan=$(q -c "$settings $small EXPLAIN (COSTS OFF) $query")
  grep -q "$node" <<<"$plan" || { bad "$name: plan does not use $node: $plan"; continue; }
  want=$(q -c "SET pg_strom.enabled = off; $query")
  # the fault is armed for the GPU's next launches, whoever makes them:
  # wait until no other request is being served (a query of an earlier
  # test, cancelled in its backend, may still be computing in the service)
  for _ in $(seq 100); do
    [ "$(q -c "SELECT in_flight FROM pgstrom.gpu_service_info()")" = 0 ] && break
    sleep 0.1
  done
  before=$(q -c "SELECT pid FROM pgstrom.gpu_service_info()")
  out=$(q -c "$settings $small" -c "SELECT pgstrom.inject_device_fault($launches)" -c "$query")
  case $outcome in
    result)
      grep -q "WARNING:  pg_strom: GPU0 (.*) faulted: .*illegal memory access.*; Gpu[A-Za-z]* finishes on the CPU engine" <<<"$out" \
        || bad "$name: no WARNING naming the GPU and the fault: $out"
      got=$(grep -v "WARNING\|^$" <<<"$out" | tail -1)
      if [ "$got" = "$want" ]; then
        echo "device-fault: $name: GPU0 faulted after $launches launches, finished on the CPU engine with a WARNING, result $got = PostgreSQL's"
      else
        bad "$name: result '$got', PostgreSQL says '$want': $out"
      fi ;;
    error)
      if grep -q "ERROR:  .*GPU0 (.*) faulted: .*illegal memory access" <<<"$out" && grep -q "HINT:  The GPU service restarts by itself with a new CUDA context" <<<"$out"; then
        echo "device-fault: $name: GPU0 faulted after $launches launches, the query ended with an ERROR naming it, and the HINT"
      else
        bad "$name: expected the ERROR naming the GPU: $out"
      fi ;;
  esac
  after=$(q -c "SELECT pid FROM pgstrom.gpu_service_info()")
  [ -n "$after" ] && [ "$after" != "$before" ] || bad "$name: the service did not restart (pid '$before' -> '$after')"
  grep -q "pg_strom service: GPU0 (.*) faulted: .*the service exits and restarts with a new CUDA context" "$log" \
    || bad "$name: the fault is not in the server log ($log)"
  got=$(q -c "$settings $small" -c "$query")
  [ "$got" = "$want" ] || bad "$name: a new query after the restart says '$got', PostgreSQL '$want'"
  plan=$(q -c "$settings $small" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query")
  grep -q "GPU Preference: GPU0" <<<"$plan" || bad "$name: the next query did not run on GPU0: $plan"
done
[ "$(q -c "SELECT pg_postmaster_start_time()")" = "$started" ] || bad "the postmaster restarted"
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
[ $fail = 0 ] && echo "device-fault: 3 device faults on GPU0: scans and inner joins finished on the CPU engine, the FULL join ERRORed, the service restarted each time, the server did not"
exit $fail

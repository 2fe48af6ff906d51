#!/usr/bin/env bash
# test/service/crash.sh - fault injection for the GPU service (docs/gpu_service.md).
#
# Against the running cluster of the environment (PGHOST/PGPORT): while a
# session runs GpuScan / GpuPreAgg-over-GpuJoin / FULL GpuJoin queries in a
# loop, the service is killed with SIGKILL.  Checks that the scan and the
# inner-join aggregate finish on the CPU engine with a WARNING and
# PostgreSQL's result (also a parallel one whose processes share an inner
# build), that the FULL join ends with the ERROR, that an idle
# session keeps its connection, that the postmaster never restarted, that
# the keeper started a new service, and that a new query runs on it.
# Without a GPU the service's CPU engine is used (pg_strom.cpu_engine_in_service).
set -uo pipefail
db=pgstrom_service_crash
fail=0
bad() { echo "service-crash: FAIL: $*"; fail=1; }

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
service_db "$db" 1000000 1000 || exit 1
# The tables' blocks all-visible and clean on disk: the GpuScan and the
# GpuPreAgg read them by the heap direct path, whose requests the kill
# meets too.  (VACUUM marks a page all-visible only when no other process
# holds a snapshot that could see its old rows: wait for none, as the SQL
# tests' quiet_wait() does.)
for _ in $(seq 100); do
  [ "$(psql -XAtq -c "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
        AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)")" = 0 ] && break
  sleep 0.1
done
psql -XAtq -c "VACUUM (FREEZE) t, d" -c "CHECKPOINT" || exit 1
if ! psql -XAtq -c "$settings EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
       SELECT count(*) FROM (SELECT id FROM t WHERE a < 10 AND x > 50 OFFSET 0) s" | grep -q "Heap Direct Read"; then
  bad "the GpuScan does not read t by the heap direct path"
fi

# name | query | plan node it must use | expected outcome (result or error)
# | settings of its own (after the common ones)
# The parallel join shares one inner build among its processes (loaded
# into the service once, the others attached to it): every process finishes
# on its own CPU engine.
parallel="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;"
parallel+=" SET min_parallel_table_scan_size = 0; SET pg_strom.inner_cache = off;"
scenarios=(
  "scan|SELECT count(*) FROM (SELECT id FROM t WHERE a < 10 AND x > 50 OFFSET 0) s|GpuScan|result|"
  "join-agg|SELECT count(*) FROM t JOIN d ON t.a = d.a WHERE x > 10|GpuPreAgg|result|"
  "full-join|SELECT count(*) FROM (SELECT t.id, d.g FROM t FULL JOIN d ON t.a = d.a OFFSET 0) s|GpuJoin|error|"
  "parallel-join-agg|SELECT count(*) FROM t JOIN d ON t.a = d.a WHERE x > 10|Parallel Custom Scan (GpuPreAgg)|result|$parallel"
)
started=$(psql -XAtq -c "SELECT pg_postmaster_start_time()")
common=$settings
for sc in "${scenarios[@]}"; do
  IFS='|' read -r name query node outcome own <<<"$sc"
  settings="$common $own"
  plan=$(psql -XAtq -c "$settings EXPLAIN (COSTS OFF) $query")
  grep -q "$node" <<<"$plan" || { bad "$name: plan does not use $node: $plan"; continue; }
  want=$(psql -XAtq -c "SET pg_strom.enabled = off; $query")
  # A kill that lands where none of the loop's requests is open (between
  # two of its queries, or in a request whose loss changes nothing, such
  # as reading the file counters after the last chunk) is met by the next
  # query's connecting to the restarted service: there is no fallback to
  # see.  Then the kill is tried again, up to three times.
  for attempt in 1 2 3; do
    before=$(psql -XAtq -c "SELECT pid FROM pgstrom.gpu_service_info()")
    out=$(mktemp)
    # the loop runs for 3 s; the service dies after 1 s, in a request
    psql -XAtq >"$out" 2>&1 <<SQL &
$settings
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); n bigint;
BEGIN
  WHILE clock_timestamp() < t0 + interval '3 s' LOOP EXECUTE '$query' INTO n; END LOOP;
  RAISE NOTICE 'result %', n;
END \$\$;
SQL
    loop=$!
    idle=$(mktemp)
    psql -XAtq -c "SELECT pg_sleep(4)" -c "SELECT 'idle session alive'" >"$idle" 2>&1 &
    idlepid=$!
    sleep 1
    # kill while the service works on a request of the loop's query (a kill
    # between two of its queries would be met by the next one's connecting
    # to the restarted service, with nothing to fall back from)
    for _ in $(seq 200); do
      [ "$(psql -XAtq -c "SELECT in_flight FROM pgstrom.gpu_service_info()")" != 0 ] && break
      sleep 0.005
    done
    kill -9 "$before"
    wait "$loop"; wait "$idlepid"
    if [ "$attempt" -lt 3 ] && ! grep -q "the GPU service terminated" "$out" \
       && [ "$(sed -n 's/.*NOTICE:  result //p' "$out")" = "$want" ]; then
      echo "service-crash: $name: the kill met no open request (attempt $attempt): again"
      for _ in $(seq 100); do
        [ -n "$(psql -XAtq -c "SELECT pid FROM pgstrom.gpu_service_info()" 2>/dev/null)" ] && break
        sleep 0.1
      done
      rm -f "$out" "$idle"
      continue
    fi
    break
  done
  case $outcome in
    result)
      grep -q "WARNING:  pg_strom: the GPU service terminated" "$out" || bad "$name: no WARNING: $(cat "$out")"
      got=$(sed -n 's/.*NOTICE:  result //p' "$out")
      if [ "$got" = "$want" ]; then
        echo "service-crash: $name: service killed mid-loop, finished on the CPU engine, result $got = PostgreSQL's"
      else
        bad "$name: result '$got', PostgreSQL says '$want': $(cat "$out")"
      fi ;;
    error)
      if grep -q "ERROR:  .*the GPU service terminated" "$out" && grep -q "HINT:  The GPU service restarts by itself" "$out"; then
        echo "service-crash: $name: service killed mid-loop, the query ended with the ERROR and its HINT"
      else
        bad "$name: expected the ERROR: $(cat "$out")"
      fi ;;
  esac
  grep -q "idle session alive" "$idle" || bad "$name: the idle session lost its connection: $(cat "$idle")"
  after=$(psql -XAtq -c "SELECT pid FROM pgstrom.gpu_service_info()")
  [ -n "$after" ] && [ "$after" != "$before" ] || bad "$name: no new service (pid '$before' -> '$after')"
  got=$(psql -XAtq -c "$settings $query" 2>&1)
  [ "$got" = "$want" ] || bad "$name: a new query after the restart says '$got', PostgreSQL '$want'"
  rm -f "$out" "$idle"
done
[ "$(psql -XAtq -c "SELECT pg_postmaster_start_time()")" = "$started" ] || bad "the postmaster restarted"
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
if [ $fail = 0 ]; then
  echo "service-crash: ${#scenarios[@]} kills of the GPU service with SIGKILL (one in a parallel query sharing an inner build), no server restart, idle sessions kept, new queries run"
fi
exit $fail

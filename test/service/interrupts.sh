#!/usr/bin/env bash
# test/service/interrupts.sh - a backend waiting for the GPU service stops
# for the interrupts that end a query, and only for those (docs/gpu_service.md).
#
# Against the running cluster of the environment: a query whose service
# requests take well over the client's 50 ms poll runs while another session
# signals its backend every 20 ms with pg_log_backend_memory_contexts (a
# harmless interrupt: it sets InterruptPending, which stays set until the
# backend's next CHECK_FOR_INTERRUPTS).  The query must finish with
# PostgreSQL's result and no WARNING.  Then pg_cancel_backend must stop a
# query that would run for minutes, with PostgreSQL's cancel error, within
# 10 s: the client polls every 50 ms, so it takes well under a second on an
# idle machine (1.6 s was seen with two compiles running beside the test;
# this checks that the cancel is seen, not the machine's speed).  Before
# that, cancelling one worker of a parallel join that shares an inner build
# ends the query and leaves the service no join session.
set -uo pipefail
db=pgstrom_service_interrupts
fail=0
bad() { echo "service-interrupts: FAIL: $*"; fail=1; }

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
service_db "$db" 2000000 1000 || exit 1
# one chunk of 2M rows and a costly qual: each request takes long
slow="$settings SET pg_strom.chunk_rows = 2000000; SET client_min_messages = warning;"
query="SELECT count(*) FROM t WHERE sqrt(x * id) + sqrt(id + x) * sqrt(x + a) * sqrt(id * 3 + a) > 100 + sqrt(id) OR a = 3"
plan=$(psql -XAtq -c "$slow EXPLAIN (COSTS OFF) $query")
grep -q "GPU Filter" <<<"$plan" || bad "plan does not filter on the device: $plan"
want=$(psql -XAtq -c "SET pg_strom.enabled = off; $query")

# 1. harmless interrupts while waiting
out=$(mktemp)
psql -XAtq -c "$slow SELECT pg_backend_pid()" -c "SELECT pg_sleep(0.5)" -c "$query" -c "$query" -c "$query" >"$out" 2>&1 &
q=$!
sleep 0.3
pid=$(psql -XAtq -c "SELECT pid FROM pg_stat_activity WHERE datname = '$db' AND query LIKE '%pg_sleep(0.5)%' AND pid <> pg_backend_pid()")
signals=0
while kill -0 $q 2>/dev/null; do
  [ -n "$pid" ] && psql -XAtq -c "SELECT pg_log_backend_memory_contexts($pid)" >/dev/null 2>&1 && signals=$((signals + 1))
  sleep 0.02
done
wait $q
got=$(grep -vx '[0-9]*' "$out" | grep -v '^$'; true)
[ -z "$pid" ] && bad "could not find the backend to signal"
[ -n "$got" ] && bad "query under harmless interrupts printed: $got"
results=$(grep -cx "$want" "$out")
[ "$results" = 3 ] || bad "expected 3 results '$want', got: $(cat "$out")"
echo "service-interrupts: 3 queries under $signals harmless interrupts: $results equal to PostgreSQL's"

# 2. cancelling one process of a parallel query whose processes share an
# inner build (loaded into the service once, the others attached): the
# query ends with the cancel error, and once the service has finished the
# requests under way the build and every session of it are gone (before
# the next part: a cancelled request is finished by the service, and that
# one runs for minutes on the CPU engine)
par="$slow SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET pg_strom.inner_cache = off; SET pg_strom.chunk_rows = 100000;"
pjoin="SELECT count(*) FROM t JOIN d ON t.a = d.a WHERE sqrt(x * id) + sqrt(id + x) * sqrt(x + t.a) > 100 + sqrt(id)"
plan=$(psql -XAtq -c "$par EXPLAIN (COSTS OFF) $pjoin")
grep -q "Parallel Custom Scan (GpuPreAgg)" <<<"$plan" || bad "the join is not a parallel GpuPreAgg: $plan"
psql -XAtq >"$out" 2>&1 <<SQL &
$par
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); n bigint;
BEGIN
  WHILE clock_timestamp() < t0 + interval '60 s' LOOP EXECUTE '$pjoin' INTO n; END LOOP;
END \$\$;
SQL
q=$!
# (a worker may end before the signal lands: cancel one again until the
# query ends)
worker=
while kill -0 $q 2>/dev/null; do
  w=$(psql -XAtq -c "SELECT pid FROM pg_stat_activity WHERE datname = '$db' AND backend_type = 'parallel worker' LIMIT 1")
  [ -n "$w" ] && worker=$w && psql -XAtq -c "SELECT pg_cancel_backend($w)" >/dev/null 2>&1
  sleep 0.1
done
wait $q
state=
for _ in $(seq 100); do
  state=$(psql -XAtq -c "SELECT join_sessions || '/' || in_flight FROM pgstrom.gpu_service_info()")
  [ "$state" = 0/0 ] && break
  sleep 0.1
done
if [ -z "$worker" ]; then
  bad "no parallel worker to cancel"
elif ! grep -q "canceling statement due to user request" "$out"; then
  bad "cancelling a parallel worker did not end the query: $(cat "$out")"
elif [ "$state" != 0/0 ]; then
  bad "10 s after the cancelled parallel query the service holds join sessions / requests $state"
else
  echo "service-interrupts: a parallel worker cancelled: the query ended with the cancel error, the service holds no join session"
fi

# 3. a cancel still stops a wait promptly
long="SELECT count(*) FROM t a1, generate_series(1, 2000) g WHERE sqrt(x * id * g) + sqrt(id + x) * sqrt(x + a) > 100 + g"
psql -XAtq -c "$slow $long" >"$out" 2>&1 &
q=$!
sleep 1.5
t0=$(date +%s.%N)
psql -XAtq -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = '$db' AND query LIKE '%generate_series(1, 2000)%' AND pid <> pg_backend_pid()" >/dev/null
wait $q
ms=$(python3 -c "import time; print(int((time.time() - $t0) * 1000))")
grep -q "canceling statement due to user request" "$out" || bad "cancel did not end the query: $(cat "$out")"
[ "$ms" -lt 10000 ] || bad "cancel took $ms ms"
echo "service-interrupts: cancel ended the waiting query after $ms ms"
rm -f "$out"
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
if [ $fail = 0 ]; then
  echo "service-interrupts: PASS"
else
  echo "service-interrupts: FAILED"
  exit 1
fi

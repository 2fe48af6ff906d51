#!/usr/bin/env bash
# test/service/leak.sh - the GPU service keeps no memory after its queries.
#
# Against the running cluster of the environment: 1,336 queries (a
# GpuScan, a GpuJoin, a GpuPreAgg over a GpuJoin, and one over an Arrow_Fdw
# table whose columns the service reads from the file; the last three open
# and close a join session each) after a warm-up of 80.  Then no join
# session may be left, the service's resident memory may have grown by
# less than 32 MB, each GPU's device memory in use by less than 64 MB (one
# leaked join session per query would be gigabytes), and the service's
# open files by less than 20 (each Arrow query hands it the file).  Without a GPU the
# service's CPU engine runs them (pg_strom.cpu_engine_in_service).
set -uo pipefail
db=pgstrom_service_leak
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
service_db "$db" 20000 100 || exit 1
arrow=/tmp/pgstrom_service_leak_$$.arrow
rm -f "$arrow" "$arrow.pgstrom-undo"
psql -XAtq <<SQL || exit 1
CREATE FOREIGN TABLE ta (id int4, a int4, x float8) SERVER arrow_fdw OPTIONS (file '$arrow', writable 'true');
INSERT INTO ta SELECT id, a, x FROM t;
SQL
queries=("SELECT count(*) FROM (SELECT id FROM t WHERE a < 10 AND x > 50 OFFSET 0) s"
         "SELECT count(*) FROM (SELECT t.id, d.g FROM t JOIN d ON t.a = d.a WHERE x > 10 OFFSET 0) s"
         "SELECT d.g, count(*) FROM t JOIN d ON t.a = d.a GROUP BY d.g"
         "SELECT d.g, count(*), sum(ta.x) FROM ta JOIN d ON ta.a = d.a GROUP BY d.g")
for q in "${queries[@]}"; do
  plan=$(psql -XAtq -c "$settings EXPLAIN (COSTS OFF) $q")
  grep -q "GpuScan\|GpuJoin\|GpuPreAgg" <<<"$plan" || { echo "service-leak: FAIL: not offloaded: $q"; exit 1; }
done
loop() { # iterations
  printf '%s\nDO $$ BEGIN FOR i IN 1..%s LOOP\n' "$settings" "$1"
  for q in "${queries[@]}"; do printf '  EXECUTE %s;\n' "'$q'"; done
  printf 'END LOOP; END $$;\nSELECT rss_bytes, gpu_memory_used, join_sessions, pid, (SELECT coalesce(sum(memory_reserved - arrow_cache_bytes), 0) FROM pgstrom.gpu_service_engines) FROM pgstrom.gpu_service_info();\n'
}
# the entries of /proc/PID/fd are numbers
# shellcheck disable=SC2012
fds() { ls "/proc/$(tail -n 1 <<<"$1" | cut -d' ' -f4)/fd" 2>/dev/null | wc -l; }
before=$(loop 20 | psql -XAtq -F' ' 2>&1) || { echo "service-leak: FAIL: $before"; exit 1; }
fd0=$(fds "$before")
after=$(loop 334 | psql -XAtq -F' ' 2>&1) || { echo "service-leak: FAIL: $after"; exit 1; }
fd1=$(fds "$after")
pools=$(psql -XAtq -F' ' -c "SELECT engine || ': budget ' || memory_budget / 1048576 || ' MB, reserved ' || memory_reserved / 1024 || ' kB (column cache ' || arrow_cache_bytes / 1024 || ' kB), waits ' || memory_waits || ', failures ' || memory_failures FROM pgstrom.gpu_service_engines WHERE memory_budget IS NOT NULL")
[ -n "$pools" ] && echo "service-leak: GPU memory pools after the queries: $pools"
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
rm -f "$arrow" "$arrow.pgstrom-undo"
python3 - "$before" "$after" "$fd0" "$fd1" <<'PY'
import sys
def parse(s):
    rss, mem, sessions, _, pool = s.strip().splitlines()[-1].split(" ")
    return int(rss), [int(x) for x in mem.strip("{}").split(",") if x], int(sessions), int(pool)
(r0, m0, _, p0), (r1, m1, s1, p1) = parse(sys.argv[1]), parse(sys.argv[2])
fd0, fd1 = int(sys.argv[3]), int(sys.argv[4])
bad = []
if fd1 - fd0 >= 20: bad.append(f"the service's open files grew from {fd0} to {fd1}")
if s1 != 0: bad.append(f"{s1} join sessions left open")
if r1 - r0 >= 32 << 20: bad.append(f"resident memory grew by {(r1 - r0) >> 20} MB")
for i, (a, b) in enumerate(zip(m0, m1)):
    if b - a >= 64 << 20: bad.append(f"GPU{i} memory in use grew by {(b - a) >> 20} MB")
# the GPU memory pool: what requests reserved (the column cache aside)
if p1 - p0 >= 64 << 20: bad.append(f"GPU memory reserved in the pool grew by {(p1 - p0) >> 20} MB")
if bad:
    print("service-leak: FAIL: " + "; ".join(bad)); sys.exit(1)
gpus = ", ".join(f"GPU{i} {a >> 20} -> {b >> 20} MB" for i, (a, b) in enumerate(zip(m0, m1))) or "no GPU"
print(f"service-leak: 1336 queries after a warm-up of 80: no join session left, service RSS {r0 >> 20} -> {r1 >> 20} MB, open files {fd0} -> {fd1}, {gpus}, reserved in the pools (column cache aside) {p0 >> 10} -> {p1 >> 10} kB")
PY

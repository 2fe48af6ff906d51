#!/usr/bin/env bash
# test/gstore/crash.sh - Gstore_Fdw across crashes.
#
# Against the running cluster of the environment, a gstore_fdw table and a
# heap table are fed the same committed statements; then:
#   1. a session writes to both without committing and its backend is
#      killed with SIGKILL (the server goes through crash recovery): the
#      tables still agree, and new transactions (whose ids may be close to
#      the killed one's) write and read as before;
#   2. a crash in the middle of an append is imitated by a torn record at
#      the log's end: readers ignore it, the next writer cuts it off;
#   3. a crash in the middle of a checkpoint (the new base file renamed,
#      the old log not yet replaced) is imitated by putting the old log
#      back: its records are taken as folded into the base file;
#   4. the postmaster is killed with SIGKILL, the server restarted
#      (scripts/cluster.sh start CLUSTER_DIR PORT), and every committed row
#      is there, none of the uncommitted.
# A heap table with a GPU cache, c, gets the heap table's statements (and
# the killed transactions' writes): at each step a GpuScan must read it
# from its cache and find the heap table's rows.
# Each step ends with the tables compared row by row.  The gstore_fdw
# table has a primary key: the keys a killed transaction inserted are free
# again after the crash (steps 1 and 4), and the committed ones are not.
# Usage: test/gstore/crash.sh CLUSTER_DIR PORT (the cluster of the environment)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cluster_dir=$1 cluster_port=$2
db=pgstrom_gstore_crash
dir=/tmp/pgstrom_gstore_crash
fail=0
bad() { echo "gstore-crash: FAIL: $*"; fail=1; }
rm -rf "$dir" && mkdir -p "$dir" && chmod 1777 "$dir"
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null || exit 1
export PGDATABASE=$db
psql -XAtq -v ON_ERROR_STOP=1 <<SQL || exit 1
CREATE EXTENSION pg_strom;
CREATE FOREIGN TABLE g (id int, t text, v numeric) SERVER gstore_fdw
  OPTIONS (base_file '$dir/g.base', redo_log_file '$dir/g.redo', primary_key 'id');
CREATE TABLE h (id int PRIMARY KEY, t text, v numeric);
CREATE TABLE c (id int PRIMARY KEY, t text, v numeric);
CREATE FUNCTION diff() RETURNS bigint LANGUAGE sql AS \$\$
  SELECT count(*) FROM ((SELECT * FROM g EXCEPT ALL SELECT * FROM h)
                        UNION ALL (SELECT * FROM h EXCEPT ALL SELECT * FROM g)) d \$\$;
-- c read by a GpuScan: 'cache' when it read the GPU cache, then whether
-- its rows are h's ('same')
CREATE FUNCTION cdiff() RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE ln text; src text := 'heap'; mc text; mh text;
BEGIN
  SET LOCAL pg_strom.gpu_setup_cost = 0;
  SET LOCAL pg_strom.gpu_context_cost = 0;
  SET LOCAL pg_strom.heap_gather_cost = 0;
  SET LOCAL pg_strom.gpu_operator_cost = 0.00015625;
  SET LOCAL pg_strom.gpu_tuple_cost = 0.002;
  SET LOCAL max_parallel_workers_per_gather = 0;
  FOR ln IN EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
            SELECT md5(string_agg(c::text, ',' ORDER BY id)) FROM c WHERE id > -1 LOOP
    IF ln LIKE '%GPU cache of c %' THEN src := 'cache'; END IF;
  END LOOP;
  SELECT md5(string_agg(c::text, ',' ORDER BY id)) INTO mc FROM c WHERE id > -1;
  SET LOCAL pg_strom.enabled = off;
  SELECT md5(string_agg(h::text, ',' ORDER BY id)) INTO mh FROM h;
  RETURN src || CASE WHEN mc = mh THEN ' same' ELSE ' DIFFERENT' END;
END \$\$;
INSERT INTO g SELECT i, 'row ' || i, i / 3.0 FROM generate_series(1, 5000) i;
INSERT INTO h SELECT i, 'row ' || i, i / 3.0 FROM generate_series(1, 5000) i;
INSERT INTO c SELECT i, 'row ' || i, i / 3.0 FROM generate_series(1, 2000) i;
UPDATE g SET v = -v WHERE id % 10 = 0;
UPDATE h SET v = -v WHERE id % 10 = 0;
DELETE FROM g WHERE id % 13 = 0;
DELETE FROM h WHERE id % 13 = 0;
SQL
psql -XAtq -v ON_ERROR_STOP=1 -c "SELECT pgstrom.gpu_cache_enable('c')" >/dev/null || exit 1
psql -XAtq -v ON_ERROR_STOP=1 <<SQL || exit 1
INSERT INTO c SELECT i, 'row ' || i, i / 3.0 FROM generate_series(2001, 5000) i;
UPDATE c SET v = -v WHERE id % 10 = 0;
DELETE FROM c WHERE id % 13 = 0;
SQL
check() {  # check STEP: the tables agree and count as the heap
  local out
  out=$(psql -XAtq -c "SELECT cdiff()" 2>&1)
  [ "$out" = "cache same" ] || bad "$1: the GPU cache of c: $out (want: cache same)"
  out=$(psql -XAtq -c "SELECT diff(), (SELECT count(*) FROM g), (SELECT count(*) FROM h)" 2>&1)
  case "$out" in
    0\|*) echo "gstore-crash: $1: the tables agree (${out#0|} rows)";;
    *) bad "$1: $out"
       psql -XAtq -c "SELECT 'only in g', * FROM (SELECT * FROM g EXCEPT ALL SELECT * FROM h) d ORDER BY 2 LIMIT 5" \
            -c "SELECT 'only in h', * FROM (SELECT * FROM h EXCEPT ALL SELECT * FROM g) d ORDER BY 2 LIMIT 5" \
            -c "SELECT 'next transaction', txid_current()";;
  esac
}
wait_server() {
  for _ in $(seq 150); do psql -XAtq -d postgres -c "SELECT 1" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}
check "before the crashes"

# 1. an uncommitted writer killed
psql -XAtq -c "BEGIN" -c "INSERT INTO g SELECT i, 'uncommitted', 0 FROM generate_series(10001, 10300) i" \
     -c "UPDATE g SET t = 'uncommitted' WHERE id < 100" -c "DELETE FROM g WHERE id BETWEEN 200 AND 300" \
     -c "INSERT INTO c SELECT i, 'uncommitted', 0 FROM generate_series(10001, 10300) i" \
     -c "UPDATE c SET t = 'uncommitted' WHERE id < 100" -c "DELETE FROM c WHERE id BETWEEN 200 AND 300" \
     -c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(60)" >"$dir/a.out" 2>&1 &
for _ in $(seq 100); do
  pid=$(grep -E '^[0-9]+$' "$dir/a.out" 2>/dev/null | head -n 1)
  [ -n "$pid" ] && break; sleep 0.1
done
[ -n "${pid:-}" ] || { bad "the writer did not start: $(cat "$dir/a.out")"; exit 1; }
n=$(psql -XAtq -c "SELECT count(*) FROM g WHERE t = 'uncommitted' OR id > 10000")
[ "$n" = 0 ] || bad "another session sees $n uncommitted rows"
kill -9 "$pid"; wait 2>/dev/null
wait_server || { bad "the server did not come back"; exit 1; }
check "after kill -9 of an uncommitted writer (crash recovery)"
# transactions after the recovery: their ids may come close to the
# killed one's, whose records must stay invisible for good
for i in 1 2 3; do
  psql -XAtq -c "INSERT INTO g VALUES (20000 + $i, 'after', $i)" -c "INSERT INTO h VALUES (20000 + $i, 'after', $i)" \
       -c "INSERT INTO c VALUES (20000 + $i, 'after', $i)" >/dev/null
done
psql -XAtq -c "UPDATE g SET v = v + 1 WHERE id BETWEEN 1 AND 50" -c "UPDATE h SET v = v + 1 WHERE id BETWEEN 1 AND 50" \
     -c "UPDATE c SET v = v + 1 WHERE id BETWEEN 1 AND 50" >/dev/null
# a key the killed writer had inserted is free again
psql -XAtq -c "INSERT INTO g VALUES (10001, 'key of the killed writer', 1)" \
     -c "INSERT INTO h VALUES (10001, 'key of the killed writer', 1)" \
     -c "INSERT INTO c VALUES (10001, 'key of the killed writer', 1)" >/dev/null || bad "key 10001 not free after the crash"
check "after new transactions"

# 2. a torn record at the log's end
printf '\x40\x00\x00\x00\xde\xad\xbe\xef\x01partial' >>"$dir/g.redo"
check "with a torn record at the end of the redo log"
psql -XAtq -c "INSERT INTO g VALUES (30000, 'after the torn tail', 1)" -c "INSERT INTO h VALUES (30000, 'after the torn tail', 1)" \
     -c "INSERT INTO c VALUES (30000, 'after the torn tail', 1)" >/dev/null
check "after the next write cut the torn record off"

# 3. a checkpoint interrupted between its two renames
cp -p "$dir/g.redo" "$dir/g.redo.old"
psql -XAtq -c "SELECT pgstrom.gstore_fdw_checkpoint('g')" >/dev/null || bad "checkpoint failed"
mv "$dir/g.redo.old" "$dir/g.redo"
check "with the log of the generation before the base file's"
psql -XAtq -c "DELETE FROM g WHERE id = 30000" -c "DELETE FROM h WHERE id = 30000" -c "DELETE FROM c WHERE id = 30000" >/dev/null
dup=$(psql -XAtq -c "INSERT INTO g VALUES (4999, 'a committed key', 0)" 2>&1)
case "$dup" in *"duplicate key value violates the primary key"*) ;; *) bad "a committed key stored twice: $dup";; esac
check "after a write started a new log"
gen=$(psql -XAtq -c "SELECT generation FROM pgstrom.gstore_fdw_info('g')")
[ "$gen" = 1 ] || bad "generation $gen after one checkpoint"

# 4. the server killed with committed and uncommitted work
psql -XAtq -c "BEGIN" -c "INSERT INTO g VALUES (40000, 'uncommitted at the crash', 0)" \
     -c "INSERT INTO c VALUES (40000, 'uncommitted at the crash', 0)" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
psql -XAtq -c "INSERT INTO g VALUES (40001, 'committed before the crash', 0)" \
     -c "INSERT INTO h VALUES (40001, 'committed before the crash', 0)" \
     -c "INSERT INTO c VALUES (40001, 'committed before the crash', 0)" >/dev/null
sleep 0.5
pm=$(head -n 1 "$cluster_dir/data/postmaster.pid")
kill -9 "$pm"
wait 2>/dev/null
for _ in $(seq 100); do kill -0 "$pm" 2>/dev/null || break; sleep 0.1; done
# the backends and the GPU service's keeper notice the postmaster's death
# and exit
for _ in $(seq 100); do pgrep -f "postgres: .*($db|pg_strom gpu service)" >/dev/null || break; sleep 0.1; done
out=$("$here/../../scripts/cluster.sh" start "$cluster_dir" "$cluster_port" 2>&1) || bad "restart: $out"
wait_server || { bad "the server did not restart"; exit 1; }
check "after the server was killed and restarted"
# the key the killed transactions held is free, and found by key
psql -XAtq -c "INSERT INTO g VALUES (40000, 'key freed by the crash', 0)" \
     -c "INSERT INTO h VALUES (40000, 'key freed by the crash', 0)" \
     -c "INSERT INTO c VALUES (40000, 'key freed by the crash', 0)" >/dev/null || bad "key 40000 not free after the crash"
[ "$(psql -XAtq -c "SELECT t FROM g WHERE id = 40000")" = "key freed by the crash" ] || bad "key 40000 not found by key"
check "after a killed transaction's key was stored again"

psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null 2>&1
if [ $fail = 0 ]; then
  echo "gstore-crash: PASS"
else
  echo "gstore-crash: FAILED"
fi
exit $fail

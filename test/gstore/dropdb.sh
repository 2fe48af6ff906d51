#!/usr/bin/env bash
# test/gstore/dropdb.sh - a database with gstore_fdw tables can be copied
# and dropped while its checkpoint workers run.
#
# A write to a gstore_fdw table starts the database's checkpoint timer, a
# background worker connected to the database that stays while any redo
# log of it holds records (for pg_strom.gstore_checkpoint_timeout, 300 s
# by default).  PostgreSQL's CREATE DATABASE ... TEMPLATE, DROP DATABASE
# and ALTER DATABASE ... RENAME fail when another session stays connected
# for 5 s; the worker must make room.  Checked: the timer runs after the
# write; the database is copied, renamed and dropped, each without an
# error; the timer is gone; the copy reads the rows.
# Usage: test/gstore/dropdb.sh (the cluster of the environment)
set -uo pipefail
db=pgstrom_gstore_dropdb
dir=/tmp/pgstrom_gstore_dropdb
fail=0
bad() { echo "gstore-dropdb: FAIL: $*"; fail=1; }
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
rm -rf "$dir" && mkdir -p "$dir" && chmod 1777 "$dir"
for d in "$db" "${db}_copy" "${db}_renamed"; do
  q -d postgres -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1
done
q -d postgres -c "CREATE DATABASE $db" || exit 1
q -d "$db" <<SQL || exit 1
CREATE EXTENSION pg_strom;
CREATE FOREIGN TABLE g (id int, t text) SERVER gstore_fdw
  OPTIONS (base_file '$dir/g.base', redo_log_file '$dir/g.redo');
INSERT INTO g SELECT i, 'row ' || i FROM generate_series(1, 100) i;
SQL
timers() {  # timers DB: the checkpoint workers connected to DB
  q -d postgres -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$1' AND backend_type = 'pg_strom gstore_fdw checkpoint'"
}
n=0
for _ in $(seq 50); do n=$(timers "$db"); [ "$n" -gt 0 ] && break; sleep 0.1; done
if [ "$n" -gt 0 ]; then
  echo "gstore-dropdb: the write started the database's checkpoint timer ($n worker)"
else
  bad "no checkpoint timer runs after a write (the test would prove nothing)"
fi
t0=$(date +%s%N)
if out=$(q -d postgres -c "CREATE DATABASE ${db}_copy TEMPLATE $db" 2>&1); then
  echo "gstore-dropdb: CREATE DATABASE ... TEMPLATE with the timer running: done in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
else
  bad "CREATE DATABASE ... TEMPLATE: $out"
fi
rows=$(q -d "${db}_copy" -c "SELECT count(*) FROM g" 2>&1)
if [ "$rows" = 100 ]; then echo "gstore-dropdb: the copy reads the table's 100 rows"; else bad "the copy reads: $rows"; fi
q -d "$db" -c "INSERT INTO g VALUES (101, 'again')" >/dev/null || bad "a write after the copy"
for _ in $(seq 50); do n=$(timers "$db"); [ "$n" -gt 0 ] && break; sleep 0.1; done
if [ "$n" -gt 0 ]; then echo "gstore-dropdb: the next write started the timer again"; else bad "no timer after the next write"; fi
if out=$(q -d postgres -c "ALTER DATABASE $db RENAME TO ${db}_renamed" 2>&1); then
  echo "gstore-dropdb: ALTER DATABASE ... RENAME with the timer running: done"
else
  bad "ALTER DATABASE ... RENAME: $out"
fi
q -d "${db}_renamed" -c "INSERT INTO g VALUES (102, 'renamed')" >/dev/null || bad "a write after the rename"
for _ in $(seq 50); do n=$(timers "${db}_renamed"); [ "$n" -gt 0 ] && break; sleep 0.1; done
[ "$n" -gt 0 ] || bad "no timer after the write in the renamed database"
if out=$(q -d postgres -c "DROP DATABASE ${db}_renamed" 2>&1); then
  echo "gstore-dropdb: DROP DATABASE with the timer running: done"
else
  bad "DROP DATABASE: $out"
fi
left=$(q -d postgres -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_strom gstore_fdw checkpoint' AND datname LIKE '${db}%'")
[ "$left" = 0 ] || bad "$left checkpoint workers left in the dropped database"
q -d postgres -c "DROP DATABASE IF EXISTS ${db}_copy WITH (FORCE)" >/dev/null 2>&1
rm -rf "$dir"
[ "$fail" = 0 ] && echo "gstore-dropdb: PASS"
exit "$fail"

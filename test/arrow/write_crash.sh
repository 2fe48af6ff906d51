#!/usr/bin/env bash
# test/arrow/write_crash.sh - writable Arrow_Fdw across sessions and crashes.
#
# Against the running cluster of the environment: 1,000 committed rows;
# then a session inserts 300 more and waits without committing: another
# session still counts 1,000 and cannot write (SHARE ROW EXCLUSIVE; a
# lock_timeout ERROR); the writing backend is killed with SIGKILL (the
# server goes through crash recovery): the table still counts 1,000, the
# next INSERT repairs the file, and pyarrow reads exactly the committed
# rows; a committed truncation shrinks the file, which pyarrow reads, with
# the row inserted after it.  Needs pyarrow (TEST_PYTHONPATH) and /tmp/pgstrom_arrow_test/w.
set -uo pipefail
db=pgstrom_arrow_write
file=/tmp/pgstrom_arrow_test/w/crash.arrow
fail=0
bad() { echo "arrow-write: FAIL: $*"; fail=1; }
rm -f "$file" "$file.pgstrom-undo"
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null || exit 1
export PGDATABASE=$db
psql -XAtq <<SQL || exit 1
CREATE EXTENSION pg_strom;
CREATE FOREIGN TABLE w (id int, t text) SERVER arrow_fdw OPTIONS (file '$file', writable 'true');
INSERT INTO w SELECT i, 'row ' || i FROM generate_series(1, 1000) i;
SQL
# a writer that does not commit
psql -XAtq -c "BEGIN" -c "INSERT INTO w SELECT i, 'uncommitted' FROM generate_series(1001, 1300) i" \
     -c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(60)" >/tmp/arrow_write_a.out 2>&1 &
for _ in $(seq 50); do
  pid=$(head -n 1 /tmp/arrow_write_a.out 2>/dev/null | grep -E '^[0-9]+$')
  [ -n "$pid" ] && break; sleep 0.1
done
[ -n "${pid:-}" ] || { bad "the writer did not start: $(cat /tmp/arrow_write_a.out)"; exit 1; }
n=$(psql -XAtq -c "SELECT count(*) FROM w")
if [ "$n" = 1000 ]; then
  echo "arrow-write: another session counts 1000 while 300 rows are uncommitted"
else
  bad "another session counts $n, not 1000"
fi
out=$(psql -XAtq -c "SET lock_timeout = '200ms'" -c "INSERT INTO w VALUES (0, 'second writer')" 2>&1)
if grep -q "canceling statement due to lock timeout" <<<"$out"; then
  echo "arrow-write: a second writer waits for the first (lock timeout)"
else
  bad "a second writer was not blocked: $out"
fi
kill -9 "$pid"
wait 2>/dev/null
for _ in $(seq 100); do psql -XAtq -d postgres -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
[ -e "$file.pgstrom-undo" ] || bad "no undo file after the crash"
n=$(psql -XAtq -c "SELECT count(*) FROM w" 2>&1)
if [ "$n" = 1000 ]; then
  echo "arrow-write: after kill -9 of the writer (crash recovery), the table counts 1000"
else
  bad "after the crash: $n"
fi
# IMPORT FOREIGN SCHEMA reads the file as a scan does: through the undo
# file's saved footer while the killed writer's append is not repaired
n=$(psql -XAtq -c "DROP SCHEMA IF EXISTS w_imported CASCADE" -c "CREATE SCHEMA w_imported" \
     -c "IMPORT FOREIGN SCHEMA w_crashed FROM SERVER arrow_fdw INTO w_imported OPTIONS (file '$file')" \
     -c "SELECT count(*) FROM w_imported.w_crashed" -c "DROP SCHEMA w_imported CASCADE" 2>&1 | grep -E '^[0-9]+$|ERROR')
if [ "$n" = 1000 ]; then
  echo "arrow-write: IMPORT FOREIGN SCHEMA of the crashed writer's file counts 1000"
else
  bad "IMPORT after the crash: $n"
fi
psql -XAtq -c "INSERT INTO w VALUES (2000, 'after the crash')" >/dev/null || bad "INSERT after the crash failed"
[ -e "$file.pgstrom-undo" ] && bad "the undo file is still there after a committed INSERT"
got=$(PYTHONPATH="${TEST_PYTHONPATH:-}" python3 -c "
import pyarrow as pa
t = pa.ipc.open_file('$file').read_all()
ids = t.column('id').to_pylist()
print(t.num_rows, min(ids), max(ids), sum(1 for x in t.column('t').to_pylist() if x == 'uncommitted'))" 2>&1)
if [ "$got" = "1001 1 2000 0" ]; then
  echo "arrow-write: pyarrow reads 1001 rows (ids 1..1000 and 2000), no uncommitted row"
else
  bad "pyarrow read: $got"
fi
# a committed truncation shrinks the file; pyarrow reads it, then the
# rows inserted after it
size0=$(stat -c %s "$file")
psql -XAtq -c "SELECT pgstrom.arrow_fdw_truncate('w')" >/dev/null || bad "truncate failed"
size1=$(stat -c %s "$file")
psql -XAtq -c "INSERT INTO w VALUES (7, 'after the truncation')" >/dev/null || bad "INSERT after the truncation failed"
got=$(PYTHONPATH="${TEST_PYTHONPATH:-}" python3 -c "
import pyarrow as pa
print(pa.ipc.open_file('$file').read_all().to_pylist())" 2>&1)
if [ "$size1" -lt $((size0 / 4)) ] && [ "$got" = "[{'id': 7, 't': 'after the truncation'}]" ]; then
  echo "arrow-write: a committed truncation shrank the file from $size0 to $size1 bytes; pyarrow reads the row inserted after it"
else
  bad "after the truncation: $size0 -> $size1 bytes, pyarrow read $got"
fi
# float2 columns are written as Float16: pyarrow reads the same values
f2file=/tmp/pgstrom_arrow_test/w/f2.arrow
rm -f "$f2file"
psql -XAtq <<SQL >/dev/null || bad "float2 INSERT failed"
CREATE FOREIGN TABLE wf2 (id int, h float2) SERVER arrow_fdw OPTIONS (file '$f2file', writable 'true');
INSERT INTO wf2 VALUES (1, 1.5), (2, NULL), (3, '-0'), (4, 'NaN'), (5, '-Infinity'), (6, 65504), (7, 6e-8), (8, 0.1);
SQL
got=$(PYTHONPATH="${TEST_PYTHONPATH:-}" python3 -c "
import pyarrow as pa
t = pa.ipc.open_file('$f2file').read_all()
print(t.schema.field('h').type, [repr(x) for x in t.column('h').to_pylist()])" 2>&1)
want="halffloat ['1.5', 'None', '-0.0', 'nan', '-inf', '65504.0', '5.960464477539063e-08', '0.0999755859375']"
if [ "$got" = "$want" ]; then
  echo "arrow-write: a float2 column is written as Float16; pyarrow reads $got"
else
  bad "float2 column: pyarrow read '$got', expected '$want'"
fi
back=$(psql -XAtq -c "SELECT string_agg(coalesce(h::text, 'NULL'), ' ' ORDER BY id) FROM wf2")
if [ "$back" = "1.5 NULL -0 NaN -Infinity 65500 6e-08 0.1" ]; then
  echo "arrow-write: the float2 column reads back: $back"
else
  bad "float2 read back: $back"
fi
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
rm -f "$file" "$f2file" /tmp/arrow_write_a.out
[ $fail = 0 ] && echo "arrow-write: visibility, writer lock, crash repair and pyarrow checks passed"
exit $fail

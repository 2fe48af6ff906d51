#!/usr/bin/env bash
# test/pg2arrow/run.sh - pg2arrow end to end (docs/pg2arrow.md), against
# the running cluster of the environment (PGHOST/PGPORT), with pg2arrow
# from PostgreSQL's bin directory (scripts/build.sh installs it there).
#
#  1. round trip: a table of every supported type with NULLs everywhere,
#     dumped in several record batches, read back through Arrow_Fdw:
#     EXCEPT ALL both ways is empty; pyarrow reads the same rows
#  2. --stat drives Arrow_Fdw's Stats-Hint skipping (same result)
#  3. --append adds batches; a different schema is refused; SIGINT and
#     SIGTERM in the middle of a large append leave the file byte-identical;
#     after SIGKILL Arrow_Fdw still reads the old rows and --recover puts
#     the old bytes back
#  4. --inner-join / --outer-join as in PG-Strom's write-ups (t_b holds the even ids)
#  5. bad input: options, SQL errors, unwritable output, values Arrow
#     cannot hold; never a file left as if complete
set -uo pipefail
db=pgstrom_pg2arrow
fail=0
bad() { echo "pg2arrow-test: FAIL: $*"; fail=1; }
ok() { echo "pg2arrow-test: ok: $*"; }
P=${PG2ARROW:-$(dirname "$(command -v psql)")/pg2arrow}
[ -x "$P" ] || { echo "pg2arrow-test: FAIL: no pg2arrow at $P"; exit 1; }
dir=$(mktemp -d /tmp/pg2arrow-test.XXXXXX)
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
q() { psql -XAtq -d $db "$@"; }

psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || exit 1
q <<'SQL' || exit 1
CREATE EXTENSION pg_strom;
CREATE TYPE comp AS (x int, y numeric(8,3), z text);
-- every type pg2arrow writes; row i has NULLs where i % 7 = column's turn
CREATE TABLE ty AS
SELECT i AS id,
  CASE WHEN i % 7 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
  CASE WHEN i % 7 = 1 THEN NULL ELSE (i % 65536 - 32768)::int2 END AS i2,
  CASE WHEN i % 7 = 2 THEN NULL ELSE (i * 7919)::int4 END AS i4,
  CASE WHEN i % 7 = 3 THEN NULL ELSE i::int8 * 4294967311 END AS i8,
  CASE WHEN i % 7 = 4 THEN NULL WHEN i % 101 = 0 THEN 'NaN'::float4 ELSE (i / 3.0)::float4 END AS f4,
  CASE WHEN i % 7 = 5 THEN NULL WHEN i % 103 = 0 THEN '-Infinity'::float8 ELSE i / 7.0 END AS f8,
  CASE WHEN i % 11 = 0 THEN NULL WHEN i % 97 = 0 THEN 'NaN'::float2 ELSE ((i % 4000 - 2000) / 8.0)::float2 END AS f2,
  (CASE WHEN i % 7 = 6 THEN NULL ELSE (i - 10000) * 1.001 END)::numeric(12,3) AS n,
  CASE WHEN i % 5 = 0 THEN NULL ELSE (i / 8.0)::numeric END AS nu,
  CASE WHEN i % 6 = 0 THEN NULL ELSE 'テキスト ' || i || repeat('é', i % 5) END AS t,
  (CASE WHEN i % 6 = 1 THEN NULL ELSE 'v' || i END)::varchar(12) AS vc,
  (CASE WHEN i % 6 = 2 THEN NULL ELSE (i % 1000)::text END)::char(5) AS c,
  CASE WHEN i % 6 = 3 THEN NULL ELSE decode(lpad(to_hex(i), 8, '0'), 'hex') END AS by,
  CASE WHEN i % 6 = 4 THEN NULL ELSE date '1990-01-01' + i END AS d,
  CASE WHEN i % 6 = 5 THEN NULL ELSE time '00:00:00.000001' + i * interval '1.5 s' END AS tm,
  CASE WHEN i % 4 = 0 THEN NULL ELSE timestamp '1960-01-01 00:00:00.5' + i * interval '1 hour 0.000001 s' END AS ts,
  CASE WHEN i % 4 = 1 THEN NULL ELSE timestamptz '2020-03-04 05:06:07+09' - i * interval '1 day 1 s' END AS tz,
  CASE WHEN i % 4 = 2 THEN NULL ELSE make_interval(0, i % 13, 0, i % 40, 0, 0, i * 0.25) END AS iv,
  CASE WHEN i % 8 = 3 THEN NULL ELSE md5(i::text)::uuid END AS u,
  CASE WHEN i % 4 = 3 THEN NULL WHEN i % 3 = 0 THEN ARRAY[i, NULL, -i] ELSE ARRAY[]::int[] END AS a,
  CASE WHEN i % 9 = 0 THEN NULL ELSE ARRAY['x' || i, NULL, 'ü'] END AS ta,
  CASE WHEN i % 9 = 1 THEN NULL WHEN i % 9 = 2 THEN ROW(NULL, NULL, NULL)::comp
       ELSE ROW(i, i / 3.0, 'z' || i)::comp END AS cp,
  CASE WHEN i % 9 = 3 THEN NULL ELSE jsonb_build_object('k', i) END AS j
FROM generate_series(1, 20000) i;
INSERT INTO ty (id) VALUES (0);
CREATE TABLE lo AS SELECT i AS id, date '1992-01-01' + i / 100 AS orderdate, i % 50 AS qty
  FROM generate_series(0, 199999) i;
CREATE TABLE t_a AS SELECT x AS id, x * 1.5 AS a1 FROM generate_series(1, 2000) x;
CREATE TABLE t_b AS SELECT x AS id, x % 97 AS b1, x % 89 AS b2 FROM generate_series(2, 2000, 2) x;
SQL

# --- 1. round trip ----------------------------------------------------------
cols="id, b, i2, i4, i8, f4, f8, f2, n, nu, t, vc, c, by, d, tm, ts, tz, iv, u, a, ta, cp"
if "$P" -d $db -t ty -o "$dir/ty.arrow" -s 256kB 2>"$dir/err"; then
  q <<SQL
CREATE FOREIGN TABLE fty (id int4, b bool, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, f2 float2,
  n numeric(12,3), nu numeric, t text, vc varchar(12), c char(5), by bytea, d date, tm time,
  ts timestamp, tz timestamptz, iv interval, u uuid, a int4[], ta text[], cp comp, j text)
  SERVER arrow_fdw OPTIONS (file '$dir/ty.arrow');
SQL
  diff1=$(q -c "SET pg_strom.enabled = off; SELECT count(*) FROM (SELECT $cols, j::text FROM ty EXCEPT ALL SELECT $cols, j FROM fty) x")
  diff2=$(q -c "SET pg_strom.enabled = off; SELECT count(*) FROM (SELECT $cols, j FROM fty EXCEPT ALL SELECT $cols, j::text FROM ty) x")
  nb=$("$P" --dump "$dir/ty.arrow" | grep -c '^\[Record Batch')
  if [ "$diff1/$diff2" = 0/0 ] && [ "$nb" -ge 3 ]; then
    ok "round trip of 20001 rows x 24 columns in $nb record batches: EXCEPT ALL both ways empty"
  else
    bad "round trip: $diff1 / $diff2 rows differ, $nb batches"
  fi
  grep -q "columns written as text (no Arrow type): j (jsonb)" "$dir/err" || bad "no notice for the jsonb column: $(cat "$dir/err")"
  # IMPORT FOREIGN SCHEMA gives each type back (a Struct needs CREATE FOREIGN TABLE)
  "$P" -d $db -c "SELECT $cols, j, id::oid AS o FROM ty" -o "$dir/ity.arrow" 2>/dev/null || bad "pg2arrow for IMPORT"
  r=$(q -c "IMPORT FOREIGN SCHEMA ity FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/ity.arrow')" 2>&1)
  grep -q Struct <<<"$r" || bad "IMPORT FOREIGN SCHEMA did not refuse the Struct column: $r"
  "$P" -d $db -c "SELECT ${cols%, cp}, j, id::oid AS o FROM ty" -o "$dir/ity.arrow" 2>/dev/null
  q -c "IMPORT FOREIGN SCHEMA ity FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/ity.arrow')"
  types=$(q -c "SELECT string_agg(format_type(atttypid, atttypmod), ',' ORDER BY attnum) FROM pg_attribute
                WHERE attrelid = 'ity'::regclass AND attnum > 0")
  want="integer,boolean,smallint,integer,bigint,real,double precision,float2,numeric(12,3),numeric(38,10),text,text,character(5),bytea,date,time without time zone,timestamp without time zone,timestamp with time zone,interval,uuid,integer[],text[],text,bigint"
  if [ "$types" = "$want" ]; then
    ok "IMPORT FOREIGN SCHEMA types: $types"
  else
    bad "IMPORT FOREIGN SCHEMA types: $types"
  fi
  py=$(PYTHONPATH="${TEST_PYTHONPATH:-}" python3 -c "
import pyarrow as pa, sys
t = pa.ipc.open_file('$dir/ty.arrow').read_all()
print(t.num_rows, t.column('i8').to_pylist()[1], t.column('t').to_pylist()[1], t.schema.field('f2').type, t.column('f2').to_pylist()[5], t.schema.metadata[b'sql_command'].decode())" 2>&1)
  want_py="20001 $(q -c "SELECT (SELECT i8 || ' ' || t FROM ty WHERE id = 2) || ' halffloat ' || (SELECT f2::float8 FROM ty WHERE id = 6)") SELECT * FROM ty"
  if [ "$py" = "$want_py" ]; then
    ok "pyarrow reads the file: $py"
  else
    bad "pyarrow: '$py', expected '$want_py'"
  fi
else
  bad "pg2arrow -t ty failed: $(cat "$dir/err")"
fi

# --- 2. --stat drives Stats-Hint ----------------------------------------------
if "$P" -d $db -c "SELECT * FROM lo ORDER BY id" -o "$dir/lo.arrow" --stat=orderdate,qty -s 300kB; then
  q -c "IMPORT FOREIGN SCHEMA lo_a FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/lo.arrow')"
  plan=$(q -c "SET pg_strom.enabled = off; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
               SELECT count(*) FROM lo_a WHERE orderdate BETWEEN '1994-01-01' AND '1994-06-30'")
  hint=$(grep -o 'loaded: [0-9]*, skipped: [0-9]*' <<<"$plan")
  a=$(q -c "SET pg_strom.enabled = off; SELECT count(*), sum(qty) FROM lo_a WHERE orderdate BETWEEN '1994-01-01' AND '1994-06-30'")
  b=$(q -c "SELECT count(*), sum(qty) FROM lo WHERE orderdate BETWEEN '1994-01-01' AND '1994-06-30'")
  if [[ "$hint" =~ skipped:\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "$a" = "$b" ]; then
    ok "--stat: Stats-Hint [$hint], result $a = PostgreSQL's"
  else
    bad "--stat: hint '$hint' result $a vs $b: $plan"
  fi
else
  bad "pg2arrow --stat failed"
fi

# --- 3. --append ----------------------------------------------------------------
"$P" -d $db -c "SELECT * FROM lo WHERE id < 1000" -o "$dir/ap.arrow" --stat=orderdate || bad "pg2arrow for the append test"
"$P" -d $db -c "SELECT * FROM lo WHERE id >= 1000 AND id < 3000" --append "$dir/ap.arrow" --stat=orderdate \
  || bad "--append failed"
q -c "IMPORT FOREIGN SCHEMA ap FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/ap.arrow')"
r=$(q -c "SELECT count(*), sum(id), min(orderdate), max(orderdate) FROM ap")
w=$(q -c "SELECT count(*), sum(id), min(orderdate), max(orderdate) FROM lo WHERE id < 3000")
stats=$("$P" --dump "$dir/ap.arrow" | grep -o 'key="min_values" value="[^"]*"')
if [ "$r" = "$w" ] && [ "$stats" = 'key="min_values" value="1992-01-01,1992-01-11"' ]; then
  ok "--append: $r; statistics cover old and new batches"
else
  bad "--append: $r vs $w; $stats"
fi
cp "$dir/ap.arrow" "$dir/ap.orig"
if "$P" -d $db -c "SELECT id, qty FROM lo" --append "$dir/ap.arrow" 2>"$dir/err"; then
  bad "--append with another schema succeeded"
else
  if grep -q "columns" "$dir/err" && cmp -s "$dir/ap.arrow" "$dir/ap.orig" && [ ! -e "$dir/ap.arrow.pgstrom-undo" ]; then
    ok "--append with another schema: $(head -1 "$dir/err")"
  else
    bad "schema mismatch: $(cat "$dir/err")"
  fi
fi
"$P" -d $db -c "SELECT * FROM lo WHERE id < 3000 UNION ALL SELECT 1/(id - 2999), NULL, NULL FROM lo WHERE id = 2999" \
  --append "$dir/ap.arrow" -s 8kB 2>"$dir/err" && bad "--append of a failing query succeeded"
if grep -q "division by zero" "$dir/err" && cmp -s "$dir/ap.arrow" "$dir/ap.orig"; then
  ok "--append whose query fails after batches were written: file byte-identical"
else
  bad "failing --append: $(cat "$dir/err"); cmp: $(cmp "$dir/ap.arrow" "$dir/ap.orig" 2>&1)"
fi
# a large append interrupted once it has written batches
# (a join, not a set-returning function: those materialize before the first row)
big="SELECT lo.id + g * 1000000 AS id, orderdate, qty FROM lo, generate_series(1, 1000) g"
for sig in INT TERM KILL; do
  "$P" -d $db -c "$big" --append "$dir/ap.arrow" -s 1MB 2>"$dir/err" &
  pid=$!
  size0=$(stat -c %s "$dir/ap.orig")
  for _ in $(seq 1 300); do
    [ "$(stat -c %s "$dir/ap.arrow")" -gt $((size0 + 4000000)) ] && break
    sleep 0.05
  done
  grown=$(stat -c %s "$dir/ap.arrow")
  kill -$sig $pid; { wait $pid; } 2>/dev/null; rc=$?
  if [ $sig = KILL ]; then
    n=$(q -c "SELECT count(*) FROM ap")
    [ -e "$dir/ap.arrow.pgstrom-undo" ] && [ "$n" = 3000 ] || bad "after SIGKILL: undo file? rows seen $n"
    # IMPORT FOREIGN SCHEMA reads the file as the table does, through the
    # undo file's saved footer
    n=$(q -c "DROP SCHEMA IF EXISTS ap_import CASCADE" -c "CREATE SCHEMA ap_import" \
          -c "IMPORT FOREIGN SCHEMA ap_killed FROM SERVER arrow_fdw INTO ap_import OPTIONS (file '$dir/ap.arrow')" \
          -c "SELECT count(*) FROM ap_import.ap_killed" -c "DROP SCHEMA ap_import CASCADE" 2>&1 | grep -E '^[0-9]+$|ERROR')
    if [ "$n" = 3000 ]; then
      ok "after SIGKILL: IMPORT FOREIGN SCHEMA reads the 3000 committed rows"
    else
      bad "IMPORT FOREIGN SCHEMA after SIGKILL: $n"
    fi
    "$P" --recover "$dir/ap.arrow" >"$dir/out" || bad "--recover failed"
  fi
  if cmp -s "$dir/ap.arrow" "$dir/ap.orig" && [ ! -e "$dir/ap.arrow.pgstrom-undo" ] && [ "$grown" -gt $((size0 + 4000000)) ]; then
    ok "SIG$sig after the file grew to $grown bytes (exit $rc): byte-identical to the original $size0 bytes"
  else
    bad "SIG$sig: grown $grown, exit $rc, $(cat "$dir/err"); cmp: $(cmp "$dir/ap.arrow" "$dir/ap.orig" 2>&1)"
  fi
done
# the connection lost in the middle (the backend terminated)
"$P" -d $db -c "$big" --append "$dir/ap.arrow" -s 1MB 2>"$dir/err" &
pid=$!
for _ in $(seq 1 300); do
  [ "$(stat -c %s "$dir/ap.arrow")" -gt $((size0 + 4000000)) ] && break
  sleep 0.05
done
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pg2arrow'" >/dev/null
wait $pid; rc=$?
if [ $rc = 1 ] && grep -qE "terminating connection|communicating with the server|connection closed" "$dir/err" && cmp -s "$dir/ap.arrow" "$dir/ap.orig"; then
  ok "connection lost in the middle of an append (exit $rc): byte-identical"
else
  bad "lost connection: exit $rc, $(cat "$dir/err")"
fi
# a full disk, as a file size limit (write fails with EFBIG)
(ulimit -f $(( (size0 + 3000000) / 1024 )); exec "$P" -d $db -c "$big" --append "$dir/ap.arrow" -s 1MB) 2>"$dir/err"; rc=$?
if [ $rc = 1 ] && grep -q "File too large" "$dir/err" && cmp -s "$dir/ap.arrow" "$dir/ap.orig"; then
  ok "write failure (file size limit) in the middle of an append: $(head -1 "$dir/err"); byte-identical"
else
  bad "write failure: exit $rc, $(cat "$dir/err")"
fi
(ulimit -f 1000; exec "$P" -d $db -c "$big" -o "$dir/full.arrow" -s 1MB) 2>"$dir/err"; rc=$?
if [ $rc = 1 ] && [ ! -e "$dir/full.arrow" ] && ! compgen -G "$dir/*full.arrow.pg2arrow-*" >/dev/null; then
  ok "write failure of a new file: exit $rc, nothing left"
else
  bad "write failure of -o: exit $rc, $(ls "$dir"; cat "$dir/err")"
fi
[ "$(q -c "SELECT count(*) FROM ap")" = 3000 ] || bad "rows after the interrupted appends"

# --- 4. --inner-join / --outer-join (as in PG-Strom's write-ups on Arrow statistics) -------------------------------------
# ($(id) is pg2arrow's placeholder for a column of the row, not the shell's)
# shellcheck disable=SC2016
"$P" -d $db -t t_a --inner-join 'SELECT b1,b2 FROM t_b WHERE $(id) = id' -o "$dir/j1.arrow" || bad "--inner-join"
# shellcheck disable=SC2016
"$P" -d $db -t t_a --outer-join 'SELECT b1,b2 FROM t_b WHERE $(id) = id' -o "$dir/j2.arrow" || bad "--outer-join"
q -c "IMPORT FOREIGN SCHEMA j1 FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/j1.arrow')" \
  -c "IMPORT FOREIGN SCHEMA j2 FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/j2.arrow')"
d1=$(q -c "SELECT count(*) FROM ((SELECT * FROM j1 EXCEPT ALL SELECT a.id, a1, b1, b2 FROM t_a a JOIN t_b b USING (id))
          UNION ALL (SELECT a.id, a1, b1, b2 FROM t_a a JOIN t_b b USING (id) EXCEPT ALL SELECT * FROM j1)) x")
d2=$(q -c "SELECT count(*) FROM ((SELECT * FROM j2 EXCEPT ALL SELECT a.id, a1, b1, b2 FROM t_a a LEFT JOIN t_b b USING (id))
          UNION ALL (SELECT a.id, a1, b1, b2 FROM t_a a LEFT JOIN t_b b USING (id) EXCEPT ALL SELECT * FROM j2)) x")
odd=$(q -c "SELECT count(*) FILTER (WHERE id % 2 = 1 AND b1 IS NULL AND b2 IS NULL) || '/' || count(*) FROM j2")
if [ "$d1/$d2" = 0/0 ] && [ "$odd" = 1000/2000 ]; then
  ok "--inner-join = JOIN, --outer-join = LEFT JOIN (odd ids NULL-filled: $odd)"
else
  bad "joins: $d1 / $d2 rows differ, odd NULL rows $odd"
fi

# --- 5. bad input -------------------------------------------------------------------
expect_fail() { # name want-exit want-message args...
  local name=$1 code=$2 msg=$3; shift 3
  "$P" "$@" >"$dir/out" 2>"$dir/err"; local rc=$?
  if [ $rc = "$code" ] && grep -q -- "$msg" "$dir/err"; then ok "$name: exit $rc, $(grep -m1 -- "$msg" "$dir/err")"
  else bad "$name: exit $rc (want $code), stderr: $(cat "$dir/err")"; fi
}
expect_fail "unknown option" 2 "unrecognized option" -d $db -t ty --bogus
expect_fail "no query" 2 "no query" -d $db -o "$dir/x.arrow"
expect_fail "bad segment size" 2 "units are kB" -d $db -t ty -s 10XB
expect_fail "SQL error" 1 "does not exist" -d $db -t no_such_table -o "$dir/x.arrow"
expect_fail "--stat on text" 1 "statistics are written for" -d $db -t ty --stat=t -o "$dir/x.arrow"
expect_fail "--stat unknown" 1 'no column "nope"' -d $db -t ty --stat=nope -o "$dir/x.arrow"
# shellcheck disable=SC2016
expect_fail "join placeholder" 1 'no column "nope"' -d $db -t t_a --inner-join 'SELECT $(nope)' -o "$dir/x.arrow"
expect_fail "numeric NaN" 1 "NaN has no Decimal128" -d $db -c "SELECT 'NaN'::numeric AS n" -o "$dir/x.arrow"
expect_fail "numeric too wide" 1 "out of range for decimal(38,10)" -d $db -c "SELECT 1e30::numeric AS n" -o "$dir/x.arrow"
expect_fail "multibyte char(n)" 1 "multibyte" -d $db -c "SELECT 'ああ'::char(2) AS c" -o "$dir/x.arrow"
expect_fail "2-D array" 1 "one-dimensional" -d $db -c "SELECT '{{1,2},{3,4}}'::int[] AS a" -o "$dir/x.arrow"
expect_fail "infinite date" 1 "infinite dates" -d $db -c "SELECT 'infinity'::date AS d" -o "$dir/x.arrow"
expect_fail "unwritable output" 1 "could not create" -d $db -t t_a -o /proc/pg2arrow.arrow
expect_fail "not a query" 1 "returns no columns" -d $db -c "CREATE TEMP TABLE zz (a int)" -o "$dir/x.arrow"
expect_fail "bad connection" 1 "connection to" -d $db -p 1 -h 127.0.0.1 -t t_a -o "$dir/x.arrow"
expect_fail "--dump of a non-Arrow file" 1 "" --dump /etc/hostname
[ -e "$dir/x.arrow" ] && bad "a failed run left $dir/x.arrow"
compgen -G "$dir/*pg2arrow-*" >/dev/null && bad "a temporary file was left: $(ls "$dir")"
# an Arrow_Fdw transaction that inserted holds the file's write lock
chmod 777 "$dir"; chmod 666 "$dir/ap.arrow"
q -c "CREATE FOREIGN TABLE apw (id int4, orderdate date, qty int4) SERVER arrow_fdw OPTIONS (file '$dir/ap.arrow', writable 'true')"
q -c "BEGIN" -c "INSERT INTO apw VALUES (1, '2000-01-01', 1)" -c "SELECT pg_sleep(3)" -c "ROLLBACK" >/dev/null &
inserter=$!
sleep 1
expect_fail "--append while a transaction inserts" 1 "being written by another process" \
  -d $db -c "SELECT * FROM lo WHERE id < 10" --append "$dir/ap.arrow"
wait $inserter
cmp -s "$dir/ap.arrow" "$dir/ap.orig" || bad "the file changed after the inserting transaction rolled back"
# a failed -o over an existing file keeps the old one
cp "$dir/j1.arrow" "$dir/j1.orig"
"$P" -d $db -c "SELECT 1/0 AS x" -o "$dir/j1.arrow" 2>/dev/null && bad "1/0 succeeded"
if cmp -s "$dir/j1.arrow" "$dir/j1.orig"; then
  ok "a failed -o over an existing file leaves it as it was"
else
  bad "-o over an existing file changed it"
fi
# -f, --set, the temporary file, --progress
echo "SELECT count(*) AS n, current_setting('work_mem') AS wm FROM t_a;" > "$dir/q.sql"
tmpf=$(TMPDIR=$dir "$P" -d $db -f "$dir/q.sql" --set work_mem:7MB --progress 2>"$dir/err")
r=$(q -c "IMPORT FOREIGN SCHEMA tq FROM SERVER arrow_fdw INTO public OPTIONS (file '$tmpf')" -c "SELECT n || ' ' || wm FROM tq")
if [ "$r" = "2000 7MB" ] && grep -q "RecordBatch\[0\]" "$dir/err" && grep -q "1 rows in 1 new record batches" "$dir/err"; then
  ok "-f, --set, a temporary file ($tmpf), --progress"
else
  bad "-f/--set/temp/progress: '$r' $(cat "$dir/err")"
fi

# an Arrow file cut short while a scan reads it: an ERROR naming file and batch
r=$(q 2>&1 <<SQL
SET pg_strom.enabled = off;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM lo_a;
FETCH 10 FROM c;
\! truncate -s 100000 $dir/lo.arrow
FETCH ALL FROM c;
SQL
)
if grep -q 'arrow file ".*lo.arrow" is corrupt: .* beyond the end of the file' <<<"$r" && grep -q "record batch" <<<"$r"; then
  ok "file truncated under a running scan: $(grep -m1 ERROR <<<"$r")"
else
  bad "file truncated under a scan: $r"
fi
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null
if [ $fail = 0 ]; then
  echo "pg2arrow-test: PASS"
else
  echo "pg2arrow-test: FAILED"
  exit 1
fi

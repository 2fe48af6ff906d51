#!/usr/bin/env bash
# test/mysql2arrow/run.sh - mysql2arrow end to end (docs/mysql2arrow.md):
# a private MariaDB server (scripts/mariadb.sh, Debian's mariadb-server)
# and the running PostgreSQL cluster of the environment (PGHOST/PGPORT),
# whose Arrow_Fdw reads the files back; mysql2arrow from PostgreSQL's bin
# directory (scripts/build.sh installs it there).
#
#  1. round trip: a table of every MySQL type with edge values and NULLs
#     everywhere, dumped in several record batches, read back through
#     Arrow_Fdw (IMPORT FOREIGN SCHEMA: each column's PostgreSQL type) and
#     compared value by value with MariaDB's own answers (compare.py)
#  2. 1 million rows streamed: record batches of the segment size, memory
#     bounded, aggregates equal; --stat drives Arrow_Fdw's Stats-Hint
#  3. zero dates and TIME beyond a day: an error naming the row by
#     default; --zero-date=null and --time-as-interval
#  4. --append adds batches; another schema is refused; SIGINT, SIGTERM
#     and SIGKILL in the middle of a large append leave the file as it was
#     (after SIGKILL through --recover)
#  5. connecting: option file, MYSQL_PWD, the password prompt, --set as
#     session variables
#  6. bad input: wrong password, unknown database and table, a query error
#     mid-stream, the server gone mid-dump, an output that cannot be
#     written, bad options: exit status as pg2arrow's, no file left
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
db=pgstrom_mysql2arrow
fail=0
bad() { echo "mysql2arrow-test: FAIL: $*"; fail=1; }
ok() { echo "mysql2arrow-test: ok: $*"; }
M2A=${MYSQL2ARROW:-$(dirname "$(command -v psql)")/mysql2arrow}
[ -x "$M2A" ] || { echo "mysql2arrow-test: FAIL: no mysql2arrow at $M2A"; exit 1; }
dir=$(mktemp -d /tmp/mysql2arrow-test.XXXXXX)
chmod 755 "$dir"
my=${MYSQL2ARROW_TEST_SERVER:-$dir/mariadb}
port=${MYSQL2ARROW_TEST_PORT:-33071}
trap '"$root/scripts/mariadb.sh" stop "$my" >/dev/null 2>&1; rm -rf "$dir"' EXIT
"$root/scripts/mariadb.sh" start "$my" "$port" >/dev/null || { echo "mysql2arrow-test: FAIL: MariaDB did not start"; exit 1; }
sock=$my/sock
# MariaDB as root (socket), and as the tester with a password
my() { mariadb --no-defaults -S "$sock" -u root --default-character-set=utf8mb4 -B -N "$@"; }
m2a() { "$M2A" --no-defaults -S "$sock" -u tester -P secret -d m2a "$@"; }
q() { psql -XAtq -P null=NULL -d $db "$@"; }

my <<'SQL' || exit 1
DROP DATABASE IF EXISTS m2a;
CREATE DATABASE m2a CHARACTER SET utf8mb4;
DROP USER IF EXISTS tester;
CREATE USER tester@'%' IDENTIFIED BY 'secret';
CREATE USER tester@'localhost' IDENTIFIED BY 'secret';
GRANT ALL ON m2a.* TO tester@'%';
GRANT ALL ON m2a.* TO tester@'localhost';
USE m2a;
SET time_zone = '+00:00';
SET sql_mode = '';
CREATE TABLE ty (
  id int PRIMARY KEY,
  i1 tinyint, u1 tinyint unsigned, i2 smallint, u2 smallint unsigned, i3 mediumint, u3 mediumint unsigned,
  i4 int, u4 int unsigned, i8 bigint, u8 bigint unsigned,
  n decimal(12,3), nu decimal(10,2) unsigned, n65 decimal(65,30),
  f float, d double,
  dt date, dtm datetime(6), ts timestamp(6) NULL DEFAULT NULL, tm time(6), y year,
  b1 bit(1), b12 bit(12), b64 bit(64),
  c char(5), v varchar(40), tx text, e enum('x','yy','zzz'), st set('a','b','c'), j json,
  bn binary(4), vb varbinary(16), bl blob, g geometry
);
INSERT INTO ty SELECT seq,
  IF(seq % 7 = 0, NULL, seq % 256 - 128), IF(seq % 7 = 1, NULL, seq % 256),
  IF(seq % 7 = 2, NULL, seq % 65536 - 32768), IF(seq % 7 = 3, NULL, seq * 3 % 65536),
  IF(seq % 7 = 4, NULL, seq * 419 % 16777216 - 8388608), IF(seq % 7 = 5, NULL, seq * 839 % 16777216),
  IF(seq % 7 = 6, NULL, seq * 104729 - 1073741824), IF(seq % 6 = 0, NULL, seq * 214748),
  IF(seq % 6 = 1, NULL, (seq - 10000) * 922337203685477), IF(seq % 6 = 2, NULL, CAST(seq AS UNSIGNED) * 922337203685477),
  IF(seq % 6 = 3, NULL, (seq - 10000) * 1.001), IF(seq % 6 = 4, NULL, seq / 8),
  IF(seq % 6 = 5, NULL, (seq - 10000) * 1234.567891234567891234567891),
  IF(seq % 5 = 0, NULL, seq % 1000 / 8 - 60), IF(seq % 5 = 1, NULL, seq / 7e0 * POW(10, seq % 40 - 20)),
  IF(seq % 5 = 2, NULL, DATE '1000-01-01' + INTERVAL seq * 97 DAY),
  IF(seq % 5 = 3, NULL, TIMESTAMP '1970-01-01 00:00:00' + INTERVAL (seq - 10000) * 86413 SECOND + INTERVAL seq MICROSECOND),
  IF(seq % 5 = 4, NULL, FROM_UNIXTIME(seq * 86413 + seq / 1000)),
  IF(seq % 4 = 0, NULL, SEC_TO_TIME(seq * 4.3 % 86400)), IF(seq % 4 = 1, NULL, 1901 + seq % 255),
  IF(seq % 4 = 2, NULL, seq % 2), IF(seq % 4 = 3, NULL, seq % 4096), IF(seq % 9 = 0, NULL, CAST(seq AS UNSIGNED) * 922337203685477),
  IF(seq % 3 = 0, NULL, CONCAT('c', seq % 1000)),
  IF(seq % 3 = 1, NULL, CONCAT('テキスト ', seq, REPEAT('é', seq % 5))),
  IF(seq % 3 = 2, NULL, REPEAT(CONCAT('text ', seq, ' 🐘 '), seq % 4)),
  IF(seq % 8 = 0, NULL, ELT(seq % 3 + 1, 'x', 'yy', 'zzz')), IF(seq % 8 = 1, NULL, MAKE_SET(seq % 8, 'a', 'b', 'c')),
  IF(seq % 8 = 2, NULL, JSON_OBJECT('k', seq, 's', 'ü')),
  IF(seq % 8 = 3, NULL, UNHEX(LPAD(HEX(seq), 8, '0'))), IF(seq % 8 = 4, NULL, UNHEX(MD5(seq))),
  IF(seq % 8 = 5, NULL, REPEAT(UNHEX('00FF'), seq % 50)),
  IF(seq % 8 = 6, NULL, ST_GeomFromText(CONCAT('POINT(', seq, ' ', seq / 2, ')')))
FROM (SELECT CAST(seq AS SIGNED) AS seq FROM seq_1_to_20000) s;
INSERT INTO ty (id) VALUES (0);
INSERT INTO ty (id, i1, u1, i2, u2, i3, u3, i4, u4, i8, u8, n, nu, n65, f, d, dt, dtm, ts, tm, y, b1, b12, b64, c, v, tx, st, bl)
VALUES (-1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,
        18446744073709551615, -999999999.999, 99999999.99, -99999999.999999999999999999999999999999,
        3.40282e38, -1.7976931348623157e308, '9999-12-31', '9999-12-31 23:59:59.999999',
        '2038-01-19 03:14:07.999999', '23:59:59.999999', 2155, 1, 4095, 18446744073709551615, '', '', '', '', ''),
       (-2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, 999999999.999, 0, 0.000000000000000000000000000001,
        -1.17549e-38, 4.9e-324, '0001-01-01', '0001-01-01 00:00:00', '1970-01-01 00:00:01', '00:00:00', 0, 0, 0, 0,
        'abcde', 'ü€🐘', REPEAT('長い', 5000), 'a,b,c', UNHEX(REPEAT('00', 3000)));
-- 1 million rows, in generation order
CREATE TABLE big (id bigint PRIMARY KEY, x double, s varchar(40), d datetime(3), k int);
INSERT INTO big SELECT seq, seq / 7e0, CONCAT('row ', seq, ' é'), TIMESTAMP '2000-01-01 00:00:00' + INTERVAL seq * 37 SECOND,
  seq % 1000 FROM seq_1_to_1000000;
-- zero dates (sql_mode '' allows them), TIME beyond a day
CREATE TABLE zd (id int, d date, dt datetime);
INSERT INTO zd VALUES (1, '2020-01-02', '2020-01-02 03:04:05'), (2, '0000-00-00', '0000-00-00 00:00:00'),
  (3, '2021-00-10', '2021-03-00 10:00:00'), (4, NULL, NULL);
CREATE TABLE tt (id int, t time(6));
INSERT INTO tt VALUES (1, '10:00:00'), (2, '-01:00:00.5'), (3, '838:59:59'), (4, '-838:59:59'), (5, '24:00:00'),
  (6, '00:00:00.000001'), (7, NULL);
SQL
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || exit 1
q -c "CREATE EXTENSION pg_strom" || exit 1

# --- 1. round trip ------------------------------------------------------------
# (a YEAR of 0: MariaDB prints 0000)
kinds="s,s,s,s,s,s,s,s,s,s,s,n,n,n,f4,f8,s,s,s,s,n,s,s,s,s,s,s,s,s,s,s,s,s,s"
my_canon="SELECT id, i1, u1, i2, u2, i3, u3, i4, u4, i8, u8, n, nu, n65, f, d, dt,
  DATE_FORMAT(dtm, '%Y-%m-%d %H:%i:%s.%f'), DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f'), TIME_FORMAT(tm, '%H:%i:%s.%f'),
  y, b1 + 0, b12 + 0, b64 + 0, HEX(c), HEX(v), HEX(tx), HEX(e), HEX(st), HEX(j), HEX(bn), HEX(vb), HEX(bl), HEX(g)
  FROM ty"
pg_hex() { echo "upper(encode(convert_to($1, 'UTF8'), 'hex'))"; }
pg_canon="SELECT id, i1, u1, i2, u2, i3, u3, i4, u4, i8, u8, n, nu, n65, f, d, dt,
  to_char(dtm, 'YYYY-MM-DD HH24:MI:SS.US'), to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'),
  to_char(tm, 'HH24:MI:SS.US'), y, b1::int, b12, b64, $(pg_hex c), $(pg_hex v), $(pg_hex tx), $(pg_hex e),
  $(pg_hex st), $(pg_hex j), upper(encode(bn, 'hex')), upper(encode(vb, 'hex')), upper(encode(bl, 'hex')),
  upper(encode(g, 'hex')) FROM ty"
if m2a -t ty -o "$dir/ty.arrow" -s 256kB 2>"$dir/err"; then
  q -c "IMPORT FOREIGN SCHEMA ty FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/ty.arrow')"
  types=$(q -c "SELECT string_agg(format_type(atttypid, atttypmod), ',' ORDER BY attnum) FROM pg_attribute
                WHERE attrelid = 'ty'::regclass AND attnum > 0")
  want="integer,smallint,smallint,smallint,integer,integer,integer,integer,bigint,bigint,numeric(20,0),numeric(12,3),numeric(10,2),numeric(38,30),real,double precision,date,timestamp without time zone,timestamp with time zone,time without time zone,smallint,boolean,bigint,numeric(20,0),text,text,text,text,text,text,bytea,bytea,bytea,bytea"
  if [ "$types" = "$want" ]; then ok "IMPORT FOREIGN SCHEMA types: $types"; else bad "types: $types"; fi
  my -D m2a -e "SET time_zone = '+00:00'; $my_canon" >"$dir/my.tsv"
  q -c "SET pg_strom.enabled = off" -c "$pg_canon" | sed 's/|/\t/g' >"$dir/pg.tsv"
  nb=$("$M2A" --dump "$dir/ty.arrow" | grep -c '^\[Record Batch')
  if res=$(python3 "$here/compare.py" "$kinds" "$dir/my.tsv" "$dir/pg.tsv") && [ "$nb" -ge 3 ]; then
    ok "round trip in $nb record batches: $(tail -1 <<<"$res")"
  else
    bad "round trip ($nb batches): $res"
  fi
  grep -q 'column "n65": DECIMAL(65,30) written as decimal(38,30)' "$dir/err" || bad "no notice for DECIMAL(65,30): $(cat "$dir/err")"
  # the same through pg_strom's scan (GpuScan, or the CPU engine)
  a=$(q -c "SET pg_strom.enabled = off" -c "SELECT count(*), sum(i8), sum(n), count(dtm), md5(max(tx)) FROM ty WHERE i4 > 0")
  b=$(q -c "SET pg_strom.gpu_setup_cost = 0" -c "SELECT count(*), sum(i8), sum(n), count(dtm), md5(max(tx)) FROM ty WHERE i4 > 0")
  if [ "$a" = "$b" ]; then ok "pg_strom on and off agree over the file: $a"; else bad "pg_strom on/off: $a vs $b"; fi
else
  bad "mysql2arrow -t ty failed: $(cat "$dir/err")"
fi

# --- 2. a million rows streamed -------------------------------------------------
if /usr/bin/env python3 - "$M2A" "$sock" "$dir" <<'PY' >"$dir/rss" 2>"$dir/err"
import resource, subprocess, sys
m2a, sock, d = sys.argv[1:]
r = subprocess.run([m2a, "--no-defaults", "-S", sock, "-u", "tester", "-Psecret", "-d", "m2a",
                    "-c", "SELECT * FROM big ORDER BY id", "-o", d + "/big.arrow", "-s", "4MB", "--stat=id,d,k",
                    "--progress"], stderr=subprocess.PIPE, text=True)
sys.stderr.write(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
sys.exit(r.returncode)
PY
then
  rss=$(cat "$dir/rss")
  size=$(( $(stat -c %s "$dir/big.arrow") / 1048576 ))
  nb=$("$M2A" --dump "$dir/big.arrow" | grep -c '^\[Record Batch')
  q -c "IMPORT FOREIGN SCHEMA big FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/big.arrow')"
  a=$(q -c "SELECT count(*), sum(id), sum(k), sum(length(s)), min(d), max(d), sum(x)::numeric(20,3) FROM big")
  b=$(my -D m2a -e "SELECT count(*), sum(id), sum(k), sum(char_length(s)), DATE_FORMAT(min(d), '%Y-%m-%d %H:%i:%s'),
                    DATE_FORMAT(max(d), '%Y-%m-%d %H:%i:%s'), CAST(sum(x) AS DECIMAL(20,3)) FROM big" | tr '\t' '|')
  if [ "$a" = "$b" ] && [ "$nb" -ge 8 ] && [ "$rss" -lt "$size" ] && grep -q "1000000 rows in $nb new record batches" "$dir/err"; then
    ok "1 million rows: $nb record batches of 4MB, ${size} MB file, at most ${rss} MB resident; aggregates equal ($a)"
  else
    bad "1 million rows: $a vs $b, $nb batches, ${rss} MB resident for a ${size} MB file; $(tail -2 "$dir/err")"
  fi
  plan=$(q -c "SET pg_strom.enabled = off" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
               SELECT count(*) FROM big WHERE d BETWEEN '2001-01-01' AND '2001-02-01'")
  hint=$(grep -o 'loaded: [0-9]*, skipped: [0-9]*' <<<"$plan")
  a=$(q -c "SELECT count(*), sum(k) FROM big WHERE d BETWEEN '2001-01-01' AND '2001-02-01'")
  b=$(my -D m2a -e "SELECT count(*), sum(k) FROM big WHERE d BETWEEN '2001-01-01' AND '2001-02-01'" | tr '\t' '|')
  if [[ "$hint" =~ skipped:\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "$a" = "$b" ]; then
    ok "--stat: Stats-Hint [$hint], result $a = MariaDB's"
  else
    bad "--stat: hint '$hint', result $a vs $b"
  fi
else
  bad "mysql2arrow of 1 million rows failed: $(cat "$dir/err")"
fi

# --- 3. zero dates, TIME beyond a day ----------------------------------------------
if m2a -t zd -o "$dir/zd.arrow" 2>"$dir/err"; then
  bad "zero dates were written"
elif grep -q 'column "d" of row 2: a zero date' "$dir/err" && grep -q -- '--zero-date=null' "$dir/err" && [ ! -e "$dir/zd.arrow" ]; then
  ok "zero date: $(head -1 "$dir/err")"
else
  bad "zero date: $(cat "$dir/err")"
fi
m2a -t zd -o "$dir/zd.arrow" --zero-date=null 2>"$dir/err" || bad "--zero-date=null: $(cat "$dir/err")"
q -c "IMPORT FOREIGN SCHEMA zd FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/zd.arrow')"
r=$(q -c "SELECT string_agg(format('%s:%s/%s', id, d, dt), ' ' ORDER BY id) FROM zd")
if [ "$r" = "1:2020-01-02/2020-01-02 03:04:05 2:/ 3:/ 4:/" ]; then
  ok "--zero-date=null: $r"
else
  bad "--zero-date=null: $r"
fi
if m2a -t tt -o "$dir/tt.arrow" 2>"$dir/err"; then
  bad "TIME -01:00:00.5 written as a time of day"
elif grep -q 'column "t" of row 2: TIME value -01:00:00 is not a time of day; --time-as-interval' "$dir/err"; then
  ok "TIME out of a day: $(head -1 "$dir/err")"
else
  bad "TIME out of a day: $(cat "$dir/err")"
fi
m2a -t tt -o "$dir/tt.arrow" --time-as-interval 2>"$dir/err" || bad "--time-as-interval: $(cat "$dir/err")"
q -c "IMPORT FOREIGN SCHEMA tt FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/tt.arrow')"
my -D m2a -e "SELECT id, TIME_TO_SEC(t) FROM tt" >"$dir/my.tsv"
q -c "SELECT id, extract(epoch FROM t) FROM tt" | sed 's/|/\t/g' >"$dir/pg.tsv"
if res=$(python3 "$here/compare.py" s,n "$dir/my.tsv" "$dir/pg.tsv"); then
  ok "--time-as-interval: $(q -c "SELECT string_agg(t::text, ', ' ORDER BY id) FROM tt")"
else
  bad "--time-as-interval: $res"
fi

# --- 4. --append ------------------------------------------------------------------
m2a -c "SELECT * FROM big WHERE id <= 1000" -o "$dir/ap.arrow" --stat=id || bad "mysql2arrow for the append test"
m2a -c "SELECT * FROM big WHERE id > 1000 AND id <= 3000" --append "$dir/ap.arrow" --stat=id || bad "--append failed"
q -c "IMPORT FOREIGN SCHEMA ap FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/ap.arrow')"
r=$(q -c "SELECT count(*), sum(id), min(d), max(d) FROM ap")
stats=$("$M2A" --dump "$dir/ap.arrow" | grep -o 'key="max_values" value="[^"]*"')
if [ "$r" = "3000|4501500|2000-01-01 00:00:37|2000-01-02 06:50:00" ] && [ "$stats" = 'key="max_values" value="1000,3000"' ]; then
  ok "--append: $r; statistics cover old and new batches"
else
  bad "--append: $r; $stats"
fi
cp "$dir/ap.arrow" "$dir/ap.orig"
size0=$(stat -c %s "$dir/ap.orig")
if m2a -c "SELECT id, k FROM big" --append "$dir/ap.arrow" 2>"$dir/err"; then
  bad "--append with another schema succeeded"
elif grep -q "columns" "$dir/err" && cmp -s "$dir/ap.arrow" "$dir/ap.orig" && [ ! -e "$dir/ap.arrow.pgstrom-undo" ]; then
  ok "--append with another schema: $(head -1 "$dir/err")"
else
  bad "schema mismatch: $(cat "$dir/err")"
fi
# a large append interrupted once it has written batches
slow="SELECT b.* FROM big b, seq_1_to_50 g"
for sig in INT TERM KILL; do
  # (the program itself in the background, not a function's subshell: the
  # signal goes to it)
  "$M2A" --no-defaults -S "$sock" -u tester -P secret -d m2a -c "$slow" --append "$dir/ap.arrow" -s 1MB 2>"$dir/err" &
  pid=$!
  for _ in $(seq 1 300); do
    [ "$(stat -c %s "$dir/ap.arrow")" -gt $((size0 + 4000000)) ] && break
    sleep 0.05
  done
  grown=$(stat -c %s "$dir/ap.arrow")
  kill -$sig $pid; { wait $pid; } 2>/dev/null; rc=$?
  if [ $sig = KILL ]; then
    n=$(q -c "SELECT count(*) FROM ap")
    [ -e "$dir/ap.arrow.pgstrom-undo" ] && [ "$n" = 3000 ] || bad "after SIGKILL: undo file? rows seen $n"
    "$M2A" --recover "$dir/ap.arrow" >"$dir/out" || bad "--recover failed"
  fi
  if cmp -s "$dir/ap.arrow" "$dir/ap.orig" && [ ! -e "$dir/ap.arrow.pgstrom-undo" ] && [ "$grown" -gt $((size0 + 4000000)) ]; then
    ok "SIG$sig after the file grew to $grown bytes (exit $rc): byte-identical to the original $size0 bytes"
  else
    bad "SIG$sig: grown $grown, exit $rc, $(cat "$dir/err"); cmp: $(cmp "$dir/ap.arrow" "$dir/ap.orig" 2>&1)"
  fi
done

# --- 5. connecting -------------------------------------------------------------------
printf '[client]\nuser = tester\npassword = "secret"\nsocket = %s\n[mysql2arrow]\ndatabase = m2a\n' "$sock" >"$dir/my.cnf"
if "$M2A" --defaults-file="$dir/my.cnf" -c "SELECT count(*) AS n FROM ty" -o "$dir/c1.arrow" 2>"$dir/err"; then
  ok "--defaults-file: user, password, socket and database from [client] and [mysql2arrow]"
else
  bad "--defaults-file: $(cat "$dir/err")"
fi
if MYSQL_PWD=secret "$M2A" --no-defaults -h 127.0.0.1 -p "$port" -u tester -d m2a -c "SELECT 1 AS one" -o "$dir/c2.arrow" 2>"$dir/err"; then
  ok "TCP with the password from MYSQL_PWD"
else
  bad "MYSQL_PWD over TCP: $(cat "$dir/err")"
fi
# no password given, a terminal: the prompt (script(1) gives it a pty)
if command -v script >/dev/null; then
  out=$( (sleep 1; printf 'secret\n') | script -qec "'$M2A' --no-defaults -S '$sock' -u tester -d m2a -c 'SELECT 1 AS one' -o '$dir/c5.arrow'" /dev/null 2>&1)
  if grep -q "Enter password:" <<<"$out" && [ -s "$dir/c5.arrow" ]; then
    ok "no password on a terminal: prompted, connected"
  else
    bad "password prompt: $out"
  fi
fi
m2a --set "sql_mode:PIPES_AS_CONCAT" --set "div_precision_increment:10" -c "SELECT 'a' || 'b' AS ab, 1/3 AS third" \
  -o "$dir/c3.arrow" 2>"$dir/err" || bad "--set: $(cat "$dir/err")"
q -c "IMPORT FOREIGN SCHEMA c3 FROM SERVER arrow_fdw INTO public OPTIONS (file '$dir/c3.arrow')"
r=$(q -c "SELECT ab || ' ' || third FROM c3")
if [ "$r" = "ab 0.3333333333" ]; then ok "--set as session variables: $r"; else bad "--set: $r"; fi
out=$(m2a --set "time_zone:+09:00" -t ty -o "$dir/c4.arrow" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q "UTC" <<<"$out"; then ok "--set time_zone refused: $out"; else bad "--set time_zone: $rc $out"; fi

# --- 6. bad input ---------------------------------------------------------------------
expect() { # what exit-status pattern args...
  local what=$1 st=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ $rc = "$st" ] && grep -qE "$pattern" <<<"$out"; then ok "$what: exit $rc, $(tail -1 <<<"$out")"; else bad "$what: exit $rc, $out"; fi
}
pattern='ERROR 1045 \(28000\): Access denied'
expect "wrong password" 1 "$M2A" --no-defaults -w -S "$sock" -u tester -P wrong -d m2a -t ty -o "$dir/x.arrow"
pattern='ERROR 1044 \(42000\)|ERROR 1049 \(42000\)'
expect "unknown database" 1 "$M2A" --no-defaults -S "$sock" -u tester -P secret -d nosuchdb -t ty -o "$dir/x.arrow"
pattern="ERROR 1146 \(42S02\): Table 'm2a.nosuch' doesn't exist"
expect "unknown table" 1 m2a -t nosuch -o "$dir/x.arrow"
pattern='ERROR 1064'
expect "syntax error" 1 m2a -c "SELEC 1" -o "$dir/x.arrow"
pattern='max_statement_time|interrupted'
expect "a query error mid-stream" 1 m2a --set max_statement_time:0.5 -c "SELECT id, SLEEP(0.0005) FROM big" -o "$dir/x.arrow" -s 8kB
pattern='cannot be|could not|No such file'
expect "an output path that cannot be written" 1 m2a -t ty -o /nonexistent/dir/x.arrow
pattern='Can.t connect|could not connect'
expect "no server" 1 "$M2A" --no-defaults -h 127.0.0.1 -p 1 -u tester -P secret -t ty -o "$dir/x.arrow"
pattern='invalid option'
expect "a bad option" 2 "$M2A" -Z
pattern='Usage:'
expect "--help" 0 "$M2A" --help
ls "$dir"/x.arrow* >/dev/null 2>&1 && bad "a failed run left $(ls "$dir"/x.arrow*)"
# the server gone mid-dump
"$M2A" --no-defaults -S "$sock" -u tester -P secret -d m2a -c "$slow" -o "$dir/gone.arrow" -s 1MB 2>"$dir/err" &
pid=$!
for _ in $(seq 1 300); do
  ls "$dir"/gone.arrow.mysql2arrow-* >/dev/null 2>&1 && [ "$(stat -c %s "$dir"/gone.arrow.mysql2arrow-* 2>/dev/null | head -1)" -gt 2000000 ] && break
  sleep 0.05
done
kill -KILL "$(cat "$my/pid")"
wait $pid; rc=$?
if [ $rc = 1 ] && grep -q "lost the connection" "$dir/err" && ! ls "$dir"/gone.arrow* >/dev/null 2>&1; then
  ok "the server killed mid-dump: exit 1, $(head -1 "$dir/err"); no file left"
else
  bad "server gone: exit $rc, $(cat "$dir/err"); $(ls "$dir"/gone.arrow* 2>&1)"
fi

psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db"
if [ $fail = 0 ]; then echo "mysql2arrow-test: all passed"; fi
exit $fail

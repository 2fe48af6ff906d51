#!/usr/bin/env bash
# test/files/modes.sh - the files pg_strom's server processes write get
# the modes PostgreSQL gives its own: those of the data directory's files
# (0600; 0640 where the cluster allows group access, initdb -g).
#
# Against the running cluster of the environment (PGHOST/PGPORT), whose
# data directory is DATA_DIR: a writable Arrow_Fdw table's new file, a
# gstore_fdw table's redo log and, after a checkpoint, its base file are
# compared with the mode of DATA_DIR/PG_VERSION (written by initdb) and,
# when given, with EXPECTED (an octal mode such as 640).
# Usage: test/files/modes.sh DATA_DIR [EXPECTED]
set -uo pipefail
data=$1 expected=${2:-}
db=pgstrom_file_modes
dir=/tmp/pgstrom_file_modes
rm -rf "$dir" && mkdir -p "$dir" && chmod 1777 "$dir"
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null || exit 1
export PGDATABASE=$db
psql -XAtq -v ON_ERROR_STOP=1 <<SQL >/dev/null || exit 1
CREATE EXTENSION pg_strom;
CREATE FOREIGN TABLE a (x int) SERVER arrow_fdw OPTIONS (file '$dir/a.arrow', writable 'true');
INSERT INTO a VALUES (1), (2);
CREATE FOREIGN TABLE g (id int, t text) SERVER gstore_fdw
  OPTIONS (base_file '$dir/g.base', redo_log_file '$dir/g.redo');
INSERT INTO g VALUES (1, 'one');
SELECT pgstrom.gstore_fdw_checkpoint('g');
INSERT INTO g VALUES (2, 'two');
SQL
want=$(stat -c %a "$data/PG_VERSION")
fail=0
for f in a.arrow g.redo g.base; do
  got=$(stat -c %a "$dir/$f" 2>/dev/null || echo missing)
  if [ "$got" != "$want" ] || { [ -n "$expected" ] && [ "$got" != "$expected" ]; }; then
    echo "file-modes: FAIL: $f has mode $got; PostgreSQL's files here have $want${expected:+ (expected $expected)}"
    fail=1
  fi
done
psql -XAtq -d postgres -c "DROP DATABASE $db" >/dev/null 2>&1
rm -rf "$dir"
[ $fail = 0 ] && echo "file-modes: an Arrow file, a redo log and a base file written by the server have mode $want, as PostgreSQL's own files (data directory $(stat -c %a "$data"))"
exit $fail

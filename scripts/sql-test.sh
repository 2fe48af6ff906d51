#!/usr/bin/env bash
# scripts/sql-test.sh NAME... - run some of the SQL tests (test/sql/NAME.sql,
# compared with test/expected/NAME.out) on a fresh cluster of their own,
# after test/sql/setup.sql as in the full run, with the settings
# scripts/test-sql.sh uses.  For working on one test; `make test` runs them
# all.  The diffs go to results/sql-test/regression.diffs and the output.
#   scripts/sql-test.sh plan_shapes
#   scripts/sql-test.sh gpuscan gpujoin
set -uo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"

if [ $# -eq 0 ]; then
  echo "usage: scripts/sql-test.sh NAME... (test/sql/NAME.sql)" >&2
  exit 2
fi
for t in "$@"; do
  [ -f "$PGSTROM_ROOT/test/sql/$t.sql" ] || { echo "sql-test: no test/sql/$t.sql" >&2; exit 2; }
done
dir=$RUN/sql-test
port=${PGSTROM_SQL_TEST_PORT:-54339}
out=${PGSTROM_RESULTS:-$PGSTROM_ROOT/results}/sql-test
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
rm -rf "$dir" "$out"
mkdir -p "$out"
# as scripts/test-sql.sh: small tables, offloaded plans
if ! PGSTROM_EXTRA_CONF="pg_strom.heap_gather_cost = 0
pg_strom.arrow_convert_cost = 0
pg_strom.gpu_operator_cost = 0.00015625
pg_strom.gpu_tuple_cost = 0.002
${PGSTROM_EXTRA_CONF:-}" "$PGSTROM_ROOT/scripts/cluster.sh" start "$dir" "$port" >/dev/null; then
  echo "sql-test: cannot start a cluster in $dir" >&2
  exit 1
fi
# shellcheck source=/dev/null  # (written by scripts/cluster.sh)
. "$dir/env"
if [[ " $* " == *" arrow_fdw"* ]]; then
  rm -rf /tmp/pgstrom_arrow_test
  PYTHONPATH="$TEST_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}" \
    python3 "$PGSTROM_ROOT/test/arrow/gen.py" /tmp/pgstrom_arrow_test >/dev/null
fi
regress="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress"
"$regress" --bindir="$PG_BINDIR" --host="$PGHOST" --port="$PGPORT" --user="$PGUSER" \
  --inputdir="$PGSTROM_ROOT/test" --outputdir="$out" --dbname=pgstrom_regression \
  setup "$@"
rc=$?
[ $rc -ne 0 ] && [ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
"$PGSTROM_ROOT/scripts/cluster.sh" stop "$dir" >/dev/null 2>&1
exit $rc

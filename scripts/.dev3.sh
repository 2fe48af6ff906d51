scripts/bench.sh tpch 10 $OUT/t --modes pg,strom --runs 1 --drop-files --queries q10 >$OUT/bench.log 2>&1; tail -3 $OUT/bench.log
. /tmp/pgstrom/.run/bench/env; export PGDATABASE=tpch
q=$(grep -v '^[[:space:]]*--' bench/tpch/queries/q10.sql)
for s in "SET pg_strom.enabled=off" "SET pg_strom.enabled=on" "SET enable_hashagg=off"; do psql -X -q -c "$s" -c "$q" >/dev/null; psql -X -q -c "$s" -c "EXPLAIN (ANALYZE, BUFFERS OFF) $q" > "$OUT/q10-${s##* }.txt" 2>&1; grep "Execution Time" "$OUT/q10-${s##* }.txt"; done
PLAN_SETS="off:pg_strom.enabled=off on" timeout 330 scripts/plan-timings.sh bench/tpch/queries/q{04,11,12,14,06,01,19,22,02,16,15,20}.sql > $OUT/pt.txt 2>&1; tail -13 $OUT/pt.txt

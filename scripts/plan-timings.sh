#!/usr/bin/env bash
# scripts/plan-timings.sh FILE.sql... - for cost-model work: each query run
# under several sets of settings (EXPLAIN ANALYZE after one warm-up run of
# the same set), with the plan's estimated cost, its execution time, the
# pg_strom nodes it holds and their timing lines, one block per set; a
# table of the times last.  Where the planner's choice and the fastest
# plan differ, the cost model has something to learn.
#
#   PLAN_SETS   the sets, separated by spaces: NAME or NAME:setting=value,...
#               (default: "off:pg_strom.enabled=off on
#               forced:pg_strom.gpu_setup_cost=0,pg_strom.heap_gather_cost=0,enable_nestloop=off")
#   PLAN_LINES  extra egrep pattern of EXPLAIN lines to print (default: the
#               pg_strom nodes' depths, inner builds and times)
#
# Connects with the PG* environment (for example `. .run/bench/env` and
# PGDATABASE=tpch after `scripts/bench.sh tpch ...`).
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/plan-timings.sh FILE.sql..."; exit 2; }
sets=${PLAN_SETS:-"off:pg_strom.enabled=off on forced:pg_strom.gpu_setup_cost=0,pg_strom.heap_gather_cost=0,enable_nestloop=off"}
lines=${PLAN_LINES:-'Custom Scan|Depth [0-9]|Inner Build|Inner Cache|GPU Time|Engine Time|Heap Direct Read|Partial Groups|Workers Launched'}
summary=()
for f in "$@"; do
  q=$(grep -v '^[[:space:]]*--' "$f")
  row="$(basename "$f" .sql)"
  for s in $sets; do
    name=${s%%:*}
    sql=""
    if [[ "$s" == *:* ]]; then
      IFS=, read -r -a kv <<<"${s#*:}"
      for x in "${kv[@]}"; do sql+="SET ${x%%=*} = '${x#*=}'; "; done
    fi
    psql -X -q -c "$sql" -c "$q" >/dev/null 2>&1
    plan=$(psql -X -q -c "$sql" -c "EXPLAIN (ANALYZE, BUFFERS OFF) $q" 2>&1)
    ms=$(sed -n 's/^ *Execution Time: \([0-9.]*\) ms/\1/p' <<<"$plan")
    cost=$(sed -n '1,3s/.*(cost=[0-9.]*\.\.\([0-9.]*\) .*/\1/p' <<<"$plan" | head -n 1)
    echo "== $f [$name] cost ${cost:-?}, ${ms:-?} ms"
    grep -E "$lines" <<<"$plan" | sed 's/(cost=[^)]*) //' | cut -c1-220
    grep -E '^(ERROR|FATAL)' <<<"$plan"
    row+=" $name=${ms:-?}"
  done
  summary+=("$row")
done
echo "== execution ms per set"
printf '%s\n' "${summary[@]}"

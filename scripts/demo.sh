#!/usr/bin/env bash
# scripts/demo.sh - the main job on the development cluster (make demo):
# which GPU and engine pg_strom found, the device code built by NVRTC, a
# table generated with pgstrom.random_*, a query over it, and the engine
# self-test.  Later issues grow this into the Star Schema Benchmark demo.
set -euo pipefail
. "$(dirname "$0")/env.sh"
. "$RUN/env"
q() { echo; echo "=> $1"; psql -X -P pager=off -c "$1"; }

q "SELECT * FROM pgstrom.device_discovery()"
q "SELECT pgstrom.active_engine()"
q "SELECT * FROM pgstrom.gpu_device_info WHERE property IN ('Device name', 'Total global memory size', 'GPU architecture', 'Number of multiprocessors on device', 'PCI address')"
if [ "$(psql -XAtq -c "SELECT gpus FROM pgstrom.device_discovery()")" -gt 0 ]; then
  q "SELECT * FROM pgstrom.device_code_build()"
else
  q "SELECT * FROM pgstrom.device_code_build('sm_90')  -- no GPU here: build for an H100 anyway"
fi
echo; echo "=> generating t_demo: 1,000,000 rows with pgstrom.random_*"
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
\timing on
SELECT pgstrom.random_setseed(2026);
DROP TABLE IF EXISTS t_demo;
CREATE TABLE t_demo AS
  SELECT x AS id,
         pgstrom.random_int(0.01, 1, 100)            AS cat,
         pgstrom.random_float(0.01, 0.0, 1000.0)      AS ax,
         pgstrom.random_date(0.0, '2020-01-01', '2024-12-31') AS ymd,
         pgstrom.random_text(0.0, 'item_****')         AS label
    FROM generate_series(1, 1000000) x;
ANALYZE t_demo;
SQL
psql -X -P pager=off <<'SQL'
\timing on
\echo
\echo => a query over it
SELECT extract(year FROM ymd) AS year, count(*), round(avg(ax)::numeric, 3) AS avg_ax,
       count(*) FILTER (WHERE cat IS NULL) AS null_cat
  FROM t_demo WHERE ax > 500.0 GROUP BY 1 ORDER BY 1;
\echo
\echo => a WHERE clause compiled to a device program, run on the active engine,
\echo    and checked row by row against the same WHERE clause in PostgreSQL
SELECT pgstrom.device_program('t_demo', 'ax > 500.0 AND cat IN (1, 2, 3) OR label LIKE ''item_A%''');
SELECT count(*) AS rows,
       count(*) FILTER (WHERE d.value::bool) AS true_on_device,
       count(*) FILTER (WHERE d.value::bool IS DISTINCT FROM
                        (t.ax > 500.0 AND t.cat IN (1, 2, 3) OR t.label LIKE 'item_A%')) AS differing
  FROM t_demo t
  JOIN pgstrom.device_eval('t_demo', 'ax > 500.0 AND cat IN (1, 2, 3) OR label LIKE ''item_A%''') d
    ON d.ctid = t.ctid::text;
\echo
\echo => the filter kernels on the active engine, checked against the reference
SELECT engine, data_type, count(*) AS cases, bool_and(matches_reference) AS all_match,
       round(sum(elapsed_ms)::numeric, 1) AS total_ms
  FROM pgstrom.engine_selftest(4000000) GROUP BY 1, 2 ORDER BY 2;
SQL
echo
echo "demo: done. Connect with: . .run/env && psql"

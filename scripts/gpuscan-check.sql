-- scripts/gpuscan-check.sql - GpuScan on a larger generated table, run by
-- scripts/gpu-check.sh on the GPU machine: PG-Strom's write-ups' queries and a few
-- filters, each with PostgreSQL's own plan, GpuScan on the GPU engine and
-- GpuScan on the CPU engine.  Results are compared (md5 of the sorted ids);
-- times are one warm run each (plpgsql, so no parallel plans): a smoke
-- figure, not the benchmark.  The last line is the summary gpu-check reads.
\set ON_ERROR_STOP 1
\pset pager off
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;  -- offloaded whatever the cost model says: this compares engines
SET pg_strom.gpu_operator_cost = 0.00015625;  -- a GPU's, on either engine
SET pg_strom.gpu_tuple_cost = 0.002;
\if :{?engine}
\else
\set engine gpu
\endif
SET gsc.engine = :'engine';   -- the engine of the 'gpu' runs (auto for a dry run without a GPU)
SELECT pgstrom.random_setseed(64);
DROP TABLE IF EXISTS t_64g;
CREATE TABLE t_64g AS
SELECT id, pgstrom.random_float(0, 0, 1000) AS x, pgstrom.random_float(0, 0, 1000) AS y,
       pgstrom.random_float(0, 0, 1000) AS z, pgstrom.random_text(0, 'memo_********') AS memo
  FROM generate_series(1, :rows) id;
VACUUM ANALYZE t_64g;

CREATE OR REPLACE FUNCTION gsc_run(q text, mode text, OUT ms float8, OUT h text, OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; ln text; n bigint;
BEGIN
  PERFORM set_config('pg_strom.enabled', CASE WHEN mode = 'pg' THEN 'off' ELSE 'on' END, true);
  PERFORM set_config('pg_strom.engine', CASE WHEN mode = 'cpu' THEN 'cpu' ELSE current_setting('gsc.engine') END, true);
  plan := 'no GpuScan';
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ 'GpuScan' THEN plan := 'GpuScan'; END IF;
  END LOOP;
  EXECUTE 'SELECT count(*) FROM (' || q || ') s' INTO n;       -- warm-up
  t0 := clock_timestamp();
  EXECUTE 'SELECT count(*) FROM (' || q || ') s' INTO n;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
  -- every output column (GPU Projection's too), rows in id order
  EXECUTE 'SELECT md5(coalesce(string_agg(s::text, '','' ORDER BY id), '''')) FROM (' || q || ') s' INTO h;
  h := n || ':' || h;
END $$;

CREATE TEMP TABLE gsc AS
SELECT q, pg.ms AS pg_ms, gpu.ms AS gpu_ms, cpu.ms AS cpu_ms,
       pg.h = gpu.h AND pg.h = cpu.h AS same, gpu.plan = 'GpuScan' AND cpu.plan = 'GpuScan' AS offloaded,
       split_part(pg.h, ':', 1)::bigint AS nrows
  FROM (VALUES
    ($$SELECT id FROM t_64g WHERE memo LIKE '%abcd%'$$),
    ($$SELECT id FROM t_64g WHERE sqrt((x-200)^2 + (y-300)^2 + (z-400)^2) < 10$$),
    ($$SELECT id FROM t_64g WHERE sqrt((x-200)*(x-200) + (y-300)*(y-300) + (z-400)*(z-400)) < 50$$),
    ($$SELECT id FROM t_64g WHERE x BETWEEN 100 AND 110 AND y > 500$$),
    ($$SELECT id FROM t_64g WHERE memo LIKE 'memo_a%' OR x < 0.5$$),
    ($$SELECT id, sqrt((x-200)*(x-200) + (y-300)*(y-300)) AS dist, x * 2 + y AS v FROM t_64g WHERE z < 100$$)
  ) v(q), gsc_run(q, 'pg') pg, gsc_run(q, 'gpu') gpu, gsc_run(q, 'cpu') cpu;
SELECT left(q, 70) AS query, nrows, round(pg_ms::numeric, 1) AS pg_ms, round(gpu_ms::numeric, 1) AS gpu_ms,
       round(cpu_ms::numeric, 1) AS cpu_engine_ms, same, offloaded FROM gsc;

SET pg_strom.engine = :'engine';
EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) SELECT id FROM t_64g WHERE memo LIKE '%abcd%';
EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) SELECT id FROM t_64g WHERE sqrt((x-200)^2 + (y-300)^2 + (z-400)^2) < 10;

SELECT format('gpuscan-check: %s queries on %s rows, %s offloaded, %s with the same rows on GPU, CPU engine and PostgreSQL; total ms pg %s, gpu %s, cpu engine %s',
              count(*), :rows, count(*) FILTER (WHERE offloaded), count(*) FILTER (WHERE same),
              round(sum(pg_ms)::numeric), round(sum(gpu_ms)::numeric), round(sum(cpu_ms)::numeric)) AS summary
  FROM gsc;
DROP TABLE t_64g;

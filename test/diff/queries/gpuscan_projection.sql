-- GPU Projection: output expressions of every fixed-width type computed on
-- the device (NULLs, NaN, infinities, -0 and integer extremes in the
-- inputs), next to columns and a text column taken from the rows
-- (heap direct path off: its rows are projected by PostgreSQL, GPU
-- Projection runs for the blocks the buffer manager reads)
-- expect: GpuScan, GPU Projection
-- set: pg_strom.heap_direct = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 7000
SELECT id, a2 * 3 AS a2x3, a8 / 7 AS a8d7, f8 * 0.5 + a2 AS mix, sqrt(abs(f8)) AS r, f4 * 2 AS f4x2,
       d + 1 AS d1, ts + interval '1 day' AS ts1, a2 > 0 AND b AS both, coalesce(a4, -1) AS a4c, t
  FROM diff_types WHERE (f8 < 1000 OR f8 IS NULL) AND (d < '3000-01-01' OR d IS NULL);

-- date / time / timestamp / timestamptz comparisons at the edges
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, d, tm, ts, tz FROM diff_types
 WHERE d < date '1980-01-01' OR d > date '3000-01-01'
    OR (tm BETWEEN time '12:00' AND time '12:30' AND ts >= timestamp '2005-06-01')
    OR tz < timestamptz '2000-02-01 00:00+09';

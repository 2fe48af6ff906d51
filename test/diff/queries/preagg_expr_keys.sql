-- GpuPreAgg: expressions as keys (integer, date arithmetic, boolean with NaN > 0)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT a4 % 100 AS k1, d - date '2000-01-01' AS k2, f8 > 0 AS k3, count(*), sum(a2) FROM diff_types WHERE id < 30000 GROUP BY a4 % 100, d - date '2000-01-01', f8 > 0;

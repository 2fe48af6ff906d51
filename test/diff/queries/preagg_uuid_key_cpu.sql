-- a uuid grouping key is not a device key yet: the aggregation stays on
-- the CPU over a GpuScan
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT u, count(*) FROM diff_wide WHERE id % 3 = 0 GROUP BY u;

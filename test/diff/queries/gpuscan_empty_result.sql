-- a qual no row satisfies
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT * FROM diff_types WHERE a4 > 2147483647;

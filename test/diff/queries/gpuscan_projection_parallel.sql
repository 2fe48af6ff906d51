-- GPU Projection in a parallel GpuScan
-- expect: GpuScan, GPU Projection
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT id, f8 * f8 + a2 AS q, a4 % 100 AS m, vc FROM diff_types WHERE a2 BETWEEN -500 AND 500;

-- Parallel GpuScan over the typed table
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT id, f8, t FROM diff_types WHERE f8 BETWEEN -100 AND 100 AND t LIKE 'item%';

-- parallel semi and anti joins
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT d.id FROM diff_types d WHERE NOT EXISTS (SELECT 1 FROM dj_b b WHERE b.bk = d.a2 % 60) AND EXISTS (SELECT 1 FROM dj_c c WHERE c.ck = d.id % 40);

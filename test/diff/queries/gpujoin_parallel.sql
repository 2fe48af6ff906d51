-- parallel GpuJoin: chunks handed out to workers, each with the inner tables
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT d.id, a.aname, b.bname FROM diff_types d JOIN dj_a a ON d.id % 3000 = a.ak LEFT JOIN dj_b b ON d.a2 % 50 = b.bk;

-- GpuPreAgg in parallel: partial states of every worker under Gather
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: work_mem = '64MB'
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 4
SELECT c.cname, count(*), sum(a.a8), avg(a.a4), min(a.a8) FROM dj_a a JOIN dj_c c ON a.ak % 26 = c.ck GROUP BY c.cname;

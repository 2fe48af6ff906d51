-- parallel GpuScan over Arrow_Fdw: workers take record batches from a
-- shared counter
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT ymd % 100 AS d, count(*), sum(val) FROM arrow_sorted
 WHERE val % 5 = 1 OR ymd > 19940900 GROUP BY 1;

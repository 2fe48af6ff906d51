-- join-key hints with rows returned, parallel workers skipping batches
-- from one counter, an inner relation of two separate months (the range
-- spans the months between: only batches outside it are skipped)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT s.ymd, s.val FROM arrow_sorted s JOIN arrow_days d ON s.ymd = d.ymd
 WHERE d.ymd / 100 IN (199403, 199406) AND s.val % 11 = 4;

-- parallel GpuPreAgg over a GpuJoin on an Arrow table, the service reading
-- columns from the file itself: each worker's session opens the file, and
-- takes whole record batches as chunks
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.cpu_engine_in_service = on
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT d.name, count(*), sum(s.val), min(s.ymd), max(s.ymd)
  FROM arrow_sorted s JOIN arrow_dim d ON s.val = d.k
 WHERE s.ymd % 3 <> 1 GROUP BY d.name;

-- parallel GpuPreAgg over a GpuJoin whose outer side is an Arrow_Fdw table:
-- workers take record batches from one counter
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
SELECT d.flag, count(*), sum(s.val), sum(s.ymd::int8)
  FROM arrow_sorted s JOIN arrow_dim d ON s.val = d.k GROUP BY d.flag;

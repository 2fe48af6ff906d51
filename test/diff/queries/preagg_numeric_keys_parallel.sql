-- numeric grouping keys in parallel over a join: each worker's groups
-- (one display scale per key, so every representative prints alike)
-- combined by PostgreSQL (the keys are evaluated on the host, so the
-- GpuPreAgg reads no blocks by the heap direct path; with it on, a
-- GpuJoin on that path under PostgreSQL's aggregation costs less here)
-- expect: GpuPreAgg
-- set: pg_strom.heap_direct = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 4
-- set: pg_strom.chunk_rows = 8000
SELECT n.disc, -n.disc * 2 AS d2, c.c_region, count(*), sum(n.price)
  FROM diff_numeric n JOIN customer c ON c.c_custkey = n.id % 300 + 1
 GROUP BY n.disc, d2, c.c_region;

-- text expression grouping keys over a GpuJoin, in parallel: each
-- worker's groups (keys evaluated by PostgreSQL at their representative
-- combinations, inner columns too) combined by PostgreSQL (the heap
-- direct path off: as preagg_numeric_keys_parallel)
-- expect: GpuPreAgg
-- set: pg_strom.heap_direct = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 4
-- set: pg_strom.chunk_rows = 8000
SELECT split_part(t.t, '_', 1) AS head, rtrim(c.c_region) AS region, count(*), sum(t.a2)
  FROM diff_types t JOIN customer c ON c.c_custkey = t.id % 300 + 1
 GROUP BY 1, 2;

-- sum / avg(interval) over a GpuJoin, in parallel: every worker's partial
-- interval states combined by PostgreSQL
-- since: 17
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 4
-- set: pg_strom.chunk_rows = 8000
SELECT m.grp, sum(w.iv - m.iv), avg(w.ts - w.d), count(*)
  FROM diff_wide w JOIN diff_wide_dim m ON m.u = w.u
 WHERE w.iv BETWEEN '-1000 hours' AND '1000 hours' GROUP BY m.grp;

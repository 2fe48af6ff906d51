-- min / max of interval and timetz expressions over a GpuJoin, in
-- parallel: every worker's partial minimum combined by PostgreSQL
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 4
-- set: pg_strom.chunk_rows = 8000
SELECT m.grp, min(w.iv - m.iv), max(w.iv - m.iv), min(w.tt), max(w.tt), count(*)
  FROM diff_wide w JOIN diff_wide_dim m ON m.u = w.u
 WHERE w.id % 7 <> 1 GROUP BY m.grp;

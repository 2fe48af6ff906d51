-- GpuPreAgg over GpuJoin grouped by a uuid column of the inner side (read
-- at each group's representative row)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT m.u, count(*), sum(w.id), min(w.ts)
  FROM diff_wide w JOIN diff_wide_dim m ON m.u = w.u
 GROUP BY m.u;

-- GpuPreAgg over a GpuJoin whose outer side is an Arrow_Fdw table
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.name, count(*), sum(s.val), min(s.ymd), max(s.ymd)
  FROM arrow_sorted s JOIN arrow_dim d ON s.val = d.k
 WHERE s.ymd > 19940500 GROUP BY d.name;

-- numeric grouping keys on the device: a numeric(p,s) column (NULL and
-- NaN groups, thousands of groups) and bounded expressions over it,
-- hashed by value and read back as the device computed them (GpuScan
-- off: on a GPU, a GpuScan on the heap direct path under PostgreSQL's
-- aggregation costs about as much, and either plan may win)
-- expect: GpuPreAgg
-- set: pg_strom.enable_gpuscan = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT price, round(price * disc, 3) AS pd, count(*), sum(id), min(disc)
  FROM diff_numeric WHERE id % 10 < 4 GROUP BY price, pd;

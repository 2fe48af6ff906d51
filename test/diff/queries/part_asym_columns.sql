-- partitions whose columns lie elsewhere (a dropped column, another order) joined with a dimension, grouped
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d_region, count(*), sum(v), count(v), count(t) FROM pt_drop JOIN pt_dim ON k % 50 = d_store GROUP BY d_region;

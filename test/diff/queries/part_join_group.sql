-- a GROUP BY over partitions joined with a dimension
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d_region, count(*), sum(s_qty), sum(s_amount) FROM pt_sales JOIN pt_dim ON s_store = d_store
 WHERE s_day >= '2024-02-01' GROUP BY d_region;

-- HAVING over groups that span partitions: evaluated once every partition's groups are finalized
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_store, sum(s_qty), count(*) FROM pt_sales WHERE s_day >= '2024-01-01'
 GROUP BY s_store HAVING sum(s_qty) > 1900;

-- a join over partitions with an initplan's value in the partitions' quals
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d_region, count(*), sum(s_qty) FROM pt_sales JOIN pt_dim ON s_store = d_store
 WHERE s_day >= (SELECT max(day) - 300 FROM pt_days) GROUP BY d_region;

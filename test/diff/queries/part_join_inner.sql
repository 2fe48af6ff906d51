-- partitions JOIN a dimension (stores no sale has, sales of stores the dimension lacks)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_store, s_qty, d_store, d_name FROM pt_sales JOIN pt_dim ON s_store = d_store
 WHERE s_day < '2023-03-01' OR s_day IS NULL;

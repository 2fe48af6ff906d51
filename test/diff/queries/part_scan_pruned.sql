-- GpuScan of each partition plan-time pruning keeps: a range of days across a list-partitioned year and a hash-partitioned one
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_store, s_region, s_qty, s_amount FROM pt_sales
 WHERE s_day >= '2024-06-01' AND s_day < '2025-02-01' AND s_qty > 5;

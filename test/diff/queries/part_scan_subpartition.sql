-- pruning down to one sub-partition (the year's list partition of 'west')
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_store, s_qty, s_tag FROM pt_sales
 WHERE s_day BETWEEN '2024-03-01' AND '2024-09-30' AND s_region = 'west' AND s_qty < 10;

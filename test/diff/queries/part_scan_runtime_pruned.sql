-- run-time pruning: the range's start is an initplan's value
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_store, s_amount FROM pt_sales
 WHERE s_day >= (SELECT max(day) - 45 FROM pt_days) AND s_qty = 3;

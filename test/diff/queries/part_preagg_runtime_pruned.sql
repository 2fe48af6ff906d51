-- a GROUP BY over the partitions an initplan's value keeps at run time
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_tag, count(*), sum(s_qty), max(s_amount) FROM pt_sales
 WHERE s_day >= (SELECT max(day) - 200 FROM pt_days) GROUP BY s_tag;

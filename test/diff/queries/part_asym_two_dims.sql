-- a GROUP BY over partitions joined with two dimensions, HAVING above the partitions
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d_region, holiday, count(*), sum(s_qty), sum(s_amount), avg(s_price) FROM pt_sales
  JOIN pt_dim ON s_store = d_store JOIN pt_days ON s_day = day
 GROUP BY d_region, holiday HAVING count(*) > 200;

-- a plain aggregate over the partitions some quals keep
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(s_amount), avg(s_qty), min(s_price), max(s_day) FROM pt_sales
 WHERE s_tag = 'hot' AND s_day < '2025-03-01';

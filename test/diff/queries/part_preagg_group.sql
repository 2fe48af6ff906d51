-- GROUP BY over every partition: a GpuPreAgg per partition under an Append, finalized above it
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_region, count(*), sum(s_amount), sum(s_qty), avg(s_price), min(s_day), max(s_price), count(s_qty)
  FROM pt_sales GROUP BY s_region;

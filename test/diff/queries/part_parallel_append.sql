-- a join of every partition (sub-partitions, a default, an empty year)
-- with a dimension, grouped, with parallel plans made cheap: a GpuPreAgg
-- per partition under a Parallel Append (each run whole by one process)
-- expect: GpuPreAgg
-- set: max_parallel_workers_per_gather = 2
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.heap_gather_cost = 0
SELECT holiday, count(*), sum(s_amount), sum(s_qty), min(s_day), max(s_price)
  FROM pt_sales JOIN pt_days ON s_day = day GROUP BY holiday;

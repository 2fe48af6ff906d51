-- GpuPreAgg: aggregates of one state share one device operation (sum and
-- avg of the same numeric, the same aggregate twice, count of one column
-- twice); with another FILTER or another argument they do not
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, sum(price), avg(price), sum(price) FILTER (WHERE disc > 0.05), avg(price) FILTER (WHERE disc > 0.05),
       sum(price * (1 - disc)), avg(price * (1 - disc)), sum(disc), sum(disc), avg(disc) FILTER (WHERE id % 3 = 0),
       count(price), count(price), count(disc), count(*), count(*)
  FROM diff_numeric GROUP BY g;

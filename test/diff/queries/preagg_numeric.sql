-- GpuPreAgg: sum / avg of numerics whose digits the planner bounds (a
-- numeric(p,s) column, + - * with constants and other such columns,
-- round), exact, with NULLs, NaN groups, negative sums, FILTER, and sums
-- past 64 bits
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, sum(price), avg(price * (1 - disc)), sum(round(price, 1) * -3),
       avg(disc) FILTER (WHERE id % 3 = 0), sum(price * 1000000000000000000000000), count(*)
  FROM diff_numeric GROUP BY g;

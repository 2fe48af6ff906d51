-- GpuPreAgg over GpuJoin: a revenue sum (price * (1 - discount)) by a
-- dimension, the Star Schema Benchmark's shape over numeric columns
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT t.b, sum(n.price * (1 - n.disc)) AS revenue, avg(n.price), count(*)
  FROM diff_numeric n JOIN diff_types t ON t.id = n.id
 WHERE t.a2 > 0 GROUP BY t.b;

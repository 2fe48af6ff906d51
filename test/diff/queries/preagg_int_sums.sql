-- GpuPreAgg: integer counts, sums and averages (int8 sums past 2^63 become numeric exactly)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT a2 % 10 AS g, count(*), count(a4), sum(a2), sum(a4), sum(a8), avg(a2), avg(a4), avg(a8) FROM diff_types GROUP BY a2 % 10;

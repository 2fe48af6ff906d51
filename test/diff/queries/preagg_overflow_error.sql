-- GpuPreAgg: an argument overflowing raises PostgreSQL's error
-- expect: GpuPreAgg
-- error: integer out of range
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT a2 % 3, sum(a4 * 1000) FROM diff_types GROUP BY a2 % 3;

-- GpuPreAgg: the variance family over finite values whose squares overflow raises PostgreSQL's error
-- expect: GpuPreAgg
-- error: value out of range: overflow
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b, stddev(CASE WHEN a4 % 2 = 0 THEN 1e200::float8 ELSE -1e200::float8 END) FROM diff_types WHERE a4 IS NOT NULL GROUP BY b;

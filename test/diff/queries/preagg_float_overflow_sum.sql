-- GpuPreAgg: a float sum overflowing from finite values raises PostgreSQL's error
-- expect: GpuPreAgg
-- error: value out of range: overflow
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b, sum(LEAST(a4, 100000) * 1e303::float8) FROM diff_types WHERE a4 > 1000 GROUP BY b;

-- GpuPreAgg: the regression family over finite values whose sums overflow raises PostgreSQL's error
-- expect: GpuPreAgg
-- error: value out of range: overflow
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b, corr(f8, LEAST(a4, 100000) * 1e303::float8) FROM diff_types WHERE a4 > 1000 AND f8 > 0 AND f8 < 1e6 GROUP BY b;

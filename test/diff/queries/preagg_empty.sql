-- GpuPreAgg over no rows: no groups; without GROUP BY one row of count 0 and NULLs
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(a4), avg(f8), min(d) FROM diff_types WHERE a4 > 2147483647;

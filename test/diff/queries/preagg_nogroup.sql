-- GpuPreAgg without GROUP BY (Reduction: NoGroup)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(a4), min(d), max(ts), avg(a8) FROM diff_types WHERE a2 > 0;

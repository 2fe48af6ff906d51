-- an interval out of range in a GpuPreAgg filter raises PostgreSQL's error
-- expect: GpuPreAgg
-- error: interval out of range
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*) FROM diff_wide WHERE iv + interval '2147483647 days' > interval '1 day' AND id > 0;

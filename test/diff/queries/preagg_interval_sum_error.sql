-- +infinity and -infinity in one interval sum: PostgreSQL's error
-- since: 17
-- expect: GpuPreAgg
-- error: interval out of range
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, sum(iv) FROM diff_wide GROUP BY g;

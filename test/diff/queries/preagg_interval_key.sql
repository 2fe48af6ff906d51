-- interval grouping keys on the device, hashed and compared by span; the
-- rows here spell each span one way (the '30 days' rows are left out), so
-- every group prints as PostgreSQL prints it; infinities and NULL groups
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT iv, iv + interval '1 day' AS iv1, count(*), sum(id) FROM diff_wide WHERE id % 7 <> 1 GROUP BY iv, iv1;

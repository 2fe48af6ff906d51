-- GpuPreAgg with uuid and timetz grouping keys (hashed and compared on
-- the device, read back at each group's representative row), NULL groups;
-- 12:00+00 and 11:00-01 are one instant but two timetz groups
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT u, tk, count(*), sum(id) FROM diff_wide GROUP BY u, tk;

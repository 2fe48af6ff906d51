-- float2 (Arrow Float16) grouping keys on the device: NaN one group, NULL
-- groups, infinities, subnormal halves; -0 and 0 are one group, left out
-- of the shown keys since PostgreSQL shows the one it met first
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT f16, count(*), sum(id), min(f32) FROM arrow_types WHERE f16 <> 0 OR f16 IS NULL GROUP BY f16;

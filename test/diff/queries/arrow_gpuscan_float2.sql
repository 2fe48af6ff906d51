-- float2 (Arrow Float16) on the device: comparisons and widening casts,
-- NaN, infinities and subnormal halves included
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, f16, f32 FROM arrow_types
 WHERE f16 > 0.5 OR f16 = 'NaN' OR f16::float4 < f32 OR f16 IN ('-0', '6e-08', 'Infinity');

-- GpuScan over Arrow_Fdw: Float16 (widened), Float32, Float64 with NaN, infinities
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, f16, f32, f64 FROM arrow_types
 WHERE f16 > 1 OR f32 >= 0.5 OR f64 < 0 OR f64 = 'NaN' OR f32 = '-Infinity';

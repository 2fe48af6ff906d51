-- GpuScan over Arrow_Fdw: Float32, Float64 with NaN, infinities on the
-- device; Float16 (float2, which the device lacks) filtered on the CPU
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, f16, f32, f64 FROM arrow_types
 WHERE (f16 > 1 OR f16 IS NULL OR f16 = 'NaN' OR f16 <= 0)
   AND (f32 >= 0.5 OR f64 < 0 OR f64 = 'NaN' OR f32 = '-Infinity');

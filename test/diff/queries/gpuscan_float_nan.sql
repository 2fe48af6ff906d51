-- float NaN / infinity / -0 ordering and equality
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, f4, f8 FROM diff_types WHERE f8 > 1000 OR f4 = 0 OR f8 = 'NaN' OR f4 < -1e30;

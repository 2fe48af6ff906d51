-- GpuScan over Arrow_Fdw: Date32/Date64, Time64, Timestamp (ns truncated)
-- and timestamptz, converted to PostgreSQL's epoch
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: TimeZone = 'UTC'
SELECT id, d32, d64, t64us, ts_ns, tstz FROM arrow_types
 WHERE d32 < '2000-01-01' OR d64 >= '1970-01-05' OR t64us > '00:00:00.00002'
    OR ts_ns < '1990-01-01' OR tstz > '2021-06-01 00:00:24+00';

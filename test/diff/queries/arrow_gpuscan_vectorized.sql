-- GpuScan over Arrow_Fdw: the columns converted in one pass (Date32 epoch
-- shift, microsecond timestamps and timestamptz, Bool bytes) in slices of
-- 3 rows that start inside bit-packed bytes
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 3
-- set: TimeZone = 'UTC'
SELECT id, d32, ts_us, tstz, b FROM arrow_types
 WHERE d32 > '2000-01-01' OR b OR ts_us > '2024-02-29 12:00:00.00001' OR tstz < '2021-06-01 00:00:05+00';

-- GpuScan over Arrow_Fdw: integer columns (native buffers, widened Int8 and
-- unsigned), slices of 4 rows cut across record batches of 9
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 4
SELECT id, i8, i16, i32, i64, u8, u16, u32 FROM arrow_types
 WHERE i16 > 0 OR i64 < 0 OR u32 % 2 = 1 OR i8 = -128;

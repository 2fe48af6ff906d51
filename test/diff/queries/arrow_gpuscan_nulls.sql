-- GpuScan over Arrow_Fdw: bool, NULL tests over every kind of column, a
-- compressed (ZSTD) file
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, b, i32 FROM arrow_types_zstd
 WHERE (b AND i32 IS NOT NULL) OR s IS NULL OR dict IS NULL;

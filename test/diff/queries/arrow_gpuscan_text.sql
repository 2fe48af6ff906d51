-- GpuScan over Arrow_Fdw: Utf8 (buffers as they are), LargeUtf8 and
-- dictionary columns, char(n) from FixedSizeBinary, multibyte LIKE
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 5
SELECT id, s, ls, dict, bp FROM arrow_types
 WHERE s LIKE '%テ%' OR ls = 'cba' OR dict IN ('red', '日本') OR bp = 'ab' OR s = '';

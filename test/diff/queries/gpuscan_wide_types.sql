-- uuid, interval, timetz and bytea in device filters: comparisons,
-- interval arithmetic on timestamps and dates (month ends), LIKE on bytea
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, u, iv, tt, b FROM diff_wide
 WHERE (u < 'a0000000-0000-0000-0000-000000000000' OR b LIKE decode('0a25', 'hex'))
   AND ts + iv > '2024-06-01'::timestamp AND d - iv <= ts
   AND iv <> interval '1 mon' AND tt > '06:00+00' AND length(b) BETWEEN 1 AND 4;

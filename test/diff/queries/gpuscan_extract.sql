-- extract / date_part / date_trunc on the device (dates at the edges of
-- their range, NULLs)
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, d, ts FROM diff_types
 WHERE (extract(year FROM d) BETWEEN 1990 AND 2010 AND extract(dow FROM d) IN (0, 6))
    OR (date_part('hour', ts) = 13 AND date_trunc('month', ts) < timestamp '2005-01-01')
    OR extract(quarter FROM ts) = 4 AND extract(doy FROM d) < 3;

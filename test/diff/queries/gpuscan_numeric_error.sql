-- numeric division by zero on the device raises PostgreSQL's error
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- error: division by zero
SELECT count(*) FROM diff_numeric WHERE price / (disc - disc) > 0 AND id > 0;

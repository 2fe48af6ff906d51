-- int4 overflow raises the error PostgreSQL raises
-- expect: GpuScan
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- error: integer out of range
SELECT count(*) FROM diff_types WHERE a4 + 1 > 0;

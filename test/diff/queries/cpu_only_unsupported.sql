-- a qual with no device function stays on the CPU (no GpuScan)
-- expect: none
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id FROM diff_types WHERE md5(t) LIKE 'a%';

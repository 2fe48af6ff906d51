-- a join without an equality: nested loop on the device
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.a4, b.bname FROM diff_types d JOIN dj_b b ON d.a4 % 5000 BETWEEN b.lo AND b.hi;

-- GpuJoin on a uuid key and an interval key (equal by span: '1 mon' =
-- '30 days'), hashed on the device
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_mergejoin = off
-- set: enable_nestloop = off
SELECT w.id, w.u, w.iv, m.grp FROM diff_wide w JOIN diff_wide_dim m ON m.u = w.u AND m.iv = w.iv
 WHERE w.tt IS NOT NULL;

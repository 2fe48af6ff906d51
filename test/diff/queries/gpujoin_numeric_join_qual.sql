-- numeric in a join qual or an aggregate's argument stays on the CPU: the
-- join has no PostgreSQL fallback for values beyond the device's 38 digits,
-- so the qual is evaluated on the host (the join on the device) and the
-- aggregate by PostgreSQL
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(n.price) FROM diff_numeric n JOIN diff_types t ON n.id = t.id
 WHERE n.q * 2 > t.a4;

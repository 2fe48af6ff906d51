-- GpuJoin on a bytea key (empty strings included), with a bytea LIKE in
-- the scan qual
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_mergejoin = off
-- set: enable_nestloop = off
SELECT w.id, w.b, m.grp FROM diff_wide w JOIN diff_wide_dim m ON m.b = w.b
 WHERE w.b NOT LIKE decode('0025', 'hex');

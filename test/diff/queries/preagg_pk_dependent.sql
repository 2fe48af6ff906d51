-- GpuPreAgg over a join: columns functionally dependent on the GROUP BY's
-- primary key (no grouping key of their own) are grouped by on the device
-- as well (the same groups)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT k.id, k.name, k.val, count(*), sum(f.a8) FROM diff_pk k JOIN diff_types f ON f.id % 200 = k.id GROUP BY k.id;

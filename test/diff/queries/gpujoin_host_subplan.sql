-- a correlated sub-query in an inner join's quals (TPC-H Q17's shape) is
-- evaluated on the host for each joined row
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_hashjoin = off
-- set: enable_mergejoin = off
-- set: enable_nestloop = off
SELECT d.id, b.bk FROM diff_types d JOIN dj_b b ON d.a2 % 40 = b.bk WHERE d.a4 % 100 < (SELECT count(*) * 10 FROM dj_c c WHERE c.ck < b.bk);

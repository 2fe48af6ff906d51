-- an empty inner relation: INNER returns nothing, LEFT keeps every row
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, e.v, b.bname FROM diff_types d LEFT JOIN dj_empty e ON d.a4 = e.k JOIN dj_b b ON d.a2 % 50 = b.bk;

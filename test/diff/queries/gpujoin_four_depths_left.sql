-- four depths mixing INNER and LEFT; a later depth keys on an earlier inner
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, a.ak, b.bname, c.cname, e.v FROM diff_types d JOIN dj_a a ON d.id % 3000 = a.ak LEFT JOIN dj_b b ON a.ak % 45 = b.bk JOIN dj_c c ON d.id % 26 = c.ck LEFT JOIN dj_empty e ON e.k = a.a4;

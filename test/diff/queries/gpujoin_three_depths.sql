-- a star join: three dimensions in one GpuJoin, a scan qual
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, a.aname, b.bname, c.cname FROM diff_types d JOIN dj_a a ON d.id % 3000 = a.ak JOIN dj_b b ON d.a2 % 50 = b.bk JOIN dj_c c ON d.id % 26 = c.ck WHERE d.b;

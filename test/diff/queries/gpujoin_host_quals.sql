-- quals without a device function stay on the host (md5 of multibyte
-- text and NULLs), the join on the device
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_hashjoin = off
-- set: enable_mergejoin = off
-- set: enable_nestloop = off
SELECT d.id, a.ak, a.at FROM diff_types d JOIN dj_a a ON d.a8 % 500 = a.a8 AND md5(d.t) < md5(a.at) WHERE md5(coalesce(d.t, '')) < '9';

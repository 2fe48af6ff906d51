-- text and bpchar keys (multibyte, empty, trailing blanks)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.t, a.ak, d.bc, a.abc FROM diff_types d JOIN dj_a a ON d.t = a.at AND d.bc = a.abc;

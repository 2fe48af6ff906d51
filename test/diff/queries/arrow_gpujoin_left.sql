-- LEFT GpuJoin over an Arrow_Fdw table: unmatched outer rows NULL-extended
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
SELECT a.id, a.i16, a.s, d.name FROM arrow_types a LEFT JOIN arrow_dim d ON a.u8 = d.k AND d.flag;

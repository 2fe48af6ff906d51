-- GpuJoin with an Arrow_Fdw table as its outer side (a heap inner),
-- chunks cut across record batches
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.chunk_rows = 700
SELECT s.ymd, s.val, d.name FROM arrow_sorted s JOIN arrow_dim d ON s.val = d.k
 WHERE s.ymd % 7 = 2 AND d.flag;

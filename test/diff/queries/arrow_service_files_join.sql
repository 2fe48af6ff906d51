-- GpuJoin returning rows of an Arrow table whose key column the service
-- reads from the file itself: the backend reads the batch for the rows
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.cpu_engine_in_service = on
SELECT s.ymd, s.val, d.name FROM arrow_sorted s JOIN arrow_dim d ON s.val = d.k
 WHERE s.ymd % 5 = 2 AND d.flag;

-- GpuJoin returning rows of an Arrow table whose key column the service
-- reads from the file itself: the backend reads the batch for the rows
-- (which the planner charges, so that on these 3,000 rows a Hash Join over
-- a GpuScan costs about as much: PostgreSQL's joins are off to test the path)
-- expect: GpuJoin
-- set: enable_hashjoin = off
-- set: enable_mergejoin = off
-- set: enable_nestloop = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.cpu_engine_in_service = on
SELECT s.ymd, s.val, d.name FROM arrow_sorted s JOIN arrow_dim d ON s.val = d.k
 WHERE s.ymd % 5 = 2 AND d.flag;

-- a Parallel GpuScan under a Gather on the inner side of a nested loop:
-- every outer row rescans the Gather (a new parallel scan area each time)
-- (read through the table AM: pg_strom.heap_page_reads off)
-- expect: GpuScan
-- set: pg_strom.heap_page_reads = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: max_parallel_workers_per_gather = 2
-- set: enable_hashjoin = off
-- set: enable_mergejoin = off
-- set: enable_material = off
-- set: pg_strom.enable_gpujoin = off
-- set: pg_strom.enable_gpupreagg = off
SELECT s.id, t.id, t.a8 FROM (SELECT id FROM diff_types WHERE id <= 3 OFFSET 0) s
  JOIN diff_types t ON t.a2 = s.id AND t.a4 > 0;

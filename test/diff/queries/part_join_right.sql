-- partitions (filtered in a sub-query) RIGHT JOIN a dimension (stores no sale has, sales of stores the dimension lacks)
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s.s_day, s.s_store, s.s_qty, d_store, d_name
  FROM (SELECT * FROM pt_sales WHERE s_day < '2023-03-01' AND s_qty > 3) s RIGHT JOIN pt_dim ON s.s_store = d_store;

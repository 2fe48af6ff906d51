-- a join over partitions rescanned with a new parameter for each row of the outer query (a correlated subquery): the partitions keep the first one's inner rows across rescans
-- expect: GpuJoin|GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_hashjoin = off
-- set: enable_mergejoin = off
SELECT d.d_store, (SELECT count(*) FROM pt_sales s JOIN pt_days x ON s.s_day = x.day WHERE s.s_store = d.d_store AND x.holiday) FROM pt_dim d;

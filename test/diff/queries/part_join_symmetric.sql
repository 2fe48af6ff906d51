-- PostgreSQL's own partition-wise join of two tables partitioned alike (NULL
-- keys in the default partitions): a GpuJoin for each pair of partitions
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_partitionwise_join = on
SELECT a.a_t, count(*), sum(b.b_w), count(b.b_w) FROM pt_a a JOIN pt_b b ON a.k = b.k GROUP BY a.a_t;

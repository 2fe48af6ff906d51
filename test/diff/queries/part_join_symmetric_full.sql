-- the same, FULL JOIN
-- expect: none
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_partitionwise_join = on
SELECT a.k, b.k, a.a_v, b.b_w FROM pt_a a FULL JOIN pt_b b ON a.k = b.k WHERE coalesce(a.k, b.k, -1) % 97 = 3 OR a.k IS NULL OR b.k IS NULL;

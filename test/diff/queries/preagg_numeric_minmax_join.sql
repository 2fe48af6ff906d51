-- min / max of numeric(p,s) columns over a GpuJoin (the partial minima
-- combined by PostgreSQL's numeric_smaller / numeric_larger)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT t.b, min(n.price), max(n.price), max(n.disc), count(*)
  FROM diff_numeric n JOIN diff_types t ON t.id = n.id
 WHERE t.a2 > 0 GROUP BY t.b;

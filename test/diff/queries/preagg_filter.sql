-- GpuPreAgg: FILTER clauses
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT a2 % 3 AS g, count(*) FILTER (WHERE a4 > 0), sum(a8) FILTER (WHERE t LIKE 'item%'), avg(f8) FILTER (WHERE b), count(t) FROM diff_types GROUP BY a2 % 3;

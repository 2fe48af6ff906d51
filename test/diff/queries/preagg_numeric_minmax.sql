-- min / max of numeric(p,s) columns (p <= 18) in GpuPreAgg: compared as
-- integers at the column's scale, NaN above every number, NULL groups;
-- with count() of an unconstrained numeric and a bounded sum
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, min(price), max(price), min(disc), max(disc), count(q), sum(disc) FROM diff_numeric GROUP BY g;

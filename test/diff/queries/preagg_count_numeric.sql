-- count() of numeric columns in GpuPreAgg (only their NULLs matter: values
-- beyond 38 digits included), beside a numeric sum the planner can bound
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, count(price), count(q), count(*), sum(price) FROM diff_numeric GROUP BY g;

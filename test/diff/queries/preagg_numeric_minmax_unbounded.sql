-- min / max of a numeric whose digits cannot be bounded (an unconstrained
-- column with values beyond 38 digits, a division) stays on the CPU
-- expect: none
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, min(q), max(price / 3) FROM diff_numeric GROUP BY g;

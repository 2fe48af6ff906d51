-- text grouping keys that are expressions: grouped by their bytes on the
-- device, each group's key evaluated by PostgreSQL at its representative
-- row (NULL, empty and multibyte text; bpchar to text drops the padding)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT left(t, 3) AS p, substring(vc FROM 2) AS s, bc::text AS b, count(*), sum(a4), max(id)
  FROM diff_types GROUP BY 1, 2, 3;

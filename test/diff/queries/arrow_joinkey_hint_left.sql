-- a LEFT join keeps outer rows that match nothing: no join-key hint may
-- skip them; and an inner join whose inner relation is empty (every
-- batch skipped) answers as PostgreSQL does
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT (SELECT count(*) FROM arrow_sorted s LEFT JOIN arrow_days d ON s.ymd = d.ymd AND d.quarter = 'Q2') AS left_rows,
       count(*), sum(s.val)
  FROM arrow_sorted s JOIN arrow_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q9';

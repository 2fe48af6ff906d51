-- The group filter: a serial GpuPreAgg that merges its chunks' groups
-- holds every group once after its last chunk, and evaluates a HAVING
-- clause of comparisons of aggregates with constants there, returning
-- only the groups that pass (PostgreSQL's Finalize Aggregate evaluates
-- the clause again).  Every answer is compared with pg_strom off; float
-- sums are compared rounded to 6 digits (the order of float additions
-- differs), and no constant lies near a float sum.
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET pg_strom.chunk_rows = 1000;
SET enable_sort = off;
-- the rows of q with pg_strom on, less those with pg_strom off, and back
CREATE FUNCTION ph_diff(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE 'CREATE TEMP TABLE ph_on AS ' || q;
  SET LOCAL pg_strom.enabled = off;
  EXECUTE 'CREATE TEMP TABLE ph_off AS ' || q;
  SET LOCAL pg_strom.enabled = on;
  EXECUTE 'SELECT count(*) FROM ((TABLE ph_on EXCEPT ALL TABLE ph_off) UNION ALL (TABLE ph_off EXCEPT ALL TABLE ph_on)) x' INTO n;
  DROP TABLE ph_on, ph_off;
  RETURN n;
END $$;
-- the GpuPreAgg's group filter and what it removed, from EXPLAIN ANALYZE
CREATE FUNCTION ph_filter(q text) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT regexp_replace(explain_masked, '^\s+', '')
    FROM explain_masked(q, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
   WHERE explain_masked ~ 'GpuPreAgg|Group Filter|Partial Groups|Spilled|Not Filtered'
$$;

-- order keys of four lines each in the table's physical order (TPC-H's
-- lineitem): every chunk's groups are its own, and one in eight orders
-- passes; numeric quantities with a NaN, NULL values, int2 and float
-- columns
CREATE TABLE ph_line (okey int8, qty numeric(15,2), price numeric, i2 int2, f8 float8, f4 float4, v int4)
  WITH (autovacuum_enabled = off);
INSERT INTO ph_line SELECT i / 4, CASE WHEN (i / 4) % 8 = 0 THEN 90 ELSE 1 + i % 50 END,
    CASE WHEN i = 4001 THEN 'NaN' WHEN i % 13 = 0 THEN NULL ELSE (i % 977) * 1.25 END,
    (i % 300 - 150)::int2, CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 41) * 0.5 END,
    (i % 7)::float4, CASE WHEN (i / 4) % 5 = 0 THEN NULL ELSE i % 1000 END
  FROM generate_series(0, 39999) i;
CREATE TABLE ph_orders AS SELECT i AS okey, 'cust' || i % 97 AS cust, i % 1000 AS total FROM generate_series(0, 9999) i;
ANALYZE ph_line, ph_orders;

-- TPC-H Q18's sub-query: the filter removes 7 groups in 8
SELECT ph_filter('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300');
SELECT ph_diff('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300');
-- and the whole query's shape: IN over the filtered groups
SELECT ph_diff($q$SELECT o.cust, o.okey, o.total, sum(l.qty) FROM ph_orders o JOIN ph_line l ON o.okey = l.okey
  WHERE o.okey IN (SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300)
  GROUP BY o.cust, o.okey, o.total$q$);
-- the constant first (commuted), several terms, each comparison
SELECT ph_filter('SELECT okey, count(*) FROM ph_line GROUP BY okey HAVING 300 < sum(qty) AND count(*) >= 4');
SELECT ph_diff('SELECT okey, count(*) FROM ph_line GROUP BY okey HAVING 300 < sum(qty) AND count(*) >= 4');
SELECT ph_filter('SELECT okey % 100 AS k, sum(v) FROM ph_line GROUP BY 1 HAVING sum(v) <= 200000');
SELECT ph_diff('SELECT okey % 100 AS k, sum(v) FROM ph_line GROUP BY 1 HAVING sum(v) <= 200000');
SELECT ph_diff('SELECT okey % 100 AS k, sum(v) FROM ph_line GROUP BY 1 HAVING sum(v) = 227800');
SELECT ph_diff('SELECT okey % 100 AS k, sum(v) FROM ph_line GROUP BY 1 HAVING sum(v) <> 227800 AND min(i2) < -140');
SELECT ph_diff('SELECT okey % 100 AS k, max(i2) FROM ph_line GROUP BY 1 HAVING max(i2) >= 149');
SELECT ph_diff('SELECT okey % 50 AS k, count(v) FROM ph_line GROUP BY 1 HAVING count(v) < 160');
-- NULL sums (every v of a key is NULL) fail every comparison
SELECT ph_diff('SELECT okey, sum(v) FROM ph_line GROUP BY okey HAVING sum(v) < 100000');
SELECT ph_diff('SELECT okey, sum(v) FROM ph_line GROUP BY okey HAVING sum(v) <> 0');
-- numeric sums with NaN (NaN is above everything, equal to NaN), numeric
-- max, int8 sums (numeric results)
SELECT ph_diff($q$SELECT okey % 500 AS k, sum(price) FROM ph_line GROUP BY 1 HAVING sum(price) > 20000$q$);
SELECT ph_diff($q$SELECT okey % 500 AS k, sum(price) FROM ph_line GROUP BY 1 HAVING sum(price) = 'NaN'$q$);
SELECT ph_diff($q$SELECT okey % 500 AS k, sum(price) FROM ph_line GROUP BY 1 HAVING sum(price) < 'Infinity'$q$);
-- (the min and max of a numeric(15,2) column: merged as scaled
-- integers)
SELECT ph_filter('SELECT okey % 500 AS k, max(qty) FROM ph_line GROUP BY 1 HAVING max(qty) > 50.5');
SELECT ph_diff('SELECT okey % 500 AS k, max(qty) FROM ph_line GROUP BY 1 HAVING max(qty) > 50.5');
SELECT ph_diff('SELECT okey % 500 AS k, min(qty), count(*) FROM ph_line GROUP BY 1 HAVING min(qty) <= 2');
SELECT ph_diff('SELECT okey % 500 AS k, sum(okey) FROM ph_line GROUP BY 1 HAVING sum(okey) > 400000');
-- NaN in a numeric(6,2) column: above every number for max, min only
-- where every value is NaN (group 7 all NaN, group 49 some)
CREATE TABLE ph_nan AS SELECT i % 50 AS g,
    (CASE WHEN i % 1000 = 999 OR i % 50 = 7 THEN 'NaN' ELSE (i % 1000) / 4.0 END)::numeric(6,2) AS x
  FROM generate_series(1, 20000) i;
ANALYZE ph_nan;
SELECT ph_diff('SELECT g, min(x), max(x), count(*) FROM ph_nan GROUP BY g');
SELECT ph_filter($q$SELECT g, min(x), max(x) FROM ph_nan GROUP BY g HAVING max(x) = 'NaN'$q$);
SELECT ph_diff($q$SELECT g, min(x), max(x) FROM ph_nan GROUP BY g HAVING max(x) = 'NaN'$q$);
SELECT ph_diff($q$SELECT g, min(x) FROM ph_nan GROUP BY g HAVING min(x) < 'NaN' AND min(x) >= 0.5$q$);
DROP TABLE ph_nan;
-- float sums and minimums
SELECT ph_filter('SELECT okey % 300 AS k, round(sum(f8)::numeric, 6) AS s FROM ph_line GROUP BY 1 HAVING sum(f8) > 1260.25');
SELECT ph_diff('SELECT okey % 300 AS k, round(sum(f8)::numeric, 6) AS s FROM ph_line GROUP BY 1 HAVING sum(f8) > 1260.25');
SELECT ph_diff('SELECT okey % 300 AS k, round(sum(f4)::numeric, 6) AS s FROM ph_line GROUP BY 1 HAVING sum(f4) >= 400.5');
SELECT ph_filter('SELECT okey, min(f8) FROM ph_line GROUP BY okey HAVING min(f8) < 5');
SELECT ph_diff('SELECT okey, min(f8) FROM ph_line GROUP BY okey HAVING min(f8) < 5');
-- over a join (the combined GpuJoin)
SELECT ph_diff($q$SELECT o.cust, count(*), sum(l.qty) FROM ph_line l JOIN ph_orders o ON o.okey = l.okey
  GROUP BY o.cust HAVING sum(l.qty) > 4000 AND count(*) > 400$q$);
-- another term (an expression, avg) in the clause: no filter, the same
-- answers
SELECT ph_filter('SELECT okey % 100 AS k FROM ph_line GROUP BY 1 HAVING sum(v) > 0 AND sum(v) % 2 = 0');
SELECT ph_diff('SELECT okey % 100 AS k FROM ph_line GROUP BY 1 HAVING sum(v) > 0 AND sum(v) % 2 = 0');
SELECT ph_diff('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300 AND avg(qty) > 0');
SELECT ph_diff('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) + 1 > 301');

-- a group whose state raises an error is kept, so that the error is
-- PostgreSQL's (here a float4 sum that overflows in a group the clause
-- would remove)
CREATE TABLE ph_big (g int, f float4);
INSERT INTO ph_big SELECT 1, 3e38 FROM generate_series(1, 3);
INSERT INTO ph_big SELECT 2, 1 FROM generate_series(1, 10);
ANALYZE ph_big;
SELECT * FROM explain_masked('SELECT g, count(*), sum(f) FROM ph_big GROUP BY g HAVING count(*) > 5')
  WHERE explain_masked ~ 'GpuPreAgg|Group Filter';
SELECT g, count(*), sum(f) FROM ph_big GROUP BY g HAVING count(*) > 5;
SET pg_strom.enabled = off;
SELECT g, count(*), sum(f) FROM ph_big GROUP BY g HAVING count(*) > 5;
RESET pg_strom.enabled;
-- (and a group it keeps)
SELECT g, count(*), sum(f) FROM ph_big GROUP BY g HAVING count(*) < 5;
SET pg_strom.enabled = off;
SELECT g, count(*), sum(f) FROM ph_big GROUP BY g HAVING count(*) < 5;
RESET pg_strom.enabled;

-- more groups than hash_mem holds (here 1,024): each full set of merged
-- groups is written to temporary files, partitioned by key; after the
-- last chunk each partition is read back, merged and filtered
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT ph_filter('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300');
SELECT ph_diff('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300');
SELECT ph_diff('SELECT okey, count(*), min(i2), sum(f8) FROM ph_line GROUP BY okey HAVING count(*) > 3 AND max(v) < 500');
-- a partition that outgrows hash_mem in turn (150,000 groups of two rows
-- 150,000 rows apart, 300,000 partial states in 128 partitions, where
-- ANALYZE was told of 1,000 groups) is returned unfiltered, in pieces of
-- what the merger holds: a group whose two states each fail the clause
-- but whose sum passes (k % 10 between 5 and 8) stays
CREATE TABLE ph_wide AS SELECT i % 150000 AS k, i % 10 AS v FROM generate_series(1, 300000) i;
ALTER TABLE ph_wide ALTER k SET (n_distinct = 1000);
ANALYZE ph_wide;
SELECT ph_filter('SELECT k FROM ph_wide GROUP BY k HAVING sum(v) > 8');
SELECT ph_diff('SELECT k FROM ph_wide GROUP BY k HAVING sum(v) > 8');
DROP TABLE ph_wide;
RESET work_mem;
RESET hash_mem_multiplier;

-- rescanned (the inner side of a nested loop, a parameter in its scan
-- quals): each scan filters its own groups
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT ph_diff($q$SELECT s.m, x.okey, x.n FROM (VALUES (1), (2), (3)) s(m),
  LATERAL (SELECT okey, count(*) AS n FROM ph_line WHERE ph_line.v % 3 = s.m - 1 GROUP BY okey HAVING count(*) >= 2) x$q$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a parallel plan: each process holds part of the groups, no filter
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT ph_diff('SELECT okey FROM ph_line GROUP BY okey HAVING sum(qty) > 300');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE ph_line, ph_orders, ph_big;
DROP FUNCTION ph_diff(text), ph_filter(text);

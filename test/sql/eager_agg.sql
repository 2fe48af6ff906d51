-- Aggregation below joins (pg_strom.enable_eager_aggregate): the tables the
-- aggregates read grouped first by the columns the rest of the query reads,
-- then joined with the other tables.  Which shapes are rewritten, which are
-- not, and the same rows either way (same_as_off, test/sql/setup.sql:
-- pg_strom off plans the query as written).  pg_strom.debug_prefer_rewrites
-- keeps the rewritten plan whatever it costs, so every shape's answer is
-- tested, not only those the costs pick.
SET pg_strom.debug_prefer_rewrites = on;
CREATE TABLE ea_f (id int, k int, c int, n numeric(10,2), q int, i8 int8, f float8,
                   t text COLLATE "C", d date, nv numeric, big int8);
INSERT INTO ea_f
SELECT i,
       CASE WHEN i % 97 = 0 THEN NULL ELSE i % 300 END,
       i % 11,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i % 1000) / 10.0 END,
       CASE WHEN i % 83 = 0 THEN NULL ELSE i % 50 END,
       i % 13,
       i / 7.0,
       CASE WHEN i % 79 = 0 THEN NULL ELSE 'tag ' || (i % 40) || ' ü' END,
       date '2020-01-01' + (i % 700),
       (i % 30)::numeric / (1 + i % 3),
       9223372036854775000
  FROM generate_series(1, 6000) i;
-- a dimension keyed by k (unique), one whose c repeats (joins repeat rows)
CREATE TABLE ea_d1 (k int PRIMARY KEY, name text, grp int, label varchar(20) COLLATE "C");
INSERT INTO ea_d1 SELECT i, 'customer ' || i, i % 7, 'tag ' || (i % 45) || ' ü' FROM generate_series(0, 250) i;
CREATE TABLE ea_d2 (c int, region char(6), w int);
INSERT INTO ea_d2 SELECT i % 9, 'r' || (i % 4), i FROM generate_series(1, 20) i;
ANALYZE ea_f, ea_d1, ea_d2;

-- Was the query rewritten?  Its plan differs from the one with the setting
-- off (the grouped sub-query's scan is often removed from the plan, so its
-- name need not show).
CREATE FUNCTION ea_rewritten(q text) RETURNS bool LANGUAGE sql AS $$ SELECT plan_needs('pg_strom.enable_eager_aggregate', q) $$;

-- TPC-H Q10's shape: the plan groups the fact table first
SELECT * FROM explain_masked('SELECT d1.k, d1.name, sum(f.n * (1 - f.q / 100.0)) AS rev FROM ea_f f, ea_d1 d1, ea_d2 d2 WHERE f.k = d1.k AND d1.grp = d2.c AND f.q > 3 GROUP BY d1.k, d1.name ORDER BY rev DESC, d1.k LIMIT 5');
SELECT d1.k, d1.name, sum(f.n * (1 - f.q / 100.0)) AS rev FROM ea_f f, ea_d1 d1, ea_d2 d2 WHERE f.k = d1.k AND d1.grp = d2.c AND f.q > 3 GROUP BY d1.k, d1.name ORDER BY rev DESC, d1.k LIMIT 5;

SELECT ea_rewritten(q), same_as_off(q) FROM (VALUES
  -- TPC-H Q10's shape (a join that repeats rows: ea_d2's c repeats)
  ('SELECT d1.k, d1.name, d2.region, sum(f.n * (1 - f.q / 100.0)) AS rev FROM ea_f f, ea_d1 d1, ea_d2 d2 WHERE f.k = d1.k AND d1.grp = d2.c AND f.q > 3 GROUP BY d1.k, d1.name, d2.region'),
  -- every aggregate kind: count(*), count(x) with NULLs, sum of int4
  -- (int8), of int8 past 2^63 (numeric), of numeric, avg of int and
  -- numeric, min/max of text (its collation), dates and numerics
  ('SELECT d2.region, count(*) a1, count(f.n) a2, sum(f.q) a3, sum(f.big) a4, sum(f.n) a5, avg(f.q) a6, avg(f.n) a7, avg(f.i8) a8, min(f.t) a9, max(f.t) a10, min(f.d) a11, max(f.n) a12 FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY d2.region'),
  -- FILTER goes with the partial aggregate (a group whose rows all fail
  -- it: count 0, sum NULL)
  ('SELECT d2.w, count(*) FILTER (WHERE f.q > 45) a1, sum(f.n) FILTER (WHERE f.q > 48) a2, avg(f.q) FILTER (WHERE f.id < 0) a3 FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY d2.w'),
  -- HAVING on an aggregate, ORDER BY an aggregate, LIMIT
  ('SELECT d1.grp, sum(f.n) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp HAVING sum(f.n) > 10000 AND count(*) > 5'),
  ('SELECT d1.label, count(f.id) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.label ORDER BY count(f.id) DESC, d1.label LIMIT 7'),
  -- no GROUP BY; and over no rows (count 0, the others NULL)
  ('SELECT count(*) a1, sum(f.q) a2, avg(f.n) a3, max(f.t) a4 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND d1.grp = 3'),
  ('SELECT count(*) a1, count(f.n) a2, sum(f.q) a3, avg(f.n) a4, max(f.t) a5 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND d1.grp = -1'),
  -- columns of the grouped table outside the aggregates: grouped by, in
  -- an expression, in a join condition that is no equality, output
  ('SELECT f.k, d1.name, sum(f.n) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY f.k, d1.name'),
  ('SELECT extract(year FROM f.d) AS y, d2.region, sum(f.q) FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY 1, 2'),
  ('SELECT d2.region, sum(f.n) FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c AND f.q < d2.w GROUP BY d2.region'),
  -- text keys (a deterministic collation), char(n), multibyte
  ('SELECT d1.grp, sum(f.q) a1, count(*) a2 FROM ea_f f, ea_d1 d1 WHERE f.t = d1.label GROUP BY d1.grp'),
  -- aggregates over two tables grouped first, a third joined after
  ('SELECT d2.region, sum(f.n * d1.grp) a1, max(d1.name) a2 FROM ea_f f, ea_d1 d1, ea_d2 d2 WHERE f.k = d1.k AND f.c = d2.c GROUP BY d2.region'),
  -- a condition of no table, and one of the grouped table alone
  ('SELECT d2.region, sum(f.q) FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c AND f.n > 20 AND 1 = 1 GROUP BY d2.region'),
  -- count(*) alone: the largest table grouped first
  ('SELECT d1.grp, count(*) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp'),
  ('SELECT d2.region, count(*) FROM ea_f f, ea_d1 d1, ea_d2 d2 WHERE f.k = d1.k AND f.c = d2.c GROUP BY d2.region'),
  -- DISTINCT above the aggregation
  ('SELECT DISTINCT d1.grp, count(f.id) > 10 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp, d1.k')
) v(q);

-- Groups of one joined row: where the grouping keys give the grouped
-- sub-query's keys and a unique, non-null key of every other table, no
-- aggregation is left above the join (the plan: none above the Hash Join)
CREATE TABLE ea_d3 (u int UNIQUE, x int, v int NOT NULL UNIQUE);
INSERT INTO ea_d3 SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE i END, i % 11, i FROM generate_series(1, 30) i;
-- unique only where k > 0 (a partial index): k = 0 repeats
CREATE TABLE ea_d4 (k int NOT NULL, x int);
CREATE UNIQUE INDEX ea_d4_k ON ea_d4 (k) WHERE k > 0;
INSERT INTO ea_d4 SELECT i % 8, i FROM generate_series(1, 7) i;
INSERT INTO ea_d4 VALUES (0, 100), (0, 200);
ANALYZE ea_d3, ea_d4;
SELECT * FROM explain_masked('SELECT d1.k, d1.name, sum(f.n) AS s, avg(f.q) AS a FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND f.q > 3 GROUP BY d1.k, d1.name HAVING count(f.n) > 10 ORDER BY s DESC, d1.k LIMIT 5');
SELECT d1.k, d1.name, sum(f.n) AS s, avg(f.q) AS a FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND f.q > 3 GROUP BY d1.k, d1.name HAVING count(f.n) > 10 ORDER BY s DESC, d1.k LIMIT 5;
SELECT ea_rewritten(q), same_as_off(q) FROM (VALUES
  -- every aggregate kind over one row; HAVING a condition of the row
  ('SELECT d1.k, d1.name, count(*) a1, count(f.n) a2, sum(f.q) a3, sum(f.big) a4, sum(f.n) a5, avg(f.q) a6, avg(f.n) a7, min(f.t) a8, max(f.d) a9 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.k, d1.name HAVING sum(f.q) > 100 OR min(f.t) < ''tag 2'''),
  -- a FILTER that no row of some groups passes
  ('SELECT d1.k, count(*) FILTER (WHERE f.q > 45) a1, sum(f.n) FILTER (WHERE f.q > 48) a2, avg(f.n) FILTER (WHERE f.q > 48) a3 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.k'),
  -- through a chain of keys: d1.k gives d1.grp, the NOT NULL unique v
  ('SELECT d1.k, d3.x, sum(f.q) a1 FROM ea_f f, ea_d1 d1, ea_d3 d3 WHERE f.k = d1.k AND d1.grp = d3.v GROUP BY d1.k, d3.x'),
  -- a unique key that may be NULL (several NULL rows in one group) and a
  -- grouping key that gives nothing: the aggregation stays
  ('SELECT d3.u, sum(f.q) a1, count(f.id) a2 FROM ea_f f, ea_d3 d3 WHERE f.c = d3.x GROUP BY d3.u'),
  ('SELECT d1.name, sum(f.q) a1 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.name'),
  -- a unique index with a predicate (k = 0 twice): the aggregation stays
  ('SELECT d4.k, sum(f.q) a1, count(*) a2 FROM ea_f f, ea_d4 d4 WHERE f.c = d4.k GROUP BY d4.k'),
  -- the grouped table's own key in the GROUP BY
  ('SELECT f.k, d1.name, sum(f.n) a1 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY f.k, d1.name')
) v(q);

-- Shapes kept as written (not rewritten; the same rows)
SELECT ea_rewritten(q), same_as_off(q) FROM (VALUES
  -- a float key (0 = -0), a numeric key of no declared scale (1.0 = 1.00)
  ('SELECT d2.region, sum(f.q) FROM ea_f f, ea_d2 d2 WHERE f.f > d2.w GROUP BY d2.region'),
  ('SELECT d2.region, sum(f.q) FROM ea_f f, ea_d2 d2 WHERE f.nv = d2.w GROUP BY d2.region'),
  -- an aggregate over both sides, DISTINCT or ORDER BY in an aggregate
  ('SELECT d2.region, sum(f.q * d2.w) FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY d2.region'),
  ('SELECT d2.region, count(DISTINCT f.q) FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY d2.region'),
  ('SELECT d2.region, string_agg(f.t, '','' ORDER BY f.id) IS NULL FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY d2.region'),
  -- an aggregate pg_strom does not combine (a float sum is; the variance
  -- family is not)
  ('SELECT d2.region, round(stddev(f.q), 6) FROM ea_f f, ea_d2 d2 WHERE f.c = d2.c GROUP BY d2.region'),
  -- an outer join, a sub-link, one table
  ('SELECT d1.grp, sum(f.q) FROM ea_f f LEFT JOIN ea_d1 d1 ON f.k = d1.k GROUP BY d1.grp'),
  ('SELECT d1.grp, sum(f.q) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND f.c IN (SELECT c FROM ea_d2) GROUP BY d1.grp'),
  ('SELECT c, sum(q) FROM ea_f GROUP BY c')
) v(q);
-- one table grouped by its own unique key (a group per row): not planned
SELECT ea_rewritten('SELECT f.c, max(d1.name), count(d1.grp) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY f.c');
-- a key equated with a unique column of a table that has more than twice
-- the rows ANALYZE counted distinct values in the key (set here; a
-- foreign key stored in its referenced key's order is counted so): not
-- grouped first, its groups cannot be priced; with the count reset, it is
ALTER TABLE ea_f ALTER COLUMN k SET (n_distinct = 100);
ANALYZE ea_f;
SELECT ea_rewritten('SELECT d1.grp, sum(f.q) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp');
ALTER TABLE ea_f ALTER COLUMN k RESET (n_distinct);
ANALYZE ea_f;
SELECT ea_rewritten('SELECT d1.grp, sum(f.q) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp');
-- a volatile condition or aggregate argument: not rewritten (the plans
-- only)
SELECT ea_rewritten('SELECT d1.grp, sum(f.q) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND random() < 2 GROUP BY d1.grp');
SELECT ea_rewritten('SELECT d1.grp, sum(f.q * random()) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp');
-- the setting off: not rewritten
SET pg_strom.enable_eager_aggregate = off;
SELECT ea_rewritten('SELECT d1.grp, sum(f.q) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp');
RESET pg_strom.enable_eager_aggregate;

-- a parameter, custom and generic plans
PREPARE ea_p(int) AS SELECT d1.grp, sum(f.n) a1, count(*) a2 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND f.q > $1 GROUP BY d1.grp;
CREATE TEMP TABLE ea_p_off AS SELECT d1.grp, sum(f.n) a1, count(*) a2 FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k AND f.q > 20 GROUP BY d1.grp;
SET plan_cache_mode = force_custom_plan;
CREATE TEMP TABLE ea_p_custom AS EXECUTE ea_p(20);
SELECT ea_rewritten('EXECUTE ea_p(20)');
SET plan_cache_mode = force_generic_plan;
-- (the generic plan is cached: planned once, rewritten, with either value
-- of the setting; its rows are compared below)
CREATE TEMP TABLE ea_p_generic AS EXECUTE ea_p(20);
RESET plan_cache_mode;
SELECT (SELECT count(*) FROM ea_p_off) AS n,
       (SELECT count(*) FROM (TABLE ea_p_custom EXCEPT ALL TABLE ea_p_off) d) + (SELECT count(*) FROM (TABLE ea_p_off EXCEPT ALL TABLE ea_p_custom) d) AS custom_differ,
       (SELECT count(*) FROM (TABLE ea_p_generic EXCEPT ALL TABLE ea_p_off) d) + (SELECT count(*) FROM (TABLE ea_p_off EXCEPT ALL TABLE ea_p_generic) d) AS generic_differ;

-- by cost alone (the setting for tests off), TPC-H Q10's shape over
-- few rows keeps its plan as written: a second planning costs more than
-- it could save
RESET pg_strom.debug_prefer_rewrites;
SELECT ea_rewritten('SELECT d1.k, d1.name, sum(f.n) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.k, d1.name');

-- privileges of the grouped tables are still checked
CREATE ROLE ea_reader;
GRANT SELECT ON ea_d1 TO ea_reader;
SET pg_strom.debug_prefer_rewrites = on;
SET ROLE ea_reader;
SELECT d1.grp, sum(f.q) FROM ea_f f, ea_d1 d1 WHERE f.k = d1.k GROUP BY d1.grp;
RESET ROLE;
RESET pg_strom.debug_prefer_rewrites;

DEALLOCATE ea_p;
DROP TABLE ea_f, ea_d1, ea_d2, ea_d3, ea_d4, ea_p_off, ea_p_custom, ea_p_generic;
DROP ROLE ea_reader;
DROP FUNCTION ea_rewritten(text);

-- Aggregates over DISTINCT values planned with the duplicates removed by a
-- grouping first (pg_strom.enable_distinct_grouping): which shapes are
-- rewritten, which are not, and the same rows either way (same_as_off,
-- test/sql/setup.sql).  pg_strom.debug_prefer_rewrites keeps the
-- rewritten plan whatever it costs, so every shape's answer is tested.
SET pg_strom.debug_prefer_rewrites = on;
CREATE TABLE ds_f (id int PRIMARY KEY, g int, h int, x int, n numeric, n2 numeric(8,2), t text COLLATE "C", d date);
INSERT INTO ds_f
SELECT i,
       CASE WHEN i % 101 = 0 THEN NULL ELSE i % 13 END,
       i % 3,
       CASE WHEN i % 37 = 0 THEN NULL ELSE (i * 7) % 50 END,
       -- 1.0 and 1.00 are equal: DISTINCT counts them once
       CASE WHEN i % 2 = 0 THEN (i % 5)::numeric ELSE round((i % 5)::numeric, 2) END,
       (i % 40) / 4.0,
       CASE WHEN i % 29 = 0 THEN NULL ELSE 'v ' || (i % 17) || ' ü' END,
       date '2024-01-01' + (i % 45)
  FROM generate_series(1, 4000) i;
CREATE TABLE ds_d (g int, name text);
INSERT INTO ds_d SELECT i, 'group ' || i FROM generate_series(0, 12) i;
CREATE TABLE ds_empty (g int, x int);
ANALYZE ds_f, ds_d, ds_empty;
CREATE VIEW ds_view AS SELECT d.name, count(DISTINCT f.t) c FROM ds_f f JOIN ds_d d ON d.g = f.g GROUP BY d.name;

-- Was the query rewritten?  Its plan differs from the one with the setting
-- off.
CREATE FUNCTION ds_rewritten(q text) RETURNS bool LANGUAGE sql AS $$ SELECT plan_needs('pg_strom.enable_distinct_grouping', q) $$;

-- TPC-H Q16's shape: the duplicates removed by a grouping, counted above
SELECT * FROM explain_masked('SELECT d.name, f.h, count(DISTINCT f.x) AS c FROM ds_f f, ds_d d WHERE f.g = d.g AND f.id % 7 <> 0 GROUP BY d.name, f.h ORDER BY c DESC, d.name, f.h');

SELECT ds_rewritten(q), same_as_off(q) FROM (VALUES
  -- NULL keys and values, a sub-query in WHERE (TPC-H Q16)
  ('SELECT d.name, f.h, count(DISTINCT f.x) FROM ds_f f, ds_d d WHERE f.g = d.g AND f.x NOT IN (SELECT id FROM ds_f WHERE id % 7 = 0) GROUP BY d.name, f.h'),
  ('SELECT g, count(DISTINCT x) FROM ds_f GROUP BY g'),
  -- no GROUP BY; over no rows (one row, 0)
  ('SELECT count(DISTINCT x) FROM ds_f'),
  ('SELECT count(DISTINCT x) FROM ds_empty'),
  ('SELECT g, count(DISTINCT x) FROM ds_empty GROUP BY g'),
  -- an expression as key and as argument, two aggregates of one argument
  ('SELECT g % 4, h, count(DISTINCT x % 10), min(DISTINCT x % 10) FROM ds_f GROUP BY g % 4, h'),
  -- sum, avg, min, max of DISTINCT integers, dates, numeric(p,s), text
  ('SELECT h, sum(DISTINCT x), avg(DISTINCT x), min(DISTINCT x), max(DISTINCT x) FROM ds_f GROUP BY h'),
  ('SELECT g, count(DISTINCT d), min(DISTINCT d), max(DISTINCT d) FROM ds_f GROUP BY g'),
  ('SELECT h, sum(DISTINCT n2), avg(DISTINCT n2) FROM ds_f GROUP BY h'),
  ('SELECT h, count(DISTINCT t), max(DISTINCT t) FROM ds_f GROUP BY h'),
  -- count of DISTINCT numerics of no declared scale: 1.0 = 1.00
  ('SELECT h, count(DISTINCT n) FROM ds_f GROUP BY h'),
  -- HAVING, ORDER BY, LIMIT, DISTINCT above, an explicit JOIN
  ('SELECT g, count(DISTINCT x) c FROM ds_f GROUP BY g HAVING count(DISTINCT x) > 30 ORDER BY c, g LIMIT 5'),
  ('SELECT DISTINCT count(DISTINCT x) FROM ds_f GROUP BY g'),
  ('SELECT d.name, count(DISTINCT f.t) FROM ds_f f JOIN ds_d d ON d.g = f.g WHERE f.h = 1 GROUP BY d.name'),
  -- ORDER BY inside the aggregate (of its argument)
  ('SELECT h, count(DISTINCT x ORDER BY x) FROM ds_f GROUP BY h'),
  -- other aggregates beside them, combined from partial ones per (g, x):
  -- count(*), sum, avg, min, max, a FILTER, HAVING on one of them
  ('SELECT g, count(DISTINCT x) a, count(*) b, sum(id) c, avg(n2) d, min(t) e, max(d) f, sum(n2) FILTER (WHERE h = 1) i FROM ds_f GROUP BY g'),
  ('SELECT h, count(DISTINCT t) a, count(x) b, avg(x) c FROM ds_f GROUP BY h HAVING count(*) > 1300'),
  ('SELECT count(DISTINCT x) a, count(*) b, sum(n) c FROM ds_f'),
  ('SELECT count(DISTINCT x) a, count(*) b FROM ds_empty'),
  -- in a sub-query in FROM, and in a view
  ('SELECT * FROM (SELECT g, count(DISTINCT x) c FROM ds_f GROUP BY g) s WHERE c > 10'),
  ('SELECT * FROM ds_view WHERE c > 3')
) v(q);
-- the rows themselves (the same as pg_strom off above)
SELECT g, count(DISTINCT x), count(DISTINCT n) FROM ds_f GROUP BY g ORDER BY g;

-- Not rewritten (the same rows)
SELECT ds_rewritten(q), same_as_off(q) FROM (VALUES
  -- beside an aggregate that does not combine from partial ones, two
  -- DISTINCT arguments, FILTER on a DISTINCT aggregate
  ('SELECT g, count(DISTINCT x) a, round(stddev(id), 6) b FROM ds_f GROUP BY g'),
  ('SELECT g, count(DISTINCT x) a, count(DISTINCT h) b FROM ds_f GROUP BY g'),
  -- below a WITH clause
  ('WITH w AS (SELECT * FROM ds_f WHERE h = 1) SELECT * FROM (SELECT g, count(DISTINCT x) FROM w GROUP BY g) s'),
  ('SELECT g, count(DISTINCT x) FILTER (WHERE h = 1) FROM ds_f GROUP BY g'),
  -- sum of DISTINCT numerics of no declared scale (1.0 or 1.00 would be
  -- summed), an aggregate pg_strom does not take
  ('SELECT h, sum(DISTINCT n) FROM ds_f GROUP BY h'),
  ('SELECT h, string_agg(DISTINCT t, '','' ORDER BY t) FROM ds_f GROUP BY h'),
  -- a column read beside its table's primary key, a sub-query in the
  -- target list, a window function, grouping sets
  ('SELECT id, g, count(DISTINCT x) FROM ds_f GROUP BY id'),
  ('SELECT g, count(DISTINCT x) a, (SELECT count(*) FROM ds_d) b FROM ds_f GROUP BY g'),
  ('SELECT g, count(DISTINCT x), rank() OVER (ORDER BY g) FROM ds_f GROUP BY g'),
  ('SELECT g, h, count(DISTINCT x) FROM ds_f GROUP BY GROUPING SETS ((g), (h))')
) v(q);
-- a volatile function (the plan only)
SELECT ds_rewritten('SELECT g, count(DISTINCT x) FROM ds_f WHERE random() < 2 GROUP BY g');
-- the setting off
SET pg_strom.enable_distinct_grouping = off;
SELECT ds_rewritten('SELECT g, count(DISTINCT x) FROM ds_f GROUP BY g');
RESET pg_strom.enable_distinct_grouping;

-- a parameter, custom and generic plans
PREPARE ds_p(int) AS SELECT g, count(DISTINCT x) FROM ds_f WHERE h = $1 GROUP BY g;
CREATE TEMP TABLE ds_p_off AS SELECT g, count(DISTINCT x) FROM ds_f WHERE h = 1 GROUP BY g;
SET plan_cache_mode = force_custom_plan;
CREATE TEMP TABLE ds_p_custom AS EXECUTE ds_p(1);
SET plan_cache_mode = force_generic_plan;
CREATE TEMP TABLE ds_p_generic AS EXECUTE ds_p(1);
RESET plan_cache_mode;
SELECT (SELECT count(*) FROM ds_p_off) AS n,
       (SELECT count(*) FROM (TABLE ds_p_custom EXCEPT ALL TABLE ds_p_off) d) + (SELECT count(*) FROM (TABLE ds_p_off EXCEPT ALL TABLE ds_p_custom) d) AS custom_differ,
       (SELECT count(*) FROM (TABLE ds_p_generic EXCEPT ALL TABLE ds_p_off) d) + (SELECT count(*) FROM (TABLE ds_p_off EXCEPT ALL TABLE ds_p_generic) d) AS generic_differ;

-- privileges are still checked
CREATE ROLE ds_reader;
GRANT SELECT ON ds_d TO ds_reader;
SET ROLE ds_reader;
SELECT g, count(DISTINCT x) FROM ds_f GROUP BY g;
RESET ROLE;
RESET pg_strom.debug_prefer_rewrites;

-- Without pg_strom.debug_prefer_rewrites: a rewritten plan that removes
-- the duplicates by PostgreSQL's own hash aggregate (here no GpuPreAgg
-- may group them) must cost a tenth of the plan as written, whose sort
-- PostgreSQL prices in full, while it prices hashing wide keys as if they
-- were integers; at half the cost the plan as written is kept.  (A low
-- gpu_setup_cost: a query costing less than 100 of it is planned once.)
SET pg_strom.gpu_setup_cost = 1;
SET pg_strom.enable_gpupreagg = off;
SELECT ds_rewritten('SELECT d.name, f.h, count(DISTINCT f.x) AS c FROM ds_f f, ds_d d WHERE f.g = d.g AND f.id % 7 <> 0 GROUP BY d.name, f.h ORDER BY c DESC, d.name, f.h');
SET pg_strom.debug_prefer_rewrites = on;
SELECT ds_rewritten('SELECT d.name, f.h, count(DISTINCT f.x) AS c FROM ds_f f, ds_d d WHERE f.g = d.g AND f.id % 7 <> 0 GROUP BY d.name, f.h ORDER BY c DESC, d.name, f.h');
RESET pg_strom.debug_prefer_rewrites;
RESET pg_strom.enable_gpupreagg;
RESET pg_strom.gpu_setup_cost;

DEALLOCATE ds_p;
DROP VIEW ds_view;
DROP TABLE ds_f, ds_d, ds_empty, ds_p_off, ds_p_custom, ds_p_generic;
DROP ROLE ds_reader;
DROP FUNCTION ds_rewritten(text);

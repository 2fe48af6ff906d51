-- x NOT IN (SELECT y ...) planned as NOT EXISTS, an anti-join, where
-- neither side can be NULL (pg_strom.enable_not_in_anti_join): which
-- shapes are rewritten, which keep PostgreSQL's sub-plan, and the same
-- rows either way (same_as_off, test/sql/setup.sql).
CREATE TABLE ni_o (id int PRIMARY KEY, k int NOT NULL, kn int, t text COLLATE "C" NOT NULL, v varchar(8) NOT NULL, n numeric(6,2) NOT NULL);
INSERT INTO ni_o
SELECT i, i % 50, CASE WHEN i % 7 = 0 THEN NULL ELSE i % 50 END,
       'k' || (i % 30), 'k' || (i % 20), (i % 40) / 4.0
  FROM generate_series(1, 3000) i;
CREATE TABLE ni_s (k int NOT NULL, kn int, t text COLLATE "C" NOT NULL, n numeric(8,3) NOT NULL, f int);
INSERT INTO ni_s
SELECT i, CASE WHEN i = 12 THEN NULL ELSE i END, 'k' || i, i / 4.0, (i / 3) % 3
  FROM generate_series(0, 60, 3) i;
CREATE TABLE ni_empty (k int NOT NULL);
-- a NOT NULL constraint not validated (from PostgreSQL 18): its rows
-- may hold NULL
CREATE TABLE ni_unchecked (k int);
INSERT INTO ni_unchecked VALUES (3), (NULL);
DO $$ BEGIN
  IF current_setting('server_version_num')::int >= 180000 THEN
    EXECUTE 'ALTER TABLE ni_unchecked ADD CONSTRAINT ni_unchecked_k NOT NULL k NOT VALID';
  END IF;
END $$;
-- a parent: a child's rows are read too
CREATE TABLE ni_parent (k int NOT NULL);
CREATE TABLE ni_child () INHERITS (ni_parent);
INSERT INTO ni_child VALUES (3), (6);
ANALYZE ni_o, ni_s, ni_empty, ni_unchecked, ni_parent, ni_child;

CREATE FUNCTION ni_rewritten(q text) RETURNS bool LANGUAGE sql AS $$ SELECT plan_needs('pg_strom.enable_not_in_anti_join', q) $$;

-- TPC-H Q16's shape: an anti-join
SELECT * FROM explain_masked('SELECT count(*) FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s WHERE f = 1)');

SELECT ni_rewritten(q), same_as_off(q) FROM (VALUES
  -- rewritten: NOT NULL columns on both sides
  ('SELECT id, k FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s WHERE f = 1)'),
  ('SELECT k, count(*) FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s) GROUP BY k'),
  -- over an empty sub-query: every row
  ('SELECT count(*) FROM ni_o WHERE k NOT IN (SELECT k FROM ni_empty)'),
  -- text with a collation, varchar against text, numeric of other scales
  ('SELECT id FROM ni_o WHERE t NOT IN (SELECT t FROM ni_s)'),
  ('SELECT id FROM ni_o WHERE v NOT IN (SELECT t FROM ni_s)'),
  ('SELECT id FROM ni_o WHERE n NOT IN (SELECT n FROM ni_s)'),
  -- a join in the sub-query, a correlated sub-query, a join outside
  ('SELECT id FROM ni_o o WHERE k NOT IN (SELECT s.k FROM ni_s s JOIN ni_s s2 ON s2.k = s.k + 3)'),
  ('SELECT id FROM ni_o o WHERE k NOT IN (SELECT s.k FROM ni_s s WHERE s.f = o.id % 3)'),
  ('SELECT o.id FROM ni_o o JOIN ni_o p ON p.id = o.id + 1 WHERE o.k NOT IN (SELECT k FROM ni_s)'),
  ('SELECT o.id FROM ni_o o LEFT JOIN ni_s s ON s.k = o.id WHERE o.k NOT IN (SELECT k FROM ni_s)'),
  -- two of them, and one inside a sub-query in FROM
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s) AND t NOT IN (SELECT t FROM ni_s WHERE f = 0)'),
  ('SELECT count(*) FROM (SELECT id FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s)) x'),
  -- kept: a nullable column on either side (NULL NOT IN: no row; a NULL
  -- in the sub-query: no row)
  ('SELECT id FROM ni_o WHERE kn NOT IN (SELECT k FROM ni_s)'),
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT kn FROM ni_s)'),
  ('SELECT count(*) FROM ni_o WHERE kn NOT IN (SELECT k FROM ni_empty)'),
  -- kept: the nullable side of an outer join, outside and inside
  ('SELECT o.id FROM ni_o o LEFT JOIN ni_o p ON p.id = o.id + 2990 WHERE p.k NOT IN (SELECT k FROM ni_s)'),
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT s2.k FROM ni_s s LEFT JOIN ni_s s2 ON s2.k = s.k + 3)'),
  -- kept: a NOT VALID constraint, a table with a child, an expression
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT k FROM ni_unchecked)'),
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT k FROM ni_parent)'),
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT k + 1 FROM ni_s)'),
  ('SELECT id FROM ni_o WHERE k + 0 NOT IN (SELECT k FROM ni_s)'),
  -- kept: grouping, DISTINCT, LIMIT in the sub-query; NOT IN under OR
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s GROUP BY k)'),
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT DISTINCT k FROM ni_s)'),
  ('SELECT id FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s ORDER BY k LIMIT 5)'),
  ('SELECT id FROM ni_o WHERE id < 10 OR k NOT IN (SELECT k FROM ni_s)')
) v(q);

-- A query that is not cheap (a low gpu_setup_cost makes each here count
-- as costly) is planned rewritten and as written, and the cheaper plan is
-- kept: the anti-join's join order can be the worse one (with one below,
-- the sub-plan filters the rows an index scan returns).
CREATE FUNCTION ni_costs(q text, OUT written float8, OUT anti float8, OUT kept float8) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('pg_strom.enable_not_in_anti_join', 'off', true);
  written := plan_cost(q);
  PERFORM set_config('pg_strom.enable_not_in_anti_join', 'on', true);
  PERFORM set_config('pg_strom.debug_prefer_rewrites', 'on', true);
  anti := plan_cost(q);
  PERFORM set_config('pg_strom.debug_prefer_rewrites', 'off', true);
  kept := plan_cost(q);
END $$;
SET pg_strom.gpu_setup_cost = 0.01;
SELECT bool_and(kept = least(written, anti)) AS cheaper_kept,
       bool_or(written < anti) AS some_kept_as_written,
       bool_or(anti < written) AS some_rewritten
  FROM (SELECT (ni_costs(q)).* FROM (VALUES
    ('SELECT count(*) FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s WHERE f = 1)'),
    ('SELECT id FROM ni_o WHERE t NOT IN (SELECT t FROM ni_s)'),
    ('SELECT o.id FROM ni_o o JOIN ni_o p ON p.id = o.id + 1 WHERE o.k NOT IN (SELECT k FROM ni_s)'),
    ('SELECT id FROM ni_o WHERE id < 100 AND n NOT IN (SELECT n FROM ni_s)')) v(q)) c;
RESET pg_strom.gpu_setup_cost;
DROP FUNCTION ni_costs(text);

-- the setting off: PostgreSQL's sub-plan
SET pg_strom.enable_not_in_anti_join = off;
SELECT bool_or(e ~ 'SubPlan') AS sub_plan, bool_or(e ~ 'Anti Join') AS anti_join
  FROM explain_masked('SELECT count(*) FROM ni_o WHERE k NOT IN (SELECT k FROM ni_s WHERE f = 1)') e;
RESET pg_strom.enable_not_in_anti_join;

DROP FUNCTION ni_rewritten(text);
DROP TABLE ni_o, ni_s, ni_empty, ni_unchecked, ni_child, ni_parent;

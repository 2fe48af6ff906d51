-- Correlated scalar aggregate sub-queries planned as a join with a grouped
-- sub-query (pg_strom.enable_decorrelation): which shapes are rewritten,
-- which are not, and the same rows either way (compared with pg_strom off,
-- which plans the sub-query once per outer row).  No index on the inner
-- table: each sub-plan call scans it, so the grouped form costs less.
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
CREATE TABLE dc_i (k int, k2 int, y numeric(10,2), z int8, n int, f float8, t text COLLATE "C", big int8);
INSERT INTO dc_i
SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE i % 500 END, i % 7,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i % 1000) / 10.0 END,
       i % 13, i % 50, i / 3.0, 'key ' || (i % 300), 9223372036854775000
  FROM generate_series(1, 5000) i;
CREATE TABLE dc_o (id int, k int, k2 int, x numeric(10,2), t text COLLATE "C", k8 int8);
INSERT INTO dc_o
SELECT i, CASE WHEN i % 53 = 0 THEN NULL ELSE i % 600 END, i % 9, (i % 700) / 10.0, 'key ' || (i % 400), i % 600
  FROM generate_series(1, 800) i;
ANALYZE dc_i, dc_o;
CREATE VIEW dc_view AS
  SELECT id, x FROM dc_o WHERE x > (SELECT 0.5 * avg(y) FROM dc_i WHERE dc_i.k2 = dc_o.k2 AND dc_i.k = dc_o.k);

-- Was the query rewritten (the grouped sub-query in its plan)?  (The same
-- rows as with pg_strom off: same_as_off, test/sql/setup.sql.)
CREATE FUNCTION dc_rewritten(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE ln text; found bool := false;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    found := found OR ln LIKE '%pgstrom_grouped%';
  END LOOP;
  RETURN found;
END $$;

-- TPC-H Q17's shape: rewritten, and the plan shows the grouped sub-query
SELECT * FROM explain_masked('SELECT id FROM dc_o WHERE x < (SELECT 0.2 * avg(y) FROM dc_i WHERE dc_i.k = dc_o.k)');
SELECT dc_rewritten(q), same_as_off(q) FROM (VALUES
  -- avg, NULL keys on both sides, keys without inner rows
  ('SELECT id FROM dc_o WHERE x < (SELECT 0.2 * avg(y) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  -- two keys (either order) and a qual of the sub-query's own
  ('SELECT id, x FROM dc_o WHERE x > (SELECT 0.5 * sum(y) FROM dc_i WHERE dc_i.k = dc_o.k AND dc_o.k2 = dc_i.k2 AND dc_i.z > 5)'),
  -- min with =, the outer column on the left
  ('SELECT id FROM dc_o WHERE x = (SELECT min(y) FROM dc_i WHERE dc_o.k = dc_i.k)'),
  -- a text key with its collation; max
  ('SELECT id FROM dc_o WHERE x <= (SELECT max(y) FROM dc_i WHERE dc_i.t = dc_o.t)'),
  -- inside an IN sub-query (TPC-H Q20's shape), sum of an integer
  ('SELECT id FROM dc_o WHERE k IN (SELECT k FROM dc_o o2 WHERE o2.id > (SELECT sum(n) FROM dc_i WHERE dc_i.k = o2.k))'),
  -- a sum of bigints past 2^63 (its numeric result cannot overflow), a
  -- FILTER, numeric + - * of constants, and a join in the sub-query
  ('SELECT id FROM dc_o WHERE k8 * 1000 < (SELECT sum(big) - 1 + 2 * sum(z) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FILTER (WHERE z > 3) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(a.y) FROM dc_i a, dc_i b WHERE a.k = dc_o.k AND b.k = a.k AND a.z = b.z AND b.n = 1)'),
  -- an aggregate of the outer query above it
  ('SELECT k2, count(*), sum(x) FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k) GROUP BY k2'),
  -- a numeric key (1.0 equals 1.00 in the grouping as in the equality)
  ('SELECT id FROM dc_o WHERE k < (SELECT max(k) FROM dc_i WHERE dc_i.y = dc_o.x)'),
  -- the outer column from the nullable side of an outer join (NULL there:
  -- no group, as no rows)
  ('SELECT o.id FROM dc_o o LEFT JOIN dc_o p ON p.id = o.id + 400 WHERE o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = p.k)'),
  -- in a view, and in a WITH query
  ('SELECT * FROM dc_view'),
  ('WITH w AS (SELECT id, k FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k)) SELECT k, count(*) FROM w GROUP BY k')
) v(q);
-- a parameter in the sub-query, custom and generic plans
PREPARE dc_p(int) AS SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k AND dc_i.n > $1);
CREATE TEMP TABLE dc_p_off AS SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k AND dc_i.n > 20);
SET plan_cache_mode = force_custom_plan;
CREATE TEMP TABLE dc_p_custom AS EXECUTE dc_p(20);
SELECT dc_rewritten('EXECUTE dc_p(20)');
SET plan_cache_mode = force_generic_plan;
CREATE TEMP TABLE dc_p_generic AS EXECUTE dc_p(20);
SELECT dc_rewritten('EXECUTE dc_p(20)');
RESET plan_cache_mode;
SELECT (SELECT count(*) FROM dc_p_off) AS n,
       (SELECT count(*) FROM (TABLE dc_p_custom EXCEPT ALL TABLE dc_p_off) d) + (SELECT count(*) FROM (TABLE dc_p_off EXCEPT ALL TABLE dc_p_custom) d) AS custom_differ,
       (SELECT count(*) FROM (TABLE dc_p_generic EXCEPT ALL TABLE dc_p_off) d) + (SELECT count(*) FROM (TABLE dc_p_off EXCEPT ALL TABLE dc_p_generic) d) AS generic_differ;

-- The grouped sub-query restricted to the keys the outer query can ask
-- for (the table supplying the outer columns, by its own conditions: a
-- semi-join inside pgstrom_grouped).  dc_scans(q): how many scans of
-- table t the plan holds (more than one where the restriction copied it;
-- the plan then need not show pgstrom_grouped: PostgreSQL drops a
-- sub-query scan that only passes rows through).
CREATE TABLE dc_part (k int, k2 int, brand text COLLATE "C", size int);
INSERT INTO dc_part
SELECT CASE WHEN i % 41 = 0 THEN NULL ELSE i END, i % 7, 'brand ' || (i % 25), i % 50
  FROM generate_series(0, 599) i;
CREATE TABLE dc_hpart (k int, brand text COLLATE "C") PARTITION BY HASH (k);
CREATE TABLE dc_hpart0 PARTITION OF dc_hpart FOR VALUES WITH (modulus 2, remainder 0);
CREATE TABLE dc_hpart1 PARTITION OF dc_hpart FOR VALUES WITH (modulus 2, remainder 1);
INSERT INTO dc_hpart SELECT k, brand FROM dc_part;
ANALYZE dc_part, dc_hpart;
CREATE FUNCTION dc_scans(q text, t text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE ln text; n int := 0;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    n := n + (ln ~ (' on ' || t || '( |$)'))::int;
  END LOOP;
  RETURN n;
END $$;
SET pg_strom.debug_prefer_rewrites = on;
SELECT dc_scans(q, t) > 1 AS restricted, same_as_off(q) FROM (VALUES
  -- TPC-H Q17's shape: the key's table with conditions of its own
  ('SELECT count(*), sum(x) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k AND dc_part.brand = ''brand 3'' AND dc_part.size < 30
      AND dc_o.x < (SELECT 0.2 * avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part'),
  -- the compared table supplies the key itself
  ('SELECT id FROM dc_o WHERE k2 = 3 AND x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k)', 'dc_o'),
  -- two keys (TPC-H Q20's shape: an IN sub-query among the conditions,
  -- copied with them)
  ('SELECT id FROM dc_o WHERE k IN (SELECT k FROM dc_part WHERE brand = ''brand 4'')
      AND x > (SELECT 0.5 * sum(y) FROM dc_i WHERE dc_i.k = dc_o.k AND dc_i.k2 = dc_o.k2)', 'dc_o'),
  -- inside an IN sub-query, with a text key
  ('SELECT id FROM dc_o WHERE k IN (SELECT k FROM dc_o o2 WHERE o2.k2 < 4 AND o2.x * 2 >= (SELECT max(y) FROM dc_i WHERE dc_i.t = o2.t))', 'dc_o'),
  -- a partitioned table supplies the key
  ('SELECT count(*) FROM dc_o, dc_hpart h WHERE h.k = dc_o.k AND h.brand > ''brand 2''
      AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = h.k)', 'dc_hpart0'),
  -- the table in inner joins (JOIN ... ON)
  ('SELECT count(*) FROM dc_o JOIN (dc_part JOIN dc_hpart h ON h.k = dc_part.k) ON dc_part.k = dc_o.k
     WHERE dc_part.size < 30 AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part')
) v(q, t);
-- not restricted (still rewritten; the same rows): no condition of the
-- table's own, a volatile one, one with a correlated sub-query, the
-- table on the nullable side of an outer join, keys of two tables
SELECT dc_rewritten(q), dc_scans(q, t) > 1 AS restricted, same_as_off(q) FROM (VALUES
  ('SELECT count(*) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part'),
  ('SELECT count(*) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k AND dc_part.size < 30 + random() * 0
      AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part'),
  ('SELECT count(*) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k
      AND dc_part.size < (SELECT max(n) FROM dc_i WHERE dc_i.k2 = dc_part.k2)
      AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part'),
  ('SELECT count(*) FROM dc_o LEFT JOIN dc_part ON dc_part.k = dc_o.k AND dc_part.k2 > 0 WHERE dc_part.size < 30
      AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part'),
  ('SELECT count(*) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k AND dc_part.size < 30
      AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k AND dc_i.k2 = dc_o.k2)', 'dc_part'),
  -- a condition naming a WITH query of the outer query's level
  ('WITH w AS MATERIALIZED (SELECT k FROM dc_o WHERE k2 < 3)
    SELECT count(*) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k AND dc_part.k IN (SELECT k FROM w)
      AND dc_o.x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)', 'dc_part')
) v(q, t);
RESET pg_strom.debug_prefer_rewrites;
-- by the costs alone: the restricted form of Q17's shape is planned
SELECT dc_scans(q, 'dc_part') > 1 AS restricted, same_as_off(q) FROM (VALUES
  ('SELECT count(*), sum(x) FROM dc_o, dc_part WHERE dc_part.k = dc_o.k AND dc_part.brand = ''brand 3'' AND dc_part.size < 30
      AND dc_o.x < (SELECT 0.2 * avg(y) FROM dc_i WHERE dc_i.k = dc_part.k)')
) v(q);

-- a correlation key equated with the unique key of an outer table that
-- has more than twice the rows ANALYZE counted distinct values in the key
-- (set here): not rewritten, its groups cannot be priced, unless the
-- grouping is restricted to the keys of the outer rows that pass (TPC-H
-- Q2 at SF 10); with the count reset, rewritten (any rewritten plan kept,
-- to test only that)
SET pg_strom.debug_prefer_rewrites = on;
CREATE TABLE dc_u (k int PRIMARY KEY, x numeric(10,2));
INSERT INTO dc_u SELECT i, (i % 700) / 10.0 FROM generate_series(1, 600) i;
ALTER TABLE dc_i ALTER COLUMN k SET (n_distinct = 100);
ANALYZE dc_u, dc_i;
SELECT dc_rewritten(q), dc_scans(q, 'dc_u') > 1 AS restricted, same_as_off(q) FROM (VALUES
  ('SELECT k FROM dc_u WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_u.k)'),
  ('SELECT k FROM dc_u WHERE k % 5 = 1 AND x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_u.k)')) v(q);
ALTER TABLE dc_i ALTER COLUMN k RESET (n_distinct);
ANALYZE dc_i;
SELECT dc_rewritten(q), same_as_off(q) FROM (VALUES
  ('SELECT k FROM dc_u WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_u.k)')) v(q);
RESET pg_strom.debug_prefer_rewrites;

-- Shapes kept as written (not rewritten; the same rows)
SELECT dc_rewritten(q), same_as_off(q) FROM (VALUES
  -- count over no rows is 0, not NULL
  ('SELECT id FROM dc_o WHERE id < (SELECT count(*) FROM dc_i WHERE dc_i.k = dc_o.k) * 100'),
  ('SELECT id FROM dc_o WHERE 1 < (SELECT count(y) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  -- not NULL over no rows
  ('SELECT id FROM dc_o WHERE x < (SELECT coalesce(avg(y), 0) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  -- in an OR: a NULL value does not fail the whole condition
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k) OR id < 10'),
  -- not an equality with the outer column
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k < dc_o.k AND dc_i.k > dc_o.k - 3)'),
  -- the outer query inside the aggregate
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y + dc_o.x) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  -- a float sum (may overflow in a group no outer row asks for)
  ('SELECT id FROM dc_o WHERE x < (SELECT sum(f) FROM dc_i WHERE dc_i.k = dc_o.k)'),
  -- another type on each side of the equality
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k8)'),
  -- LIMIT, GROUP BY in the sub-query
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k LIMIT 1)'),
  ('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k GROUP BY z ORDER BY z LIMIT 1)'),
  -- a division (an error in a group no outer row asks for)
  ('SELECT id FROM dc_o WHERE x < (SELECT 1 / sum(y) FROM dc_i WHERE dc_i.k = dc_o.k)')
) v(q);

-- a volatile function in the sub-query: not rewritten (the plan only: its
-- rows differ by run)
SELECT dc_rewritten('SELECT id FROM dc_o WHERE x < (SELECT avg(y) FROM dc_i WHERE dc_i.k = dc_o.k AND random() < 2)');
-- the setting off: not rewritten
SET pg_strom.enable_decorrelation = off;
SELECT dc_rewritten('SELECT id FROM dc_o WHERE x < (SELECT 0.2 * avg(y) FROM dc_i WHERE dc_i.k = dc_o.k)');
RESET pg_strom.enable_decorrelation;
-- where the sub-plan costs less (an index on the key and few outer rows,
-- a device node not free), the query is planned as written
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.gpu_context_cost;
CREATE INDEX dc_i_k ON dc_i (k);
ANALYZE dc_i;
SELECT dc_rewritten(q), same_as_off(q) FROM (VALUES
  ('SELECT id FROM dc_o WHERE id < 5 AND x < (SELECT 0.2 * avg(y) FROM dc_i WHERE dc_i.k = dc_o.k)')
) v(q);

DROP VIEW dc_view;
DROP TABLE dc_i, dc_o, dc_p_off, dc_p_custom, dc_p_generic, dc_part, dc_hpart, dc_u;
DROP FUNCTION dc_scans(text, text);
DEALLOCATE dc_p;
DROP FUNCTION dc_rewritten(text);

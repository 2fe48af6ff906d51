-- A parallel GpuPreAgg whose partial groups are exchanged between the
-- processes by their grouping keys, each process finalizing its share
-- below the Gather (pg_strom.enable_parallel_finalize): the plan, and
-- the same rows as PostgreSQL's for keys PostgreSQL finds equal with
-- different bytes (1.0 and 1.00, -0 and 0, bpchar's trailing blanks),
-- NULL keys, HAVING, no rows, a rescanned Gather, without workers and
-- without the leader; a grouping that cannot be partial (DISTINCT
-- aggregates) with its input rows exchanged.
-- pg_strom.debug_prefer_parallel_finalize keeps that plan wherever it
-- applies, whatever it costs.
SET pg_strom.debug_prefer_parallel_finalize = on;
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
CREATE TABLE px_f (id int, k int, n numeric, f float8, c char(6), t text COLLATE "C", v numeric(12,2));
INSERT INTO px_f
SELECT i,
       CASE WHEN i % 97 = 0 THEN NULL ELSE i % 5003 END,
       -- 1.0 and 1.00 are one group
       CASE WHEN i % 2 = 0 THEN (i % 7)::numeric ELSE round((i % 7)::numeric, 2) END,
       -- -0 and 0 are one group
       CASE WHEN i % 3 = 0 THEN -0.0::float8 ELSE (i % 4)::float8 END,
       CASE WHEN i % 5 = 0 THEN NULL ELSE 'c' || (i % 11) END,
       'tü ' || (i % 301),
       (i % 1000) / 8.0
  FROM generate_series(1, 120000) i;
CREATE TABLE px_empty (k int, v numeric(12,2));
CREATE TABLE px_d (k int PRIMARY KEY, name text);
INSERT INTO px_d SELECT i, 'd' || (i % 50) FROM generate_series(0, 5002) i;
ALTER TABLE px_f SET (parallel_workers = 2);
ALTER TABLE px_empty SET (parallel_workers = 2);
ANALYZE px_f, px_empty, px_d;

-- Is the partial aggregation exchanged?  (the plan says so; `what` names
-- the other exchange, of rows)
CREATE FUNCTION px_exchanged(q text, what text DEFAULT 'Partial Groups Exchanged') RETURNS bool LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
    IF strpos(line, what) > 0 THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;

SELECT * FROM explain_masked('SELECT k, sum(v), count(*) FROM px_f GROUP BY k');

SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT k, sum(v), count(*), avg(v), min(id), max(f) FROM px_f GROUP BY k'),
  -- a numeric key the device cannot group: PostgreSQL's partial
  -- aggregation exchanged (below)
  ('SELECT n, count(*), sum(v) FROM px_f GROUP BY n'),
  ('SELECT f, count(*), sum(id) FROM px_f GROUP BY f'),
  ('SELECT c, count(*), sum(v) FROM px_f GROUP BY c'),
  -- (a float aggregate compared rounded: its sums' order varies)
  ('SELECT t, k % 7, count(*), sum(id), round(variance(f)::numeric, 9) FROM px_f GROUP BY t, k % 7'),
  ('SELECT t, count(*) FROM px_f WHERE k < 10 GROUP BY t'),
  ('SELECT k, sum(v) FROM px_f GROUP BY k HAVING sum(v) > 2900'),
  ('SELECT k, count(*) FROM px_empty GROUP BY k'),
  ('SELECT d.name, f.k % 3, sum(f.v), count(*) FROM px_f f JOIN px_d d ON f.k = d.k GROUP BY d.name, f.k % 3')
) AS q(q);

-- ORDER BY ... LIMIT: each process's share sorted (a bounded sort) under
-- a Gather Merge
SELECT * FROM explain_masked('SELECT k, sum(v) s FROM px_f GROUP BY k ORDER BY s DESC, k LIMIT 5');
SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT k, sum(v) s FROM px_f GROUP BY k ORDER BY s DESC, k LIMIT 5'),
  ('SELECT c, count(*) n FROM px_f GROUP BY c ORDER BY n, c NULLS FIRST LIMIT 3'),
  ('SELECT k, sum(v) s FROM px_f GROUP BY k ORDER BY k OFFSET 4990')) AS q(q);
SELECT k, sum(v) s FROM px_f GROUP BY k ORDER BY s DESC, k LIMIT 5;

-- the values themselves, in one statement with the setting on and off
SELECT (SELECT md5(string_agg(format('%s|%s|%s', k, s, n), ',' ORDER BY k NULLS FIRST))
          FROM (SELECT k, sum(v) s, count(*) n FROM px_f GROUP BY k) x)
     = (SELECT md5(string_agg(format('%s|%s|%s', k, sum, count), ',' ORDER BY k NULLS FIRST))
          FROM (SELECT k, sum(v), count(*) FROM px_f WHERE id > 0 OR id IS NULL GROUP BY k ORDER BY k LIMIT ALL) y) AS same_sums;

-- no worker started: the leader exchanges with itself
SET max_parallel_workers = 0;
SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT k, sum(v), count(*) FROM px_f GROUP BY k')) AS q(q);
RESET max_parallel_workers;
-- the leader does not take part
SET parallel_leader_participation = off;
SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT k, sum(v), count(*) FROM px_f GROUP BY k')) AS q(q);
SET parallel_leader_participation = on;

-- a Gather rescanned: the inner side of a nested loop, read again per
-- outer row (the shared files and the phase start over)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SET pg_strom.enable_gpujoin = off;
-- (the join filter's operands are printed in another order on PostgreSQL 15)
SELECT * FROM explain_masked('SELECT d.k, g.s FROM (SELECT k, sum(v) s FROM px_f GROUP BY k) g, px_d d WHERE d.k = g.k AND d.k < 4') WHERE explain_masked !~ 'Join Filter';
SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT d.k, g.s FROM (SELECT k, sum(v) s FROM px_f GROUP BY k) g, px_d d WHERE d.k = g.k AND d.k < 4'),
  -- every group on every rescan (no early stop of the inner side)
  ('SELECT d.k, count(*), sum(g.s) FROM (SELECT k, sum(v) s FROM px_f GROUP BY k) g, px_d d WHERE d.k < 4 GROUP BY d.k')) AS q(q);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;
RESET pg_strom.enable_gpujoin;

-- PostgreSQL's own partial aggregation exchanged (a GroupExchange): here
-- without GpuPreAgg, and for an aggregate the device does not reduce
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM explain_masked('SELECT k, sum(v), count(*) FROM px_f GROUP BY k');
SELECT * FROM explain_masked('SELECT k, sum(v) s FROM px_f GROUP BY k ORDER BY s DESC, k LIMIT 5');
SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT k, sum(v), count(*), avg(v), min(id), max(f) FROM px_f GROUP BY k'),
  ('SELECT n, count(*), sum(v) FROM px_f GROUP BY n'),
  ('SELECT c, count(*), sum(v) FROM px_f GROUP BY c'),
  ('SELECT f, count(*), sum(id) FROM px_f GROUP BY f'),
  ('SELECT k, sum(v) FROM px_f GROUP BY k HAVING sum(v) > 2900'),
  ('SELECT k, sum(v) s FROM px_f GROUP BY k ORDER BY s DESC, k LIMIT 5'),
  ('SELECT k, count(*) FROM px_empty GROUP BY k')) AS q(q);
RESET pg_strom.enable_gpupreagg;
SELECT px_exchanged(q), same_as_off(q) FROM (VALUES
  ('SELECT t, max(t), count(*) FROM px_f GROUP BY t'),
  -- an ordered aggregate: no partial aggregation, nothing to exchange
  ('SELECT k % 50 AS g, string_agg(c, '','' ORDER BY id) IS NULL AS s, count(*) AS n FROM px_f GROUP BY k % 50')) AS q(q);

-- A grouping that cannot be partial (aggregates over DISTINCT values):
-- the input rows exchanged by the grouping keys (a GroupExchange over the
-- join or scan), each process sorting its share and aggregating its
-- groups whole under the Gather
-- (the rewrite that removes the duplicates by a grouping first is
-- another plan of these queries: off here)
SET pg_strom.enable_distinct_grouping = off;
-- (the sort below the aggregation is by the keys and, from PostgreSQL 16
-- on, then by the DISTINCT values: that line left out)
SELECT * FROM explain_masked('SELECT k % 50 AS g, count(DISTINCT c), count(*) FROM px_f GROUP BY k % 50') WHERE explain_masked !~ 'Sort Key: \(\(k';
SELECT * FROM explain_masked('SELECT k % 50 AS g, count(DISTINCT c) n FROM px_f GROUP BY k % 50 ORDER BY n DESC, g LIMIT 3') WHERE explain_masked !~ 'Sort Key: \(\(k';
SELECT px_exchanged(q, 'Rows Exchanged'), same_as_off(q) FROM (VALUES
  ('SELECT k % 50 AS g, count(DISTINCT c) AS d, count(*) AS n FROM px_f GROUP BY k % 50'),
  ('SELECT t, count(DISTINCT k) AS d, sum(DISTINCT v) AS s, avg(v) AS a, max(f) AS m FROM px_f GROUP BY t'),
  -- keys PostgreSQL finds equal with other bytes meet in one process
  ('SELECT n, count(DISTINCT k) FROM px_f GROUP BY n'),
  ('SELECT f, count(DISTINCT c) FROM px_f GROUP BY f'),
  ('SELECT c, count(DISTINCT t) AS d, count(c) AS n FROM px_f GROUP BY c'),
  -- two keys, HAVING, ORDER BY ... LIMIT, no rows, a join below
  ('SELECT k % 7 AS a, c, count(DISTINCT id % 13) FROM px_f GROUP BY k % 7, c'),
  ('SELECT k % 50 AS g, count(DISTINCT c) n FROM px_f GROUP BY k % 50 HAVING count(DISTINCT c) > 10'),
  ('SELECT k % 50 AS g, count(DISTINCT c) n FROM px_f GROUP BY k % 50 ORDER BY n DESC, g LIMIT 3'),
  ('SELECT k, count(DISTINCT v) FROM px_empty GROUP BY k'),
  ('SELECT d.name, count(DISTINCT f.c), sum(f.v) FROM px_f f JOIN px_d d ON f.k = d.k GROUP BY d.name')
) AS q(q);
SELECT k % 50 AS g, count(DISTINCT c) n FROM px_f GROUP BY k % 50 ORDER BY n DESC, g LIMIT 3;
-- an aggregate without a combine function: PostgreSQL's serial plan (the
-- result may depend on the order of the rows)
CREATE AGGREGATE px_nocombine(int) (sfunc = int4pl, stype = int, initcond = '0');
SELECT px_exchanged(q, 'Rows Exchanged'), same_as_off(q) FROM (VALUES
  ('SELECT k % 50 AS g, count(DISTINCT c), px_nocombine(id) FROM px_f GROUP BY k % 50')) AS q(q);
DROP AGGREGATE px_nocombine(int);
-- no GROUP BY: nothing to exchange by
SELECT px_exchanged('SELECT count(DISTINCT c) FROM px_f', 'Rows Exchanged');
RESET pg_strom.enable_distinct_grouping;

-- off: the Finalize Aggregate above the Gather
SET pg_strom.enable_parallel_finalize = off;
SELECT px_exchanged('SELECT k, sum(v), count(*) FROM px_f GROUP BY k');
SELECT px_exchanged('SELECT k % 50 AS g, count(DISTINCT c) FROM px_f GROUP BY k % 50', 'Rows Exchanged');
RESET pg_strom.enable_parallel_finalize;
RESET pg_strom.debug_prefer_parallel_finalize;
DROP TABLE px_f, px_empty, px_d;
DROP FUNCTION px_exchanged(text, text);

-- Parallel GpuJoin and GpuPreAgg with a RIGHT, FULL, RIGHT SEMI or RIGHT
-- ANTI depth: every process probes its share of the scanned rows and
-- marks the inner rows it matched; the last process done returns the
-- inner rows no process matched (or those some process matched, for
-- RIGHT SEMI), each once (gpujoin::shared_matched).  Every answer equals
-- PostgreSQL's (same_as_off, test/sql/setup.sql).
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE gjo_fact AS
  SELECT i AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7) % 30011 END AS pkey, i % 31 AS dkey,
         (i % 997)::numeric(10,2) AS price
  FROM generate_series(1, 120000) i;
-- keys 0..39999: about a quarter of them never meet a fact row
CREATE TABLE gjo_dim (pkey int, name text, grp int);
INSERT INTO gjo_dim SELECT i, 'd' || i, i % 13 FROM generate_series(0, 39999) i;
CREATE TABLE gjo_date AS SELECT i AS dkey, 1990 + i % 7 AS year FROM generate_series(0, 25) i;
ALTER TABLE gjo_fact SET (parallel_workers = 2);
ANALYZE gjo_fact, gjo_dim, gjo_date;
-- (PostgreSQL's hash joins set aside: its Parallel Hash Right Join would
-- do the same work on the CPU)
SET enable_hashjoin = off;

-- the plans: a parallel GpuJoin scanning gjo_fact with the dimension's
-- rows kept, and a parallel GpuPreAgg over it
SELECT * FROM explain_masked('SELECT d.pkey, d.name, f.id FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey');
SELECT * FROM explain_masked('SELECT d.grp, count(f.id), sum(f.price) FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.grp');

-- (true also before the PostgreSQL version whose planner makes the join
-- kind the query needs: RIGHT ANTI from 16, RIGHT SEMI from 18)
CREATE FUNCTION gjo_parallel_keeping(q text, since int DEFAULT 0) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE ln text; par bool := false; keeps bool := false;
BEGIN
  IF current_setting('server_version_num')::int < since THEN
    RETURN true;
  END IF;
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    par := par OR ln ~ 'Parallel Custom Scan \((GpuJoin|GpuPreAgg)\)';
    keeps := keeps OR ln ~ 'GpuHashJoin \((Right|Full|Right Semi|Right Anti)\)';
  END LOOP;
  RETURN par AND keeps;
END $$;

SELECT gjo_parallel_keeping(q, since), same_as_off(q) FROM (VALUES
  -- RIGHT: the unmatched dimension rows once, NULL-extended
  ('SELECT d.pkey, d.name, f.id, f.price FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey', 0),
  ('SELECT d.pkey, f.id FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey AND f.id % 3 = 0', 0),
  -- grouped above it on the device (TPC-H Q13's shape), and counted
  ('SELECT d.grp, count(f.id) a, sum(f.price) b, count(*) c FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.grp', 0),
  ('SELECT c, count(*) n FROM (SELECT d.pkey, count(f.id) c FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.pkey) x GROUP BY c', 0),
  -- FULL: the fact rows without a key too
  ('SELECT d.pkey, f.id FROM gjo_dim d FULL JOIN gjo_fact f ON f.pkey = d.pkey', 0),
  -- RIGHT SEMI and RIGHT ANTI: the dimension rows some fact row meets
  -- (each once), and those none meets
  ('SELECT d.pkey, d.name FROM gjo_dim d WHERE EXISTS (SELECT 1 FROM gjo_fact f WHERE f.pkey = d.pkey)', 180000),
  ('SELECT d.pkey, d.name FROM gjo_dim d WHERE NOT EXISTS (SELECT 1 FROM gjo_fact f WHERE f.pkey = d.pkey)', 160000),
  ('SELECT d.grp, count(*) n FROM gjo_dim d WHERE NOT EXISTS (SELECT 1 FROM gjo_fact f WHERE f.pkey = d.pkey AND f.id % 2 = 0) GROUP BY d.grp', 0),
  -- a depth after the kept one: its unmatched rows joined through it
  ('SELECT d.pkey, f.id, t.year FROM gjo_fact f JOIN gjo_date t ON f.dkey = t.dkey RIGHT JOIN gjo_dim d ON f.pkey = d.pkey', 0)
) v(q, since);

-- without the leader, and with more workers than blocks to share
SET parallel_leader_participation = off;
SELECT gjo_parallel_keeping(q), same_as_off(q) FROM (VALUES
  ('SELECT d.pkey, f.id FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey'),
  ('SELECT d.grp, count(f.id) FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.grp')
) v(q);
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 6;
ALTER TABLE gjo_fact SET (parallel_workers = 6);
SELECT gjo_parallel_keeping(q), same_as_off(q) FROM (VALUES
  ('SELECT d.pkey, d.name, f.id FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey')
) v(q);
ALTER TABLE gjo_fact SET (parallel_workers = 2);
SET max_parallel_workers_per_gather = 2;

-- under a nested loop's semi-join (the grouped rows compared with every
-- outer row)
SET enable_material = off;
SELECT * FROM explain_masked('SELECT x FROM generate_series(0, 3) x
  WHERE x * 1000 < ANY (SELECT count(f.id) FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.grp)');
SELECT gjo_parallel_keeping(q, since), same_as_off(q) FROM (VALUES
  ('SELECT x FROM generate_series(0, 12) x
     WHERE x * 1000 < ANY (SELECT count(f.id) FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.grp)', 0),
  ('SELECT x FROM generate_series(0, 4) x
     WHERE x * 2000 < ANY (SELECT d.pkey FROM gjo_dim d WHERE NOT EXISTS (SELECT 1 FROM gjo_fact f WHERE f.pkey = d.pkey))', 160000)
) v(q, since);
-- rescanned whole, once per outer row (the Gather restarts its workers;
-- the matched rows' bits start empty each time)
SELECT * FROM explain_masked('SELECT g.y, x.n, x.m FROM generate_series(1, 3) g(y),
  LATERAL (SELECT count(*) n, count(s.id) m FROM (SELECT d.pkey, f.id FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey OFFSET 0) s
           WHERE s.pkey % 3 = g.y - 1) x');
SELECT gjo_parallel_keeping(q), same_as_off(q) FROM (VALUES
  ('SELECT g.y, x.n, x.m FROM generate_series(1, 3) g(y),
     LATERAL (SELECT count(*) n, count(s.id) m FROM (SELECT d.pkey, f.id FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey OFFSET 0) s
              WHERE s.pkey % 3 = g.y - 1) x')
) v(q);

-- through the GPU service (its CPU engine here): each process's matched
-- rows are taken from its session there and the last process's merged
-- into it (the service's requests for them), and the fact table's
-- all-visible blocks are read from its files by the service (the heap
-- direct path); then with every such answer dropped (as when a block
-- changes during the read): the matched rows the dropped answer marked
-- are forgotten and its blocks read again through the buffer manager
SET pg_strom.cpu_engine_in_service = on;
VACUUM (FREEZE, ANALYZE) gjo_fact;
CHECKPOINT;
-- (whether the service read blocks of the fact table from its files; true
-- also before the PostgreSQL version whose planner makes the join kind)
CREATE FUNCTION gjo_direct(q text, since int, by_service bool) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE ln text; m text[];
BEGIN
  IF current_setting('server_version_num')::int < since THEN
    RETURN true;
  END IF;
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    m := regexp_match(ln, 'Heap Direct Read: ([0-9]+) blocks .* ([0-9]+) through the buffer manager');
    IF m IS NOT NULL THEN
      RETURN (m[1]::int > 0) = by_service AND (by_service OR m[2]::int > 0);
    END IF;
  END LOOP;
  RETURN false;
END $$;
CREATE TABLE gjo_queries (n int, q text, since int);
INSERT INTO gjo_queries VALUES
  (1, 'SELECT d.pkey, d.name, f.id, f.price FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey', 0),
  (2, 'SELECT d.grp, count(f.id) a, sum(f.price) b, count(*) c FROM gjo_dim d LEFT JOIN gjo_fact f ON f.pkey = d.pkey GROUP BY d.grp', 0),
  (3, 'SELECT d.pkey, f.id FROM gjo_dim d FULL JOIN gjo_fact f ON f.pkey = d.pkey', 0),
  (4, 'SELECT d.pkey, d.name FROM gjo_dim d WHERE EXISTS (SELECT 1 FROM gjo_fact f WHERE f.pkey = d.pkey)', 180000),
  (5, 'SELECT d.pkey, d.name FROM gjo_dim d WHERE NOT EXISTS (SELECT 1 FROM gjo_fact f WHERE f.pkey = d.pkey)', 160000);
SELECT n, gjo_parallel_keeping(q, since), gjo_direct(q, since, true), same_as_off(q) FROM gjo_queries ORDER BY n;
-- the inner relation is loaded into the service once for all processes
-- (each session keeps its own matched rows' flags over the one build)
CREATE FUNCTION gjo_loaded_once(q text, since int) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  IF current_setting('server_version_num')::int < since THEN
    RETURN true;
  END IF;
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    IF ln ~ 'Inner Build: shared, ' THEN
      RETURN ln ~ 'loaded into the engine once';
    END IF;
  END LOOP;
  RETURN false;
END $$;
SELECT n, gjo_loaded_once(q, since) FROM gjo_queries ORDER BY n;
SET pg_strom.debug_drop_heap_direct_answers = 1;
SELECT n, gjo_parallel_keeping(q, since), gjo_direct(q, since, false), same_as_off(q) FROM gjo_queries ORDER BY n;
RESET pg_strom.debug_drop_heap_direct_answers;
RESET pg_strom.cpu_engine_in_service;
DROP TABLE gjo_queries;
DROP FUNCTION gjo_direct(text, int, bool);
RESET enable_material;
RESET enable_hashjoin;
DROP FUNCTION gjo_parallel_keeping(text, int);
DROP TABLE gjo_fact, gjo_dim, gjo_date;

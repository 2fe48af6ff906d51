-- Parallel GpuJoin and GpuPreAgg: the inner relations are read once for
-- every process of the query.  A dimension large enough for a partial
-- plan is scanned in shares (a Parallel Seq Scan under the GpuJoin) and
-- the shares are put together before any process probes; a small one is
-- read by one process for all.  Every answer equals PostgreSQL's.
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
CREATE TABLE gjp_fact AS
  SELECT i AS id, i % 20011 AS pkey, i % 31 AS dkey, (i % 997)::numeric(10,2) AS price
  FROM generate_series(1, 200000) i;
-- char(n) and text columns, a dropped column before them (its bytes stay
-- in the rows the inner scan returns)
CREATE TABLE gjp_part (pkey int, junk text, brand char(9), category text);
INSERT INTO gjp_part SELECT i, repeat('x', i % 50), 'MFGR#' || (i % 40), 'cat' || (i % 5)
  FROM generate_series(0, 20000) i;
ALTER TABLE gjp_part DROP COLUMN junk;
CREATE TABLE gjp_date AS SELECT i AS dkey, 1990 + i % 7 AS year FROM generate_series(0, 30) i;
ALTER TABLE gjp_part SET (parallel_workers = 2);
ALTER TABLE gjp_fact SET (parallel_workers = 2);
ANALYZE gjp_fact, gjp_part, gjp_date;

-- a partial inner plan: every process scans a share of gjp_part
SELECT * FROM explain_masked('SELECT p.brand, d.year, sum(f.price), count(*)
  FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
  WHERE p.category = ''cat1'' GROUP BY p.brand, d.year');
CREATE TEMP TABLE gjp_strom AS SELECT p.brand, d.year, sum(f.price) AS s, count(*) AS n
  FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
  WHERE p.category = 'cat1' GROUP BY p.brand, d.year;
-- the plain join, its rows formed from the shared inner rows (without
-- GpuScan, the inner side of gjp_part's GpuJoin is a parallel GpuJoin
-- over gjp_fact, itself built from a shared inner relation)
SET pg_strom.enable_gpuscan = off;
SELECT * FROM explain_masked('SELECT f.id, p.brand, p.category, d.year
  FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
  WHERE p.category <> ''cat3'' AND f.id % 7 = 0');
CREATE TEMP TABLE gjp_rows AS SELECT f.id, p.brand, p.category, d.year
  FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
  WHERE p.category <> 'cat3' AND f.id % 7 = 0;
-- gjp_part read by a Parallel Seq Scan, whose rows keep the dropped column
SELECT * FROM explain_masked('SELECT f.id, p.pkey, p.brand, p.category FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey');
CREATE TEMP TABLE gjp_dropped AS SELECT f.id, p.pkey, p.brand, p.category FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey;
RESET pg_strom.enable_gpuscan;
SET pg_strom.enabled = off;
SELECT count(*) AS rows,
  (SELECT count(*) FROM (SELECT * FROM gjp_dropped EXCEPT ALL
     SELECT f.id, p.pkey, p.brand, p.category FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey) x) AS missing_in_pg,
  (SELECT count(*) FROM (SELECT f.id, p.pkey, p.brand, p.category FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
     EXCEPT ALL SELECT * FROM gjp_dropped) x) AS missing_in_strom
  FROM gjp_dropped;
SELECT count(*) AS groups,
  (SELECT count(*) FROM (SELECT * FROM gjp_strom EXCEPT ALL
     SELECT p.brand, d.year, sum(f.price), count(*)
     FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
     WHERE p.category = 'cat1' GROUP BY p.brand, d.year) x) AS differ
  FROM gjp_strom;
SELECT count(*) AS rows,
  (SELECT count(*) FROM (SELECT * FROM gjp_rows EXCEPT ALL
     SELECT f.id, p.brand, p.category, d.year
     FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
     WHERE p.category <> 'cat3' AND f.id % 7 = 0) x) AS missing_in_pg,
  (SELECT count(*) FROM (SELECT f.id, p.brand, p.category, d.year
     FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
     WHERE p.category <> 'cat3' AND f.id % 7 = 0 EXCEPT ALL SELECT * FROM gjp_rows) x) AS missing_in_strom
  FROM gjp_rows;
RESET pg_strom.enabled;

-- EXPLAIN ANALYZE says how the inner relations were built
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM explain_masked('SELECT f.id, p.brand FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
  WHERE p.category = ''cat2''',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'Inner Build';
RESET pg_strom.enable_gpupreagg;

-- pg_strom.parallel_inner_build = off: the whole inner plan, run by one
-- process for all of them
SET pg_strom.parallel_inner_build = off;
SELECT * FROM explain_masked('SELECT p.brand, sum(f.price) FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
  WHERE p.category = ''cat1'' GROUP BY p.brand',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'Inner Build|Scan.* on gjp_part';
CREATE TEMP TABLE gjp_whole AS SELECT p.brand, sum(f.price) AS s FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
  WHERE p.category = 'cat1' GROUP BY p.brand;
RESET pg_strom.parallel_inner_build;
SET pg_strom.enabled = off;
SELECT count(*) AS groups,
  (SELECT count(*) FROM (SELECT * FROM gjp_whole EXCEPT ALL
     SELECT p.brand, sum(f.price) FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
     WHERE p.category = 'cat1' GROUP BY p.brand) x) AS differ
  FROM gjp_whole;
RESET pg_strom.enabled;

-- a partial inner path is priced for the node's processes, not its own:
-- the fact table is not made the inner relation of a dimension scanned
-- by fewer workers (every process would load all of it)
ALTER TABLE gjp_part SET (parallel_workers = 1);
SELECT * FROM explain_masked('SELECT p.brand, sum(f.price) FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
  WHERE p.category = ''cat1'' GROUP BY p.brand') WHERE explain_masked ~ 'Custom Scan|Seq Scan';
ALTER TABLE gjp_part SET (parallel_workers = 2);

-- a statement timeout while the processes wait for a slow inner relation
-- (pg_sleep in its qual): the query ends with the ERROR, no process is
-- left waiting, and the next query runs
SELECT * FROM explain_masked('SELECT count(*) FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey
  WHERE pg_sleep(0.05 + d.year * 0) IS NOT NULL') WHERE explain_masked ~ 'Gather|Custom Scan|Seq Scan|Filter';
SET statement_timeout = '300ms';
SELECT count(*) FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey WHERE pg_sleep(0.05 + d.year * 0) IS NOT NULL;
RESET statement_timeout;
SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event = 'PgStromInnerBuild';
SELECT count(*) FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey WHERE d.year = 1991;

-- an empty share and an empty inner relation
SELECT count(*) FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey WHERE p.category = 'none';
SELECT p.brand, count(*) FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
  WHERE p.pkey < 3 GROUP BY p.brand ORDER BY 1;

-- a rescan of the Gather (the inner side of a nested loop, scanned again
-- per outer row): the build is done again for each scan, with the same rows
CREATE TABLE gjp_outer AS SELECT i AS k FROM generate_series(1, 2) i;
ALTER TABLE gjp_outer SET (parallel_workers = 0);
ANALYZE gjp_outer;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM explain_masked('SELECT o.k, x.id, x.brand FROM gjp_outer o JOIN
  (SELECT f.id, f.dkey, p.brand FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey WHERE p.category = ''cat4'') x
  ON md5(x.dkey::text) = md5(o.k::text)',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'Inner Build|Gather \(|GpuJoin|Nested Loop';
CREATE TEMP TABLE gjp_rescan AS SELECT o.k, x.id, x.brand FROM gjp_outer o JOIN
  (SELECT f.id, f.dkey, p.brand FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey WHERE p.category = 'cat4') x
  ON md5(x.dkey::text) = md5(o.k::text);
-- the same with one engine load per build (the CPU engine in the GPU
-- service): each rescan loads under a new key
SET pg_strom.cpu_engine_in_service = on;
CREATE TEMP TABLE gjp_rescan_shared AS SELECT o.k, x.id, x.brand FROM gjp_outer o JOIN
  (SELECT f.id, f.dkey, p.brand FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey WHERE p.category = 'cat4') x
  ON md5(x.dkey::text) = md5(o.k::text);
RESET pg_strom.cpu_engine_in_service;
SELECT count(*) AS rows,
  (SELECT count(*) FROM (SELECT * FROM gjp_rescan EXCEPT ALL SELECT * FROM gjp_rescan_shared) d) AS differ,
  (SELECT count(*) FROM (SELECT * FROM gjp_rescan_shared EXCEPT ALL SELECT * FROM gjp_rescan) d) AS differ_shared
  FROM gjp_rescan_shared;
-- (PostgreSQL's answer with its usual join methods: a nested loop over
-- the fact table would take minutes)
RESET pg_strom.enable_gpupreagg;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
SET pg_strom.enabled = off;
SELECT count(*) AS rows,
  (SELECT count(*) FROM (SELECT * FROM gjp_rescan EXCEPT ALL
     SELECT o.k, x.id, x.brand FROM gjp_outer o JOIN
     (SELECT f.id, f.dkey, p.brand FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey WHERE p.category = 'cat4') x
     ON md5(x.dkey::text) = md5(o.k::text)) d) AS differ
  FROM gjp_rescan;
RESET pg_strom.enabled;

-- one load of the inner relations in the engine for the whole query: with
-- the CPU engine in the GPU service (an engine every process shares), one
-- process loads and hashes them and the others open their sessions over
-- that load.  pg_sleep in the dimension's qual keeps the build running
-- until every process has taken part in it.
SET pg_strom.cpu_engine_in_service = on;
SELECT regexp_replace(explain_masked, 'rows=[0-9.]+', 'rows=N') AS plan
  FROM explain_masked('SELECT d.year, count(*), sum(f.price) FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey
  WHERE pg_sleep(0.02 + d.year * 0) IS NOT NULL GROUP BY d.year',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', '{engine-load}')
  WHERE explain_masked ~ 'Inner Build|Custom Scan';
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM explain_masked('SELECT f.id, d.year FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey
  WHERE pg_sleep(0.02 + d.year * 0) IS NOT NULL AND f.id % 3 = 0',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', '{engine-load}')
  WHERE explain_masked ~ 'Inner Build|Custom Scan';
RESET pg_strom.enable_gpupreagg;
-- the answers over one load equal PostgreSQL's: groups keyed by the
-- dimension's char(n) column (its rows taken apart one at a time), and
-- joined rows (taken apart at once), over a partial build of gjp_part
CREATE TEMP TABLE gjp_shared_groups AS SELECT p.brand, d.year, sum(f.price) AS s, count(*) AS n
  FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
  WHERE p.category = 'cat1' GROUP BY p.brand, d.year;
SET pg_strom.enable_gpupreagg = off;
CREATE TEMP TABLE gjp_shared_rows AS SELECT f.id, p.brand, p.category, d.year
  FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
  WHERE p.category <> 'cat3' AND f.id % 7 = 0;
RESET pg_strom.enable_gpupreagg;
-- each process its own load, for comparison
SET pg_strom.shared_inner_tables = off;
SELECT * FROM explain_masked('SELECT p.brand, count(*) FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey
  WHERE p.category = ''cat1'' GROUP BY p.brand',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', '{engine-load}')
  WHERE explain_masked ~ 'Inner Build';
RESET pg_strom.shared_inner_tables;
-- a statement timeout while the processes of a shared load wait for the
-- build: the ERROR, no process left waiting, no load left in the service
-- for the next query (which runs)
SET statement_timeout = '300ms';
SELECT count(*) FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey WHERE pg_sleep(0.05 + d.year * 0) IS NOT NULL;
RESET statement_timeout;
SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event = 'PgStromInnerBuild';
SELECT count(*) FROM gjp_fact f JOIN gjp_date d ON f.dkey = d.dkey WHERE d.year = 1991;
RESET pg_strom.cpu_engine_in_service;
SET pg_strom.enabled = off;
SELECT count(*) AS groups,
  (SELECT count(*) FROM (SELECT * FROM gjp_shared_groups EXCEPT ALL
     SELECT p.brand, d.year, sum(f.price), count(*)
     FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
     WHERE p.category = 'cat1' GROUP BY p.brand, d.year) x) AS differ
  FROM gjp_shared_groups;
SELECT count(*) AS rows,
  (SELECT count(*) FROM (SELECT * FROM gjp_shared_rows EXCEPT ALL
     SELECT f.id, p.brand, p.category, d.year
     FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
     WHERE p.category <> 'cat3' AND f.id % 7 = 0) x) AS missing_in_pg,
  (SELECT count(*) FROM (SELECT f.id, p.brand, p.category, d.year
     FROM gjp_fact f JOIN gjp_part p ON f.pkey = p.pkey JOIN gjp_date d ON f.dkey = d.dkey
     WHERE p.category <> 'cat3' AND f.id % 7 = 0 EXCEPT ALL SELECT * FROM gjp_shared_rows) x) AS missing_in_strom
  FROM gjp_shared_rows;
RESET pg_strom.enabled;

DROP TABLE gjp_fact, gjp_part, gjp_date, gjp_outer;

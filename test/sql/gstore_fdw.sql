-- Gstore_Fdw (docs/gstore_fdw.md): rows in pg_strom's own store, written
-- through a redo log.  Every statement runs against a heap table fed the
-- same statements, and the two must agree.  Files go to
-- /tmp/pgstrom_gstore_test (made here, writable by the server).
\! rm -rf /tmp/pgstrom_gstore_test && mkdir -p /tmp/pgstrom_gstore_test && chmod 1777 /tmp/pgstrom_gstore_test
CREATE FOREIGN TABLE gs (id int, name text, v numeric(12,2), ts timestamp, tags text[])
  SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/gs.base',
           redo_log_file '/tmp/pgstrom_gstore_test/gs.redo',
           gpu_device_id '0', max_num_rows '100000');
CREATE TABLE hs (id int, name text, v numeric(12,2), ts timestamp, tags text[]);
-- compare the two tables: rows in one and not the other
CREATE FUNCTION gs_diff() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM ((SELECT * FROM gs EXCEPT ALL SELECT * FROM hs)
                        UNION ALL (SELECT * FROM hs EXCEPT ALL SELECT * FROM gs)) d $$;
-- a new table: no files yet, no rows
SELECT count(*) FROM gs;
INSERT INTO gs SELECT i, 'name ' || i, i * 1.25, '2026-01-01'::timestamp + i * interval '1 hour',
                      ARRAY['a' || i, NULL] FROM generate_series(1, 1000) i;
INSERT INTO hs SELECT i, 'name ' || i, i * 1.25, '2026-01-01'::timestamp + i * interval '1 hour',
                      ARRAY['a' || i, NULL] FROM generate_series(1, 1000) i;
SELECT count(*), sum(v), gs_diff() FROM gs;
-- NULLs everywhere, multibyte text, a value stored out of line
INSERT INTO gs VALUES (NULL, NULL, NULL, NULL, NULL), (-1, 'データベース', -0.01, 'infinity', '{}'),
                      (-2, repeat('x', 100000), 9999999999.99, '-infinity', NULL);
INSERT INTO hs VALUES (NULL, NULL, NULL, NULL, NULL), (-1, 'データベース', -0.01, 'infinity', '{}'),
                      (-2, repeat('x', 100000), 9999999999.99, '-infinity', NULL);
SELECT id, length(name), v, ts FROM gs WHERE id < 0 OR id IS NULL ORDER BY id;
-- UPDATE and DELETE by any condition, with RETURNING
WITH u AS (UPDATE gs SET v = v + 100, name = upper(name) WHERE id % 7 = 0 RETURNING id, name, v)
SELECT * FROM u ORDER BY id LIMIT 3;
UPDATE hs SET v = v + 100, name = upper(name) WHERE id % 7 = 0;
WITH d AS (DELETE FROM gs WHERE id BETWEEN 500 AND 600 RETURNING *) SELECT count(*), sum(v) FROM d;
DELETE FROM hs WHERE id BETWEEN 500 AND 600;
SELECT count(*), sum(v), gs_diff() FROM gs;
-- a transaction sees its own changes, command by command; ROLLBACK drops them
BEGIN;
INSERT INTO gs VALUES (5000, 'in a transaction', 1, NULL, NULL);
SELECT count(*) FROM gs WHERE id = 5000;
UPDATE gs SET v = 2 WHERE id = 5000;
SELECT v FROM gs WHERE id = 5000;
DELETE FROM gs WHERE id = 5000;
SELECT count(*) FROM gs WHERE id = 5000;
ROLLBACK;
SELECT count(*), gs_diff() FROM gs;
-- savepoints: a rolled back subtransaction's changes are gone, the rest stays
BEGIN;
SAVEPOINT a;
DELETE FROM gs WHERE id <= 10;
ROLLBACK TO a;
UPDATE gs SET name = 'kept' WHERE id = 1;
SAVEPOINT b;
INSERT INTO gs VALUES (6000, 'dropped', 1, NULL, NULL);
RELEASE b;
SAVEPOINT c;
UPDATE gs SET name = 'gone' WHERE id = 2;
ROLLBACK TO c;
COMMIT;
BEGIN;
UPDATE hs SET name = 'kept' WHERE id = 1;
INSERT INTO hs VALUES (6000, 'dropped', 1, NULL, NULL);
COMMIT;
SELECT id, name FROM gs WHERE id IN (1, 2, 6000) ORDER BY id;
SELECT gs_diff();
-- an UPDATE that reads the table it writes: each row once
UPDATE gs SET v = v / 2 WHERE id IN (SELECT id FROM gs WHERE id < 20);
UPDATE hs SET v = v / 2 WHERE id IN (SELECT id FROM hs WHERE id < 20);
INSERT INTO gs SELECT * FROM gs WHERE id < 5;
INSERT INTO hs SELECT * FROM hs WHERE id < 5;
SELECT count(*), sum(v), gs_diff() FROM gs;
-- COPY FROM
COPY gs FROM stdin;
7001	copied	1.50	2026-02-01 00:00:00	{x,y}
7002	\N	\N	\N	\N
\.
COPY hs FROM stdin;
7001	copied	1.50	2026-02-01 00:00:00	{x,y}
7002	\N	\N	\N	\N
\.
SELECT gs_diff();
-- a checkpoint keeps exactly the rows, frozen, and starts a new log
SELECT generation, row_versions > count_now AS has_dead
  FROM pgstrom.gstore_fdw_info('gs'), (SELECT count(*) AS count_now FROM gs) c;
SELECT pgstrom.gstore_fdw_checkpoint('gs') = (SELECT count(*) FROM gs);
SELECT generation, row_versions FROM pgstrom.gstore_fdw_info('gs');
SELECT count(*), sum(v), gs_diff() FROM gs;
UPDATE gs SET v = 0 WHERE id = 3;
UPDATE hs SET v = 0 WHERE id = 3;
SELECT gs_diff();
-- EXPLAIN
EXPLAIN (COSTS OFF) SELECT * FROM gs WHERE id = 3;
EXPLAIN (COSTS OFF) UPDATE gs SET v = 1 WHERE id = 3;
-- GpuScan, GpuPreAgg and GpuJoin over the store: the rows the snapshot
-- sees, gathered into chunks, with the answers of pg_strom.enabled = off
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.heap_gather_cost = 0;
CREATE TABLE gs_dim AS SELECT i AS k, 'dim ' || i AS label FROM generate_series(0, 9) i;
ANALYZE gs_dim;
SELECT * FROM explain_masked('SELECT id, name FROM gs WHERE v > 1000 AND id % 3 = 0');
SELECT * FROM explain_masked('SELECT count(*), sum(v) FROM gs WHERE id > 100');
SELECT * FROM explain_masked('SELECT label, count(*), sum(v) FROM gs JOIN gs_dim ON id % 10 = k WHERE v > 0 GROUP BY label');
CREATE VIEW gs_answers AS
  SELECT 1 AS q, count(*)::text AS a, sum(v)::text AS b FROM gs WHERE v > 1000 AND id % 3 = 0
  UNION ALL SELECT 2, count(*)::text, sum(v)::text FROM gs WHERE id > 100
  UNION ALL SELECT 3, label, count(*) || '/' || sum(v) FROM gs JOIN gs_dim ON id % 10 = k WHERE v > 0 GROUP BY label
  UNION ALL SELECT 4, string_agg(id::text, ',' ORDER BY id), NULL FROM gs WHERE name LIKE '%DATA%' OR name = 'kept';
CREATE TEMP TABLE gs_on AS SELECT * FROM gs_answers;
SET pg_strom.enabled = off;
CREATE TEMP TABLE gs_off AS SELECT * FROM gs_answers;
SELECT count(*) AS compared,
       (SELECT count(*) FROM ((TABLE gs_on EXCEPT ALL TABLE gs_off) UNION ALL (TABLE gs_off EXCEPT ALL TABLE gs_on)) d)
         AS differences
  FROM gs_on;
RESET pg_strom.enabled;
-- a transaction's own uncommitted rows, seen by the device scan too
BEGIN;
DELETE FROM gs WHERE id < 50;
INSERT INTO gs VALUES (9001, 'mine', 123, NULL, NULL);
SELECT count(*), sum(v) FROM gs WHERE v > 0;
SET LOCAL pg_strom.enabled = off;
SELECT count(*), sum(v) FROM gs WHERE v > 0;
ROLLBACK;
-- GpuPreAgg and GpuJoin read the engine's copy of the store (the GPU
-- service's CPU engine keeps copies as its GPUs do): the copy is brought
-- up to date with what the redo log gained (row versions, deletions), and
-- the engine decides which row versions the query's snapshot sees
SET pg_strom.cpu_engine_in_service = on;
-- (and text read from the copy: grouped by, compared)
CREATE OR REPLACE VIEW gs_answers AS
  SELECT 1 AS q, count(*)::text AS a, sum(v)::text AS b FROM gs WHERE v > 1000 AND id % 3 = 0
  UNION ALL SELECT 2, count(*)::text, sum(v)::text FROM gs WHERE id > 100
  UNION ALL SELECT 3, label, count(*) || '/' || sum(v) FROM gs JOIN gs_dim ON id % 10 = k WHERE v > 0 GROUP BY label
  UNION ALL SELECT 4, string_agg(id::text, ',' ORDER BY id), NULL FROM gs WHERE name LIKE '%DATA%' OR name = 'kept'
  UNION ALL SELECT 5, name, count(*) || '/' || sum(v) FROM gs WHERE name LIKE 'NAME 1%' OR name > 'later' GROUP BY name
  UNION ALL SELECT 6, count(*)::text, max(id)::text FROM gs WHERE name >= 'name 5' AND v IS NOT NULL
  UNION ALL SELECT 7, id || ':' || coalesce(name, '-'), (v * 2)::text FROM gs WHERE v > 1000 AND id % 7 = 0;
SELECT * FROM explain_masked('SELECT name, count(*) FROM gs WHERE name LIKE ''NAME 1%'' GROUP BY name',
                             'COSTS OFF');
-- GpuScan too: the engine judges each row version and the filter in the
-- copy and returns which rows pass; PostgreSQL projects them
SELECT * FROM explain_masked('SELECT id, v * 2 FROM gs WHERE v > 1000 AND id % 7 = 0',
                             'COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF');
SELECT * FROM explain_masked('SELECT count(*), sum(v) FROM gs WHERE id > 100',
                             'COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF');
CREATE FUNCTION gs_compare() RETURNS TABLE (compared bigint, differences bigint) LANGUAGE plpgsql AS $$
BEGIN
  DROP TABLE IF EXISTS gs_on, gs_off;
  CREATE TEMP TABLE gs_on AS SELECT * FROM gs_answers;
  SET LOCAL pg_strom.enabled = off;
  CREATE TEMP TABLE gs_off AS SELECT * FROM gs_answers;
  SET LOCAL pg_strom.enabled = on;
  RETURN QUERY SELECT count(*),
       (SELECT count(*) FROM ((TABLE gs_on EXCEPT ALL TABLE gs_off) UNION ALL (TABLE gs_off EXCEPT ALL TABLE gs_on)) d)
    FROM gs_on;
END $$;
SELECT * FROM gs_compare();
-- writes since: new row versions and deletions reach the copy
UPDATE gs SET v = v + 1 WHERE id % 5 = 0;
DELETE FROM gs WHERE id BETWEEN 200 AND 260;
INSERT INTO gs SELECT i, 'later ' || i, i, NULL, NULL FROM generate_series(2000, 2100) i;
UPDATE hs SET v = v + 1 WHERE id % 5 = 0;
DELETE FROM hs WHERE id BETWEEN 200 AND 260;
INSERT INTO hs SELECT i, 'later ' || i, i, NULL, NULL FROM generate_series(2000, 2100) i;
SELECT * FROM gs_compare();
-- a transaction's own changes, command by command, and a savepoint
BEGIN;
DELETE FROM gs WHERE id < 50;
INSERT INTO gs VALUES (9001, 'mine', 123, NULL, NULL);
SELECT * FROM gs_compare();
SAVEPOINT s;
UPDATE gs SET v = -v WHERE id > 2050;
SELECT * FROM gs_compare();
ROLLBACK TO s;
SELECT * FROM gs_compare();
-- rows a statement writes are not seen by its own scan (command ids):
-- the same answer with pg_strom off
SAVEPOINT w;
WITH u AS (UPDATE gs SET v = v * 3 WHERE id BETWEEN 100 AND 150 RETURNING 1)
SELECT count(*), sum(v), (SELECT count(*) FROM u) FROM gs WHERE id > 0;
ROLLBACK TO w;
SET LOCAL pg_strom.enabled = off;
WITH u AS (UPDATE gs SET v = v * 3 WHERE id BETWEEN 100 AND 150 RETURNING 1)
SELECT count(*), sum(v), (SELECT count(*) FROM u) FROM gs WHERE id > 0;
SET LOCAL pg_strom.enabled = on;
-- a TRUNCATE of this transaction hides every earlier row version
TRUNCATE gs;
INSERT INTO gs VALUES (1, 'after', 1, NULL, NULL);
SELECT * FROM gs_compare();
ROLLBACK;
SELECT * FROM gs_compare();
-- an aborted transaction's rows stay invisible
BEGIN;
INSERT INTO gs SELECT i, 'aborted', i, NULL, NULL FROM generate_series(9200, 9300) i;
UPDATE gs SET v = 0 WHERE id < 100;
ROLLBACK;
SELECT * FROM gs_compare();
-- a checkpoint (a new generation: row ids change) makes a new copy
SELECT pgstrom.gstore_fdw_checkpoint('gs') = (SELECT count(*) FROM gs);
SELECT * FROM gs_compare();
SELECT * FROM explain_masked('SELECT count(*), sum(v) FROM gs WHERE id > 100',
                             'COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF');
-- the backend's own CPU engine keeps no copies: ranges of row versions
-- go to it with their view; pg_strom.gstore_device_copy = off does the
-- same on any engine
RESET pg_strom.cpu_engine_in_service;
UPDATE gs SET v = v + 1 WHERE id % 3 = 0;
UPDATE hs SET v = v + 1 WHERE id % 3 = 0;
SELECT * FROM gs_compare();
SET pg_strom.cpu_engine_in_service = on;
SET pg_strom.gstore_device_copy = off;
SELECT * FROM gs_compare();
SELECT * FROM explain_masked('SELECT count(*), sum(v) FROM gs WHERE id > 100',
                             'COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF');
RESET pg_strom.gstore_device_copy;
RESET pg_strom.cpu_engine_in_service;
DROP FUNCTION gs_compare();
DROP TABLE gs_on, gs_off;
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.heap_gather_cost;
DROP VIEW gs_answers;
DROP TABLE gs_dim;
-- ANALYZE samples the rows the snapshot sees (every one of them here, as
-- the heap table's ANALYZE does): the same statistics as the heap table's
-- but for the order (correlation) and widths of values stored out of line
ANALYZE gs;
ANALYZE hs;
SELECT c.reltuples = (SELECT count(*) FROM gs) AS live_counted, c.relpages > 0 AS has_pages
  FROM pg_class c WHERE c.oid = 'gs'::regclass;
SELECT a.attname, a.null_frac = b.null_frac AS same_nulls, a.n_distinct = b.n_distinct AS same_distinct,
       a.most_common_vals::text IS NOT DISTINCT FROM b.most_common_vals::text AS same_mcv,
       a.histogram_bounds::text IS NOT DISTINCT FROM b.histogram_bounds::text AS same_histogram
  FROM pg_stats a JOIN pg_stats b USING (attname)
 WHERE a.tablename = 'gs' AND b.tablename = 'hs' ORDER BY 1;
-- a sample smaller than the table (300 rows for a target of 1), still
-- counting every live row; the planner's estimate is the live rows, not
-- the row versions
SET default_statistics_target = 1;
ANALYZE gs;
RESET default_statistics_target;
SELECT c.reltuples = (SELECT count(*) FROM gs) AS live_counted FROM pg_class c WHERE c.oid = 'gs'::regclass;
CREATE FUNCTION gs_estimate(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Plan Rows')::float8;
END $$;
SELECT gs_estimate('SELECT * FROM gs') = (SELECT count(*) FROM gs) AS estimate_is_live_rows;
DROP FUNCTION gs_estimate(text);
-- TRUNCATE, in a transaction that rolls back, then for good
BEGIN;
TRUNCATE gs;
SELECT count(*) FROM gs;
ROLLBACK;
SELECT gs_diff();
TRUNCATE gs;
SELECT count(*) FROM gs;
INSERT INTO gs VALUES (1, 'after truncate', 1, NULL, NULL);
SELECT id, name FROM gs;
-- max_num_rows counts row versions until a checkpoint reclaims dead ones
CREATE FOREIGN TABLE small (id int) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/small.base',
           redo_log_file '/tmp/pgstrom_gstore_test/small.redo', max_num_rows '3');
INSERT INTO small VALUES (1), (2);
UPDATE small SET id = id + 10 WHERE id = 1;
UPDATE small SET id = id + 10 WHERE id = 2;
SELECT pgstrom.gstore_fdw_checkpoint('small');
UPDATE small SET id = id + 10 WHERE id = 12;
SELECT id FROM small ORDER BY id;
-- columns: ADD and DROP COLUMN are fine, a changed type is refused
ALTER FOREIGN TABLE small ADD COLUMN note text;
ALTER FOREIGN TABLE small DROP COLUMN note;
SELECT id FROM small ORDER BY id;
ALTER FOREIGN TABLE small ALTER COLUMN id TYPE bigint;
SELECT id FROM small ORDER BY id;
ALTER FOREIGN TABLE small ALTER COLUMN id TYPE int;
SELECT id FROM small ORDER BY id;
-- partitions: PG-Strom's write-ups' table of moving devices, hash
-- partitioned over two stores (each meant for its own GPU)
create table fpoints (dev_id int, ts timestamp, x float, y float) partition by hash (dev_id);
create foreign table fpoints_p0 partition of fpoints for values with (modulus 2, remainder 0)
  server gstore_fdw
  options (base_file '/tmp/pgstrom_gstore_test/fpoints_p0.base', redo_log_file '/tmp/pgstrom_gstore_test/fpoints_p0.redo',
           gpu_device_id '0', max_num_rows '8000000');
create foreign table fpoints_p1 partition of fpoints for values with (modulus 2, remainder 1)
  server gstore_fdw
  options (base_file '/tmp/pgstrom_gstore_test/fpoints_p1.base', redo_log_file '/tmp/pgstrom_gstore_test/fpoints_p1.redo',
           gpu_device_id '1', max_num_rows '8000000');
insert into fpoints select i, '2026-01-01', i % 100, i % 37 from generate_series(1, 10000) i;
select tableoid::regclass, count(*), sum(x) from fpoints group by 1 order by 1;
UPDATE fpoints SET ts = '2026-02-01', x = x + 100.0, y = y + 100.0
 WHERE dev_id = (select 250 * 48 / 100 + 3);
-- PostgreSQL moves no row out of a foreign partition: an UPDATE of the
-- partition key that would is refused
UPDATE fpoints SET dev_id = dev_id + 20000
 WHERE dev_id IN (SELECT dev_id FROM fpoints_p0 ORDER BY dev_id LIMIT 10);
-- (one that stays in its partition is fine)
UPDATE fpoints SET dev_id = dev_id + 20000
 WHERE dev_id IN (SELECT dev_id FROM fpoints_p0 ORDER BY dev_id LIMIT 10)
   AND satisfies_hash_partition('fpoints'::regclass, 2, 0, dev_id + 20000);
select tableoid::regclass, count(*), sum(x), count(*) FILTER (WHERE dev_id > 20000) from fpoints group by 1 order by 1;
select dev_id, ts, x, y from fpoints where dev_id = 123;
drop table fpoints;
-- bad options and bad files
CREATE FOREIGN TABLE bad1 (id int) SERVER gstore_fdw OPTIONS (base_file '/tmp/pgstrom_gstore_test/b.base');
CREATE FOREIGN TABLE bad2 (id int) SERVER gstore_fdw OPTIONS (base_file 'relative', redo_log_file '/tmp/x');
CREATE FOREIGN TABLE bad3 (id int) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/b.base', redo_log_file '/tmp/pgstrom_gstore_test/b.redo', gpu_device_id '-1');
CREATE FOREIGN TABLE bad4 (id int) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/b.base', redo_log_file '/tmp/pgstrom_gstore_test/b.redo', primary_key 'id, v');
CREATE FOREIGN TABLE bad5 (id int) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/b.base', redo_log_file '/tmp/pgstrom_gstore_test/b.redo', colour 'red');
CREATE FOREIGN TABLE notgs (id int) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/n.base', redo_log_file '/tmp/pgstrom_gstore_test/n.redo');
\! printf 'PGSTLOG1garbage-that-is-long-enough-for-a-header' > /tmp/pgstrom_gstore_test/n.base
SELECT count(*) FROM notgs;
-- files another database cluster wrote (its system identifier in the
-- header): its transaction ids mean nothing here
\! printf 'PGSTLOG1\0\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > /tmp/pgstrom_gstore_test/n.redo; rm /tmp/pgstrom_gstore_test/n.base
DO $$ BEGIN
  PERFORM count(*) FROM notgs;
EXCEPTION WHEN data_corrupted THEN
  RAISE NOTICE '%', regexp_replace(SQLERRM, 'this one''s is [0-9]+', 'this one''s is N');
END $$;
SELECT pgstrom.gstore_fdw_checkpoint('hs');
-- a role without the file roles cannot name files; reading is by GRANT
CREATE ROLE gs_user;
GRANT SELECT ON gs TO gs_user;
GRANT USAGE ON FOREIGN SERVER gstore_fdw TO gs_user;
GRANT CREATE ON SCHEMA public TO gs_user;
SET ROLE gs_user;
CREATE FOREIGN TABLE mine (id int) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_test/m.base', redo_log_file '/tmp/pgstrom_gstore_test/m.redo');
SELECT count(*) FROM gs;
INSERT INTO gs VALUES (2, 'no', 1, NULL, NULL);
SELECT pgstrom.gstore_fdw_checkpoint('gs');
RESET ROLE;
DROP FOREIGN TABLE gs, small, notgs;
REVOKE USAGE ON FOREIGN SERVER gstore_fdw FROM gs_user;
REVOKE CREATE ON SCHEMA public FROM gs_user;
DROP ROLE gs_user;
DROP TABLE hs;
DROP FUNCTION gs_diff();

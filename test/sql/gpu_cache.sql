-- The GPU cache of heap tables (docs/gstore_fdw.md, "The GPU cache of heap
-- tables"): a heap table's rows kept in the store, in sync through
-- triggers.  Every query runs with pg_strom on (reading the cache, which
-- EXPLAIN ANALYZE must say) and off (PostgreSQL reading the heap); the
-- rows must be the same.
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.chunk_rows = 1000;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 3;
CREATE TABLE gc (id int PRIMARY KEY, k int, name text, v numeric(12,2), ts timestamp);
INSERT INTO gc SELECT i, i % 10, 'name ' || i, i * 1.25, '2026-01-01'::timestamp + i * interval '1 hour'
  FROM generate_series(1, 3000) i;
CREATE TABLE gd (k int, label text);
INSERT INTO gd SELECT i, 'label ' || (i % 4) FROM generate_series(0, 9) i;
-- where the query read gc from, its row count, and whether the rows equal
-- PostgreSQL's (pg_strom off)
CREATE FUNCTION gc_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE on_md5 text; off_md5 text; n bigint; ln text; src text := 'heap'; node text := '';
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    IF node = '' AND ln ~ 'Custom Scan \((Gpu\w+)\)' THEN
      node := substring(ln from 'Custom Scan \((Gpu\w+)\)') || ' ';
    END IF;
    IF ln LIKE '%GPU Store: GPU cache of % (%' THEN src := 'GPU cache'; END IF;
    IF ln LIKE '%GPU Store: GPU cache of % (copy in %' THEN src := 'GPU cache (engine''s copy)'; END IF;
    IF ln LIKE '%GPU cache not read:%' THEN
      src := 'heap (' || regexp_replace(ln, '.*GPU cache not read: ', '') || ')';
    END IF;
  END LOOP;
  EXECUTE format('SELECT md5(string_agg(r::text, ''|'' ORDER BY r::text)), count(*) FROM (%s) r', q)
    INTO on_md5, n;
  SET LOCAL pg_strom.enabled = off;
  EXECUTE format('SELECT md5(string_agg(r::text, ''|'' ORDER BY r::text)) FROM (%s) r', q) INTO off_md5;
  SET LOCAL pg_strom.enabled = on;
  RETURN node || src || ': ' || n || ' rows, '
         || CASE WHEN on_md5 IS NOT DISTINCT FROM off_md5 THEN 'same' ELSE 'DIFFERENT' END;
END $$;
CREATE FUNCTION gc_all() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT gc_check('SELECT * FROM gc WHERE v > 100 AND id % 7 <> 3')
  UNION ALL SELECT gc_check('SELECT ctid, id, name FROM gc WHERE id % 97 = 0')
  UNION ALL SELECT gc_check('SELECT k, count(*), sum(v), max(ts), min(name) FROM gc WHERE id % 3 = 0 GROUP BY k')
  UNION ALL SELECT gc_check('SELECT d.label, count(*), sum(gc.v) FROM gc JOIN gd d ON gc.k = d.k
                             WHERE gc.v > 10 GROUP BY d.label')
  UNION ALL SELECT gc_check('SELECT gc.id, d.label FROM gc JOIN gd d ON gc.k = d.k WHERE gc.id % 5 = 0')
  UNION ALL SELECT gc_check('SELECT count(*), sum(v), count(name) FROM gc WHERE id > 100') $$;
-- before a cache: the heap, and EXPLAIN says nothing of a cache
SELECT * FROM gc_all();

-- errors
SELECT pgstrom.gpu_cache_enable('gc', 2000);
CREATE TEMP TABLE gc_temp (a int);
SELECT pgstrom.gpu_cache_enable('gc_temp');
CREATE VIEW gc_view AS SELECT * FROM gc;
SELECT pgstrom.gpu_cache_enable('gc_view');
DROP VIEW gc_view;
CREATE ROLE gc_stranger;
SET ROLE gc_stranger;
SELECT pgstrom.gpu_cache_enable('gc');
RESET ROLE;
SELECT pgstrom.gpu_cache_disable('gd');

-- the cache: every committed row, read instead of the heap
SELECT pgstrom.gpu_cache_enable('gc');
SELECT pgstrom.gpu_cache_enable('gc');
SELECT relation, gpu_device_id, usable, why_not, row_versions FROM pgstrom.gpu_cache_info;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'gc'::regclass ORDER BY tgname;
SELECT * FROM gc_all();
-- a role with SELECT reads it; the catalog is not writable by others
GRANT SELECT ON gc, gd TO gc_stranger;
SET ROLE gc_stranger;
SELECT * FROM gc_all();
SELECT relation, usable FROM pgstrom.gpu_cache_info;
UPDATE pgstrom.gpu_cache SET broken = false;
RESET ROLE;

-- writes: NULLs, multibyte and out-of-line text, UPDATE, DELETE, COPY
INSERT INTO gc VALUES (-1, NULL, NULL, NULL, NULL), (-2, 3, 'データベース', -0.01, 'infinity'),
                      (-3, 4, repeat('x', 100000), 9999999999.99, '-infinity');
UPDATE gc SET v = v + 100, name = upper(name) WHERE id % 7 = 0;
DELETE FROM gc WHERE id BETWEEN 500 AND 600;
COPY gc FROM stdin;
5001	1	copied	1.5	2026-02-01 00:00:00
5002	\N	\N	\N	\N
\.
UPDATE gc SET k = k + 1 WHERE id IN (SELECT id FROM gc WHERE id < 50);
INSERT INTO gc VALUES (7000, 1, 'conflict', 1, NULL) ON CONFLICT (id) DO NOTHING;
INSERT INTO gc VALUES (7000, 2, 'upserted', 2, NULL) ON CONFLICT (id) DO UPDATE SET name = excluded.name;
SELECT * FROM gc_all();
-- a transaction sees its own changes; ROLLBACK drops them
BEGIN;
INSERT INTO gc SELECT i, 5, 'in a transaction', 1, NULL FROM generate_series(8000, 8100) i;
UPDATE gc SET v = 2 WHERE id BETWEEN 8000 AND 8010;
DELETE FROM gc WHERE id BETWEEN 8050 AND 8100;
SELECT * FROM gc_all();
ROLLBACK;
SELECT * FROM gc_all();
-- savepoints
BEGIN;
SAVEPOINT a;
DELETE FROM gc WHERE id <= 10;
ROLLBACK TO a;
UPDATE gc SET name = 'kept' WHERE id = 11;
SAVEPOINT b;
INSERT INTO gc VALUES (9000, 1, 'released', 1, NULL);
RELEASE b;
SAVEPOINT c;
UPDATE gc SET name = 'gone' WHERE id = 12;
ROLLBACK TO c;
SELECT * FROM gc_all();
COMMIT;
SELECT * FROM gc_all();
-- the same row updated by several statements of one transaction
BEGIN;
UPDATE gc SET v = 1 WHERE id = 13;
UPDATE gc SET v = 2 WHERE id = 13;
UPDATE gc SET v = 3 WHERE id = 13;
SELECT * FROM gc_all();
COMMIT;
-- built by a transaction that wrote the table first: its rows are in the
-- cache, and a rollback takes both away
SELECT pgstrom.gpu_cache_disable('gc');
BEGIN;
INSERT INTO gc VALUES (13000, 1, 'before enabling', 1, NULL);
DELETE FROM gc WHERE id = 14;
SAVEPOINT s;
INSERT INTO gc VALUES (13001, 1, 'in a savepoint', 1, NULL);
SELECT pgstrom.gpu_cache_enable('gc') > 0 AS enabled;
SELECT * FROM gc_all();
ROLLBACK TO s;
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
SELECT pgstrom.gpu_cache_enable('gc') > 0 AS enabled;
COMMIT;
SELECT * FROM gc_all();
-- not dropped and built again in one transaction (a rollback would bring
-- the old entry back over the new files)
BEGIN;
SELECT pgstrom.gpu_cache_disable('gc');
SELECT pgstrom.gpu_cache_enable('gc');
ROLLBACK;
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
-- a REPEATABLE READ transaction that built it reads the heap (its snapshot
-- is older than the rows the cache holds)
SELECT pgstrom.gpu_cache_disable('gc');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM gd;
SELECT pgstrom.gpu_cache_enable('gc') > 0 AS enabled;
SELECT gc_check('SELECT id FROM gc WHERE id % 500 = 0');
COMMIT;
SELECT gc_check('SELECT id FROM gc WHERE id % 500 = 0');
-- a parallel worker reads the heap (it takes no snapshot of its own to
-- read the catalog with): the whole plan in a worker
-- (debug_parallel_query; PostgreSQL 15 names it force_parallel_mode)
SET max_parallel_workers_per_gather = 2;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS forced;
SELECT x FROM explain_masked('SELECT count(*), sum(v) FROM gc WHERE id % 500 = 0') x
 WHERE x ~ 'Gather|Single Copy';
SELECT count(*), sum(v) FROM gc WHERE id % 500 = 0;
SELECT gc_check('SELECT id FROM gc WHERE id % 500 = 0');
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS forced;
SET max_parallel_workers_per_gather = 0;
-- written, then dropped, by one transaction: it commits
CREATE TABLE gc_gone (a int);
SELECT pgstrom.gpu_cache_enable('gc_gone');
BEGIN;
INSERT INTO gc_gone SELECT generate_series(1, 10);
DROP TABLE gc_gone;
COMMIT;
-- a hostile search_path (an operator that answers false for every oid)
-- in a new session: the trigger still finds the cache and logs the write
CREATE SCHEMA gc_evil;
CREATE FUNCTION gc_evil.oideq(oid, integer) RETURNS bool LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR gc_evil.= (LEFTARG = oid, RIGHTARG = integer, FUNCTION = gc_evil.oideq);
\c
SET search_path = gc_evil, public, pg_catalog;
UPDATE gc SET v = v + 0.5 WHERE id % 9 = 0;
RESET search_path;
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.chunk_rows = 1000;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 3;
SELECT * FROM gc_all();
DROP SCHEMA gc_evil CASCADE;
-- statements that write or lock rows read the heap
SELECT gc_check('SELECT id FROM gc WHERE id % 500 = 0 FOR UPDATE');
-- TRUNCATE: rolled back, then committed
BEGIN;
INSERT INTO gc VALUES (11000, 1, 'before truncate', 1, NULL);
TRUNCATE gc;
INSERT INTO gc VALUES (1, 1, 'after truncate', 1, NULL);
SELECT * FROM gc_all();
ROLLBACK;
SELECT * FROM gc_all();
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
CREATE TABLE gc_saved AS SELECT * FROM gc;
TRUNCATE gc;
SELECT * FROM gc_all();
INSERT INTO gc SELECT * FROM gc_saved;
SELECT * FROM gc_all();
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
-- a checkpoint folds the log into a new base file; the rows stay
SELECT pgstrom.gstore_fdw_checkpoint('gc') > 0 AS checkpointed;
SELECT * FROM gc_all();
UPDATE gc SET v = v + 1 WHERE id % 11 = 0;
SELECT * FROM gc_all();

-- the engine's copy (the CPU engine in the GPU service keeps one, as GPUs do)
SET pg_strom.cpu_engine_in_service = on;
SELECT * FROM gc_all();
UPDATE gc SET v = v - 1 WHERE id % 13 = 0;
DELETE FROM gc WHERE id % 17 = 0;
INSERT INTO gc VALUES (10000, 3, 'into the copy', 3, NULL);
SELECT * FROM gc_all();
RESET pg_strom.cpu_engine_in_service;

-- stale caches read the heap: a rewrite, and a write after it
VACUUM FULL gc;
SELECT * FROM gc_all();
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
UPDATE gc SET v = 0 WHERE id = 20;
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
SELECT * FROM gc_all();
SELECT pgstrom.gstore_fdw_checkpoint('gc');
-- built again
SELECT pgstrom.gpu_cache_disable('gc');
SELECT pgstrom.gpu_cache_enable('gc') > 0 AS enabled;
SELECT * FROM gc_all();
-- a savepoint that made it stale and wrote, rolled back: the writes
-- after it are in the cache again
BEGIN;
UPDATE gc SET v = 5 WHERE id = 40;
SAVEPOINT s;
ALTER TABLE gc ADD COLUMN tmp int;
UPDATE gc SET v = 6 WHERE id = 41;
ROLLBACK TO s;
UPDATE gc SET v = 7 WHERE id = 42;
COMMIT;
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
SELECT * FROM gc_all();
-- triggers without an entry (as pg_dump restores a table): enabling makes
-- them anew
SELECT pgstrom.gpu_cache_disable('gc');
CREATE TRIGGER pgstrom_gpu_cache_row AFTER INSERT OR UPDATE OR DELETE ON gc
  FOR EACH ROW EXECUTE FUNCTION pgstrom.gpu_cache_trigger();
INSERT INTO gc VALUES (12000, 1, 'no entry', 1, NULL);
SELECT * FROM gc_all();
SELECT pgstrom.gpu_cache_enable('gc') > 0 AS enabled;
SELECT * FROM gc_all();
-- a changed column
ALTER TABLE gc ADD COLUMN extra int;
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
SELECT * FROM gc_all();
SELECT pgstrom.gpu_cache_disable('gc');
SELECT pgstrom.gpu_cache_enable('gc') > 0 AS enabled;
-- triggers disabled (writes missed) stay stale after they are enabled again
ALTER TABLE gc DISABLE TRIGGER pgstrom_gpu_cache_row;
DELETE FROM gc WHERE id = 30;
ALTER TABLE gc ENABLE ALWAYS TRIGGER pgstrom_gpu_cache_row;
SELECT relation, usable, why_not FROM pgstrom.gpu_cache_info;
SELECT * FROM gc_all();
-- disabled: the triggers and the entry go
SELECT pgstrom.gpu_cache_disable('gc');
SELECT pgstrom.gpu_cache_disable('gc');
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'gc'::regclass;
SELECT count(*) FROM pgstrom.gpu_cache;
SELECT * FROM gc_all();
-- a partitioned table: each heap partition
CREATE TABLE gc_parted (a int, b text) PARTITION BY RANGE (a);
CREATE TABLE gc_p1 PARTITION OF gc_parted FOR VALUES FROM (0) TO (100);
CREATE TABLE gc_p2 PARTITION OF gc_parted FOR VALUES FROM (100) TO (200) PARTITION BY RANGE (a);
CREATE TABLE gc_p21 PARTITION OF gc_p2 FOR VALUES FROM (100) TO (200);
INSERT INTO gc_parted SELECT i, 'p' || i FROM generate_series(0, 199) i;
SELECT pgstrom.gpu_cache_enable('gc_parted');
SELECT relation, usable, row_versions FROM pgstrom.gpu_cache_info ORDER BY 1::text;
SELECT gc_check('SELECT a, b FROM gc_parted WHERE a % 3 = 0');
UPDATE gc_parted SET a = a + 100, b = 'moved' WHERE a < 10;
SELECT relation, usable, row_versions FROM pgstrom.gpu_cache_info ORDER BY 1::text;
SELECT gc_check('SELECT a, b FROM gc_parted WHERE a % 3 = 0');
SELECT pgstrom.gpu_cache_disable('gc_parted');
SELECT count(*) FROM pgstrom.gpu_cache;
DROP TABLE gc_parted;
-- a dropped table's entry is not shown; the next enable removes it and
-- its files
SELECT pgstrom.gpu_cache_enable('gd');
SELECT current_setting('data_directory') || '/pg_strom/gpu_cache/'
       || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/'
       || 'gd'::regclass::oid || '.base' AS gd_path \gset
SELECT (pg_stat_file(:'gd_path', true)).size > 0 AS gd_file;
DROP TABLE gd;
SELECT count(*) AS entries, (SELECT count(*) FROM pgstrom.gpu_cache_info) AS shown FROM pgstrom.gpu_cache;
CREATE TABLE gc_next (a int);
SELECT pgstrom.gpu_cache_enable('gc_next');
SELECT count(*) AS entries FROM pgstrom.gpu_cache;
SELECT (pg_stat_file(:'gd_path', true)).size IS NULL AS gd_file_removed;
SELECT pgstrom.gpu_cache_disable('gc_next');
DROP TABLE gc_next;
DROP TABLE gc, gc_saved;
DROP FUNCTION gc_all(), gc_check(text);
DROP OWNED BY gc_stranger;
DROP ROLE gc_stranger;

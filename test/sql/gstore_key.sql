-- Gstore_Fdw's primary_key (docs/gstore_fdw.md): one column, unique among
-- live rows and never NULL, by which UPDATE, DELETE and SELECT find rows
-- through an index instead of a scan of every row version.  Every change
-- also goes to a heap table with a primary key, and the two must agree
-- (the same errors, the same rows).  Files go to
-- /tmp/pgstrom_gstore_key_test (made here, writable by the server).
\! rm -rf /tmp/pgstrom_gstore_key_test && mkdir -p /tmp/pgstrom_gstore_key_test && chmod 1777 /tmp/pgstrom_gstore_key_test
CREATE FOREIGN TABLE gk (id int, name text, v float8)
  SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_key_test/gk.base',
           redo_log_file '/tmp/pgstrom_gstore_key_test/gk.redo', primary_key 'id');
CREATE TABLE hk (id int PRIMARY KEY, name text, v float8);
CREATE FUNCTION gk_diff() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM ((SELECT * FROM gk EXCEPT ALL SELECT * FROM hk)
                        UNION ALL (SELECT * FROM hk EXCEPT ALL SELECT * FROM gk)) d $$;
INSERT INTO gk SELECT i, 'name ' || i, i * 0.5 FROM generate_series(1, 5000) i;
INSERT INTO hk SELECT i, 'name ' || i, i * 0.5 FROM generate_series(1, 5000) i;
-- a key that exists, twice in one statement, in COPY, NULL
INSERT INTO gk VALUES (5, 'dup', 0);
INSERT INTO hk VALUES (5, 'dup', 0);
INSERT INTO gk VALUES (6001, 'a', 0), (6001, 'b', 0);
INSERT INTO hk VALUES (6001, 'a', 0), (6001, 'b', 0);
COPY gk FROM stdin;
6002	c	1
6002	d	2
\.
INSERT INTO gk VALUES (NULL, 'no key', 0);
INSERT INTO hk VALUES (NULL, 'no key', 0);
SELECT count(*), gk_diff() FROM gk;
-- UPDATE and DELETE by key: looked up, not scanned
EXPLAIN (COSTS OFF) UPDATE gk SET v = -1 WHERE id = 77;
EXPLAIN (COSTS OFF) SELECT * FROM gk WHERE 77 = id;
UPDATE gk SET v = -1 WHERE id = 77;
UPDATE hk SET v = -1 WHERE id = 77;
-- the write-ups' form: the key from an uncorrelated sub-query
UPDATE gk SET v = -2, name = 'by sub-query' WHERE id = (SELECT 40 * 2);
UPDATE hk SET v = -2, name = 'by sub-query' WHERE id = (SELECT 40 * 2);
DELETE FROM gk WHERE id = 100 RETURNING *;
DELETE FROM hk WHERE id = 100 RETURNING *;
SELECT * FROM gk WHERE id IN (77, 80, 100) ORDER BY id;
SELECT gk_diff();
-- a key that no row holds, NULL, another type's equality (no lookup)
SELECT * FROM gk WHERE id = 999999;
SELECT * FROM gk WHERE id = NULL::int;
EXPLAIN (COSTS OFF) SELECT * FROM gk WHERE id = 77::bigint;
SELECT * FROM gk WHERE id = 77::bigint;
-- changing a key: to a free one, to a taken one
UPDATE gk SET id = 100 WHERE id = 101;
UPDATE hk SET id = 100 WHERE id = 101;
UPDATE gk SET id = 102 WHERE id = 103;
UPDATE hk SET id = 102 WHERE id = 103;
UPDATE gk SET id = NULL WHERE id = 104;
UPDATE hk SET id = NULL WHERE id = 104;
SELECT gk_diff();
-- a key freed and stored again in one transaction; a savepoint's insert
-- rolled back frees its key
BEGIN;
DELETE FROM gk WHERE id = 10;
INSERT INTO gk VALUES (10, 'again', 1);
SAVEPOINT s;
INSERT INTO gk VALUES (7000, 'rolled back', 1);
ROLLBACK TO s;
INSERT INTO gk VALUES (7000, 'kept', 2);
COMMIT;
BEGIN;
DELETE FROM hk WHERE id = 10;
INSERT INTO hk VALUES (10, 'again', 1);
INSERT INTO hk VALUES (7000, 'kept', 2);
COMMIT;
SELECT * FROM gk WHERE id IN (10, 7000) ORDER BY id;
SELECT gk_diff();
-- a lookup per outer row (a correlated sub-query: rescans with a new key)
SELECT k, (SELECT name FROM gk WHERE id = k) FROM generate_series(98, 103) k;
-- a checkpoint renumbers rows: lookups still find them
SELECT pgstrom.gstore_fdw_checkpoint('gk');
SELECT * FROM gk WHERE id = 80;
UPDATE gk SET v = 42 WHERE id = 4999;
UPDATE hk SET v = 42 WHERE id = 4999;
INSERT INTO gk VALUES (4999, 'dup after checkpoint', 0);
SELECT gk_diff();

-- text keys: multibyte, long (stored compressed in the heap table the
-- rows come from: the store keeps the key uncompressed), varchar
CREATE FOREIGN TABLE gt (k varchar, n int)
  SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_key_test/gt.base',
           redo_log_file '/tmp/pgstrom_gstore_key_test/gt.redo', primary_key 'k');
CREATE TABLE ht (k varchar, n int);
INSERT INTO ht VALUES ('é', 1), ('日本語', 2), ('', 3), (repeat('long key ', 2000), 4);
INSERT INTO ht SELECT 'key ' || i, 100 + i FROM generate_series(1, 2000) i;
SELECT pg_column_compression(k) IS NOT NULL AS compressed FROM ht WHERE n = 4;
INSERT INTO gt SELECT * FROM ht;
EXPLAIN (COSTS OFF) SELECT n FROM gt WHERE k = '日本語';
SELECT n FROM gt WHERE k = '日本語';
SELECT n FROM gt WHERE k = '';
SELECT n FROM gt WHERE k = repeat('long key ', 2000);
INSERT INTO gt VALUES (repeat('long key ', 2000), 5);
UPDATE gt SET n = 40 WHERE k = repeat('long key ', 2000);
SELECT k, n FROM gt WHERE n < 40 ORDER BY n;
SELECT n FROM gt WHERE k = 'key 1999';
SELECT n FROM gt WHERE k = repeat('long key ', 2000);

-- partitions: the write-ups' table with its key; each partition's key
-- is unique in it, the hash partitioning makes it unique in the table
create table fpoints (dev_id int, ts timestamp, x float, y float) partition by hash (dev_id);
create foreign table fpoints_p0 partition of fpoints for values with (modulus 2, remainder 0)
  server gstore_fdw
  options (base_file '/tmp/pgstrom_gstore_key_test/fpoints_p0.base', redo_log_file '/tmp/pgstrom_gstore_key_test/fpoints_p0.redo',
           gpu_device_id '0', max_num_rows '8000000', primary_key 'dev_id');
create foreign table fpoints_p1 partition of fpoints for values with (modulus 2, remainder 1)
  server gstore_fdw
  options (base_file '/tmp/pgstrom_gstore_key_test/fpoints_p1.base', redo_log_file '/tmp/pgstrom_gstore_key_test/fpoints_p1.redo',
           gpu_device_id '1', max_num_rows '8000000', primary_key 'dev_id');
insert into fpoints select i, '2026-01-01', 0, 0 from generate_series(0, 999) i;
EXPLAIN (COSTS OFF) UPDATE fpoints SET x = 1 WHERE dev_id = (select 49);
-- the write-ups' pgbench statement (client 1 of 48): one row each time
UPDATE fpoints SET ts = now(), x = random() * 100.0, y = random() * 100.0
 WHERE dev_id = (select (random() * 20)::int * 48 + 1);
UPDATE fpoints SET ts = now(), x = random() * 100.0, y = random() * 100.0
 WHERE dev_id = (select (random() * 20)::int * 48 + 1);
select count(*), count(*) FILTER (WHERE x > 0 OR y > 0) <= 2 AS at_most_two_moved from fpoints;
insert into fpoints values (7, now(), 1, 1);
drop table fpoints;

-- the option: one column of a type compared by its bytes
ALTER FOREIGN TABLE gk OPTIONS (SET primary_key 'v');
SELECT * FROM gk WHERE id = 1;
ALTER FOREIGN TABLE gk OPTIONS (SET primary_key 'nosuch');
SELECT * FROM gk WHERE id = 1;
ALTER FOREIGN TABLE gk OPTIONS (SET primary_key 'id, name');
ALTER FOREIGN TABLE gk OPTIONS (SET primary_key '');
ALTER FOREIGN TABLE gk OPTIONS (SET primary_key 'id');
SELECT * FROM gk WHERE id = 1;
-- added to a table with rows: the index is built from them
ALTER FOREIGN TABLE gt OPTIONS (DROP primary_key);
INSERT INTO gt VALUES ('x', 9);
ALTER FOREIGN TABLE gt OPTIONS (ADD primary_key 'k');
EXPLAIN (COSTS OFF) SELECT n FROM gt WHERE k = 'x';
SELECT n FROM gt WHERE k = 'x';
INSERT INTO gt VALUES ('x', 10);

DROP FOREIGN TABLE gk, gt;
DROP TABLE hk, ht;
DROP FUNCTION gk_diff();
